"""Coupled sampling: a later experiment's draws prefer the pairs an earlier one drew (abcde-spec §11).

Maximal coupling, draw by draw. With P1 the earlier sample's draw distribution over ordered pairs,
X_1..X_S its draws and P2 the new distribution: draw k keeps Y_k = X_k with probability
min(1, P2(X_k)/P1(X_k)); otherwise Y_k is a draw Y' ~ P2 accepted with probability
1 − P1(Y')/P2(Y') (U·P2(Y') > P1(Y')), repeated until one is. Then Y_k ~ P2 exactly, the Y_k are
independent, and P(Y_k = X_k) = 1 − TV(P1, P2). Draws beyond the earlier sample's are ordinary
ones; the stratified scheme is coupled stratum by stratum (each stratum has its own distribution
and a fixed number of draws).

The stored earlier sample (distinct pairs with draw counts) is expanded into draws in a random
order: its draws are i.i.d., so that is a sequence of i.i.d. draws from P1. The randomness of the
coupling must be independent of the earlier sample's: :func:`coupling_rng`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import one_of
from ..masses import INTERSECTION, SELF, SPLIT, class_masses, class_totals
from ..population import Population
from .core import SCHEME_STRATA, SCHEMES, PairSample, distinct_rows, pair_classes_of
from .draw import allocate_draws, draw_rows, sampling_arguments

# Proposals for the residual draws, at most this many per draw asked for (plus a floor): only a
# near-zero TV distance with a rejected keep gets there, and then the caller samples afresh.
_MAX_PROPOSALS_PER_DRAW = 100
_MIN_PROPOSAL_LIMIT = 200_000
_MAX_ROUND = 1_000_000


class CouplingError(ValueError):
    """The earlier sample does not fit its population, or the residual draws found no acceptance."""


@dataclass(frozen=True, eq=False)
class CoupledSample:
    """A coupled sample, with ``coupled`` draws that had an earlier draw to keep and ``kept`` kept."""

    sample: PairSample
    coupled: int
    kept: int


def item_positions(ids: Any, among: Any) -> np.ndarray:
    """The position of each of ``ids`` in ``among`` (unique ids), −1 where it is not there.

    >>> item_positions(["b", "z", "a"], ["a", "b", "c"]).tolist()
    [1, -1, 0]
    """
    ids, among = _comparable(ids, among)
    if len(among) == 0:
        return np.full(len(ids), -1, dtype=np.int64)
    order = np.argsort(among, kind="stable")
    ranked = among[order]
    at = np.minimum(np.searchsorted(ranked, ids), len(among) - 1)
    return np.where(ranked[at] == ids, order[at], -1).astype(np.int64)


def _comparable(ids: Any, among: Any) -> tuple[np.ndarray, np.ndarray]:
    ids, among = np.asarray(ids), np.asarray(among)
    if ids.dtype.kind in "iu" and among.dtype.kind in "iu":
        return ids.astype(np.int64), among.astype(np.int64)
    return ids.astype(str), among.astype(str)


def pair_probabilities(population: Population, *, scheme: str, stratum: int, i: Any, j: Any) -> np.ndarray:
    """P(one draw of ``stratum`` is the ordered pair (i, j)) under ``scheme`` (abcde-spec §4).

    ``i`` and ``j`` are item positions; −1 (an item not in the population) and pairs outside the
    stratum's classes have probability 0. The draw picks ``i`` ∝ its mass, the class ∝ its class
    mass and ``j`` ∝ w_j in that class's set, so P = (class mass of i) · w_j / weight(set) / total.
    """
    one_of("scheme", scheme, SCHEMES)
    pop = population
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    p = np.zeros(len(i))
    rows = np.flatnonzero((i >= 0) & (j >= 0))
    pair_class = pair_classes_of(pop, i[rows], j[rows])
    classes = SCHEME_STRATA[scheme][stratum]
    inside = np.isin(pair_class, classes)
    rows, pair_class = rows[inside], pair_class[inside].astype(np.int64)
    vi, vj = i[rows], j[rows]
    mass = class_masses(pop, scheme, vi)[np.arange(len(rows)), pair_class]
    cell, sets = pop.cell[vi], pop.cell_sets
    w_i, w_j = pop.weight[vi], pop.weight[vj]
    set_weight = np.select(
        [pair_class == SELF, pair_class == INTERSECTION, pair_class == SPLIT],
        [w_i, np.maximum(sets["both"][cell] - w_i, 0.0), sets["split"][cell]],
        sets["merge"][cell],
    )
    share = np.divide(w_j, set_weight, out=np.zeros(len(rows)), where=set_weight > 0)
    p[rows] = mass * share / class_totals(pop, scheme)[list(classes)].sum()
    return p


def coupling_rng(*, seed: int, batch: int, source: int) -> np.random.Generator:
    """The stream of batch ``batch`` (seed ``seed``) coupled to the earlier sample numbered ``source``.

    ``SeedSequence(seed, spawn_key=(batch, 2, source))``: independent of every ordinary batch stream
    (``batch_rng``) and of every stream coupled to another source, so the coupling's randomness is
    independent of the earlier sample's even when both experiments have the same seed.
    """
    for name, value in (("seed", seed), ("batch", batch), ("source", source)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(batch), 2, int(source))))


def sample_coupled(population: Population, **arguments: Any) -> PairSample:
    """``n_draws`` i.i.d. draws of ``population`` under ``scheme``, coupled to an earlier sample.

    :func:`couple_sample` 's sample (the same keyword arguments). It has exactly the distribution of
    :func:`sample_pairs` with the same ``n_draws``, ``scheme`` and ``diff_share``, and keeps as many
    draws of ``source_sample`` as maximal coupling allows: 1 − TV(P1, P2) of them on average.

    Examples
    --------
    >>> from metrics_core import population_from_labels, sample_pairs
    >>> first = population_from_labels([0, 0, 0, 1], [0, 0, 1, 1])
    >>> earlier = sample_pairs(first, n_draws=200, rng=np.random.default_rng(1))
    >>> s = sample_coupled(first, n_draws=200, scheme="jaccard", rng=np.random.default_rng(2),
    ...     source_population=first, source_sample=earlier, item_ids=[0, 1, 2, 3], source_item_ids=[0, 1, 2, 3])
    >>> sorted(zip(s.i.tolist(), s.j.tolist(), s.draws.tolist())) == sorted(
    ...     zip(earlier.i.tolist(), earlier.j.tolist(), earlier.draws.tolist()))
    True
    """
    return couple_sample(population, **arguments).sample


def couple_sample(
    population: Population,
    *,
    n_draws: int,
    scheme: str,
    rng: np.random.Generator,
    source_population: Population,
    source_sample: PairSample,
    item_ids: Any,
    source_item_ids: Any,
    diff_share: float = 0.5,
) -> CoupledSample:
    """``n_draws`` draws of ``population`` under ``scheme`` coupled to ``source_sample``, with the
    count of draws coupled (those that had an earlier draw) and kept.

    ``source_sample`` is a sample of ``source_population`` under the same scheme; items are matched
    by id: ``item_ids`` and ``source_item_ids`` name the items of each population by position.
    Reproducible from ``rng``'s seed (the app: :func:`coupling_rng`).

    Raises :class:`CouplingError` when the earlier sample has a draw of probability 0 under its
    population, or (vanishingly rarely) when the residual draws find no acceptance.
    """
    pop = population
    n_draws, rng, diff_share = sampling_arguments(n_draws=n_draws, scheme=scheme, rng=rng, diff_share=diff_share)
    if source_sample.scheme != scheme:
        raise ValueError(f"the earlier sample has scheme {source_sample.scheme!r}, not {scheme!r}: no coupling")
    if not pop.cell_affected().any():
        raise ValueError("nothing to sample: no item is affected (Base and Exp are identical)")
    item_ids, source_item_ids = np.asarray(item_ids), np.asarray(source_item_ids)
    for name, ids, size in (
        ("item_ids", item_ids, pop.n_items),
        ("source_item_ids", source_item_ids, source_population.n_items),
    ):
        if len(ids) != size:
            raise ValueError(f"{name} has {len(ids)} ids for a population of {size} items")
    maps = _Maps(item_positions(source_item_ids, item_ids), item_positions(item_ids, source_item_ids))
    parts, coupled, kept = [], 0, 0
    for code, count in allocate_draws(scheme, n_draws, diff_share).items():
        i, j, pair_class, n_kept, n_coupled = _stratum_draws(
            pop, source_population, source_sample, maps, scheme, code, count, rng
        )
        parts.append((i, j, pair_class, np.full(count, code, np.int8)))
        coupled, kept = coupled + n_coupled, kept + n_kept
    i, j, pair_class, stratum = (np.concatenate(columns) for columns in zip(*parts))
    stratified_share = diff_share if scheme == "stratified" else None
    sample = distinct_rows(scheme, pop.n_items, i, j, pair_class, stratum, None, stratified_share, first_seen=True)
    return CoupledSample(sample, coupled, kept)


@dataclass(frozen=True)
class _Maps:
    to_new: np.ndarray  # per earlier item, its position in the new population (−1: absent)
    to_source: np.ndarray  # per new item, its position in the earlier population


def _stratum_draws(
    pop: Population,
    source_pop: Population,
    source: PairSample,
    maps: _Maps,
    scheme: str,
    stratum: int,
    count: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """``count`` draws of one stratum: the coupled ones in slot order, then ordinary ones."""
    rows = np.flatnonzero(source.stratum == stratum)
    earlier = rng.permutation(np.repeat(rows, source.draws[rows]))[:count]
    xi, xj = source.i[earlier], source.j[earlier]
    p1 = pair_probabilities(source_pop, scheme=scheme, stratum=stratum, i=xi, j=xj)
    if (p1 <= 0).any():
        raise CouplingError("the earlier sample holds a pair its own population never draws")
    yi, yj = maps.to_new[xi], maps.to_new[xj]
    p2 = pair_probabilities(pop, scheme=scheme, stratum=stratum, i=yi, j=yj)
    keep = rng.random(len(earlier)) * p1 < p2
    pair_class = np.full(len(earlier), -1, dtype=np.int8)
    pair_class[keep] = pair_classes_of(pop, yi[keep], yj[keep])
    redraw = np.flatnonzero(~keep)
    if len(redraw):
        ri, rj, rc = _residual(pop, source_pop, maps.to_source, scheme, stratum, len(redraw), len(earlier), rng)
        yi[redraw], yj[redraw], pair_class[redraw] = ri, rj, rc
    extra = count - len(earlier)
    if extra:
        ei, ej, ec = draw_rows(pop, scheme, SCHEME_STRATA[scheme][stratum], extra, rng)
        yi, yj, pair_class = np.concatenate((yi, ei)), np.concatenate((yj, ej)), np.concatenate((pair_class, ec))
    return yi, yj, pair_class, int(keep.sum()), len(earlier)


def _residual(
    pop: Population,
    source_pop: Population,
    to_source: np.ndarray,
    scheme: str,
    stratum: int,
    wanted: int,
    coupled: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``wanted`` i.i.d. draws ∝ max(0, P2 − P1): proposals ~ P2 accepted when U·P2 > P1, in order."""
    classes = SCHEME_STRATA[scheme][stratum]
    limit = max(_MAX_PROPOSALS_PER_DRAW * coupled, _MIN_PROPOSAL_LIMIT)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    # The share of draws not kept estimates TV(P1, P2), the acceptance rate of the proposals.
    proposed, accepted, rate = 0, 0, wanted / coupled
    while accepted < wanted:
        if proposed >= limit:
            raise CouplingError(f"no residual draw accepted in {proposed} proposals (the distributions nearly agree)")
        size = int(min(max(1.5 * (wanted - accepted) / rate, 64), _MAX_ROUND, limit - proposed))
        i, j, pair_class = draw_rows(pop, scheme, classes, size, rng)
        p2 = pair_probabilities(pop, scheme=scheme, stratum=stratum, i=i, j=j)
        p1 = pair_probabilities(source_pop, scheme=scheme, stratum=stratum, i=to_source[i], j=to_source[j])
        take = np.flatnonzero(rng.random(size) * p2 > p1)[: wanted - accepted]
        found.append((i[take], j[take], pair_class[take]))
        proposed, accepted = proposed + size, accepted + len(take)
        rate = max(accepted, 0.5) / proposed
    return tuple(np.concatenate(columns) for columns in zip(*found))  # type: ignore[return-value]
