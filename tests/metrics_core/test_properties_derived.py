"""Property-based tests of the derived metrics (MQM §3-5; abcde-spec §7, §14) and the affected item's situation.

Over generated populations, samples and verdicts (tests/metrics_core/strategies.py: all unsure,
nothing judged, gold-only pairs, several raters, extreme but legal weights) and gold clusterings:
``derived_metrics`` gives ΔRecall and IQ in [-1, 1] whose interval holds the value, whose sequence
holds the interval, over the Recall_Base range asked for, the same with the same seed; the diagram
of the gold metrics is the same by either entry point, reports its clips and checks consistently and
is JSON-safe; ``recall_base_matching`` finds a Recall_Base whose ΔRecall is on the curve;
``absolute_quality`` mirrors its inputs; the affected item's situation adds up to one.
"""

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import (
    ABSOLUTE_METRICS,
    DERIVED_METRICS,
    SITUATION_PARTS,
    absolute_quality,
    affected_item_diagram,
    affected_item_diagram_from_metrics,
    affected_item_situation,
    calibration_against_gold,
    derived_metrics,
    estimate_quality,
    impact_metrics,
    quality_from_gold,
    recall_base_matching,
    truth_from_gold,
)
from metrics_core.derived.calibration import MATCH_GRID
from metrics_core.results import json_number
from tests.metrics_core.strategies import (
    PROPERTY_EXAMPLES,
    estimates,
    judged_samples,
    populations,
    same_float,
    within,
)

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
PARAMETERS = st.one_of(st.none(), st.floats(0.01, 1.0), st.just(1.0))


def json_safe(value) -> str:
    return json.dumps(value, allow_nan=False)


@st.composite
def derived_cases(draw):
    pop, sample, judged = draw(judged_samples(max_items=10, max_draws=40))
    low = draw(st.floats(0.01, 1.0))
    high = draw(st.one_of(st.just(low), st.floats(low, 1.0)))
    return (
        pop,
        sample,
        judged,
        (low, high),
        draw(PARAMETERS),
        draw(PARAMETERS),
        draw(st.sampled_from([1, 2, 8])),
        draw(st.sampled_from(["stratum", "class"])),
        draw(st.integers(0, 2**32 - 1)),
    )


@PROPERTIES
@given(derived_cases())
def test_derived_metrics_and_the_situation_hold_their_values(case):
    pop, sample, judged, recall_range, recall_base, precision_base, n_boot, resampling, seed = case
    verdicts = judged.verdicts()

    def derive():
        return derived_metrics(
            pop,
            sample,
            verdicts,
            rng=np.random.default_rng(seed),
            recall_base=recall_base,
            recall_base_range=recall_range,
            precision_base=precision_base,
            n_boot=n_boot,
            resampling=resampling,
        )

    d = derive()
    assert list(d.estimates) == list(DERIVED_METRICS) and d.n_boot == n_boot and d.resampling == resampling
    q = estimate_quality(pop, sample, verdicts)
    check_situation(pop, sample, q)
    precision = q["DeltaPrecision"]
    expected_range = (recall_base, recall_base) if recall_base is not None else recall_range
    for name in DERIVED_METRICS:
        e = d[name]
        assert (e.recall_base_low, e.recall_base_high) == expected_range
        assert (e.judged_draws, e.drawn_draws) == (precision.judged_draws, precision.drawn_draws)
        assert 0 <= d.undefined_replicates[name] <= n_boot
        assert same_float(e.value, d.diagram.values["DeltaRecall" if name == "DeltaRecall" else "IQ"])
        if math.isnan(e.value):
            continue
        assert within(-1.0, e.value, 1.0), (name, e)
        if not math.isnan(e.ci_low):
            assert within(e.ci_low, e.value, e.ci_high), (name, e)
            if not math.isnan(e.cs_low):
                assert e.cs_low <= e.ci_low and e.ci_high <= e.cs_high, (name, e)
        if not math.isnan(e.unsure_low):
            assert within(e.unsure_low, e.value, e.unsure_high), (name, e)
    diagram = d.diagram
    if recall_base is None and not math.isnan(diagram.recall_base):  # the rule's value, clamped into the range
        low, high = recall_range
        assert low <= diagram.recall_base <= high
        assert diagram.recall_base in ((0.6, 0.8) if diagram.recall_base_rule == "default" else (low, high))
    details = json_safe(d.as_dict())
    assert details == json_safe(derive().as_dict())  # the same seed, the same numbers


@st.composite
def gold_cases(draw):
    pop = draw(populations(max_items=12))
    gold = draw(st.lists(st.integers(0, 3), min_size=pop.n_items, max_size=pop.n_items))
    return pop, gold, draw(PARAMETERS), draw(PARAMETERS), draw(st.integers(0, len(MATCH_GRID) - 1))


@PROPERTIES
@given(gold_cases())
def test_the_gold_diagram_is_consistent_and_calibrates_against_the_truth(case):
    pop, gold, recall_base, precision_base, k = case
    exact = impact_metrics(pop).metrics
    quality = quality_from_gold(pop, gold)
    d = affected_item_diagram_from_metrics(quality, exact, recall_base=recall_base, precision_base=precision_base)
    direct = affected_item_diagram(
        affected_weight_fraction=exact["AffectedWeightFraction"],
        good_split_rate=quality["GoodSplitRate"],
        bad_split_rate=quality["BadSplitRate"],
        good_merge_rate=quality["GoodMergeRate"],
        bad_merge_rate=quality["BadMergeRate"],
        delta_precision=quality["DeltaPrecision"],
        weight_fraction_of_base_cluster=exact["WeightFractionOfBaseCluster"],
        jaccard_distance=exact["JaccardDistance"],
        recall_base=recall_base,
        precision_base=precision_base,
    )
    as_json = json_safe(d.as_dict())
    assert as_json == json_safe(direct.as_dict())
    assert d.recall_base_rule == ("given" if recall_base is not None else "default")
    if recall_base is not None:
        assert d.recall_base == recall_base
    if d.variant is None:
        assert set(d.clips.values()) == {None}
        assert all(d.checks[name] is None for name in ("GoodStableWeightInRange", "IQInRange", "RecallPositive"))
    else:
        assert d.variant == (1 if precision_base is None else 2)
        assert d.weights["BaseWeight"] == 1.0
        assert -1.0 <= d.iq <= 1.0 and within(-1.0, d.delta_recall, 1.0)
        assert d.checks["IQInRange"] == (d.clips["IQ"] is None)
        assert d.checks["GoodStableWeightInRange"] == (d.clips["GoodStableWeight"] is None)
        if recall_base is None:
            assert d.recall_base in (0.6, 0.8)
        # The curve through the diagram's own Recall_Base, and the diagram rebuilt with its parameters.
        curve = d.recall_base_curve([d.recall_base])
        assert same_float(float(curve.delta_recall[0]), d.delta_recall) and same_float(float(curve.iq[0]), d.iq)
        again = d.with_parameters(recall_base=d.recall_base, precision_base=d.precision_base)
        assert all(same_float(again.values[name], d.values[name]) for name in d.values)
        heat = d.heat_map([0.5, 1.0], [0.3, d.recall_base])
        assert heat.iq.shape == (2, 2) and np.all(np.isnan(heat.iq) | (np.abs(heat.iq) <= 1.0))
    # Recall_Base matching: a ΔRecall read off the Variant 1 curve at a grid point is matched there.
    assert recall_base_matching(d, math.nan) == []
    variant_1 = d.with_parameters(recall_base=None, precision_base=None).recall_base_curve(MATCH_GRID)
    if variant_1.valid[k] and math.isfinite(variant_1.delta_recall[k]):
        matches = recall_base_matching(d, float(variant_1.delta_recall[k]))
        assert any(abs(r - MATCH_GRID[k]) <= 1e-12 for r in matches), (MATCH_GRID[k], matches)
        assert all(MATCH_GRID[0] <= r <= MATCH_GRID[-1] for r in matches)
    # Calibration against the truth: JSON-safe, the truth and the diagram as they are.
    truth = truth_from_gold(pop, gold)
    report = calibration_against_gold(d, truth)
    json_safe(report)
    assert report["truth"]["DeltaRecall"] == json_number(truth["DeltaRecall"])
    assert report["diagram"]["IQ"] == json_number(d.iq) and report["diagram"]["variant"] == d.variant
    assert report["matching_recall_base"] == [round(r, 4) for r in recall_base_matching(d, truth["DeltaRecall"])]
    parameters_known = 0 < truth["RecallBase"] <= 1 and 0 < truth["PrecisionBase"] <= 1
    assert bool(report["at_true_parameters"]) == parameters_known


@PROPERTIES
@given(estimates(), st.one_of(st.none(), estimates()))
def test_absolute_quality_mirrors_its_inputs(delta_precision, delta_recall):
    q = absolute_quality(delta_precision=delta_precision, delta_recall=delta_recall)
    assert list(q) == list(ABSOLUTE_METRICS[: 1 if delta_recall is None else 2])
    for name, offset, source in (("Precision", 1.0, delta_precision), ("RecallAboveMinimum", 0.0, delta_recall)):
        if source is None:
            continue
        e = q[name]
        assert same_float(e.value, offset - source.value) and same_float(e.stderr, source.stderr)
        assert same_float(e.ci_low, offset - source.ci_high) and same_float(e.ci_high, offset - source.ci_low)
        assert (e.judged_draws, e.drawn_draws) == (source.judged_draws, source.drawn_draws)
        if not math.isnan(source.ci_low):
            assert within(e.ci_low, e.value, e.ci_high)
    back = absolute_quality(delta_precision=q["Precision"])["Precision"]  # mirrored twice: the input again
    assert math.isnan(delta_precision.value) or math.isclose(back.value, delta_precision.value, abs_tol=1e-15)


def check_situation(pop, sample, q):
    """The affected item's situation: exact parts that add up to one, estimated areas within them."""
    exact = impact_metrics(pop).metrics
    situation = affected_item_situation(q, exact=exact)
    if sample.scheme == "precision":
        assert situation is None  # the precision scheme does not estimate the distances
        return
    assert situation is not None
    assert math.isclose(situation.split + situation.stable + situation.merge, 1.0, rel_tol=1e-9)
    share = {"split": situation.split, "stable": situation.stable, "merge": situation.merge}
    values = {}
    for name, part, _ in SITUATION_PARTS:
        e = situation.parts[name]
        values[name] = e.value
        assert same_float(e.value, q[name].value / exact["AffectedWeightFraction"]) or math.isclose(
            e.value, q[name].value / exact["AffectedWeightFraction"], rel_tol=1e-12
        )
        assert math.isnan(e.value) or within(0.0, e.value, share[part]), (name, e, share[part])
    for good, bad, part in (
        ("GoodSplitDistance", "BadSplitDistance", "split"),
        ("GoodMergeDistance", "BadMergeDistance", "merge"),
        ("AffectedGoodIndex", "AffectedBadIndex", "stable"),
    ):
        if not (math.isnan(values[good]) or math.isnan(values[bad])):
            assert math.isclose(values[good] + values[bad], share[part], rel_tol=1e-9, abs_tol=1e-12), part
    json_safe(situation.as_dict())
