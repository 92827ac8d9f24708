"""Batches and coupled sampling on Dask (issue 37): the in-memory rules, draw for draw.

* Pair probabilities on Dask are :func:`metrics_core.pair_probabilities` (items matched by id).
* A coupled sample on Dask is, draw for draw, what the in-memory rule
  (:func:`metrics_core.sampling.coupling.coupled_stratum_draws` over the population in memory) makes
  of the same proposals, this backend's ordinary draws; and its draws follow the new distribution
  (a chi-square test that keeping the proposals' bucket order, not i.i.d., would fail).
* Batch ``b`` on Dask is the stream ``batch_rng(seed, b)``: reproducible, independent of batch 0, and
  the union of batches gives the in-memory estimates on the same sample.
"""

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

import metrics_core as mc
from metrics_core import dask_backend
from metrics_core.dask_backend.coupling import couple_sample, ordinary_draws, pair_probabilities
from metrics_core.dask_backend.sampling import pairs_table
from metrics_core.sampling import allocate_draws
from metrics_core.sampling.coupling import CouplingLaws, coupled_stratum_draws
from tests.metrics_core import reference as ref
from tests.metrics_core.dask_run import items_frame, synchronous_scheduler, write_parts

SCHEMES = mc.SCHEMES


def two_populations(seed=1, n=20_000):
    """An earlier and a new clustering of the same weighted items: the new one moves 5% of the items."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, n // 3, n)
    exp = np.where(rng.random(n) < 0.2, rng.integers(0, n // 3, n), base)
    new_exp = np.where(rng.random(n) < 0.05, rng.integers(0, n // 3, n), exp)
    weight = rng.lognormal(0, 0.5, n)
    return (base, exp, weight), (base, new_exp, weight)


def on_dask(tmp_path, name, base, exp, weight, n_parts=3):
    return dask_backend.read_items(str(write_parts(items_frame(base, exp, weight), tmp_path / name, n_parts)))


@pytest.fixture(scope="module")
def populations(tmp_path_factory):
    """On the synchronous scheduler, as the tests that take them (coupling on a cluster: the app's
    tests, tests/raterapp/services/test_dask_batches.py)."""
    tmp_path = tmp_path_factory.mktemp("coupling")
    earlier, new = two_populations()
    with synchronous_scheduler():
        return {
            "earlier": (mc.population_from_labels(*earlier), on_dask(tmp_path, "earlier", *earlier)),
            "new": (mc.population_from_labels(*new), on_dask(tmp_path, "new", *new, n_parts=2)),
        }


@pytest.mark.parametrize("scheme", SCHEMES)
def test_pair_probabilities_on_dask_are_the_in_memory_ones(synchronous, populations, scheme):
    pop, items = populations["new"]
    pairs = dask_backend.sample_pairs(items, n_draws=2000, scheme=scheme, rng=np.random.default_rng(3))
    rng = np.random.default_rng(4)
    # Sampled pairs, random pairs (mostly outside the population) and ids that are not items.
    i = np.concatenate((pairs["i"].to_numpy(), rng.integers(0, pop.n_items, 300), [pop.n_items, 5]))
    j = np.concatenate((pairs["j"].to_numpy(), rng.integers(0, pop.n_items, 300), [5, pop.n_items + 1]))
    for stratum in {mc.STRATA.index(s) for s in pairs["stratum"]}:
        got = pair_probabilities(items, scheme=scheme, stratum=stratum, i=i, j=j)
        known = (i < pop.n_items) & (j < pop.n_items)
        want = np.zeros(len(i))
        want[known] = mc.pair_probabilities(pop, scheme=scheme, stratum=stratum, i=i[known], j=j[known])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        assert (got > 0).sum() >= (pairs["stratum"] == mc.STRATA[stratum]).sum()


def in_memory_rule(populations, scheme, source_pairs, n_draws, rng):
    """The in-memory coupling rule over the populations in memory, with Dask's ordinary draws as
    proposals (item id = position here)."""
    source_pop, _ = populations["earlier"]
    pop, items = populations["new"]
    stratum_of = np.array([mc.STRATA.index(s) for s in source_pairs["stratum"]])
    parts, kept = [], 0
    for code, count in allocate_draws(scheme, n_draws, 0.5).items():
        rows = np.flatnonzero(stratum_of == code)
        laws = CouplingLaws(
            source_probabilities=lambda i, j, c=code: mc.pair_probabilities(
                source_pop, scheme=scheme, stratum=c, i=i, j=j
            ),
            new_probabilities=lambda i, j, c=code: mc.pair_probabilities(pop, scheme=scheme, stratum=c, i=i, j=j),
            to_new=lambda x: x,
            to_source=lambda y: y,
            classes_of=lambda i, j: mc.pair_classes_of(pop, i, j),
            propose=lambda size, g, c=code: ordinary_draws(items, scheme=scheme, stratum=c, size=size, rng=g),
        )
        i, j, pair_class, n_kept, _ = coupled_stratum_draws(
            earlier_i=source_pairs["i"].to_numpy()[rows],
            earlier_j=source_pairs["j"].to_numpy()[rows],
            earlier_draws=source_pairs["draws"].to_numpy()[rows],
            count=count,
            rng=rng,
            laws=laws,
        )
        parts.append(pd.DataFrame({"i": i, "j": j, "pair_class": pair_class, "stratum": code}))
        kept += n_kept
    draws = pd.concat(parts, ignore_index=True)
    return pairs_table(scheme, draws.assign(draw=np.arange(len(draws)))), kept


@pytest.mark.parametrize("scheme", ["stratified"])  # both strata; the schemes' probabilities are checked above
def test_a_coupled_sample_on_dask_is_the_in_memory_rule_draw_for_draw(synchronous, populations, scheme):
    _, source_items = populations["earlier"]
    pop, items = populations["new"]
    source = dask_backend.sample_pairs(source_items, n_draws=3000, scheme=scheme, rng=mc.batch_rng(seed=1, batch=0))
    rng = mc.coupling_rng(seed=2, batch=0, source=1)
    coupled = couple_sample(items, n_draws=3500, scheme=scheme, rng=rng, source_items=source_items, source_pairs=source)
    expected, kept = in_memory_rule(populations, scheme, source, 3500, mc.coupling_rng(seed=2, batch=0, source=1))
    pd.testing.assert_frame_equal(coupled.pairs, expected, check_exact=True)
    assert (coupled.coupled, coupled.kept) == (3000, kept)
    assert 0.5 * 3000 < kept < 3000  # most draws kept, some redrawn
    # A sample of the new population, every row in it, the draws adding up.
    sample = mc.PairSample.from_columns(
        pop, scheme=scheme, i=coupled.pairs["i"], j=coupled.pairs["j"], draws=coupled.pairs["draws"],
        pair_class=coupled.pairs["pair_class"], stratum=coupled.pairs["stratum"],
    )  # fmt: skip
    assert sample.n_draws == 3500


EARLIER = {  # item id: (base, exp, weight)
    "i0": (0, 0, 1.0), "i1": (0, 0, 2.0), "i2": (0, 1, 0.5), "i3": (1, 1, 1.5), "i4": (1, 1, 1.0),
    "i5": (1, 2, 0.7), "i6": (2, 2, 1.2), "i7": (2, 2, 0.9), "i8": (3, 3, 1.1), "i9": (3, 4, 1.3),
}  # fmt: skip
NEW = {
    **{k: v for k, v in EARLIER.items() if k != "i0"},
    "i2": (0, 0, 0.5), "i7": (2, 5, 0.9), "i10": (3, 4, 0.8), "i4": (1, 1, 3.0), "i6": (2, 2, 0.4),
}  # fmt: skip


def small_items(tmp_path, rows, name):
    ids = sorted(rows)
    base, exp, weight = (np.array(column) for column in zip(*(rows[k] for k in ids)))
    frame = items_frame(base, exp, weight, ids=ids)
    return (
        dask_backend.read_items(str(write_parts(frame, tmp_path / name, 2))),
        ref.RefPopulation(base, exp, weight),
        ids,
    )


@pytest.mark.parametrize("scheme", ["stratified"])
def test_coupled_draws_on_dask_follow_the_new_distribution(synchronous, tmp_path, scheme):
    earlier, _, _ = small_items(tmp_path, EARLIER, "earlier")
    new, reference, ids = small_items(tmp_path, NEW, "new")
    source = dask_backend.sample_pairs(earlier, n_draws=20_000, scheme=scheme, rng=np.random.default_rng(1))
    coupled = couple_sample(
        new, n_draws=20_000, scheme=scheme, rng=np.random.default_rng(2), source_items=earlier, source_pairs=source
    )
    assert 0 < coupled.kept < coupled.coupled == 20_000
    counts = Counter()
    for i, j, s, d in coupled.pairs[["i", "j", "stratum", "draws"]].itertuples(index=False):
        counts[s, i, j] += d
    for stratum, dist in ref.sampling_distribution(reference, scheme).items():
        keys = [(ids[a], ids[b]) for (a, b), (p, _) in dist.items() if p > 0]
        p = np.array([p for p, _ in dist.values() if p > 0])
        drawn = {(a, b) for (s, a, b) in counts if s == stratum}
        assert drawn <= set(keys), f"{stratum}: pairs of probability 0 drawn"
        f_obs = np.array([counts[stratum, a, b] for a, b in keys], dtype=float)
        assert chisquare(f_obs, p / p.sum() * f_obs.sum()).pvalue > 0.001, stratum


def test_batches_on_dask_are_their_own_streams_and_estimate_as_in_memory(synchronous, populations):
    pop, items = populations["new"]
    batches = [
        dask_backend.sample_pairs(items, n_draws=2000, scheme="jaccard", rng=mc.batch_rng(seed=7, batch=b))
        for b in (0, 1, 1)
    ]
    pd.testing.assert_frame_equal(batches[1], batches[2])  # batch 1 again: the same draws
    assert not batches[1][["i", "j"]].equals(batches[0][["i", "j"]])
    samples = [
        mc.PairSample.from_columns(
            pop, scheme="jaccard", i=b["i"], j=b["j"], draws=b["draws"], pair_class=b["pair_class"]
        )
        for b in batches[:2]
    ]
    union = mc.concatenate_samples(samples)
    assert union.n_draws == 4000
    # Each batch's order is its own seeded permutation, as in memory (one rule: draw_positions).
    positions = [mc.draw_positions(s, rng=mc.batch_order_rng(seed=7, batch=b)) for b, s in enumerate(samples)]
    assert [sorted(p.tolist()) for p in positions] == [list(range(2000))] * 2
    table = pd.DataFrame(
        {"i": union.i, "j": union.j, "draws": union.draws, "scheme": "jaccard",
         "pair_class": np.asarray(mc.PAIR_CLASSES)[union.pair_class], "stratum": "all"}
    )  # fmt: skip
    context = dask_backend.sample_context(items, table)
    rng = np.random.default_rng(0)
    a, b = mc.pairs_for_judgement(union, rng=rng)
    verdicts = mc.verdicts_from_judgements(a, b, rng.choice(["equivalent", "not_equivalent"], len(a)))
    from_dask = mc.estimate_quality(context, union, verdicts).as_dict()["estimates"]
    from_memory = mc.estimate_quality(pop, union, verdicts).as_dict()["estimates"]
    for name, estimate in from_memory.items():
        for key, value in estimate.items():
            assert from_dask[name][key] == (None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12))
