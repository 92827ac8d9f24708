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

from collections.abc import Callable
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
    mass and ``j`` ∝ w_j in that class's set, so P = (class mass of i) · w_j / weight(set) / total
    (:func:`pair_probabilities_of`, which the Dask backend applies to the same columns).
    """
    one_of("scheme", scheme, SCHEMES)
    pop = population
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    pair_class = np.full(len(i), -1, dtype=np.int8)
    rows = np.flatnonzero((i >= 0) & (j >= 0))
    pair_class[rows] = pair_classes_of(pop, i[rows], j[rows])
    rows = rows[np.isin(pair_class[rows], SCHEME_STRATA[scheme][stratum])]
    vi, vj = i[rows], j[rows]
    cell = pop.cell[vi]
    return pair_probabilities_of(
        scheme=scheme,
        stratum=stratum,
        n_pairs=len(i),
        rows=rows,
        pair_class=pair_class[rows],
        masses=class_masses(pop, scheme, vi),
        w_i=pop.weight[vi],
        w_j=pop.weight[vj],
        sets={name: pop.cell_sets[name][cell] for name in ("both", "split", "merge")},
        totals=class_totals(pop, scheme),
    )


def pair_probabilities_of(
    *,
    scheme: str,
    stratum: int,
    n_pairs: int,
    rows: np.ndarray,
    pair_class: np.ndarray,
    masses: np.ndarray,
    w_i: np.ndarray,
    w_j: np.ndarray,
    sets: dict[str, np.ndarray],
    totals: np.ndarray,
) -> np.ndarray:
    """The probabilities of :func:`pair_probabilities` from per-pair columns, whatever holds the population.

    ``rows`` are the pairs (of ``n_pairs``) inside the stratum, with their ``pair_class``, the vantage
    item's class ``masses`` (shape (len(rows), 4), :func:`~metrics_core.masses.item_class_masses`), the
    weights ``w_i`` and ``w_j``, the vantage cell's set weights ``sets`` (``both``, ``split``,
    ``merge``) and the scheme's class ``totals``; every other pair has probability 0.
    """
    p = np.zeros(n_pairs)
    pair_class = np.asarray(pair_class, dtype=np.int64)
    mass = masses[np.arange(len(rows)), pair_class]
    set_weight = np.select(
        [pair_class == SELF, pair_class == INTERSECTION, pair_class == SPLIT],
        [w_i, np.maximum(sets["both"] - w_i, 0.0), sets["split"]],
        sets["merge"],
    )
    share = np.divide(w_j, set_weight, out=np.zeros(len(rows)), where=set_weight > 0)
    p[rows] = mass * share / np.asarray(totals)[list(SCHEME_STRATA[scheme][stratum])].sum()
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
    """``count`` draws of one stratum in memory: :func:`coupled_stratum_draws` over item positions."""
    rows = np.flatnonzero(source.stratum == stratum)
    classes = SCHEME_STRATA[scheme][stratum]
    return coupled_stratum_draws(
        earlier_i=source.i[rows],
        earlier_j=source.j[rows],
        earlier_draws=source.draws[rows],
        count=count,
        rng=rng,
        laws=CouplingLaws(
            source_probabilities=lambda i, j: pair_probabilities(source_pop, scheme=scheme, stratum=stratum, i=i, j=j),
            new_probabilities=lambda i, j: pair_probabilities(pop, scheme=scheme, stratum=stratum, i=i, j=j),
            to_new=lambda x: maps.to_new[x],
            to_source=lambda y: maps.to_source[y],
            classes_of=lambda i, j: pair_classes_of(pop, i, j),
            propose=lambda size, generator: draw_rows(pop, scheme, classes, size, generator),
        ),
    )


@dataclass(frozen=True)
class CouplingLaws:
    """The two populations of one stratum as :func:`coupled_stratum_draws` reads them, each in its
    own item coordinates (positions in memory, item ids on Dask).

    ``source_probabilities(i, j)`` and ``new_probabilities(i, j)``: P of each pair under the earlier
    and the new population (0 for an item not there); ``to_new`` and ``to_source`` map items between
    them (an absent item to one whose pairs have probability 0); ``classes_of(i, j)``: the class codes
    of pairs of the new population; ``propose(size, rng)``: ``size`` ordinary draws ``(i, j,
    pair_class)`` of the stratum from the new population, i.i.d. in their order.
    """

    source_probabilities: Callable[[np.ndarray, np.ndarray], np.ndarray]
    new_probabilities: Callable[[np.ndarray, np.ndarray], np.ndarray]
    to_new: Callable[[np.ndarray], np.ndarray]
    to_source: Callable[[np.ndarray], np.ndarray]
    classes_of: Callable[[np.ndarray, np.ndarray], np.ndarray]
    propose: Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray, np.ndarray]]


def coupled_stratum_draws(
    *,
    earlier_i: np.ndarray,
    earlier_j: np.ndarray,
    earlier_draws: np.ndarray,
    count: int,
    rng: np.random.Generator,
    laws: CouplingLaws,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """``count`` draws of one stratum coupled to the earlier sample's rows of it (the module's rule):
    the coupled ones in slot order, then ordinary ones; with the number kept and coupled.

    Every engine couples through this function: the random stream is consumed in one order
    (the earlier draws' permutation, the keep uniforms, then the residual and extra draws), so
    the same laws and proposals give the same draws whatever holds the populations.
    """
    rows = np.arange(len(earlier_i))
    earlier = rng.permutation(np.repeat(rows, earlier_draws))[:count]
    xi, xj = earlier_i[earlier], earlier_j[earlier]
    p1 = laws.source_probabilities(xi, xj)
    if (p1 <= 0).any():
        raise CouplingError("the earlier sample holds a pair its own population never draws")
    yi, yj = laws.to_new(xi), laws.to_new(xj)
    p2 = laws.new_probabilities(yi, yj)
    keep = rng.random(len(earlier)) * p1 < p2
    pair_class = np.full(len(earlier), -1, dtype=np.int8)
    pair_class[keep] = laws.classes_of(yi[keep], yj[keep])
    redraw = np.flatnonzero(~keep)
    if len(redraw):
        ri, rj, rc = _residual(laws, len(redraw), len(earlier), rng)
        yi, yj = _with_type(yi, ri), _with_type(yj, rj)
        yi[redraw], yj[redraw], pair_class[redraw] = ri, rj, rc
    extra = count - len(earlier)
    if extra:
        ei, ej, ec = laws.propose(extra, rng)
        yi, yj, pair_class = np.concatenate((yi, ei)), np.concatenate((yj, ej)), np.concatenate((pair_class, ec))
    return yi, yj, pair_class, int(keep.sum()), len(earlier)


def _with_type(mapped: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """``mapped`` able to hold ``drawn``'s values (ids mapped from the earlier population may be typed otherwise)."""
    if mapped.dtype == drawn.dtype or np.can_cast(drawn.dtype, mapped.dtype, casting="safe"):
        return mapped
    return mapped.astype(np.result_type(mapped.dtype, drawn.dtype) if drawn.dtype.kind != "O" else object)


def _residual(
    laws: CouplingLaws, wanted: int, coupled: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``wanted`` i.i.d. draws ∝ max(0, P2 − P1): proposals ~ P2 accepted when U·P2 > P1, in order."""
    limit = max(_MAX_PROPOSALS_PER_DRAW * coupled, _MIN_PROPOSAL_LIMIT)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    # The share of draws not kept estimates TV(P1, P2), the acceptance rate of the proposals.
    proposed, accepted, rate = 0, 0, wanted / coupled
    while accepted < wanted:
        if proposed >= limit:
            raise CouplingError(f"no residual draw accepted in {proposed} proposals (the distributions nearly agree)")
        size = int(min(max(1.5 * (wanted - accepted) / rate, 64), _MAX_ROUND, limit - proposed))
        i, j, pair_class = laws.propose(size, rng)
        p2 = laws.new_probabilities(i, j)
        p1 = laws.source_probabilities(laws.to_source(i), laws.to_source(j))
        take = np.flatnonzero(rng.random(size) * p2 > p1)[: wanted - accepted]
        found.append((i[take], j[take], pair_class[take]))
        proposed, accepted = proposed + size, accepted + len(take)
        rate = max(accepted, 0.5) / proposed
    return tuple(np.concatenate(columns) for columns in zip(*found))  # type: ignore[return-value]
