"""Impact metrics (spec §2) against the brute-force set-by-set reference, and by hand.

Acceptance point 2 (impact part) and point 5 (the hand-computed population).
"""

import math
from fractions import Fraction as F

import numpy as np
import pyarrow as pa
import pytest

import metrics_core as mc
from tests.metrics_core import reference as ref

N_CASES = 200
ABS_TOL = 1e-12
REL_TOL = 1e-12


def assert_close(actual, expected, what):
    actual, expected = float(actual), float(expected)
    if math.isnan(expected):
        assert math.isnan(actual), f"{what}: expected NaN, got {actual!r}"
        return
    assert math.isclose(actual, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL), (
        f"{what}: got {actual!r}, reference {expected!r} (diff {actual - expected:.3g})"
    )


def as_container(values, seed):
    """The API accepts lists, numpy arrays and pyarrow arrays: vary the container by seed."""
    kind = seed % 3
    if kind == 0:
        return list(values.tolist())
    if kind == 1:
        return values
    return pa.array(values.tolist())


def build(seed):
    base, exp, weights, gold, groups = ref.random_case(seed)
    pop = mc.population_from_labels(as_container(base, seed), as_container(exp, seed + 1), weights)
    return pop, ref.RefPopulation(base.tolist(), exp.tolist(), weights), base, exp, groups


def assert_table_matches(table, expected_by_label, what):
    labels = list(np.asarray(table.labels).tolist())
    assert sorted(map(str, labels)) == sorted(map(str, expected_by_label)), f"{what}: labels differ"
    assert len(set(labels)) == len(labels), f"{what}: a label appears in two rows"
    assert set(table.metrics) == set(mc.IMPACT_METRICS)
    for row, label in enumerate(labels):
        exp_row = expected_by_label[label]
        assert int(table.items[row]) == exp_row["items"], f"{what}[{label}].items"
        assert int(table.affected_items[row]) == exp_row["affected_items"], f"{what}[{label}].affected_items"
        assert_close(table.weight[row], exp_row["weight"], f"{what}[{label}].weight")
        for name in mc.IMPACT_METRICS:
            assert_close(table.metrics[name][row], exp_row["metrics"][name], f"{what}[{label}].{name}")


@pytest.mark.parametrize("seed", range(N_CASES))
def test_impact_matches_brute_force(seed):
    pop, rp, base, exp, groups = build(seed)

    # Population fields (API): per-code labels, sums and counts agree with the sets.
    for i in range(rp.n):
        bc, ec, cc = int(pop.base[i]), int(pop.exp[i]), int(pop.cell[i])
        assert pop.base_labels[bc] == base[i] and pop.exp_labels[ec] == exp[i]
        assert pop.cell_base[cc] == bc and pop.cell_exp[cc] == ec
        assert pop.base_size[bc] == len(rp.Base(i)) and pop.exp_size[ec] == len(rp.Exp(i))
        assert pop.cell_size[cc] == len(rp.Base(i) & rp.Exp(i))
        assert_close(pop.base_weight[bc], rp.weight(rp.Base(i)), f"base_weight of item {i}")
        assert_close(pop.exp_weight[ec], rp.weight(rp.Exp(i)), f"exp_weight of item {i}")
        assert_close(pop.cell_weight[cc], rp.weight(rp.Base(i) & rp.Exp(i)), f"cell_weight of item {i}")
    assert pop.n_items == rp.n
    assert_close(pop.total_weight, rp.W, "total_weight")

    # Overall.
    got = mc.impact_metrics(pop)
    want = ref.impact_overall(rp)
    assert tuple(mc.IMPACT_METRICS) == ref.IMPACT_METRIC_NAMES
    assert set(got.metrics) == set(mc.IMPACT_METRICS)
    assert got.items == want["items"]
    assert got.affected_items == want["affected_items"]
    assert_close(got.total_weight, want["weight"], "total_weight")
    assert_close(got.affected_weight, want["affected_weight"], "affected_weight")
    for name in mc.IMPACT_METRICS:
        assert_close(got.metrics[name], want["metrics"][name], f"overall {name}")

    # Per item.
    per_item = mc.impact_per_item(pop)
    want_items = ref.impact_per_item(rp)
    assert set(per_item) == set(want_items)
    assert per_item["Affected"].tolist() == want_items["Affected"]
    for name, values in want_items.items():
        if name == "Affected":
            continue
        assert len(per_item[name]) == rp.n
        for i, v in enumerate(values):
            assert_close(per_item[name][i], v, f"item {i} {name}")

    # Per Base cluster, per Exp cluster, per slice.
    assert_table_matches(mc.impact_per_base_cluster(pop), ref.impact_by_group(rp, base.tolist()), "base")
    assert_table_matches(mc.impact_per_exp_cluster(pop), ref.impact_by_group(rp, exp.tolist()), "exp")
    assert_table_matches(mc.impact_by_group(pop, groups), ref.impact_by_group(rp, groups.tolist()), "slice")


def test_random_cases_cover_the_requested_shapes():
    """The 200 generated populations include the edge cases the issue asks for."""
    nothing = everything = strings = ints = extreme = 0
    for seed in range(N_CASES):
        base, exp, weights, _, _ = ref.random_case(seed)
        rp = ref.RefPopulation(base.tolist(), exp.tolist(), weights)
        nothing += not rp.affected_items
        everything += len(rp.affected_items) == rp.n and rp.n > 1
        strings += isinstance(base[0], str)
        ints += not isinstance(base[0], str)
        extreme += weights is not None and max(weights) / min(weights) > 1e6
    assert nothing >= 20 and everything >= 20 and strings >= 50 and ints >= 50 and extreme >= 20


# ------------------------------------------------------------------------------------------
# A population computed entirely by hand (style.md convention 8).
#
#   items      a  b  c  d  e
#   weight     1  1  2  4  8        W = 16
#   Base      {a,b,c} {d} {e}
#   Exp       {a,b} {c,d} {e}
#
#   item  Base(i)  Exp(i)  U=B∪E     w(B) w(E) w(U) w(B\E) w(E\B) w(B∩E)
#   a     abc      ab      abc        4    2    4    2(c)   0       2
#   b     abc      ab      abc        4    2    4    2(c)   0       2
#   c     abc      cd      abcd       4    6    8    2(ab)  4(d)    2
#   d     d        cd      cd         4    6    6    0      2(c)    4
#   e     e        e       e          8    8    8    0      0       8   (unaffected)
#
#   item  SplitDist  MergeDist  JaccardDist  JaccardIndex  SplitRate  MergeRate  WFOBC
#   a     2/4=1/2    0          1/2          1/2           2/4=1/2    0          1/4
#   b     1/2        0          1/2          1/2           1/2        0          1/4
#   c     2/8=1/4    4/8=1/2    3/4          1/4           2/4=1/2    4/6=2/3    2/4=1/2
#   d     0          2/6=1/3    1/3          2/3           0          2/6=1/3    4/4=1
#   e     0          0          0            1             0          0          8/8=1
#
#   SplitDistance(T)  = (1·1/2 + 1·1/2 + 2·1/4) / 16            = (3/2)/16 = 3/32
#   MergeDistance(T)  = (2·1/2 + 4·1/3) / 16                     = (7/3)/16 = 7/48
#   JaccardDistance(T)= 3/32 + 7/48                              = 23/96
#   JaccardIndex(T)   = (1/2 + 1/2 + 2·1/4 + 4·2/3 + 8·1) / 16   = (73/6)/16 = 73/96
#   AffectedJaccardIndex(T) (eq 48) = (1/2 + 1/2 + 1/2 + 8/3)/16 = (25/6)/16 = 25/96
#   UnaffectedJaccardIndex(T) (eq 52) = 8/16                      = 1/2
#   AffectedWeightFraction = (1+1+2+4)/16                         = 1/2
#   SplitRate(T) = (1/2 + 1/2 + 2·1/2)/16                         = 2/16 = 1/8
#   MergeRate(T) = (2·2/3 + 4·1/3)/16                             = (8/3)/16 = 1/6
#   WeightFractionOfBaseCluster(AffectedItems) (MQM eq 49)
#                = (1·1/4 + 1·1/4 + 2·1/2 + 4·1) / (1+1+2+4)     = (11/2)/8 = 11/16
#
#   Per Base cluster {a,b,c} (weight 4): SplitDistance = (1/2+1/2+2·1/4)/4 = 3/8,
#     MergeDistance = (2·1/2)/4 = 1/4, SplitRate = (1/2+1/2+2·1/2)/4 = 1/2,
#     AffectedJaccardIndex = (1/2+1/2+2·1/4)/4 = 3/8, WFOBC = (1/4+1/4+2·1/2)/4 = 3/8.
#   Per Exp cluster {c,d} (weight 6): SplitDistance = (2·1/4)/6 = 1/12,
#     MergeDistance = (2·1/2 + 4·1/3)/6 = 7/18, JaccardIndex = (2·1/4 + 4·2/3)/6 = 19/36.
# ------------------------------------------------------------------------------------------
HAND_BASE = ["B1", "B1", "B1", "B2", "B3"]
HAND_EXP = ["E1", "E1", "E2", "E2", "E3"]
HAND_WEIGHTS = [1.0, 1.0, 2.0, 4.0, 8.0]

HAND_OVERALL = {
    "SplitDistance": F(3, 32),
    "MergeDistance": F(7, 48),
    "JaccardDistance": F(23, 96),
    "JaccardIndex": F(73, 96),
    "AffectedJaccardIndex": F(25, 96),
    "UnaffectedJaccardIndex": F(1, 2),
    "AffectedWeightFraction": F(1, 2),
    "SplitRate": F(1, 8),
    "MergeRate": F(1, 6),
    "WeightFractionOfBaseCluster": F(11, 16),
}


def hand_population():
    return mc.population_from_labels(np.array(HAND_BASE), np.array(HAND_EXP), np.array(HAND_WEIGHTS))


def test_hand_computed_overall_impact():
    got = mc.impact_metrics(hand_population())
    assert set(HAND_OVERALL) == set(mc.IMPACT_METRICS)
    assert got.items == 5
    assert got.affected_items == 4
    assert got.total_weight == 16.0
    assert got.affected_weight == 8.0
    for name, value in HAND_OVERALL.items():
        assert got.metrics[name] == pytest.approx(float(value), abs=1e-15, rel=1e-15), name


def test_hand_computed_per_item_impact():
    per_item = mc.impact_per_item(hand_population())
    expected = {
        "SplitDistance": [F(1, 2), F(1, 2), F(1, 4), 0, 0],
        "MergeDistance": [0, 0, F(1, 2), F(1, 3), 0],
        "JaccardDistance": [F(1, 2), F(1, 2), F(3, 4), F(1, 3), 0],
        "JaccardIndex": [F(1, 2), F(1, 2), F(1, 4), F(2, 3), 1],
        "SplitRate": [F(1, 2), F(1, 2), F(1, 2), 0, 0],
        "MergeRate": [0, 0, F(2, 3), F(1, 3), 0],
        "WeightFractionOfBaseCluster": [F(1, 4), F(1, 4), F(1, 2), 1, 1],
    }
    for name, values in expected.items():
        np.testing.assert_allclose(per_item[name], [float(v) for v in values], rtol=1e-15, atol=1e-15, err_msg=name)
    assert per_item["Affected"].tolist() == [True, True, True, True, False]


def test_hand_computed_cluster_tables():
    base_table = mc.impact_per_base_cluster(hand_population())
    row = list(np.asarray(base_table.labels).tolist()).index("B1")
    assert base_table.items[row] == 3 and base_table.affected_items[row] == 3 and base_table.weight[row] == 4.0
    for name, value in {
        "SplitDistance": F(3, 8),
        "MergeDistance": F(1, 4),
        "SplitRate": F(1, 2),
        "AffectedJaccardIndex": F(3, 8),
        "WeightFractionOfBaseCluster": F(3, 8),
        "UnaffectedJaccardIndex": 0,
        "AffectedWeightFraction": 1,
    }.items():
        assert base_table.metrics[name][row] == pytest.approx(float(value), abs=1e-15), name
    row_b3 = list(np.asarray(base_table.labels).tolist()).index("B3")
    assert base_table.metrics["UnaffectedJaccardIndex"][row_b3] == 1.0
    assert math.isnan(base_table.metrics["WeightFractionOfBaseCluster"][row_b3])

    exp_table = mc.impact_per_exp_cluster(hand_population())
    row = list(np.asarray(exp_table.labels).tolist()).index("E2")
    assert exp_table.items[row] == 2 and exp_table.weight[row] == 6.0
    for name, value in {
        "SplitDistance": F(1, 12),
        "MergeDistance": F(7, 18),
        "JaccardIndex": F(19, 36),
    }.items():
        assert exp_table.metrics[name][row] == pytest.approx(float(value), abs=1e-15), name


def test_hand_population_reference_agrees_with_hand():
    """The reference itself reproduces the hand computation (so it can be trusted elsewhere)."""
    got = ref.impact_overall(ref.RefPopulation(HAND_BASE, HAND_EXP, HAND_WEIGHTS))["metrics"]
    for name, value in HAND_OVERALL.items():
        assert got[name] == pytest.approx(float(value), abs=1e-15), name


def test_nothing_affected_gives_nan_weight_fraction_of_base_cluster():
    pop = mc.population_from_labels([1, 1, 2], ["x", "x", "y"], [1.0, 2.0, 3.0])
    got = mc.impact_metrics(pop)
    assert got.affected_items == 0 and got.affected_weight == 0.0
    assert math.isnan(got.metrics["WeightFractionOfBaseCluster"])
    assert got.metrics["JaccardDistance"] == 0.0 and got.metrics["UnaffectedJaccardIndex"] == 1.0


@pytest.mark.parametrize(
    "weights",
    [[1.0, 0.0, 1.0], [1.0, -2.0, 1.0], [1.0, float("nan"), 1.0], [1.0, float("inf"), 1.0]],
)
def test_invalid_weights_are_rejected_naming_the_argument(weights):
    with pytest.raises(ValueError, match="weight"):
        mc.population_from_labels([1, 1, 2], [1, 2, 2], np.array(weights))
