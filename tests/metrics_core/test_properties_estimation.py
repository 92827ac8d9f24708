"""Property-based tests of the estimates: estimate_quality, by slice, decide, planning, sequences.

Over generated populations, samples and verdicts (tests/metrics_core/strategies.py: all unsure,
nothing judged, gold-only pairs, several raters, slices with no units, extreme but legal weights):
no exception; every interval holds its value; the sequence holds the interval; shares lie
between 0 and their class's exact total, and Good + Bad is that total; the same inputs give the
same numbers.
"""

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import (
    confidence_sequence_half_width,
    decide,
    estimate_quality,
    estimate_quality_by_slice,
    impact_metrics,
    judgements_to_target,
    plan_to_half_width,
)
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, affected, judgements, populations, samples, within

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
# Each Good/Bad share and the exact impact metric it splits.
SPLITS = {
    "SplitDistance": ("GoodSplitDistance", "BadSplitDistance"),
    "MergeDistance": ("GoodMergeDistance", "BadMergeDistance"),
    "SplitRate": ("GoodSplitRate", "BadSplitRate"),
    "MergeRate": ("GoodMergeRate", "BadMergeRate"),
}


@st.composite
def judged_cases(draw):
    pop = draw(populations())
    if not affected(pop):
        return None
    sample = draw(samples(pop))
    return pop, sample, draw(judgements(pop, sample))


# A normal interval needs two judged draws in each part: before, ΔPrecision has a value and no interval yet.
NORMAL_INTERVALS = {"DeltaPrecision"}
# ΔPrecision's classes mix pairs that pull it up and pairs that pull it down: leaving an unsure pair
# out weights its class's other pairs up (spec §5), which no verdict of that pair would do, so the
# estimate may lie just outside the range of the decided ones (spec §12). Hypothesis found
# −0.0193 beside [−0.0182, −0.0134] (stratified, Exp one cluster); the other metrics' classes
# each pull one way, and there the range holds the estimate.
MIXED_CLASSES = {"DeltaPrecision"}


def check_estimate(name, e):
    assert 0 <= e.judged_draws and e.drawn_draws >= 0
    if math.isnan(e.value):
        return
    if name in NORMAL_INTERVALS and math.isnan(e.stderr):
        assert math.isnan(e.ci_low) and math.isnan(e.ci_high), (name, e)
        return
    assert within(e.ci_low, e.value, e.ci_high), (name, e)
    if not math.isnan(e.cs_low):
        assert within(e.cs_low, e.ci_low, e.ci_high) and within(e.ci_low, e.ci_high, e.cs_high), (name, e)
    if not math.isnan(e.unsure_low):
        assert e.unsure_low <= e.unsure_high, (name, e)
        if name not in MIXED_CLASSES:
            assert within(e.unsure_low, e.value, e.unsure_high), (name, e)


@PROPERTIES
@given(judged_cases())
def test_estimate_quality_intervals_hold_their_values(case):
    if case is None:
        return
    pop, sample, judged = case
    q = estimate_quality(pop, sample, judged.verdicts())
    assert q.scheme == sample.scheme
    for name, e in q.estimates.items():
        check_estimate(name, e)
    again = estimate_quality(pop, sample, judged.verdicts())
    assert q.as_dict() == again.as_dict()  # deterministic


@PROPERTIES
@given(judged_cases())
def test_good_and_bad_shares_lie_within_and_add_up_to_the_class_total(case):
    if case is None:
        return
    pop, sample, judged = case
    q = estimate_quality(pop, sample, judged.verdicts())
    exact = impact_metrics(pop).metrics
    for total_name, (good, bad) in SPLITS.items():
        if good not in q:
            continue
        total = exact[total_name]
        g, b = q[good].value, q[bad].value
        for value in (g, b):
            assert math.isnan(value) or within(0.0, value, total), (good, value, total)
        if not (math.isnan(g) or math.isnan(b)):
            assert g + b == pytest.approx(total, rel=1e-9, abs=1e-12), (good, bad)


@pytest.mark.slow  # 500 examples: about 20-50 s on two cores
@PROPERTIES
@given(judged_cases(), st.data())
def test_estimates_by_slice_hold_their_values(case, data):
    if case is None:
        return
    pop, sample, judged = case
    # Some slice values own no item of the sample (slices with no units), some no item at all.
    slice_of_item = np.array(data.draw(st.lists(st.integers(-1, 2), min_size=pop.n_items, max_size=pop.n_items)))
    labels = ["zero", "one", "two", "never"]
    slices = estimate_quality_by_slice(
        pop, sample, judged.verdicts(), slice_of_item=slice_of_item, labels=labels
    )
    for part in slices:
        assert within(0.0, part.weight_fraction, 1.0)
        for result in (part.metric, part.contribution):
            for name, e in result.estimates.items():
                check_estimate(name, e)


@PROPERTIES
@given(judged_cases(), st.sampled_from([0.0, 0.01, 0.1]))
def test_decide_and_plan_never_fail_on_an_estimate(case, margin):
    if case is None:
        return
    pop, sample, judged = case
    q = estimate_quality(pop, sample, judged.verdicts())
    decision = decide(q, margin=margin)
    assert decision.as_dict()
    for name, e in q.estimates.items():
        if not math.isfinite(e.half_width) or e.half_width <= 0 or e.judged_draws == 0:
            continue
        for kind in ("fixed", "sequence"):
            plan = plan_to_half_width(
                estimate=e, target_half_width=e.half_width / 2, draws_per_pair=1.5, replication=1, kind=kind
            )
            assert plan.as_dict(), name


@PROPERTIES
@given(st.floats(1e-9, 10.0), st.integers(1, 10**6), st.floats(1e-9, 10.0))
def test_judgements_to_target_is_never_negative(half_width, judged, target):
    more = judgements_to_target(half_width=half_width, judgements=judged, target_half_width=target)
    assert more >= 0 or math.isnan(more)


@PROPERTIES
@given(st.floats(0.0, 1.0), st.integers(1, 10**5), st.integers(1, 10**5), st.floats(0.5, 0.999))
def test_a_confidence_sequence_is_at_least_as_wide_as_its_interval(stderr, judged, horizon, confidence):
    half = confidence_sequence_half_width(stderr=stderr, judged=judged, horizon=horizon, confidence=confidence)
    fixed = NormalDist().inv_cdf((1 + confidence) / 2) * stderr
    assert half >= fixed * (1 - 1e-12)
