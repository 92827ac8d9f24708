"""Property-based tests of sampling: sample_pairs (every scheme), batches, concatenation, pairs to judge.

Over generated populations (tests/metrics_core/strategies.py): a population with nothing affected
is refused with a ValueError; otherwise the draws add up, rows are distinct and well classed, and
the same seed gives the same sample.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import (
    PAIR_CLASSES,
    SCHEMES,
    STRATA,
    batch_rng,
    concatenate_samples,
    pair_classes_of,
    pairs_for_judgement,
    sample_pairs,
)
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, affected, populations

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
SELF = PAIR_CLASSES.index("self")


def check_sample(pop, sample, n_draws, scheme):
    assert sample.scheme == scheme and sample.n_draws == n_draws
    assert np.all(sample.draws >= 1)
    keys = sample.i.astype(np.int64) * pop.n_items + sample.j
    assert len(np.unique(keys)) == len(keys)
    assert np.all((0 <= sample.i) & (sample.i < pop.n_items) & (0 <= sample.j) & (sample.j < pop.n_items))
    assert np.array_equal(sample.pair_class == SELF, sample.i == sample.j)
    assert np.array_equal(pair_classes_of(pop, sample.i, sample.j), sample.pair_class)
    assert np.all(pop.cell_affected()[pop.cell[sample.i]])  # every vantage item is affected
    strata = {STRATA[s] for s in np.unique(sample.stratum)}
    assert strata <= ({"diff", "stable"} if scheme == "stratified" else {"all"})


@PROPERTIES
@given(populations(), st.sampled_from(SCHEMES), st.integers(1, 200), st.integers(0, 2**32 - 1),
       st.sampled_from([0.5, 0.01, 0.99]))
def test_sample_pairs_adds_up_and_is_reproducible(pop, scheme, n_draws, seed, diff_share):
    def draw():
        return sample_pairs(pop, n_draws=n_draws, scheme=scheme, rng=np.random.default_rng(seed), diff_share=diff_share)

    if not affected(pop):
        with pytest.raises(ValueError, match="nothing to sample"):
            draw()
        return
    sample = draw()
    check_sample(pop, sample, n_draws, scheme)
    again = draw()
    for field in ("i", "j", "pair_class", "stratum", "draws"):
        assert np.array_equal(getattr(sample, field), getattr(again, field)), field


@PROPERTIES
@given(populations(), st.sampled_from(SCHEMES), st.lists(st.integers(1, 60), min_size=1, max_size=4),
       st.integers(0, 2**31))
def test_batches_concatenate_into_one_sample(pop, scheme, sizes, seed):
    if not affected(pop):
        return
    batches = [
        sample_pairs(pop, n_draws=n, scheme=scheme, rng=batch_rng(seed=seed, batch=b)) for b, n in enumerate(sizes)
    ]
    whole = concatenate_samples(batches)
    check_sample(pop, whole, sum(sizes), scheme)
    again = sample_pairs(pop, n_draws=sizes[0], scheme=scheme, rng=batch_rng(seed=seed, batch=0))
    assert np.array_equal(again.draws, batches[0].draws) and np.array_equal(again.j, batches[0].j)
    # A batch with no new pair: the same batch twice adds draws, not rows.
    doubled = concatenate_samples([batches[0], batches[0]])
    assert len(doubled) == len(batches[0]) and doubled.n_draws == 2 * batches[0].n_draws


@PROPERTIES
@given(populations(), st.sampled_from(SCHEMES), st.integers(1, 200), st.integers(0, 2**32 - 1))
def test_pairs_for_judgement_are_the_distinct_unordered_non_self_pairs(pop, scheme, n_draws, seed):
    if not affected(pop):
        return
    sample = sample_pairs(pop, n_draws=n_draws, scheme=scheme, rng=np.random.default_rng(seed))
    a, b = pairs_for_judgement(sample, rng=np.random.default_rng(seed))
    assert np.all(a < b)
    expected = {(min(i, j), max(i, j)) for i, j in zip(sample.i.tolist(), sample.j.tolist()) if i != j}
    assert set(zip(a.tolist(), b.tolist())) == expected and len(a) == len(expected)
