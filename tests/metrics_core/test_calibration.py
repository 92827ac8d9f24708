"""Ground truth beside the derived metrics: ``truth_from_gold``, the matching parameters and absolute quality.

* ``truth_from_gold`` (group sums) equals the N×N brute force of test_derived on random changes.
* At the Recall_Base that ``recall_base_matching`` finds, the diagram gives the true ΔRecall.
* MQM §5.1 on a known Ideal: with Exp the all-singletons clustering, 1 − ΔPrecision(T) is the
  Precision of C and −ΔRecall(T) is Recall(C) − MinimumRecall (eqs 84-90).
"""

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import Estimate
from tests.metrics_core.helpers import brute_force_truth, random_change


def random_populations(seed, count):
    rng = np.random.default_rng(seed)
    while count:
        base, exp, ideal, weights = random_change(rng, n_items=150)
        pop = mc.population_from_labels(base, exp, weights)
        if pop.cell_affected().any():
            count -= 1
            yield pop, base, exp, ideal, weights


def test_truth_from_gold_equals_the_brute_force_definition():
    for pop, base, exp, ideal, weights in random_populations(7, 40):
        truth = mc.truth_from_gold(pop, ideal)
        delta_recall, iq, recall_base, precision_base = brute_force_truth(base, exp, ideal, weights)
        assert truth["DeltaRecall"] == pytest.approx(delta_recall, abs=1e-12)
        assert truth["IQ"] == pytest.approx(iq, abs=1e-12)
        assert truth["RecallBase"] == pytest.approx(recall_base, abs=1e-12)
        assert truth["PrecisionBase"] == pytest.approx(precision_base, abs=1e-12)
        assert truth["RecallExpAll"] - truth["RecallBaseAll"] == pytest.approx(truth["DeltaRecall"], abs=1e-12)


def test_truth_of_identical_clusterings_has_no_iq():
    pop = mc.population_from_labels([1, 1, 2], [1, 1, 2])
    truth = mc.truth_from_gold(pop, [1, 2, 2])
    assert truth["DeltaRecall"] == 0 and math.isnan(truth["IQ"]) and math.isnan(truth["RecallBase"])


def test_matching_recall_base_reproduces_the_true_delta_recall():
    found = 0
    for pop, _, _, ideal, _ in random_populations(11, 40):
        quality, exact = mc.quality_from_gold(pop, ideal), mc.impact_metrics(pop).metrics
        truth = mc.truth_from_gold(pop, ideal)
        diagram = mc.affected_item_diagram_from_metrics(quality, exact)
        for recall_base in mc.recall_base_matching(diagram, truth["DeltaRecall"]):
            found += 1
            at = diagram.with_parameters(recall_base=recall_base)
            assert at.delta_recall == pytest.approx(truth["DeltaRecall"], abs=2e-4)
            assert at.clips["GoodStableWeight"] is None and at.checks["RecallBaseInRange"]
        calibration = mc.calibration_against_gold(diagram, truth)
        assert calibration["truth"]["DeltaRecall"] == pytest.approx(truth["DeltaRecall"])
        assert calibration["diagram"]["DeltaRecall"] == pytest.approx(diagram.delta_recall)
        variant_2 = calibration["at_true_parameters"]["variant_2"]
        expected = diagram.with_parameters(recall_base=truth["RecallBase"], precision_base=truth["PrecisionBase"])
        assert variant_2["DeltaRecall"] == pytest.approx(expected.delta_recall)
    assert found >= 20  # most changes have a matching parameter


def test_no_match_when_the_truth_is_out_of_reach():
    d = mc.affected_item_diagram(
        affected_weight_fraction=1.0,
        good_split_rate=1 / 3,
        bad_split_rate=0.0,
        good_merge_rate=1 / 4,
        bad_merge_rate=0.0,
        delta_precision=1 / 3,
        weight_fraction_of_base_cluster=1 / 2,
        jaccard_distance=23 / 48,
    )
    assert mc.recall_base_matching(d, 0.25) == [pytest.approx(0.75, abs=1e-6)]
    assert mc.recall_base_matching(d, 0.9) == []
    assert mc.recall_base_matching(d, math.nan) == []


def test_absolute_quality_of_one_clustering_against_a_known_ideal():
    """MQM §5.1: C as Base, the singletons as Exp; exact gold metrics stand in for the estimates."""
    for _, base, _, ideal, weights in random_populations(3, 20):
        singletons = np.arange(len(base))
        change = mc.population_from_labels(base, singletons, weights)
        if not change.cell_affected().any():
            continue
        quality = mc.quality_from_gold(change, ideal)
        truth = mc.truth_from_gold(change, ideal)
        exact = Estimate(value=quality["DeltaPrecision"], stderr=0.0, ci_low=quality["DeltaPrecision"], ci_high=quality["DeltaPrecision"], judged_draws=1, drawn_draws=1)
        recall = Estimate(value=truth["DeltaRecall"], stderr=0.0, ci_low=truth["DeltaRecall"], ci_high=truth["DeltaRecall"], judged_draws=1, drawn_draws=1)
        absolute = mc.absolute_quality(delta_precision=exact, delta_recall=recall)
        # Precision of C, computed directly: mean of weight(C(i) ∩ Ideal(i)) / weight(C(i)).
        same_c, same_ideal = base[:, None] == base[None, :], ideal[:, None] == ideal[None, :]
        precision = float(np.dot(weights, ((same_c & same_ideal) @ weights) / (same_c @ weights)) / weights.sum())
        assert absolute["Precision"].value == pytest.approx(precision, abs=1e-12)
        minimum_recall = float(np.dot(weights, weights / (same_ideal @ weights)) / weights.sum())
        recall_c = float(np.dot(weights, ((same_c & same_ideal) @ weights) / (same_ideal @ weights)) / weights.sum())
        assert absolute["RecallAboveMinimum"].value == pytest.approx(recall_c - minimum_recall, abs=1e-12)


def test_absolute_quality_mirrors_the_interval():
    q = mc.absolute_quality(delta_precision=Estimate(value=0.1, stderr=0.02, ci_low=0.05, ci_high=0.12, judged_draws=50, drawn_draws=80))
    p = q["Precision"]
    assert (p.value, p.ci_low, p.ci_high, p.stderr) == pytest.approx((0.9, 0.88, 0.95, 0.02))
    assert (p.judged_draws, p.drawn_draws) == (50, 80) and "RecallAboveMinimum" not in q


def test_estimates_from_judged_samples_track_the_true_delta_recall_and_iq():
    """MQM §3.3's check with estimates instead of exact metrics: 150 random changes, each with a
    sample of 2000 draws judged from the Ideal clustering (5% unsure), the 60%/80% diagram of the
    estimates against the true ΔRecall and IQ. Correlation, intercept and slope are printed."""
    rng = np.random.default_rng(31)
    rows = []
    for pop, _, _, ideal, _ in random_populations(31, 150):
        sample = mc.sample_pairs(pop, n_draws=2000, rng=rng)
        x, y = mc.pairs_for_judgement(sample, rng=rng)
        same = ideal[x] == ideal[y]
        verdict = np.where(rng.random(len(x)) < 0.05, "unsure", np.where(same, "equivalent", "not_equivalent"))
        quality = mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(x, y, verdict))
        diagram = mc.affected_item_diagram_from_metrics(quality, mc.impact_metrics(pop).metrics)
        truth = mc.truth_from_gold(pop, ideal)
        if np.isfinite(diagram.delta_recall) and np.isfinite(truth["IQ"]):
            rows.append((truth["DeltaRecall"], diagram.delta_recall, truth["IQ"], diagram.iq))
    a = np.array(rows)
    figures = {}
    for label, truth, estimate in (("ΔRecall", 0, 1), ("IQ", 2, 3)):
        slope, intercept = np.polyfit(a[:, estimate], a[:, truth], 1)
        figures[label] = (float(np.corrcoef(a[:, estimate], a[:, truth])[0, 1]), float(intercept), float(slope))
        print(f"\n{label}: {len(a)} changes, true vs estimated: corr {figures[label][0]:.3f}, "
              f"intercept {figures[label][1]:+.4f}, slope {figures[label][2]:.3f}")
    corr, intercept, slope = figures["ΔRecall"]
    assert len(a) >= 140 and corr > 0.9 and abs(intercept) < 0.01 and 0.7 < slope < 1.3
    corr, intercept, slope = figures["IQ"]
    assert corr > 0.8 and abs(intercept) < 0.1
