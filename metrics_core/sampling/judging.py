"""What a sample gives the raters and the estimators: pairs to judge, per-draw contributions."""

from __future__ import annotations

import numpy as np

from .._validation import generator
from ..impact import cell_pointwise_metrics
from ..masses import MERGE, SELF, SPLIT
from .core import PairSample


def pairs_for_judgement(sample: PairSample, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The distinct unordered non-self pairs of a sample, in random order.

    Self pairs need no verdict (an item is always equivalent to itself), and a
    verdict on ``{i, j}`` serves both ``(i, j)`` and ``(j, i)``. Showing pairs in
    random order keeps the judged subset a random subset at every moment.

    Returns
    -------
    a, b : ndarray of int64
        Item positions with ``a < b``.
    """
    rng = generator("rng", rng)
    keep = sample.pair_class != SELF
    low = np.minimum(sample.i[keep], sample.j[keep])
    high = np.maximum(sample.i[keep], sample.j[keep])
    pairs = np.unique(np.stack([low, high], axis=1), axis=0)
    pairs = pairs[rng.permutation(len(pairs))]
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def jaccard_contributions(population, sample: PairSample) -> np.ndarray:
    """Each row's contribution to JaccardDistance(T) (JDD §4.5), 0 for stable pairs.

    ``population`` is a :class:`Population` or a :class:`~metrics_core.SampleContext` of the whole sample.

    A diff pair drawn ``d`` of the ``D`` diff draws contributes
    ``d / D · JaccardDistance(T)``; under the ``precision`` scheme draws are first
    importance-weighted by w_ij / u_ij so that they represent w_ij. The diff rows
    sum to JaccardDistance(T); filter rows to see a slice's share.
    """
    from ..context import SampleContext  # the context module builds on this one

    diff = (sample.pair_class == SPLIT) | (sample.pair_class == MERGE)
    weight = np.where(diff, sample.draws, 0).astype(np.float64)
    if isinstance(population, SampleContext):
        if len(population.rows) != len(sample):
            raise ValueError("jaccard_contributions needs the context of every row of the sample")
        sets = {"base": population.base, "exp": population.exp, "union": population.union}
        jaccard_distance = population.exact["JaccardDistance"]
    else:
        pop = population
        sets = {name: pop.cell_sets[name][pop.cell[sample.i]] for name in ("base", "exp", "union")}
        jaccard_distance = float(
            np.dot(pop.cell_weight, cell_pointwise_metrics(pop)["JaccardDistance"]) / pop.total_weight
        )
    if sample.scheme == "precision":
        side = np.where(sample.pair_class == SPLIT, sets["base"], sets["exp"])
        weight *= side / sets["union"]
    total = weight.sum()
    if total == 0:
        return np.zeros(len(sample))
    return weight / total * jaccard_distance
