import math

import numpy as np
import pytest

from metrics_core import (
    estimate_quality,
    impact_metrics,
    metrics_for_scheme,
    pairs_for_judgement,
    population_from_labels,
    quality_from_gold,
    sample_pairs,
    verdicts_from_judgements,
)


def judge(pop, sample, ideal, unsure=()):
    a, b = pairs_for_judgement(sample, rng=np.random.default_rng(0))
    verdict = np.where(ideal[a] == ideal[b], "equivalent", "not_equivalent")
    verdict = np.where(np.isin(a, unsure) | np.isin(b, unsure), "unsure", verdict)
    return verdicts_from_judgements(a, b, verdict)


def test_a_change_without_merges_has_exactly_zero_merge_estimates():
    pop = population_from_labels([0, 0, 0, 0], [0, 0, 1, 1])
    ideal = np.array([0, 0, 1, 1])
    sample = sample_pairs(pop, n_draws=100, rng=np.random.default_rng(1))
    q = estimate_quality(pop, sample, judge(pop, sample, ideal))
    for name in ("GoodMergeDistance", "BadMergeDistance", "GoodMergeRate", "BadMergeRate"):
        e = q[name]
        assert (e.value, e.stderr, e.ci_low, e.ci_high) == (0.0, 0.0, 0.0, 0.0)
    truth = quality_from_gold(pop, ideal)
    assert q["GoodSplitDistance"].value == pytest.approx(truth["GoodSplitDistance"], rel=1e-12)
    assert q["BadSplitDistance"].value == 0.0


def test_all_unsure_split_pairs_give_undefined_values_with_the_full_range():
    pop = population_from_labels([0, 0, 0, 0, 1], [0, 0, 1, 1, 1])
    sample = sample_pairs(pop, n_draws=400, rng=np.random.default_rng(2))
    split_items = [0, 1]  # every split pair involves 0 or 1
    q = estimate_quality(pop, sample, judge(pop, sample, np.arange(5), unsure=split_items))
    split_distance = impact_metrics(pop).metrics["SplitDistance"]
    e = q["GoodSplitDistance"]
    assert math.isnan(e.value) and math.isnan(e.stderr)
    assert e.ci_low == 0.0 and e.ci_high == pytest.approx(split_distance, rel=1e-12)
    assert e.judged_draws == 0 and e.drawn_draws > 0
    assert math.isnan(q["GoodDistance"].value)
    assert q["GoodDistance"].as_dict()["value"] is None


def test_good_and_bad_share_one_stderr_and_add_up_to_the_exact_total():
    rng = np.random.default_rng(3)
    ideal = rng.integers(0, 8, 60)
    pop = population_from_labels(rng.integers(0, 8, 60), rng.integers(0, 8, 60), rng.lognormal(size=60))
    exact = impact_metrics(pop).metrics
    sample = sample_pairs(pop, n_draws=500, rng=rng)
    q = estimate_quality(pop, sample, judge(pop, sample, ideal))
    pairs = {
        ("GoodSplitDistance", "BadSplitDistance"): exact["SplitDistance"],
        ("GoodMergeDistance", "BadMergeDistance"): exact["MergeDistance"],
        ("AffectedGoodIndex", "AffectedBadIndex"): exact["AffectedJaccardIndex"],
        ("GoodSplitRate", "BadSplitRate"): exact["SplitRate"],
        ("GoodMergeRate", "BadMergeRate"): exact["MergeRate"],
    }
    for (good, bad), total in pairs.items():
        assert q[good].value + q[bad].value == pytest.approx(total, rel=1e-12)
        assert q[good].stderr == q[bad].stderr
        assert q[good].ci_low == pytest.approx(total - q[bad].ci_high, abs=1e-15)
    assert q["GoodDistance"].value + q["BadDistance"].value == pytest.approx(exact["JaccardDistance"], rel=1e-12)


def test_higher_confidence_gives_wider_intervals_around_the_same_value():
    rng = np.random.default_rng(4)
    ideal = rng.integers(0, 5, 40)
    pop = population_from_labels(rng.integers(0, 5, 40), rng.integers(0, 5, 40))
    sample = sample_pairs(pop, n_draws=300, scheme="precision", rng=rng)
    verdicts = judge(pop, sample, ideal)
    narrow = estimate_quality(pop, sample, verdicts, confidence=0.8)
    wide = estimate_quality(pop, sample, verdicts, confidence=0.99)
    assert list(narrow.estimates) == list(metrics_for_scheme("precision"))
    for name in narrow.estimates:
        assert narrow[name].value == wide[name].value
        assert wide[name].ci_low < narrow[name].ci_low <= narrow[name].value <= narrow[name].ci_high < wide[name].ci_high


def test_a_vantage_mask_of_everything_equals_no_mask_and_slices_track_their_truth():
    rng = np.random.default_rng(5)
    n = 200
    ideal = rng.integers(0, 30, n)
    base = np.where(rng.random(n) < 0.3, rng.integers(0, 30, n), ideal)
    exp = np.where(rng.random(n) < 0.3, rng.integers(0, 30, n), ideal)
    pop = population_from_labels(base, exp)
    sample = sample_pairs(pop, n_draws=40_000, rng=rng)
    verdicts = judge(pop, sample, ideal)
    everything = estimate_quality(pop, sample, verdicts, vantage=np.ones(n, bool))
    assert everything.as_dict() == estimate_quality(pop, sample, verdicts).as_dict()
    mask = np.arange(n) % 2 == 0
    sliced = estimate_quality(pop, sample, verdicts, vantage=mask)
    truth = quality_from_gold(pop, ideal, vantage=mask)
    for name, e in sliced.estimates.items():
        assert abs(e.value - truth[name]) < 4 * e.stderr + 1e-12, name


def test_bad_confidence_and_mask_are_named():
    pop = population_from_labels([0, 0], [0, 1])
    sample = sample_pairs(pop, n_draws=10, rng=np.random.default_rng(0))
    verdicts = verdicts_from_judgements([], [], [])
    with pytest.raises(ValueError, match="confidence"):
        estimate_quality(pop, sample, verdicts, confidence=95)
    with pytest.raises(ValueError, match="vantage has 3 values, expected 2"):
        estimate_quality(pop, sample, verdicts, vantage=[True, True, False])
