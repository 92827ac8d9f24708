"""Batches of an experiment (abcde-spec §10): their random streams, and samples concatenated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .core import PairSample, distinct_rows


def batch_rng(*, seed: int, batch: int) -> np.random.Generator:
    """The random stream of batch ``batch`` of an experiment sampled with ``seed`` (abcde-spec §10).

    Batch 0 is ``np.random.default_rng(seed)``, the experiment's first sample; batch ``b ≥ 1``
    is the ``b``-th child ``SeedSequence(seed, spawn_key=(b,))``, so it depends only on
    ``(seed, b)`` and its draws are independent of every other batch's. Pass it as ``rng=`` to
    :func:`sample_pairs` (or the Dask backend's): the union of batches is one i.i.d. sample.

    Examples
    --------
    >>> first = batch_rng(seed=7, batch=0).random()
    >>> first == np.random.default_rng(7).random()
    True
    >>> batch_rng(seed=7, batch=2).random() == batch_rng(seed=7, batch=2).random() != first
    True
    """
    seed, batch = _seed_and_batch(seed, batch)
    if batch == 0:
        return np.random.default_rng(seed)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(batch,)))


def batch_order_rng(*, seed: int, batch: int) -> np.random.Generator:
    """The random stream that orders batch ``batch``'s draws and so its new tasks (abcde-spec §14).

    Experiments judged in draw order take from it the permutation of the batch's draws
    (:func:`~.order.draw_positions`); experiments created before draw order took the random
    order of the batch's new tasks from it (:func:`pairs_for_judgement`).
    Batch 0 is ``np.random.default_rng(seed + 1)`` (the order of an experiment's first tasks);
    batch ``b ≥ 1`` is ``SeedSequence(seed, spawn_key=(b, 1))``, independent of the draws.

    Examples
    --------
    >>> batch_order_rng(seed=7, batch=0).random() == np.random.default_rng(8).random()
    True
    """
    seed, batch = _seed_and_batch(seed, batch)
    if batch == 0:
        return np.random.default_rng(seed + 1)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(batch, 1)))


def _seed_and_batch(seed: Any, batch: Any) -> tuple[int, int]:
    for name, value in (("seed", seed), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(seed), int(batch)


def concatenate_samples(samples: Sequence[PairSample]) -> PairSample:
    """One sample from several batches of one experiment: the draws of a repeated ``(i, j)`` add up.

    Draws are i.i.d., so the union of batches is one sample of all their draws (abcde-spec §10).
    Rows keep the order in which each distinct ``(stratum, i, j)`` is first seen. Every sample
    must have the same scheme and ``diff_share``.

    Examples
    --------
    >>> from metrics_core import population_from_labels, sample_pairs
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> batches = [sample_pairs(pop, n_draws=50, rng=batch_rng(seed=3, batch=b)) for b in range(3)]
    >>> both = concatenate_samples(batches)
    >>> both.n_draws, len(both) <= sum(len(b) for b in batches)
    (150, True)
    """
    samples = list(samples)
    if not samples:
        raise ValueError("samples must hold at least one PairSample")
    first = samples[0]
    for k, sample in enumerate(samples[1:], start=1):
        if not isinstance(sample, PairSample):
            raise TypeError(f"samples[{k}] is a {type(sample).__name__}, not a PairSample")
        if (sample.scheme, sample.diff_share) != (first.scheme, first.diff_share):
            raise ValueError(
                f"samples[{k}] has scheme {sample.scheme!r} and diff_share {sample.diff_share!r}; "
                f"samples[0] has {first.scheme!r} and {first.diff_share!r}"
            )
    column = lambda name: np.concatenate([getattr(s, name) for s in samples])  # noqa: E731
    i, j = column("i"), column("j")
    n = int(max(i.max(initial=0), j.max(initial=0))) + 1
    pair_class, stratum, draws = column("pair_class"), column("stratum"), column("draws")
    return distinct_rows(first.scheme, n, i, j, pair_class, stratum, draws, first.diff_share, first_seen=True)
