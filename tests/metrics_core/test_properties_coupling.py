"""Property-based tests of coupled sampling (abcde-spec §11): item positions, pair probabilities, couple_sample.

Over generated populations (tests/metrics_core/strategies.py: one item of an affected cluster,
singletons, extreme but legal weights) and a later population of the same items reordered, partly
dropped or changed: ``pair_probabilities`` is a distribution over each stratum's pairs (it sums to
1 and is 0 outside); a coupled sample is a valid sample of the new population with the draws
asked for, reproducible from its stream, and keeps every earlier draw when nothing changed.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import (
    PAIR_CLASSES,
    SCHEMES,
    CouplingError,
    batch_rng,
    couple_sample,
    coupling_rng,
    item_positions,
    pair_classes_of,
    pair_probabilities,
    population_from_labels,
    sample_coupled,
    sample_pairs,
)
from metrics_core.sampling import SCHEME_STRATA, allocate_draws
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, affected, affected_populations, given_weights, populations

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
SELF = PAIR_CLASSES.index("self")


@PROPERTIES
@given(
    st.one_of(
        st.lists(st.integers(-5, 40), max_size=20, unique=True).flatmap(
            lambda among: st.tuples(st.lists(st.integers(-5, 45), max_size=20), st.just(among))
        ),
        st.lists(st.text("abc", max_size=3), max_size=20, unique=True).flatmap(
            lambda among: st.tuples(st.lists(st.text("abcd", max_size=3), max_size=20), st.just(among))
        ),
    )
)
def test_item_positions_find_each_id_or_say_minus_one(case):
    ids, among = case
    positions = item_positions(ids, among)
    assert positions.dtype == np.int64 and positions.shape == (len(ids),)
    for item, at in zip(ids, positions.tolist()):
        assert (among[at] == item) if at >= 0 else (at == -1 and item not in among)


@PROPERTIES
@given(populations(max_items=14), st.sampled_from(SCHEMES), st.sampled_from([0.5, 0.01, 0.99]))
def test_pair_probabilities_are_a_distribution_over_each_strata_pairs(pop, scheme, diff_share):
    n = pop.n_items
    i, j = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    classes = pair_classes_of(pop, i, j)
    for stratum, stratum_classes in SCHEME_STRATA[scheme].items():
        p = pair_probabilities(pop, scheme=scheme, stratum=stratum, i=i, j=j)
        assert np.all(p >= 0) and np.all(np.isfinite(p))
        inside = np.isin(classes, stratum_classes) & pop.cell_affected()[pop.cell[i]]
        assert np.all(p[~inside] == 0)  # unaffected vantage items, other classes, items in no set
        if affected(pop) and p.sum() > 0:
            # Up to rounding: the set weights are differences of cluster sums (weight(Exp(i)) − weight(cell),
            # weight(cell) − w_i), exact to a few ulps of the cluster's heaviest item; they cancel when a
            # cluster's items span 2⁵⁰ and more (legal weights may span 2²⁰⁰).
            assert p.sum() == pytest.approx(1.0, rel=max(1e-6, 4 * np.finfo(float).eps * _cluster_span(pop)))
        # Items not in the population have probability 0.
        missing = pair_probabilities(pop, scheme=scheme, stratum=stratum, i=np.array([-1, 0]), j=np.array([0, -1]))
        assert np.array_equal(missing, [0.0, 0.0])
    if affected(pop):  # every drawn pair has a positive probability in its stratum
        sample = sample_pairs(pop, n_draws=50, scheme=scheme, rng=np.random.default_rng(n), diff_share=diff_share)
        for stratum in np.unique(sample.stratum).tolist():
            rows = sample.stratum == stratum
            p = pair_probabilities(pop, scheme=scheme, stratum=stratum, i=sample.i[rows], j=sample.j[rows])
            assert np.all(p > 0)


def _cluster_span(pop) -> float:
    """The largest ratio of two item weights in one Base or one Exp cluster."""
    spans = [
        pop.weight[labels == k].max() / pop.weight[labels == k].min()
        for labels in (pop.base, pop.exp)
        for k in np.unique(labels)
    ]
    return float(max(spans))


@st.composite
def coupled_cases(draw):
    source = draw(affected_populations(max_items=12))
    n = source.n_items
    base, exp = source.base_labels[source.base], source.exp_labels[source.exp]
    weights = given_weights(source)
    kind = draw(st.sampled_from(["same", "reordered", "changed", "subset"]))
    order = np.arange(n) if kind == "same" else np.array(draw(st.permutations(range(n))))
    if kind == "subset":
        order = order[: draw(st.integers(1, n))]
    new_exp = [str(label) for label in exp[order].tolist()]
    if kind in ("changed", "subset"):
        labels = sorted(set(new_exp) | {"new"})
        for k in range(len(order)):
            if draw(st.booleans()):
                new_exp[k] = draw(st.sampled_from(labels))
    population = population_from_labels(base[order], new_exp, weights[order])
    scheme = draw(st.sampled_from(SCHEMES))
    diff_share = draw(st.sampled_from([0.5, 0.01, 0.99]))
    seed = draw(st.integers(0, 2**31))
    earlier = sample_pairs(
        source,
        n_draws=draw(st.integers(1, 60)),
        scheme=scheme,
        rng=batch_rng(seed=seed, batch=0),
        diff_share=diff_share,
    )
    return kind, source, earlier, population, order, scheme, diff_share, seed, draw(st.integers(1, 80))


@PROPERTIES
@given(coupled_cases())
def test_a_coupled_sample_is_a_sample_of_the_new_population_keeping_what_it_can(case):
    kind, source, earlier, pop, ids, scheme, diff_share, seed, n_draws = case
    arguments = dict(
        n_draws=n_draws,
        scheme=scheme,
        source_population=source,
        source_sample=earlier,
        item_ids=ids,
        source_item_ids=np.arange(source.n_items),
        diff_share=diff_share,
    )
    if not affected(pop):
        with pytest.raises(ValueError, match="nothing to sample"):
            couple_sample(pop, rng=coupling_rng(seed=seed, batch=1, source=0), **arguments)
        return
    try:
        coupled = couple_sample(pop, rng=coupling_rng(seed=seed, batch=1, source=0), **arguments)
    except CouplingError as error:  # documented: the residual draws found no acceptance
        assert "no residual draw accepted" in str(error)
        return
    sample = coupled.sample
    assert sample.scheme == scheme and sample.n_draws == n_draws and np.all(sample.draws >= 1)
    assert np.array_equal(pair_classes_of(pop, sample.i, sample.j), sample.pair_class)
    assert np.array_equal(sample.pair_class == SELF, sample.i == sample.j)
    assert np.all(pop.cell_affected()[pop.cell[sample.i]])
    for stratum in np.unique(sample.stratum).tolist():
        rows = sample.stratum == stratum
        assert np.all(pair_probabilities(pop, scheme=scheme, stratum=stratum, i=sample.i[rows], j=sample.j[rows]) > 0)
    # The coupled draws are the earlier draws of each stratum, up to the draws asked for.
    earlier_by_stratum = {
        s: int(earlier.draws[earlier.stratum == s].sum()) for s in np.unique(earlier.stratum).tolist()
    }
    wanted = allocate_draws(scheme, n_draws, diff_share)
    assert coupled.coupled == sum(min(count, earlier_by_stratum.get(s, 0)) for s, count in wanted.items())
    assert 0 <= coupled.kept <= coupled.coupled <= n_draws
    if kind == "same":  # nothing changed: every earlier draw is kept
        assert coupled.kept == coupled.coupled
        if n_draws == earlier.n_draws:
            assert sorted(zip(sample.i.tolist(), sample.j.tolist(), sample.draws.tolist())) == sorted(
                zip(earlier.i.tolist(), earlier.j.tolist(), earlier.draws.tolist())
            )
    again = sample_coupled(pop, rng=coupling_rng(seed=seed, batch=1, source=0), **arguments)
    for field in ("i", "j", "pair_class", "stratum", "draws"):
        assert np.array_equal(getattr(again, field), getattr(sample, field)), field
