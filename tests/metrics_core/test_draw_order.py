"""Judging in draw order (abcde-spec §14): draw positions, task order, the labelled prefix."""

import numpy as np
import pytest
from scipy.stats import chi2

import metrics_core as mc
from metrics_core.sampling import batch_order_rng, batch_rng, first_positions

WEIGHTS = np.exp(np.random.default_rng(5).normal(0.0, 1.0, 12))
BASE = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
EXP = [0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3]


def weighted_sample(seed, n_draws=400, batch=0, scheme="jaccard"):
    pop = mc.population_from_labels(BASE, EXP, WEIGHTS)
    return pop, mc.sample_pairs(pop, n_draws=n_draws, scheme=scheme, rng=batch_rng(seed=seed, batch=batch))


def row_slices(sample, positions):
    offsets = np.concatenate(([0], np.cumsum(sample.draws)))
    return [positions[offsets[r] : offsets[r + 1]] for r in range(len(sample))]


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_positions_are_a_permutation_ascending_within_each_row(scheme):
    _, sample = weighted_sample(1, scheme=scheme)
    positions = mc.draw_positions(sample, rng=batch_order_rng(seed=1, batch=0))
    assert positions.dtype == np.int64
    assert np.array_equal(np.sort(positions), np.arange(sample.n_draws))
    assert all((np.diff(row) > 0).all() for row in row_slices(sample, positions))


def test_positions_are_reproducible_from_the_seed_and_differ_between_batches():
    _, sample = weighted_sample(2)
    again = [mc.draw_positions(sample, rng=batch_order_rng(seed=2, batch=b)) for b in (0, 0, 1)]
    assert np.array_equal(again[0], again[1])
    assert not np.array_equal(again[0], again[2])


def test_the_first_draws_of_the_permutation_are_a_uniformly_random_subset():
    """Pooled over seeds, which row owns each of the first k positions is in proportion to its draws
    (chi-square at the 0.1% level; the first k positions are a simple random sample without
    replacement, whose counts vary less than the multinomial's, so the test is conservative)."""
    _, sample = weighted_sample(3, n_draws=300)
    k, seeds = 20, 400
    owners = np.zeros(len(sample))
    row = np.repeat(np.arange(len(sample)), sample.draws)
    for seed in range(seeds):
        positions = mc.draw_positions(sample, rng=batch_order_rng(seed=seed, batch=0))
        owners += np.bincount(row[positions < k], minlength=len(sample))
    expected = seeds * k * sample.draws / sample.n_draws
    statistic = float(((owners - expected) ** 2 / expected).sum())
    assert statistic < chi2.ppf(0.999, len(sample) - 1)
    # and the test can fail: the owners of the *last* k positions of a sorted layout are not uniform
    biased = np.bincount(row[:k], minlength=len(sample)) * seeds
    assert float(((biased - expected) ** 2 / expected).sum()) > chi2.ppf(0.999, len(sample) - 1)


def test_the_labelled_prefix_of_pairs_judged_in_draw_order_covers_each_draw_equally():
    """Judge the first m pairs in task order: the labelled draws of each row, pooled over seeds,
    are in proportion to its draws (each draw is labelled with the same probability)."""
    _, sample = weighted_sample(4, n_draws=300)
    m, seeds = 8, 400
    labelled = np.zeros(len(sample))
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    for seed in range(seeds):
        positions = mc.draw_positions(sample, rng=batch_order_rng(seed=seed, batch=0))
        a, b = mc.pairs_in_draw_order(sample, positions)
        judged = set(zip(a[:m].tolist(), b[:m].tolist(), strict=True))
        resolved = np.array([(x, y) in judged for x, y in zip(low.tolist(), high.tolist(), strict=True)])
        counts, prefix = mc.labelled_prefix(sample, positions, resolved)
        assert counts.sum() == prefix
        labelled += counts
    share = labelled / labelled.sum()
    expected = sample.draws / sample.n_draws
    # each row's share within a binomial bound over the pooled labelled draws (4.5 sd, Bonferroni-safe)
    bound = 4.5 * np.sqrt(expected * (1 - expected) / labelled.sum() * 8)  # 8: a generous design effect
    assert (np.abs(share - expected) < bound).all()


def test_pairs_in_draw_order_are_sorted_by_first_position_over_both_orientations():
    _, sample = weighted_sample(6)
    positions = mc.draw_positions(sample, rng=batch_order_rng(seed=6, batch=0))
    a, b = mc.pairs_in_draw_order(sample, positions)
    first = first_positions(sample, positions)
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    rank = {}
    for x, y, f, c in zip(low.tolist(), high.tolist(), first.tolist(), sample.pair_class.tolist(), strict=True):
        if c != 0:
            rank[(x, y)] = min(rank.get((x, y), f), f)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == sorted(rank)
    assert (a < b).all()
    firsts = [rank[(x, y)] for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert firsts == sorted(firsts)
    assert len(set(firsts)) == len(firsts)


def test_every_pair_resolved_labels_every_draw_and_none_resolved_only_the_leading_self_draws():
    _, sample = weighted_sample(7)
    positions = mc.draw_positions(sample, rng=batch_order_rng(seed=7, batch=0))
    counts, prefix = mc.labelled_prefix(sample, positions, np.ones(len(sample), dtype=bool))
    assert prefix == sample.n_draws and np.array_equal(counts, sample.draws)
    counts, prefix = mc.labelled_prefix(sample, positions, np.zeros(len(sample), dtype=bool))
    first = first_positions(sample, positions)
    assert prefix == first[sample.pair_class != 0].min()
    assert counts[sample.pair_class != 0].sum() == 0
    assert counts.sum() == prefix


def test_labelled_draws_of_batches_add_up_on_the_concatenated_rows():
    pop, _ = weighted_sample(8)
    batches = [mc.sample_pairs(pop, n_draws=200, rng=batch_rng(seed=8, batch=b)) for b in range(3)]
    counts = []
    for b, sample in enumerate(batches):
        positions = mc.draw_positions(sample, rng=batch_order_rng(seed=8, batch=b))
        resolved = first_positions(sample, positions) < 50  # rows first drawn early
        counts.append(mc.labelled_prefix(sample, positions, resolved)[0])
    combined = mc.concatenate_samples(batches)
    mapped = mc.labelled_draws(batches, counts)
    assert mapped.sum() == sum(c.sum() for c in counts)
    assert (mapped <= combined.draws).all()
    keys = {}
    for sample, count in zip(batches, counts, strict=True):
        for key in zip(sample.stratum.tolist(), sample.i.tolist(), sample.j.tolist(), count.tolist(), strict=True):
            keys[key[:3]] = keys.get(key[:3], 0) + key[3]
    rows = zip(combined.stratum.tolist(), combined.i.tolist(), combined.j.tolist(), strict=True)
    assert [keys[k] for k in rows] == mapped.tolist()


def test_with_every_draw_labelled_the_estimates_are_todays():
    pop, sample = weighted_sample(9)
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    truth = np.array(BASE)[low] == np.array(BASE)[high]
    verdicts = mc.verdicts_from_judgements(low, high, np.where(truth, "equivalent", "not_equivalent"))
    positions = mc.draw_positions(sample, rng=batch_order_rng(seed=9, batch=0))
    counts, _ = mc.labelled_prefix(sample, positions, np.ones(len(sample), dtype=bool))
    today = mc.estimate_quality(pop, sample, verdicts).as_dict()
    ordered = mc.estimate_quality(pop, sample, verdicts, labelled_draws=counts).as_dict()
    assert ordered == today


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: mc.labelled_prefix(s, np.arange(s.n_draws - 1), np.ones(len(s), bool)), "positions must be"),
        (lambda s: mc.labelled_prefix(s, np.arange(s.n_draws), np.ones(len(s) + 1, bool)), "resolved_rows"),
        (lambda s: mc.labelled_draws([s], [s.draws + 1]), "within 0"),
        (lambda s: mc.labelled_draws([s, s], [s.draws]), "one counts array per sample"),
    ],
)
def test_bad_arguments_name_themselves(call, message):
    _, sample = weighted_sample(10)
    with pytest.raises(ValueError, match=message):
        call(sample)
