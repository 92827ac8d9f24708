"""Pair sampling (spec §3-4) against the enumerated pair population (acceptance point 3).

On populations small enough to enumerate every ordered pair (``reference.sampling_distribution``),
the draw counts of one large sample are a multinomial draw from the pair probabilities, so a
chi-square goodness-of-fit test applies (fixed seed, p > 0.001). Pairs of probability zero must
never appear, and the class and stratum of each sampled row must be the enumerated ones.
"""

import math
import tracemalloc
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import chisquare

import metrics_core as mc
from tests.metrics_core import reference as ref
from tests.metrics_core.helpers import N_DRAWS, P_MIN, POPULATIONS


def observed(sample):
    """``{stratum: {(i, j): (draws, class)}}`` from a PairSample."""
    out = defaultdict(dict)
    for i, j, c, s, d in zip(sample.i, sample.j, sample.pair_class, sample.stratum, sample.draws):
        key = (int(i), int(j))
        stratum = mc.STRATA[s]
        assert key not in out[stratum], f"row {key} in stratum {stratum} appears twice"
        out[stratum][key] = (int(d), mc.PAIR_CLASSES[c])
    return out


@pytest.mark.parametrize("scheme", mc.SCHEMES)
@pytest.mark.parametrize("name", sorted(POPULATIONS))
def test_pair_frequencies_match_sampling_probabilities(name, scheme):
    base, exp, weights = POPULATIONS[name]
    pop = mc.population_from_labels(base, exp, np.asarray(weights, dtype=float))
    rp = ref.RefPopulation(base, exp, weights)
    expected = ref.sampling_distribution(rp, scheme)
    sample = mc.sample_pairs(pop, n_draws=N_DRAWS, scheme=scheme, rng=np.random.default_rng(7))
    seen = observed(sample)

    assert set(seen) <= set(expected), f"strata {set(seen)} vs {set(expected)}"
    if scheme == "stratified":
        assert sum(d for d, _ in seen["diff"].values()) == round(0.5 * N_DRAWS)
        assert sum(d for d, _ in seen["stable"].values()) == N_DRAWS - round(0.5 * N_DRAWS)
    for stratum, dist in expected.items():
        got = seen.get(stratum, {})
        n = sum(d for d, _ in got.values())
        for key, (draws, cls) in got.items():
            assert key in dist, f"{scheme}: pair {key} is not in stratum {stratum} of the pair population"
            p, want_cls = dist[key]
            assert cls == want_cls, f"{scheme}: pair {key} reported as {cls}, is {want_cls}"
            assert p > 0, f"{scheme}: pair {key} has probability 0 but was drawn {draws} times"
        keys = [k for k, (p, _) in dist.items() if p > 0]
        f_obs = np.array([got.get(k, (0, None))[0] for k in keys], dtype=float)
        f_exp = np.array([dist[k][0] for k in keys]) * n
        assert f_exp.min() >= 5, "population too skewed for a chi-square test"
        result = chisquare(f_obs, f_exp * (f_obs.sum() / f_exp.sum()))
        assert result.pvalue > P_MIN, f"{scheme}/{stratum}: chi-square p = {result.pvalue:.2g}"


def test_precision_zero_population_really_has_zero_probability_pairs():
    base, exp, weights = POPULATIONS["precision_zero"]
    dist = ref.sampling_distribution(ref.RefPopulation(base, exp, weights), "precision")["all"]
    assert dist[(0, 0)][0] == 0.0 and dist[(0, 0)][1] == "self"


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_sample_structure(scheme):
    base, exp, weights, _, _ = ref.random_case(3)
    pop = mc.population_from_labels(base, exp, weights)
    rp = ref.RefPopulation(base.tolist(), exp.tolist(), weights)
    one = mc.sample_pairs(pop, n_draws=5000, scheme=scheme, rng=np.random.default_rng(1))
    two = mc.sample_pairs(pop, n_draws=5000, scheme=scheme, rng=np.random.default_rng(1))
    other = mc.sample_pairs(pop, n_draws=5000, scheme=scheme, rng=np.random.default_rng(2))
    for field in ("i", "j", "pair_class", "stratum", "draws"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field), err_msg=field)
    assert not (len(one.i) == len(other.i) and np.array_equal(one.draws, other.draws) and np.array_equal(one.i, other.i))
    assert one.scheme == scheme
    assert int(one.draws.sum()) == 5000 == one.n_draws
    assert np.all(one.draws >= 1)
    rows = list(zip(one.i.tolist(), one.j.tolist(), one.stratum.tolist()))
    assert len(set(rows)) == len(rows), "rows are not distinct"
    for i, j, c, s in zip(one.i.tolist(), one.j.tolist(), one.pair_class.tolist(), one.stratum.tolist()):
        assert rp.affected(i), f"vantage item {i} is not affected"
        assert mc.PAIR_CLASSES[c] == ref.pair_class(rp, i, j)
        want_stratum = "all" if scheme != "stratified" else ("diff" if mc.PAIR_CLASSES[c] in ref.DIFF_CLASSES else "stable")
        assert mc.STRATA[s] == want_stratum
    # pair_classes_of agrees with the reference on every pair of items (-1 outside Base ∪ Exp).
    ii, jj = np.meshgrid(np.arange(rp.n), np.arange(rp.n), indexing="ij")
    codes = mc.pair_classes_of(pop, ii.ravel(), jj.ravel())
    for i, j, c in zip(ii.ravel().tolist(), jj.ravel().tolist(), np.asarray(codes).tolist()):
        want = ref.pair_class(rp, i, j)
        assert (mc.PAIR_CLASSES[c] if c >= 0 else None) == want, (i, j)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_pairs_for_judgement_are_the_distinct_unordered_non_self_pairs(scheme):
    base, exp, weights, _, _ = ref.random_case(7)
    pop = mc.population_from_labels(base, exp, weights)
    sample = mc.sample_pairs(pop, n_draws=3000, scheme=scheme, rng=np.random.default_rng(3))
    a, b = mc.pairs_for_judgement(sample, rng=np.random.default_rng(4))
    a2, b2 = mc.pairs_for_judgement(sample, rng=np.random.default_rng(5))
    want = {(min(i, j), max(i, j)) for i, j in zip(sample.i.tolist(), sample.j.tolist()) if i != j}
    got = list(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
    assert all(x < y for x, y in got)
    assert len(got) == len(set(got)) and set(got) == want
    assert set(zip(np.asarray(a2).tolist(), np.asarray(b2).tolist())) == want
    if len(want) > 5:  # the order is random: not sorted, and seed-dependent
        assert got != sorted(got)
        assert got != list(zip(np.asarray(a2).tolist(), np.asarray(b2).tolist()))


@pytest.mark.parametrize("scheme", ["jaccard", "stratified"])
def test_jaccard_contributions(scheme):
    """JDD §4.5: a diff row contributes draws/(diff draws) · JaccardDistance(T); the rest 0."""
    base, exp, weights, _, _ = ref.random_case(13)
    pop = mc.population_from_labels(base, exp, weights)
    jd = mc.impact_metrics(pop).metrics["JaccardDistance"]
    sample = mc.sample_pairs(pop, n_draws=4000, scheme=scheme, rng=np.random.default_rng(6))
    contrib = np.asarray(mc.jaccard_contributions(pop, sample))
    is_diff = np.isin(np.asarray(mc.PAIR_CLASSES)[sample.pair_class], ref.DIFF_CLASSES)
    assert np.all(contrib[~is_diff] == 0.0)
    assert contrib[is_diff].sum() == pytest.approx(jd, rel=1e-12)
    np.testing.assert_allclose(contrib[is_diff], sample.draws[is_diff] / sample.draws[is_diff].sum() * jd, rtol=1e-12)


@pytest.mark.parametrize(("n_draws", "share"), [(1000, 0.3), (999, 0.25), (10, 0.9), (7, 0.2)])
def test_stratified_draws_split_by_diff_share(n_draws, share):
    base, exp, weights = POPULATIONS["mixed"]
    pop = mc.population_from_labels(base, exp, np.asarray(weights))
    sample = mc.sample_pairs(pop, n_draws=n_draws, scheme="stratified", diff_share=share, rng=np.random.default_rng(0))
    diff = sample.stratum == mc.STRATA.index("diff")
    assert int(sample.draws[diff].sum()) == round(share * n_draws)
    assert int(sample.draws.sum()) == n_draws
    assert sample.diff_share == share


def test_from_columns_rebuilds_and_validates():
    base, exp, weights = POPULATIONS["mixed"]
    pop = mc.population_from_labels(base, exp, np.asarray(weights))
    sample = mc.sample_pairs(pop, n_draws=500, scheme="jaccard", rng=np.random.default_rng(0))
    again = mc.PairSample.from_columns(
        pop, scheme="jaccard", i=sample.i, j=sample.j, draws=sample.draws,
        pair_class=sample.pair_class, stratum=sample.stratum,
    )
    np.testing.assert_array_equal(np.sort(again.draws), np.sort(sample.draws))
    assert again.n_draws == 500
    # Item 0 and item 2: Base {0,1,2,3} vs Exp {0,1}: a split pair. Claiming "merge" is an error
    # naming the row.
    bad = np.array([mc.PAIR_CLASSES.index("self"), mc.PAIR_CLASSES.index("merge")], dtype=np.int8)
    with pytest.raises(mc.SampleError) as err:
        mc.PairSample.from_columns(pop, scheme="jaccard", i=[0, 0], j=[0, 2], draws=[1, 1], pair_class=bad)
    assert err.value.row == 1
    assert isinstance(err.value, ValueError)
    # j outside Base(i) ∪ Exp(i) (items 0 and 6 never share a cluster) is not a pair at all.
    with pytest.raises(ValueError):
        mc.PairSample.from_columns(pop, scheme="jaccard", i=[0], j=[6], draws=[1])


def test_sample_pairs_rejects_bad_arguments():
    base, exp, weights = POPULATIONS["mixed"]
    pop = mc.population_from_labels(base, exp, np.asarray(weights))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        mc.sample_pairs(pop, n_draws=0, rng=rng)
    with pytest.raises(ValueError):
        mc.sample_pairs(pop, n_draws=10, scheme="nope", rng=rng)
    for share in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            mc.sample_pairs(pop, n_draws=10, scheme="stratified", diff_share=share, rng=rng)
    unaffected = mc.population_from_labels([1, 1, 2], [3, 3, 4])
    with pytest.raises(ValueError):
        mc.sample_pairs(unaffected, n_draws=10, rng=rng)


# ------------------------------------------------------------------------------------------
# Scale: one Base cluster of 200,000 items split into two Exp clusters of 100,000. The pair
# population has 200,000² = 4e10 ordered pairs; sampling must never materialise it.
# ------------------------------------------------------------------------------------------
BIG = 200_000
SCALE_DRAWS = 100_000
PEAK_LIMIT = 200 * 2**20


@pytest.fixture(scope="module")
def big_population():
    rng = np.random.default_rng(99)
    exp = np.zeros(BIG, dtype=np.int64)
    exp[rng.permutation(BIG)[: BIG // 2]] = 1
    weights = rng.uniform(0.5, 2.0, BIG)
    return mc.population_from_labels(np.zeros(BIG, dtype=np.int64), exp, weights), exp, weights


def split_share_within(sample, stratum=None):
    keep = np.ones(len(sample.draws), bool) if stratum is None else sample.stratum == mc.STRATA.index(stratum)
    split = keep & (sample.pair_class == mc.PAIR_CLASSES.index("split"))
    return sample.draws[split].sum() / sample.draws[keep].sum(), sample.draws[keep].sum()


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_scale_sampling_memory_and_class_shares(big_population, scheme):
    pop, exp, weights = big_population
    tracemalloc.start()
    try:
        sample = mc.sample_pairs(pop, n_draws=SCALE_DRAWS, scheme=scheme, rng=np.random.default_rng(5))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"\nscale {scheme}: {BIG:,} items, {BIG**2:.1e} pairs, {SCALE_DRAWS:,} draws, peak {peak / 2**20:.1f} MiB")
    assert peak < PEAK_LIMIT, f"peak {peak / 2**20:.0f} MiB while sampling {scheme}"
    assert int(sample.draws.sum()) == SCALE_DRAWS

    m = mc.impact_metrics(pop).metrics
    assert m["MergeDistance"] == 0.0 and m["AffectedWeightFraction"] == pytest.approx(1.0)
    if scheme == "jaccard":
        share, n = split_share_within(sample)
        want = m["SplitDistance"] / (m["SplitDistance"] + m["AffectedJaccardIndex"])
    elif scheme == "stratified":
        share, n = split_share_within(sample, "diff")
        want = 1.0  # the diff stratum holds only split pairs here (nothing is merged)
        assert n == SCALE_DRAWS // 2
        stable = sample.stratum == mc.STRATA.index("stable")
        assert set(np.asarray(mc.PAIR_CLASSES)[sample.pair_class[stable]]) <= {"self", "intersection"}
    else:
        # Spec §4c: Σ_split u = SplitRate(T); the stable pairs of i weigh
        # w_i/W · weight(Base(i) ∩ Exp(i)) · |1/wE(i) − 1/wB(i)|.
        W = weights.sum()
        wB = weights.sum()
        wE = np.array([weights[exp == 0].sum(), weights[exp == 1].sum()])[exp]
        stable = math.fsum(weights / W * wE * np.abs(1 / wE - 1 / wB))
        share, n = split_share_within(sample)
        want = m["SplitRate"] / (m["SplitRate"] + stable)
    sd = math.sqrt(max(want * (1 - want), 1e-12) / n)
    assert abs(share - want) < 5 * sd + 1e-12, f"{scheme}: split share {share:.4f}, expected {want:.4f}"
