"""Property-based tests of the exact entry points: populations, impact metrics, external measures, gold.

Over generated populations (tests/metrics_core/strategies.py): no exception, shares in [0, 1],
the decompositions add up, and weights a power of two apart give the same numbers.
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from metrics_core import (
    IMPACT_METRICS,
    impact_by_group,
    impact_metrics,
    impact_per_base_cluster,
    impact_per_item,
    population_from_labels,
    quality_from_gold,
    truth_from_gold,
)
from metrics_core.external import external_measures
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, populations, truth_and_prediction, within

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
# Every impact metric is a share of weight except none; WeightFractionOfBaseCluster is nan with nothing affected.
SIGNED_EXTERNAL = {"AdjustedRandIndex", "NormalizedPivotedAccuracy"}


def close(x, y, rel=1e-9):
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= rel * max(1.0, abs(x), abs(y))


@PROPERTIES
@given(populations())
def test_population_codes_and_sums_are_consistent(pop):
    assert pop.n_items == len(pop.base) == len(pop.exp) == len(pop.cell)
    assert int(pop.cell_size.sum()) == int(pop.base_size.sum()) == int(pop.exp_size.sum()) == pop.n_items
    assert np.all(pop.weight > 0) and np.all(np.isfinite(pop.weight))
    assert np.all(pop.weight >= 2.0**-201) and np.all(pop.weight < 2.0**200)  # normal after rescaling
    assert close(pop.base_weight.sum(), pop.cell_weight.sum()) and close(pop.exp_weight.sum(), pop.cell_weight.sum())
    assert np.array_equal(pop.cell_base[pop.cell], pop.base) and np.array_equal(pop.cell_exp[pop.cell], pop.exp)


@PROPERTIES
@given(populations())
def test_impact_metrics_are_shares_that_decompose(pop):
    result = impact_metrics(pop)
    m = result.metrics
    assert list(m) == list(IMPACT_METRICS)
    for name, value in m.items():
        if name == "WeightFractionOfBaseCluster" and result.affected_items == 0:
            assert math.isnan(value)
        else:
            assert within(0.0, value, 1.0), (name, value)
    assert close(m["SplitDistance"] + m["MergeDistance"], m["JaccardDistance"])
    assert close(m["JaccardIndex"] + m["JaccardDistance"], 1.0)
    assert close(m["AffectedJaccardIndex"] + m["UnaffectedJaccardIndex"], m["JaccardIndex"])
    assert close(m["UnaffectedJaccardIndex"] + m["AffectedWeightFraction"], 1.0)
    assert m["SplitDistance"] <= m["SplitRate"] + 1e-12 and m["MergeDistance"] <= m["MergeRate"] + 1e-12
    assert result.affected_items == int(pop.cell_size[pop.cell_affected()].sum())
    assert close(result.total_weight, float(pop.given_weight(pop.weight.sum())), rel=1e-12)
    per_item = impact_per_item(pop)
    assert np.array_equal(per_item["Affected"], pop.cell_affected()[pop.cell])
    total = np.sum(pop.weight * per_item["JaccardDistance"]) / pop.weight.sum()
    assert close(total, m["JaccardDistance"])


@pytest.mark.slow  # 500 examples: about 20-50 s on two cores
@PROPERTIES
@given(populations(), st.data())
def test_tables_by_cluster_and_group_lift_the_same_metrics(pop, data):
    groups = data.draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=pop.n_items, max_size=pop.n_items))
    overall = impact_metrics(pop)
    for table in (impact_per_base_cluster(pop), impact_by_group(pop, groups)):
        assert int(table.items.sum()) == pop.n_items
        assert int(table.affected_items.sum()) == overall.affected_items
        assert close(table.weight.sum(), overall.total_weight)
        for name in ("JaccardDistance", "SplitDistance", "MergeDistance"):
            # weights as given may be ~2**-1070: each table's share of the total first, or w × metric underflows
            lifted = np.sum(table.weight / table.weight.sum() * table.metrics[name])
            assert close(lifted, overall.metrics[name]), name


@PROPERTIES
@given(populations(), st.integers(-1000, 1000))
def test_weights_a_power_of_two_apart_give_the_same_metrics(pop, shift):
    given = pop.given_weight(pop.weight)
    if pop.unit_weights:
        given = np.ones(pop.n_items)
    base, exp = pop.base_labels[pop.base], pop.exp_labels[pop.exp]
    with np.errstate(over="ignore"):
        shifted = np.ldexp(given, shift)
    if not np.all((shifted > 0) & np.isfinite(shifted)) or not np.isfinite(shifted.sum()):
        return  # off the float64 range: not the same weights any more
    if np.any(shifted < np.finfo(float).tiny) and not np.array_equal(np.ldexp(shifted, -shift), given):
        return  # a subnormal result lost bits: not the same ratios
    other = population_from_labels(base, exp, shifted)
    ours, theirs = impact_metrics(pop).metrics, impact_metrics(other).metrics
    assert all(close(ours[name], theirs[name], rel=1e-12) for name in IMPACT_METRICS)


@pytest.mark.slow  # 500 examples: about 20-50 s on two cores
@PROPERTIES
@given(populations(), st.data())
def test_gold_metrics_decompose_the_exact_ones(pop, data):
    gold = data.draw(st.lists(st.integers(0, 3), min_size=pop.n_items, max_size=pop.n_items))
    exact = impact_metrics(pop).metrics
    q = quality_from_gold(pop, gold)
    assert close(q["GoodSplitDistance"] + q["BadSplitDistance"], exact["SplitDistance"])
    assert close(q["GoodMergeDistance"] + q["BadMergeDistance"], exact["MergeDistance"])
    assert close(q["GoodSplitRate"] + q["BadSplitRate"], exact["SplitRate"])
    assert close(q["GoodMergeRate"] + q["BadMergeRate"], exact["MergeRate"])
    assert close(q["GoodDistance"] - q["BadDistance"], q["GoodMinusBadDistance"])
    for name, value in q.items():
        if name not in ("GoodMinusBadDistance", "DeltaPrecision"):
            assert math.isnan(value) or within(0.0, value, 1.0), (name, value)
    truth = truth_from_gold(pop, gold)
    for name in ("RecallBase", "PrecisionBase", "RecallBaseAll", "RecallExpAll", "PrecisionBaseAll", "PrecisionExpAll"):
        assert math.isnan(truth[name]) or within(0.0, truth[name], 1.0), name


@PROPERTIES
@given(truth_and_prediction())
# Found by Hypothesis: one item 3.6e16 times the others' weight made (w² − s)/2 cancel to 0 (ZeroDivisionError).
@example(([0] * 5, [0] * 5, np.array([7.90505033e-323] * 4 + [2.84809454e-306])))
def test_external_measures_are_defined_or_null(case):
    truth, pred, w = case
    result = external_measures(truth, pred, weights=w)
    for name, value in result.items():
        if value is None:
            continue
        assert math.isfinite(value), name
        low = -1.0 if name in SIGNED_EXTERNAL else 0.0
        assert within(low, value, 1.0), (name, value)
    if truth == pred or len(set(truth)) == len(set(pred)) == len(truth):
        assert result["BCubedF1"] == 1.0 or math.isclose(result["BCubedF1"], 1.0)
