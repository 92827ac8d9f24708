"""What another batch is expected to bring (abcde-spec §10): Good–Turing's new-pair share
against the new pairs that batches really bring."""

import numpy as np
import pytest

from metrics_core import batch_rng, population_from_labels, sample_pairs
from metrics_core.growth import batch_expectation, new_pair_share, new_pair_share_from_counts


def _unordered(sample):
    keep = sample.pair_class != 0  # self pairs never become tasks
    low, high = np.minimum(sample.i[keep], sample.j[keep]), np.maximum(sample.i[keep], sample.j[keep])
    return set(zip(low.tolist(), high.tolist()))


def test_the_expected_new_pairs_of_a_batch_match_what_batches_bring():
    rng = np.random.default_rng(4)
    n = 3000
    base = rng.integers(0, 400, n)
    exp = np.where(rng.random(n) < 0.3, rng.integers(0, 400, n), base)
    population = population_from_labels(base, exp)
    ratios = []
    for seed in range(12):
        first = sample_pairs(population, n_draws=2000, rng=batch_rng(seed=seed, batch=0))
        second = sample_pairs(population, n_draws=1000, rng=batch_rng(seed=seed, batch=1))
        expected = batch_expectation(new_pair_share=new_pair_share(first), draws=1000, replication=3)
        actual = len(_unordered(second) - _unordered(first))
        ratios.append(expected.new_pairs / actual)
        assert expected.verdicts == 3 * expected.new_pairs
    assert np.median(ratios) == pytest.approx(1.0, abs=0.15)


def test_by_hand_and_refusals():
    assert new_pair_share_from_counts(pairs_drawn_once=0, draws=0) != new_pair_share_from_counts(pairs_drawn_once=0, draws=0)  # nan
    e = batch_expectation(new_pair_share=0.25, draws=40, replication=2, cost_per_verdict=1.5)
    assert (e.new_pairs, e.verdicts, e.cost) == (10.0, 20.0, 30.0)
    for bad in ({"new_pair_share": 1.5}, {"new_pair_share": float("nan")}, {"draws": -1}, {"replication": 0}):
        with pytest.raises(ValueError):
            batch_expectation(**{"new_pair_share": 0.1, "draws": 10, "replication": 1, **bad})
    with pytest.raises(ValueError):
        new_pair_share_from_counts(pairs_drawn_once=5, draws=4)
