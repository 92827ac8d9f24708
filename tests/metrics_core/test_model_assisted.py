"""Model-assisted estimates (abcde-spec §15): the identities that hold exactly, the small-class rule,
the cross-fitted calibration and the checks of the inputs. Coverage and width by simulation are in
test_model_assisted_coverage.py, the reference to ppi-python in test_model_assisted_reference.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.estimation import estimate_quality_assisted
from metrics_core.estimation.calibration import cross_fit, pair_folds, score_feature
from tests.metrics_core.draw_order_simulation import DrawOrderRun, world
from tests.metrics_core.model_assisted_simulation import judged_with_unsure_and_replicas, pair_scores

FIELDS = ("value", "stderr", "ci_low", "ci_high", "cs_low", "cs_high", "unsure_low", "unsure_high")


def assert_same(first: mc.QualityEstimates, second: mc.QualityEstimates, tolerance: float = 1e-12) -> None:
    assert list(first.estimates) == list(second.estimates)
    for name in first.estimates:
        for field in FIELDS:
            x, y = getattr(first[name], field), getattr(second[name], field)
            assert (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tolerance * max(1.0, abs(y)), (name, field, x, y)
        assert first[name].judged_draws == second[name].judged_draws


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
@pytest.mark.parametrize("weights", ["unit", "lognormal"])
def test_with_lambda_zero_every_estimate_is_the_human_only_one(scheme, weights):
    """``score_lambda=0``: value, SE, interval, sequence and unsure range equal §14's to 1e-12, with
    unsure and replicated verdicts, at several numbers of verdicts (the calibration runs: ≥ 50 pairs)."""
    w = world(weights)
    for seed in range(3):
        run = DrawOrderRun.draw(w, scheme, 4000, seed)
        scores = pair_scores(w, run.sample, 2.0, seed)
        for tasks in (30, 150, 400):
            verdicts, counts = judged_with_unsure_and_replicas(run, tasks, seed)
            human = mc.estimate_quality(w.population, run.sample, verdicts, labelled_draws=counts)
            assisted = estimate_quality_assisted(
                w.population, run.sample, verdicts, scores, labelled_draws=counts, score_lambda=0.0
            )
            assert_same(assisted.quality, human)
            assert all(c.lam == 0.0 for c in assisted.classes)
            tuned = estimate_quality_assisted(w.population, run.sample, verdicts, scores, labelled_draws=counts)
            if tasks == 400:  # the tuned estimates do differ: the identity is not a no-op
                assert any(tuned[name].stderr != human[name].stderr for name in human.estimates)


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_with_every_draw_judged_or_no_draw_order_the_estimates_are_human_only(scheme):
    """Every pair judged: the all-draws part and the correction cancel, whatever λ; without draw
    order (no labelled prefix) model assistance is off and says so (rule "none")."""
    w = world("lognormal")
    run = DrawOrderRun.draw(w, scheme, 2000, 7)
    scores = pair_scores(w, run.sample, 2.0, 7)
    every, counts = run.judged(len(run.a))
    human = mc.estimate_quality(w.population, run.sample, every, labelled_draws=counts)
    assisted = estimate_quality_assisted(w.population, run.sample, every, scores, labelled_draws=counts)
    assert_same(assisted.quality, human, tolerance=1e-9)
    partial, _ = run.judged(200)
    unordered = estimate_quality_assisted(w.population, run.sample, partial, scores)
    assert_same(unordered.quality, mc.estimate_quality(w.population, run.sample, partial), tolerance=0.0)
    assert {c.rule for c in unordered.classes} == {"none"}


def test_a_constant_score_changes_nothing():
    w = world("unit")
    run = DrawOrderRun.draw(w, "jaccard", 4000, 3)
    verdicts, counts = run.judged(300)
    human = mc.estimate_quality(w.population, run.sample, verdicts, labelled_draws=counts)
    flat = estimate_quality_assisted(
        w.population, run.sample, verdicts, np.full(len(run.sample), 0.3), labelled_draws=counts
    )
    assert_same(flat.quality, human, tolerance=0.0)


def test_a_good_score_narrows_the_merge_intervals_and_says_by_how_much():
    w = world("unit")
    run = DrawOrderRun.draw(w, "jaccard", 4000, 11)
    verdicts, counts = run.judged(400)
    human = mc.estimate_quality(w.population, run.sample, verdicts, labelled_draws=counts)
    assisted = estimate_quality_assisted(
        w.population, run.sample, verdicts, pair_scores(w, run.sample, 3.0, 11), labelled_draws=counts
    )
    for name in ("GoodMergeDistance", "BadMergeDistance", "GoodMinusBadDistance"):
        assert assisted[name].ci_high - assisted[name].ci_low < 0.8 * (human[name].ci_high - human[name].ci_low)
        assert assisted.verdicts_saved[name] == pytest.approx((human[name].stderr / assisted[name].stderr) ** 2)
    merge = next(c for c in assisted.classes if c.pair_class == "merge")
    assert merge.rule == "calibrated" and 0.0 < merge.lam <= 1.0 and merge.verdicts_saved > 1.5
    assert assisted.lambdas["GoodMergeDistance"] == merge.lam
    assert math.isnan(assisted.lambdas["GoodDistance"])  # a sum over classes has no one λ
    out = assisted.as_dict()
    assert set(out) == {"estimates", "classes"}
    assert {"lambda", "verdicts_saved", "cs_low", "unsure_high"} <= set(out["estimates"]["BadMergeDistance"])


def test_the_small_class_rule_picks_the_score_by_judged_pairs():
    """Below 20 judged pairs λ = 0; from 20 to 49 the raw score; from 50 the calibrated one."""
    w = world("unit")
    run = DrawOrderRun.draw(w, "jaccard", 4000, 5)
    scores = pair_scores(w, run.sample, 2.0, 5)
    seen = set()
    for tasks in (10, 40, 80, 160, 400):
        verdicts, counts = run.judged(tasks)
        for c in estimate_quality_assisted(w.population, run.sample, verdicts, scores, labelled_draws=counts).classes:
            expected = "none" if c.judged_pairs < 20 else "raw" if c.judged_pairs < 50 else "calibrated"
            assert c.rule == expected, c
            if c.rule == "none":
                assert c.lam == 0.0 and c.verdicts_saved == 1.0
            seen.add(c.rule)
    assert seen == {"none", "raw", "calibrated"}


def test_the_calibration_predicts_a_judged_pair_without_its_own_verdict():
    """Cross-fitting: flipping one pair's verdict leaves that pair's prediction unchanged (and the
    folds are by pair, the same for both orientations)."""
    rng = np.random.default_rng(0)
    n = 200
    low, high = rng.integers(0, 10_000, n), rng.integers(10_000, 20_000, n)
    assert (pair_folds(low, high) == pair_folds(low.copy(), high.copy())).all()
    assert set(pair_folds(low, high).tolist()) == set(range(5))
    feature = score_feature(rng.uniform(size=n))
    group = rng.integers(0, 2, n)
    share = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * feature))).astype(float)
    fold = pair_folds(low, high)
    first = cross_fit(feature, group, share, fold, 2)
    flipped = share.copy()
    flipped[17] = 1.0 - flipped[17]
    second = cross_fit(feature, group, flipped, fold, 2)
    assert second.out_of_fold[17] == first.out_of_fold[17]
    others = fold != fold[17]
    assert (second.out_of_fold[others] != first.out_of_fold[others]).all()


def test_scores_on_any_real_scale_are_standardised_and_probabilities_take_their_logit():
    assert score_feature(np.array([0.5, 0.5])).tolist() == [0.0, 0.0]
    assert score_feature(np.array([-3.0, 5.0])).tolist() == [-1.0, 1.0]
    assert score_feature(np.array([0.0, 1.0]))[1] == pytest.approx(-score_feature(np.array([0.0, 1.0]))[0])


def test_bad_inputs_are_refused():
    w = world("unit")
    run = DrawOrderRun.draw(w, "jaccard", 500, 1)
    verdicts, counts = run.judged(50)
    with pytest.raises(ValueError, match="one per sample row"):
        estimate_quality_assisted(w.population, run.sample, verdicts, np.ones(3), labelled_draws=counts)
    scores = np.ones(len(run.sample))
    scores[4] = np.nan
    with pytest.raises(ValueError, match="finite"):
        estimate_quality_assisted(w.population, run.sample, verdicts, scores, labelled_draws=counts)
    with pytest.raises(ValueError, match="score_lambda"):
        estimate_quality_assisted(w.population, run.sample, verdicts, np.ones(len(run.sample)), score_lambda=1.5)
