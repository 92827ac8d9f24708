"""The paper's identities (acceptance point 1) and the properties the impact metrics claim.

JDD eqs 17-22 (on every level) and 60-62 (overall), checked to 1e-12 on random weighted
populations, with the Good/Bad metrics from ``quality_from_gold`` on a random Ideal clustering
and the impact metrics from ``impact_metrics``; per item via ``impact_per_item`` and per set
(Base cluster, Exp cluster, slice) via the ImpactTables for the identities on impact metrics.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import metrics_core as mc
from tests.metrics_core import reference as ref

TOL = 1e-12
N_SEEDS = 60


def random_weighted_case(seed):
    """A random weighted population (20-200 items) with a random Ideal clustering and slices."""
    rng = np.random.default_rng(10_000 + seed)
    n = int(rng.integers(20, 201))
    weights = ref.random_weights(rng, n, ["mild", "lognormal", "extreme"][seed % 3])
    ideal = ref.random_labels(rng, n, int(rng.integers(2, n // 2 + 2)))
    base = ref.perturb(rng, ideal, int(rng.integers(1, 20)))
    exp = ref.perturb(rng, base, int(rng.integers(1, 20)))
    slices = rng.integers(0, 4, size=n)
    return base, exp, weights, ideal, slices


@pytest.fixture(params=range(N_SEEDS), ids=lambda s: f"seed{s}")
def case(request):
    base, exp, weights, ideal, slices = random_weighted_case(request.param)
    pop = mc.population_from_labels(base, exp, weights)
    return pop, weights, ideal, slices


def test_overall_identities(case):
    pop, _, ideal, _ = case
    m = mc.impact_metrics(pop).metrics
    q = mc.quality_from_gold(pop, ideal)
    JD, SD, MD, JI = m["JaccardDistance"], m["SplitDistance"], m["MergeDistance"], m["JaccardIndex"]
    AJI, UJI = m["AffectedJaccardIndex"], m["UnaffectedJaccardIndex"]
    GSD, BSD, GMD, BMD = (q[k] for k in ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance"))
    GD, BD = q["GoodDistance"], q["BadDistance"]
    assert JD == pytest.approx(SD + MD, abs=TOL)  # eq 17
    assert JD == pytest.approx(GD + BD, abs=TOL)  # eq 18
    assert SD == pytest.approx(GSD + BSD, abs=TOL)  # eq 19
    assert MD == pytest.approx(GMD + BMD, abs=TOL)  # eq 20
    assert GD == pytest.approx(GSD + GMD, abs=TOL)  # eq 21
    assert BD == pytest.approx(BSD + BMD, abs=TOL)  # eq 22
    assert JI + JD == pytest.approx(1.0, abs=TOL)  # eq 60
    assert JI == pytest.approx(AJI + UJI, abs=TOL)  # eq 61
    assert AJI == pytest.approx(q["AffectedGoodIndex"] + q["AffectedBadIndex"], abs=TOL)  # eq 62
    # Rates decompose like the distances (ABCDE).
    assert m["SplitRate"] == pytest.approx(q["GoodSplitRate"] + q["BadSplitRate"], abs=TOL)
    assert m["MergeRate"] == pytest.approx(q["GoodMergeRate"] + q["BadMergeRate"], abs=TOL)
    # Eq 55: AffectedJaccardIndex(T) = AffectedWeightFraction · JaccardIndex(AffectedItems).
    per_item = mc.impact_per_item(pop)
    A, w = per_item["Affected"], pop.weight
    if A.any():
        ji_affected = np.sum(w[A] * per_item["JaccardIndex"][A]) / np.sum(w[A])
        assert AJI == pytest.approx(m["AffectedWeightFraction"] * ji_affected, abs=TOL)
    # JDD §6 (eqs 81-87): Σ w_ij over AllPairs = SD + AJI + MD, which is AffectedWeightFraction.
    assert SD + AJI + MD == pytest.approx(m["AffectedWeightFraction"], abs=TOL)
    assert m["AffectedWeightFraction"] + UJI == pytest.approx(1.0, abs=TOL)


def test_per_item_identities(case):
    pop, *_ = case
    p = mc.impact_per_item(pop)
    np.testing.assert_allclose(p["JaccardDistance"], p["SplitDistance"] + p["MergeDistance"], rtol=0, atol=TOL)  # eq 4
    np.testing.assert_allclose(p["JaccardIndex"] + p["JaccardDistance"], 1.0, rtol=0, atol=TOL)  # eq 39
    # Unaffected items have JaccardIndex 1 (eq 51); affected ones strictly less.
    assert np.all(p["JaccardIndex"][~p["Affected"]] == 1.0)
    assert np.all(p["JaccardIndex"][p["Affected"]] < 1.0)


@pytest.mark.parametrize("table_of", ["base", "exp", "slice"])
def test_per_set_identities(case, table_of):
    pop, weights, _, slices = case
    table = {
        "base": lambda: mc.impact_per_base_cluster(pop),
        "exp": lambda: mc.impact_per_exp_cluster(pop),
        "slice": lambda: mc.impact_by_group(pop, slices),
    }[table_of]()
    t = table.metrics
    np.testing.assert_allclose(t["JaccardDistance"], t["SplitDistance"] + t["MergeDistance"], rtol=0, atol=TOL)  # 17
    np.testing.assert_allclose(t["JaccardIndex"] + t["JaccardDistance"], 1.0, rtol=0, atol=TOL)  # 60
    np.testing.assert_allclose(t["JaccardIndex"], t["AffectedJaccardIndex"] + t["UnaffectedJaccardIndex"], rtol=0, atol=TOL)  # 61
    np.testing.assert_allclose(t["AffectedWeightFraction"] + t["UnaffectedJaccardIndex"], 1.0, rtol=0, atol=TOL)
    # The sets partition T, so overall = Σ weight(I)·metric(I) / W for every lifted metric, and the
    # affected-only WeightFractionOfBaseCluster recombines with the affected weights.
    overall = mc.impact_metrics(pop)
    W = float(np.sum(weights))
    assert int(np.sum(table.items)) == pop.n_items and np.sum(table.weight) == pytest.approx(W, rel=1e-12)
    assert int(np.sum(table.affected_items)) == overall.affected_items
    for name in mc.IMPACT_METRICS:
        if name == "WeightFractionOfBaseCluster":
            aw = table.weight * t["AffectedWeightFraction"]
            has = table.affected_items > 0
            assert np.all(np.isnan(t[name][~has]))
            combined = np.sum(aw[has] * t[name][has]) / np.sum(aw[has])
        else:
            combined = np.sum(table.weight * t[name]) / W
        assert combined == pytest.approx(overall.metrics[name], abs=TOL), name


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_delta_precision_pair_sum_equals_precision_difference(seed):
    """JDD eq 80 (pairs, labels l_ij) equals eq 76 (Precision_Exp − Precision_Base per item)."""
    base, exp, weights, ideal, _ = ref.random_case(seed)
    pop = mc.population_from_labels(base, exp, weights)
    rp = ref.RefPopulation(base.tolist(), exp.tolist(), weights)
    g = ref.RefGold(ideal.tolist())
    pair_sum = math.fsum(
        ref.w_ij(rp, i, j) * ref.l_ij(rp, i, j) * g.equivalent(i, j) for i, j, _ in ref.all_pairs(rp)
    )
    assert pair_sum == pytest.approx(mc.quality_from_gold(pop, ideal)["DeltaPrecision"], abs=TOL)
    # And spec §4c: the same ΔPrecision as Σ u_ij · label · 1(i ≡ j) (JDD eqs 88-91).
    u_sum = math.fsum(
        ref.u_ij(rp, i, j) * ref.precision_label(rp, i, j) * g.equivalent(i, j) for i, j, _ in ref.all_pairs(rp)
    )
    assert u_sum == pytest.approx(pair_sum, abs=TOL)


# ------------------------------------------------------------------------------------------
# Properties (hypothesis): invariance to relabelling and to permuting items, Base/Exp swap,
# identical clusterings, bounds.
# ------------------------------------------------------------------------------------------
@st.composite
def populations(draw, max_items=25):
    n = draw(st.integers(1, max_items))
    k = draw(st.integers(1, n))
    base = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    exp = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    weights = np.array(
        draw(st.lists(st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False), min_size=n, max_size=n))
    )
    gold = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    return base, exp, weights, gold


def overall(base, exp, weights):
    return mc.impact_metrics(mc.population_from_labels(base, exp, weights)).metrics


def assert_metrics_equal(a, b, mapping=None):
    mapping = mapping or {}
    for name, value in a.items():
        other = b[mapping.get(name, name)]
        if math.isnan(value):
            assert math.isnan(other), name
        else:
            assert value == pytest.approx(other, abs=1e-12), name


PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)


@PROPERTY_SETTINGS
@given(populations(), st.randoms(use_true_random=False))
def test_invariant_to_relabelling_clusters_and_permuting_items(pop_data, rnd):
    base, exp, weights, gold = pop_data
    n = len(base)
    before = overall(base, exp, weights)
    before_q = mc.quality_from_gold(mc.population_from_labels(base, exp, weights), gold)

    # Relabel: an injective map of each clustering's labels to strings, and of the gold labels.
    relabel = {x: f"L{rnd.randrange(10**9)}-{x}" for x in set(base.tolist()) | set(exp.tolist())}
    base2 = np.array([relabel[x] for x in base.tolist()], dtype=object)
    exp2 = np.array([relabel[x][::-1] for x in exp.tolist()], dtype=object)
    gold2 = np.array([f"g{x * 7 + 3}" for x in gold.tolist()], dtype=object)
    assert_metrics_equal(before, overall(base2, exp2, weights))
    assert_metrics_equal(before_q, mc.quality_from_gold(mc.population_from_labels(base2, exp2, weights), gold2))

    # Permute the items.
    perm = list(range(n))
    rnd.shuffle(perm)
    perm = np.array(perm)
    pop_p = mc.population_from_labels(base[perm], exp[perm], weights[perm])
    assert_metrics_equal(before, mc.impact_metrics(pop_p).metrics)
    assert_metrics_equal(before_q, mc.quality_from_gold(pop_p, gold[perm]))
    per_item = mc.impact_per_item(mc.population_from_labels(base, exp, weights))
    per_item_p = mc.impact_per_item(pop_p)
    for name, values in per_item.items():
        np.testing.assert_allclose(np.asarray(per_item_p[name], dtype=float), np.asarray(values, dtype=float)[perm], atol=1e-12)


SWAP_IMPACT = {"SplitDistance": "MergeDistance", "MergeDistance": "SplitDistance", "SplitRate": "MergeRate", "MergeRate": "SplitRate"}
# Swapping Base and Exp turns split pairs into merge pairs: a good split (not equivalent, split
# off) becomes a bad merge (not equivalent, merged in), and so on; ΔPrecision changes sign.
SWAP_QUALITY = {
    "GoodSplitDistance": "BadMergeDistance",
    "BadSplitDistance": "GoodMergeDistance",
    "GoodMergeDistance": "BadSplitDistance",
    "BadMergeDistance": "GoodSplitDistance",
    "GoodDistance": "BadDistance",
    "BadDistance": "GoodDistance",
    "GoodSplitRate": "BadMergeRate",
    "BadSplitRate": "GoodMergeRate",
    "GoodMergeRate": "BadSplitRate",
    "BadMergeRate": "GoodSplitRate",
}


@PROPERTY_SETTINGS
@given(populations())
def test_swapping_base_and_exp_swaps_split_and_merge(pop_data):
    base, exp, weights, gold = pop_data
    fwd, bwd = overall(base, exp, weights), overall(exp, base, weights)
    impact = {k: v for k, v in fwd.items() if k != "WeightFractionOfBaseCluster"}  # depends on Base only
    assert_metrics_equal(impact, bwd, SWAP_IMPACT)
    q_fwd = mc.quality_from_gold(mc.population_from_labels(base, exp, weights), gold)
    q_bwd = mc.quality_from_gold(mc.population_from_labels(exp, base, weights), gold)
    signed = ("DeltaPrecision", "GoodMinusBadDistance")
    assert_metrics_equal({k: v for k, v in q_fwd.items() if k not in signed}, q_bwd, SWAP_QUALITY)
    for name in signed:  # Good and Bad swap: their difference changes sign, as ΔPrecision does
        assert q_fwd[name] == pytest.approx(-q_bwd[name], abs=1e-12), name


@PROPERTY_SETTINGS
@given(populations())
def test_identical_clusterings_have_no_impact(pop_data):
    base, _, weights, gold = pop_data
    exp = np.array([f"other-{x}" for x in base.tolist()], dtype=object)  # same partition, new labels
    pop = mc.population_from_labels(base, exp, weights)
    result = mc.impact_metrics(pop)
    assert result.affected_items == 0 and result.affected_weight == 0.0
    m = result.metrics
    assert m["JaccardDistance"] == 0.0 and m["SplitDistance"] == 0.0 and m["MergeDistance"] == 0.0
    assert m["JaccardIndex"] == 1.0 and m["UnaffectedJaccardIndex"] == 1.0 and m["AffectedJaccardIndex"] == 0.0
    assert m["AffectedWeightFraction"] == 0.0 and m["SplitRate"] == 0.0 and m["MergeRate"] == 0.0
    assert math.isnan(m["WeightFractionOfBaseCluster"])
    assert not mc.impact_per_item(pop)["Affected"].any()
    assert all(v == 0.0 for v in mc.quality_from_gold(pop, gold).values())


@PROPERTY_SETTINGS
@given(populations())
def test_bounds(pop_data):
    base, exp, weights, gold = pop_data
    pop = mc.population_from_labels(base, exp, weights)
    for name, value in mc.impact_metrics(pop).metrics.items():
        assert math.isnan(value) or -1e-15 <= value <= 1 + 1e-15, name
    for name, values in mc.impact_per_item(pop).items():
        values = np.asarray(values, dtype=float)
        assert np.all((values >= -1e-15) & (values <= 1 + 1e-15)), name
    for table in (mc.impact_per_base_cluster(pop), mc.impact_per_exp_cluster(pop)):
        for name, values in table.metrics.items():
            v = values[~np.isnan(values)]
            assert np.all((v >= -1e-15) & (v <= 1 + 1e-15)), name
    for name, value in mc.quality_from_gold(pop, gold).items():
        low = -1 - 1e-15 if name in ("DeltaPrecision", "GoodMinusBadDistance") else -1e-15
        assert low <= value <= 1 + 1e-15, name
