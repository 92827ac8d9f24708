"""Coupled sampling (abcde-spec §11): draws that prefer an earlier sample's pairs stay i.i.d. from
their own distribution, checked against the enumerated pair population (``reference``).

Two populations share most item ids, in different orders: the earlier one drops an item the new
one has, and the new one moves three items to other Exp clusters and weighs two items differently
(so that pairs of both populations are more likely under one than the other, not only pairs of
one population alone). Frequencies are compared with
a chi-square test (fixed seeds, p > 0.001); the same test rejects a sampler that keeps every
earlier draw the new distribution allows.
"""

import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

import metrics_core as mc
from tests.metrics_core import reference as ref

P_MIN = 0.001

EARLIER = {  # item id: (base, exp, weight)
    "i0": (0, 0, 1.0), "i1": (0, 0, 2.0), "i2": (0, 1, 0.5), "i3": (1, 1, 1.5), "i4": (1, 1, 1.0),
    "i5": (1, 2, 0.7), "i6": (2, 2, 1.2), "i7": (2, 2, 0.9), "i8": (3, 3, 1.1), "i9": (3, 4, 1.3),
}  # fmt: skip
NEW = {
    **{k: v for k, v in EARLIER.items() if k != "i0"},
    "i2": (0, 0, 0.5), "i7": (2, 5, 0.9), "i10": (3, 4, 0.8), "i4": (1, 1, 3.0), "i6": (2, 2, 0.4),
}  # fmt: skip


class Side:
    """A population given by ``{id: (base, exp, weight)}`` in a given id order, with its reference."""

    def __init__(self, rows: dict, order: list[str]):
        self.ids = np.array(order, dtype=object)
        base, exp, weight = (list(column) for column in zip(*(rows[k] for k in order)))
        self.population = mc.population_from_labels(base, exp, np.asarray(weight))
        self.reference = ref.RefPopulation(base, exp, weight)

    def distribution(self, scheme: str) -> dict:
        """``{stratum: {(id_i, id_j): P}}`` over the pairs of positive probability."""
        by_stratum = ref.sampling_distribution(self.reference, scheme)
        ids = self.ids
        return {s: {(ids[i], ids[j]): p for (i, j), (p, _) in rows.items() if p > 0} for s, rows in by_stratum.items()}

    def sample(self, scheme: str, n: int, seed: int) -> mc.PairSample:
        return mc.sample_pairs(self.population, n_draws=n, scheme=scheme, rng=np.random.default_rng(seed))


def earlier_side() -> Side:
    return Side(EARLIER, sorted(EARLIER, key=lambda k: int(k[1:])))


def new_side() -> Side:
    order = list(NEW)
    np.random.default_rng(3).shuffle(order)
    return Side(NEW, order)


def couple(new: Side, earlier: Side, source: mc.PairSample, n: int, seed: int, **kwargs) -> mc.CoupledSample:
    return mc.couple_sample(
        new.population, n_draws=n, scheme=source.scheme, rng=np.random.default_rng(seed),
        source_population=earlier.population, source_sample=source,
        item_ids=new.ids, source_item_ids=earlier.ids, **kwargs,
    )  # fmt: skip


def counts_by_ids(side: Side, sample: mc.PairSample) -> Counter:
    """``{(stratum, id_i, id_j): draws}``."""
    out = Counter()
    for i, j, s, d in zip(sample.i.tolist(), sample.j.tolist(), sample.stratum.tolist(), sample.draws.tolist()):
        out[mc.STRATA[s], side.ids[i], side.ids[j]] += d
    return out


def total_variation(p: dict, q: dict) -> float:
    return 0.5 * math.fsum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def chi_square_p(counts: Counter, distribution: dict) -> dict:
    """Per stratum, the p-value of the counts against the distribution; a pair outside it fails."""
    out = {}
    for stratum, dist in distribution.items():
        got = {(a, b): d for (s, a, b), d in counts.items() if s == stratum}
        assert set(got) <= set(dist), f"{stratum}: drawn pairs of probability 0: {set(got) - set(dist)}"
        keys = sorted(dist)
        f_obs = np.array([got.get(k, 0) for k in keys], dtype=float)
        f_exp = np.array([dist[k] for k in keys]) * f_obs.sum()
        assert f_exp.min() >= 5, "too few draws for a chi-square test"
        out[stratum] = chisquare(f_obs, f_exp * (f_obs.sum() / f_exp.sum())).pvalue
    return out


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_pair_probabilities_are_the_enumerated_ones(scheme):
    for side in (earlier_side(), new_side()):
        expected = ref.sampling_distribution(side.reference, scheme)
        n = side.population.n_items
        ii, jj = (a.ravel() for a in np.meshgrid(np.arange(-1, n), np.arange(-1, n), indexing="ij"))
        for stratum, dist in expected.items():
            got = mc.pair_probabilities(side.population, scheme=scheme, stratum=mc.STRATA.index(stratum), i=ii, j=jj)
            want = np.array([dist.get((i, j), (0.0, None))[0] for i, j in zip(ii.tolist(), jj.tolist())])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=stratum)
            assert got.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_coupled_draws_follow_the_new_distribution_and_a_keep_everything_sampler_would_not(scheme):
    earlier, new = earlier_side(), new_side()
    p1, p2 = earlier.distribution(scheme), new.distribution(scheme)
    coupled, biased = Counter(), Counter()
    for seed in range(1500):
        source = earlier.sample(scheme, 40, seed)
        coupled += counts_by_ids(new, couple(new, earlier, source, 40, 10_000 + seed).sample)
        # The bug the test must catch: keep every earlier draw the new distribution allows.
        kept = Counter({k: d for k, d in counts_by_ids(earlier, source).items() if (k[1], k[2]) in p2[k[0]]})
        if sum(kept.values()) < 40:
            kept += counts_by_ids(new, new.sample(scheme, 40 - sum(kept.values()), 20_000 + seed))
        biased += kept
    assert all(p > P_MIN for p in chi_square_p(coupled, p2).values()), chi_square_p(coupled, p2)
    assert all(total_variation(p1[s], p2[s]) > 0.1 for s in p2)
    # Pairs of both, more likely before: keeping them whenever allowed is the bias to detect.
    assert all(sum(max(0.0, p - p2[s].get(k, 0.0)) for k, p in p1[s].items() if k in p2[s]) > 0.05 for s in p2)
    biased_p = {}
    try:
        biased_p = chi_square_p(biased, p2)
    except AssertionError:
        pass  # a pair outside the new distribution: rejected already
    else:
        assert min(biased_p.values()) < 1e-6, biased_p


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_the_share_of_kept_draws_is_one_minus_the_total_variation_distance(scheme):
    earlier, new = earlier_side(), new_side()
    p1, p2 = earlier.distribution(scheme), new.distribution(scheme)
    n = 100_000
    source = earlier.sample(scheme, n, 1)
    result = couple(new, earlier, source, n, 2)
    per_stratum = Counter(mc.STRATA[s] for s in np.repeat(source.stratum, source.draws).tolist())
    keep = {s: 1 - total_variation(p1[s], p2[s]) for s in p2}
    assert all(0.1 < k < 0.9 for k in keep.values()), keep
    expected = sum(per_stratum[s] * keep[s] for s in keep)
    sd = math.sqrt(sum(per_stratum[s] * keep[s] * (1 - keep[s]) for s in keep))
    assert result.coupled == n
    assert abs(result.kept - expected) < 5 * sd, (result.kept, expected, sd)
    assert result.sample.n_draws == n


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_identical_populations_keep_every_draw(scheme):
    earlier = earlier_side()
    shuffled = Side(EARLIER, list(np.random.default_rng(4).permutation(list(EARLIER))))
    source = earlier.sample(scheme, 500, 5)
    result = couple(shuffled, earlier, source, 500, 6)
    assert result.kept == result.coupled == 500
    assert counts_by_ids(shuffled, result.sample) == counts_by_ids(earlier, source)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_disjoint_supports_keep_no_draw(scheme):
    ids = [f"d{k}" for k in range(6)]
    # Earlier: only items 0 and 1 are affected; new: only items 4 and 5.
    earlier = Side(dict(zip(ids, [(0, 0, 1), (0, 1, 1), (1, 2, 1), (1, 2, 1), (2, 3, 1), (2, 3, 1)])), ids)
    new = Side(dict(zip(ids, [(0, 0, 1), (0, 0, 1), (1, 2, 1), (1, 2, 1), (2, 3, 2), (2, 4, 1)])), ids[::-1])
    source = earlier.sample(scheme, 300, 7)
    result = couple(new, earlier, source, 300, 8)
    assert (result.kept, result.coupled, result.sample.n_draws) == (0, 300, 300)
    p2 = new.distribution(scheme)
    assert all((a, b) in p2[s] for s, a, b in counts_by_ids(new, result.sample))


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_a_coupled_sample_is_reproducible_from_its_seed(scheme):
    earlier, new = earlier_side(), new_side()
    source = earlier.sample(scheme, 300, 1)
    one, two, other = (couple(new, earlier, source, 300, seed).sample for seed in (5, 5, 6))
    for field in ("i", "j", "pair_class", "stratum", "draws"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field), err_msg=field)
    assert counts_by_ids(new, one) != counts_by_ids(new, other)
    assert (one.scheme, one.diff_share) == (scheme, 0.5 if scheme == "stratified" else None)


def test_draws_beyond_the_earlier_sample_are_ordinary_and_fewer_use_part_of_it():
    earlier, new = earlier_side(), new_side()
    source = earlier.sample("stratified", 100, 1)
    more = couple(new, earlier, source, 250, 2, diff_share=0.3)
    assert (more.coupled, more.sample.n_draws) == (100, 250)
    strata = Counter(np.repeat(more.sample.stratum, more.sample.draws).tolist())
    assert strata == {mc.STRATA.index("diff"): 75, mc.STRATA.index("stable"): 175}
    fewer = couple(new, earlier, source, 30, 2)
    assert (fewer.coupled, fewer.sample.n_draws) == (30, 30)
    rebuilt = mc.PairSample.from_columns(new.population, scheme="stratified", i=fewer.sample.i, j=fewer.sample.j, draws=fewer.sample.draws)
    np.testing.assert_array_equal(rebuilt.pair_class, fewer.sample.pair_class)


def test_only_a_sample_of_the_same_scheme_and_of_its_own_population_couples():
    earlier, new = earlier_side(), new_side()
    with pytest.raises(ValueError, match="scheme"):
        mc.couple_sample(
            new.population, n_draws=10, scheme="precision", rng=np.random.default_rng(0),
            source_population=earlier.population, source_sample=earlier.sample("jaccard", 10, 0),
            item_ids=new.ids, source_item_ids=earlier.ids,
        )  # fmt: skip
    # A sample of the new population passed as the earlier one's: pairs its population never draws.
    with pytest.raises(mc.CouplingError):
        couple(new, earlier, new.sample("jaccard", 200, 0), 10, 0)


def test_item_positions_and_the_coupling_stream():
    assert mc.item_positions(["b", "z", "a"], ["a", "b", "c"]).tolist() == [1, -1, 0]
    assert mc.item_positions([3, 9], [9, 8, 3]).tolist() == [2, 0]
    assert mc.item_positions(["x"], []).tolist() == [-1]
    first = mc.coupling_rng(seed=7, batch=0, source=3).random()
    assert first == mc.coupling_rng(seed=7, batch=0, source=3).random()
    others = [mc.coupling_rng(seed=7, batch=0, source=4), mc.coupling_rng(seed=7, batch=1, source=3), mc.batch_rng(seed=7, batch=0)]
    assert all(rng.random() != first for rng in others)
    with pytest.raises(ValueError, match="source"):
        mc.coupling_rng(seed=7, batch=0, source=-1)
