"""The headline decision (abcde-spec §9, §12): every outcome, the margin, fragility, undefined sequences."""

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import Estimate, QualityEstimates

NAN = math.nan


def quality(value, cs_low, cs_high, unsure=(None, None), scheme="precision", metric="DeltaPrecision"):
    low, high = (value if u is None else u for u in unsure)
    e = Estimate(value=value, stderr=0.01, ci_low=cs_low + 0.01, ci_high=cs_high - 0.01, judged_draws=400, drawn_draws=500, cs_low=cs_low, cs_high=cs_high, unsure_low=low, unsure_high=high)
    return QualityEstimates(scheme=scheme, confidence=0.95, estimates={metric: e})


@pytest.mark.parametrize(
    ("value", "cs", "margin", "outcome"),
    [
        (0.05, (0.02, 0.08), 0.0, "better"),
        (-0.05, (-0.08, -0.02), 0.0, "worse"),
        (0.01, (-0.02, 0.04), 0.0, "not_enough_data"),
        (0.0, (0.0, 0.0), 0.0, "not_enough_data"),  # no margin: a point at 0 is neither side
        (0.05, (0.02, 0.08), 0.02, "not_enough_data"),  # 0.02 is not above δ = 0.02
        (0.05, (0.021, 0.08), 0.02, "better"),
        (-0.05, (-0.08, -0.021), 0.02, "worse"),
        (0.001, (-0.01, 0.012), 0.02, "no_meaningful_difference"),
        (0.001, (-0.02, 0.02), 0.02, "no_meaningful_difference"),  # the ends may touch ±δ
        (0.001, (-0.01, 0.03), 0.02, "not_enough_data"),
        (NAN, (NAN, NAN), 0.0, "not_enough_data"),
        (0.05, (NAN, 0.08), 0.0, "not_enough_data"),
    ],
)
def test_outcomes(value, cs, margin, outcome):
    d = mc.decide(quality(value, *cs), margin=margin)
    assert d.outcome == outcome
    assert d.outcome in mc.DECISIONS
    assert (d.metric, d.margin) == ("DeltaPrecision", margin)
    assert (d.cs_low, d.cs_high) == cs or math.isnan(value)


def test_default_metric_follows_the_scheme_and_a_named_one_is_used():
    assert mc.deciding_metric("precision") == "DeltaPrecision"
    assert mc.deciding_metric("jaccard") == mc.deciding_metric("stratified") == "GoodMinusBadDistance"
    q = quality(-0.05, -0.08, -0.02, scheme="stratified", metric="GoodMinusBadDistance")
    assert mc.decide(q).as_dict() == {
        "outcome": "worse", "metric": "GoodMinusBadDistance", "value": -0.05, "cs_low": -0.08, "cs_high": -0.02,
        "margin": 0.0, "fragile": False, "settle_half_width": 0.05, "flip_outcome": "", "flip_centre": None,
        "flip_bound": "", "flip_bound_value": None, "flip_threshold": None,
    }
    with pytest.raises(ValueError, match="DeltaPrecision"):
        mc.decide(q, metric="DeltaPrecision")
    with pytest.raises(ValueError, match="margin"):
        mc.decide(q, margin=-0.01)


@pytest.mark.parametrize(
    ("value", "cs", "unsure", "margin", "fragile"),
    [
        # CS 0.05 ± 0.03; centred on 0.01 it becomes [−0.02, 0.04]: no longer better.
        (0.05, (0.02, 0.08), (0.01, 0.06), 0.0, True),
        # Centred on 0.04 or 0.07 it stays above 0.
        (0.05, (0.02, 0.08), (0.04, 0.07), 0.0, False),
        # Not enough data, but deciding the unsure verdicts could make it better (centred on 0.06).
        (0.01, (-0.02, 0.04), (0.0, 0.06), 0.0, True),
        # Asymmetric sequence keeps its half-widths: [0.03 − 0.01, 0.03 + 0.05] still above 0.
        (0.03, (0.02, 0.08), (0.011, 0.03), 0.0, False),
        (0.03, (0.02, 0.08), (0.009, 0.03), 0.0, True),
        # Inside the margin either way.
        (0.0, (-0.01, 0.01), (-0.005, 0.005), 0.02, False),
        (0.0, (-0.01, 0.01), (-0.015, 0.005), 0.02, True),
        # No unsure verdict: the range is the value, never fragile; undefined range: not fragile.
        (0.05, (0.02, 0.08), (None, None), 0.0, False),
        (0.05, (0.02, 0.08), (NAN, NAN), 0.0, False),
    ],
)
def test_fragile_when_deciding_the_unsure_verdicts_changes_the_outcome(value, cs, unsure, margin, fragile):
    assert mc.decide(quality(value, *cs, unsure=unsure), margin=margin).fragile is fragile


@pytest.mark.parametrize(
    ("value", "cs", "unsure", "margin", "flip"),
    [
        # Issue 34: both ends of the unsure range above zero, yet centred on 0.1108 the sequence's
        # lower end falls to −0.0092: below zero, so the headline would say not enough data.
        (0.126, (0.006, 0.246), (0.1108, 0.1414), 0.0, ("not_enough_data", 0.1108, "cs_low", -0.0092, 0.0)),
        # Undecided, and the upper end of the unsure range lifts the lower end above the margin.
        (0.01, (-0.02, 0.04), (0.0, 0.06), 0.0, ("better", 0.06, "cs_low", 0.03, 0.0)),
        # Worse, until the unsure verdicts go for Exp: the upper end rises above −margin.
        (-0.05, (-0.08, -0.03), (-0.05, -0.02), 0.01, ("not_enough_data", -0.02, "cs_high", 0.0, -0.01)),
        # Inside the margin, until the upper end of the sequence leaves it.
        (0.0, (-0.01, 0.01), (-0.005, 0.015), 0.02, ("not_enough_data", 0.015, "cs_high", 0.025, 0.02)),
    ],
)
def test_a_fragile_decision_says_which_end_crosses_which_threshold(value, cs, unsure, margin, flip):
    d = mc.decide(quality(value, *cs, unsure=unsure), margin=margin)
    assert d.fragile
    outcome, centre, bound, bound_value, threshold = flip
    assert (d.flip_outcome, d.flip_bound) == (outcome, bound)
    assert (d.flip_centre, d.flip_bound_value, d.flip_threshold) == pytest.approx((centre, bound_value, threshold))


def test_a_sturdy_decision_has_no_flip():
    d = mc.decide(quality(0.05, 0.02, 0.08, unsure=(0.04, 0.07)))
    assert (d.fragile, d.flip_outcome, d.flip_bound) == (False, "", "")
    assert math.isnan(d.flip_centre) and math.isnan(d.flip_bound_value) and math.isnan(d.flip_threshold)


@pytest.mark.parametrize(
    ("value", "margin", "settle"),
    [(0.05, 0.0, 0.05), (-0.05, 0.01, 0.04), (0.005, 0.02, 0.015), (-0.02, 0.02, 0.0), (NAN, 0.01, NAN)],
)
def test_settle_half_width(value, margin, settle):
    d = mc.decide(quality(value, value - 0.1, value + 0.1) if not math.isnan(value) else quality(NAN, NAN, NAN), margin=margin)
    assert d.settle_half_width == pytest.approx(settle, abs=1e-15, nan_ok=True)
    # A sequence narrower than that settles it (here: centred on the value).
    if settle > 0:
        narrow = quality(value, value - 0.99 * settle, value + 0.99 * settle)
        assert mc.decide(narrow, margin=margin).outcome != "not_enough_data"
    assert mc.decide(quality(NAN, NAN, NAN)).as_dict()["settle_half_width"] is None


def test_decide_on_real_estimates():
    """All merges good, all splits good: GoodMinusBadDistance is positive and its sequence, with
    enough verdicts, lies above 0; judged by nobody, the sequence spans everything."""
    pop = mc.population_from_labels([0, 0, 0, 1, 1, 2], [0, 0, 1, 1, 3, 2])
    gold = np.array([0, 0, 1, 1, 2, 3])
    sample = mc.sample_pairs(pop, n_draws=2000, rng=np.random.default_rng(0))
    a, b = mc.pairs_for_judgement(sample, rng=np.random.default_rng(1))
    verdicts = mc.verdicts_from_judgements(a, b, np.where(gold[a] == gold[b], "equivalent", "not_equivalent"))
    d = mc.decide(mc.estimate_quality(pop, sample, verdicts))
    assert (d.outcome, d.metric, d.fragile) == ("better", "GoodMinusBadDistance", False)
    nothing = mc.verdicts_from_judgements([], [], [])
    assert mc.decide(mc.estimate_quality(pop, sample, nothing)).outcome == "not_enough_data"
