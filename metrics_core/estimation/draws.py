"""The judged draws an estimate is computed from: rows sorted into units (distinct pairs) per class."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from .._sorting import stable_argsort_codes
from ..context import SampleContext, context_class_totals, context_rows
from ..judgements import PairVerdicts
from ..masses import MERGE, SELF, SPLIT
from ..population import Population
from ..sampling import SCHEME_STRATA, PairSample


@dataclass(frozen=True)
class Draws:
    """Per sample row (within the vantage mask): what the estimators need.

    Rows are ordered by ``(stratum, class, unordered pair)``: each (stratum, class) is a
    contiguous range of rows, and the rows of one *unit* (the distinct unordered pair, drawn
    in one or both orientations; its rows share one verdict) are adjacent. Class sums are then
    slices and unit sums sequential, and the verdicts are looked up once per unit.
    """

    draws: np.ndarray
    unit_starts: np.ndarray  # (units,): the first row of each unit, ascending
    union_over_base: np.ndarray  # weight(U)/weight(Base(i)): importance of a split draw for the rates
    union_over_exp: np.ndarray
    precision_label: np.ndarray  # l_ij of ΔPrecision for this scheme (JDD eqs 92-94; spec §4c)
    totals: np.ndarray  # exact sampling-weight total per (stratum, class), shape (3, 4)
    split_rate: float  # exact SplitRate(T) (or the vantage slice's contribution)
    merge_rate: float
    unit_verdicts: np.ndarray  # (3, units): equivalent, not equivalent, unsure verdicts of the unit's pair
    unit_share: np.ndarray  # (units,): share of equivalent verdicts; NaN unjudged, 1 for self pairs
    unit_draws: np.ndarray  # (units,): draws of the unit's rows (float64)
    stratum_mass: np.ndarray  # (3,): the whole population's sampling mass of each stratum
    stratum_share: np.ndarray  # (3,): each stratum's share of the whole sample's draws
    # bounds of the rows and of the unit codes of each (stratum, class) g = 4·stratum + class
    row_bounds: np.ndarray  # (13,)
    unit_bounds: np.ndarray  # (13,)

    # Row-level views the estimates do not need (the bootstrap reads them): built when first read.
    @cached_property
    def stratum(self) -> np.ndarray:
        return np.repeat(np.arange(12, dtype=np.int8) // 4, np.diff(self.row_bounds))

    @cached_property
    def pair_class(self) -> np.ndarray:
        return np.repeat(np.arange(12, dtype=np.int8) % 4, np.diff(self.row_bounds))

    @cached_property
    def unit(self) -> np.ndarray:
        """The unit code of each row, ascending."""
        return np.repeat(np.arange(len(self.unit_starts)), self.unit_rows)

    @cached_property
    def unit_rows(self) -> np.ndarray:
        """The number of rows of each unit."""
        return np.diff(self.unit_starts, append=len(self.draws))

    @cached_property
    def equivalent(self) -> np.ndarray:
        """Each row's share of equivalent verdicts; NaN when unjudged."""
        return np.repeat(self.unit_share, self.unit_rows)

    @cached_property
    def _second_rows(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The units of two rows (a pair drawn both ways) and their second row; ``None`` when a
        unit has more (a sample with repeated rows)."""
        if self.unit_rows.max(initial=0) > 2:
            return None
        paired = np.flatnonzero(self.unit_rows == 2)
        return paired, self.unit_starts[paired] + 1

    def unit_sums(self, values: np.ndarray, rows: slice, units: slice) -> np.ndarray:
        """Σ draws·values over the rows of each of ``units``, whose rows are ``rows`` (not empty)."""
        products = self.draws[rows] * values[rows]
        starts = self.unit_starts[units] - rows.start
        if self._second_rows is None:
            return np.add.reduceat(products, starts)
        # Units have one or two rows: the first row's value, plus the second's (as reduceat adds).
        paired, second = self._second_rows
        lo, hi = np.searchsorted(paired, (units.start, units.stop))
        sums = products[starts]
        sums[paired[lo:hi] - units.start] += products[second[lo:hi] - rows.start]
        return sums

    @classmethod
    def build(
        cls, source: Population | SampleContext, sample: PairSample, verdicts: PairVerdicts, vantage: Any
    ) -> Draws:
        mask = None
        if isinstance(source, SampleContext):
            if vantage is not None:
                raise ValueError("vantage needs the population; restrict a SampleContext where it is built")
            rows = source.rows
        else:
            rows, mask = context_rows(source, sample, vantage)
        if len(rows) and rows.max() >= len(sample):
            raise ValueError(f"the context has rows up to {rows.max()}; the sample has {len(sample)}")
        if len(rows) == len(sample):
            rows = None  # every row, in order
        # numpy releases the GIL: the rows' cells and the class totals are read while the rows are sorted.
        with ThreadPoolExecutor(max_workers=1) as pool:
            if isinstance(source, SampleContext):
                gathering = pool.submit(_context_ratios, source)
            else:
                gathering = pool.submit(_population_ratios, source, sample, rows, mask)
            units = _Units.build(sample, rows, verdicts)
            (ratios, cell), context = gathering.result()
        order, row_bounds, unit_bounds = units.order, units.row_bounds, units.unit_bounds
        at = order if cell is None else cell[order]
        ratios = tuple(values[at] for values in ratios)
        label = _precision_label(sample.scheme, ratios, row_bounds)
        totals = np.zeros((3, 4))
        stratum_mass = np.zeros(3)
        whole_totals = context["totals"] if context["sampling_totals"] is None else context["sampling_totals"]
        for s, classes in SCHEME_STRATA[sample.scheme].items():
            totals[s, list(classes)] = context["totals"][list(classes)]
            stratum_mass[s] = float(np.sum(whole_totals[list(classes)]))
        draws = sample.draws[order if rows is None else rows[order]]
        # Draw counts are integers: their sums are exact in any order.
        unit_draws = np.add.reduceat(draws, units.starts) if len(draws) else np.zeros(0, dtype=np.int64)
        if rows is None:
            cumulative = np.concatenate(([0], np.cumsum(unit_draws)))
            per_stratum = np.diff(cumulative[unit_bounds[::4]])
        else:
            per_stratum = np.bincount(sample.stratum, weights=sample.draws, minlength=3)[:3]
        is_self = _self_units(unit_bounds)
        unit_verdicts = _unit_verdicts(verdicts, units.pair_key, units.n, is_self)
        equivalent, not_equivalent, _ = unit_verdicts
        return cls(
            draws=draws,
            unit_starts=units.starts,
            union_over_base=ratios[0],
            union_over_exp=ratios[1],
            precision_label=label,
            totals=totals,
            split_rate=float(context["rate_totals"][SPLIT]),
            merge_rate=float(context["rate_totals"][MERGE]),
            unit_verdicts=unit_verdicts,
            unit_share=_share(equivalent, equivalent + not_equivalent, is_self),
            unit_draws=unit_draws.astype(np.float64),
            stratum_mass=stratum_mass,
            stratum_share=per_stratum / max(sample.n_draws, 1),
            row_bounds=row_bounds,
            unit_bounds=unit_bounds,
        )

    @property
    def has_unsure(self) -> bool:
        return bool(self.unit_verdicts[2].any())

    def resolved(self, unsure_as: np.ndarray | float) -> Draws:
        """These draws had every unsure verdict said *equivalent* (``unsure_as`` 1) or not (0), per unit."""
        equivalent, not_equivalent, unsure = self.unit_verdicts
        resolved = equivalent + np.asarray(unsure_as, dtype=np.float64) * unsure
        is_self = _self_units(self.unit_bounds)
        return replace(self, unit_share=_share(resolved, equivalent + not_equivalent + unsure, is_self))

    def class_horizon(self, stratum: int, classes: tuple[int, ...], horizon: int) -> float:
        """The planned judged draws of ``classes``: horizon × the stratum's draws × their mass share."""
        mass = self.stratum_mass[stratum]
        if mass <= 0:
            return math.nan
        return horizon * self.stratum_share[stratum] * float(self.totals[stratum, list(classes)].sum()) / mass


@dataclass(frozen=True)
class _Units:
    """Sample rows sorted by ``(stratum, class, unordered pair)`` and their units (distinct pairs)."""

    order: np.ndarray  # sorted position -> row (of the rows in scope)
    starts: np.ndarray  # first sorted row of each unit
    pair_key: np.ndarray  # low·n + high of each unit's pair
    row_bounds: np.ndarray  # (13,): the rows of each (stratum, class)
    unit_bounds: np.ndarray  # (13,): the units of each (stratum, class)
    n: int

    @classmethod
    def build(cls, sample: PairSample, rows: np.ndarray | None, verdicts: PairVerdicts) -> _Units:
        pick = (lambda values: values) if rows is None else (lambda values: values[rows])  # noqa: E731
        i, j = pick(sample.i), pick(sample.j)
        n = int(max(i.max(initial=0), j.max(initial=0), verdicts.b.max(initial=0))) + 1
        # A pair and its reverse are of one class: with the class in the key, the units of each
        # (stratum, class) are a contiguous range of codes.
        group = pick(sample.stratum).astype(np.int64)
        group *= 4
        group += pick(sample.pair_class)
        key = group * n
        end = np.minimum(i, j)
        key += end
        key *= n
        key += np.maximum(i, j, out=end)
        order = _stable_order(key, group, i, j, n)
        key = key[order]
        first = np.empty(len(key), dtype=bool)
        first[:1] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        del first
        row_bounds = np.searchsorted(key, np.arange(13) * (n * n))
        unit_bounds = np.searchsorted(starts, row_bounds)
        pair_key = key[starts]
        pair_key -= np.repeat(np.arange(12) * (n * n), np.diff(unit_bounds))
        return cls(order, starts, pair_key, row_bounds, unit_bounds, n)


def _stable_order(key: np.ndarray, group: np.ndarray, i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """``np.argsort(key, kind="stable")``, twice as fast on a sample in ``(stratum, i, j)`` order (as
    drawn): there the rows ``i < j`` of each (stratum, class) ascend by key already and the rows
    ``i > j`` once ordered by ``j`` (radix sorts), leaving runs for numpy's timsort to merge."""
    reverse = i > j
    forward, backward = np.flatnonzero(~reverse), np.flatnonzero(reverse)
    forward = forward[stable_argsort_codes(group[forward], 12)]
    code = group[backward]
    code *= n
    code += j[backward]
    backward = backward[stable_argsort_codes(code, 12 * n)]
    laid_out = np.concatenate((forward, backward))
    runs = key[laid_out]
    by_key = np.argsort(runs, kind="stable")
    order, runs = laid_out[by_key], runs[by_key]
    # The rows of a unit (equal keys) now stand forward row first; a stable sort keeps sample order.
    tie = np.flatnonzero(runs[1:] == runs[:-1])
    if (np.diff(tie) == 1).any():  # three rows of one pair: a sample with repeated rows
        return np.argsort(key, kind="stable")
    swap = tie[order[tie] > order[tie + 1]]
    order[swap], order[swap + 1] = order[swap + 1], order[swap]
    return order


def _precision_label(scheme: str, ratios: tuple[np.ndarray, ...], row_bounds: np.ndarray) -> np.ndarray:
    """ΔPrecision's ``l_ij`` of each sorted row, set one (stratum, class) range of rows at a time."""
    union_over_base, union_over_exp = ratios[:2]
    label = np.empty(len(union_over_base))
    for g in range(12):
        rows = slice(int(row_bounds[g]), int(row_bounds[g + 1]))
        if rows.start == rows.stop:
            continue
        if g % 4 == MERGE:
            label[rows] = 1.0 if scheme == "precision" else union_over_exp[rows]
        elif g % 4 == SPLIT:
            label[rows] = -1.0 if scheme == "precision" else -union_over_base[rows]
        elif scheme == "precision":
            label[rows] = ratios[2][rows]  # the sign of 1/weight(Exp) − 1/weight(Base)
        else:
            label[rows] = union_over_exp[rows] - union_over_base[rows]
    return label


def _population_ratios(
    population: Population, sample: PairSample, rows: np.ndarray | None, mask: np.ndarray | None
) -> tuple[tuple[tuple[np.ndarray, ...], np.ndarray], dict]:
    """Per cell: weight(U)/weight(Base(i)), weight(U)/weight(Exp(i)) and the sign of
    1/weight(Exp(i)) − 1/weight(Base(i)) (``precision`` only); the cell of each row (in scope, in
    order); and the context's totals."""
    sets = population.cell_sets
    cell = population.cell[sample.i if rows is None else sample.i[rows]]
    per_cell = [sets["union"] / sets["base"], sets["union"] / sets["exp"]]
    if sample.scheme == "precision":
        per_cell.append(np.sign(1.0 / sets["exp"] - 1.0 / sets["base"]))
    return (tuple(per_cell), cell), context_class_totals(population, sample.scheme, mask)


def _context_ratios(context: SampleContext) -> tuple[tuple[tuple[np.ndarray, ...], None], dict]:
    """:func:`_population_ratios` of a :class:`SampleContext`, per row (``None`` for the cells)."""
    union, base, exp = context.union, context.base, context.exp
    ratios = (union / base, union / exp, np.sign(1.0 / exp - 1.0 / base))
    fields = ("totals", "rate_totals", "sampling_totals")
    return (ratios, None), {name: getattr(context, name) for name in fields}


def _self_units(unit_bounds: np.ndarray) -> np.ndarray:
    """Whether each unit is a self pair (from the unit bounds of each (stratum, class))."""
    is_self = np.zeros(int(unit_bounds[-1]), dtype=bool)
    for stratum in range(3):
        is_self[unit_bounds[4 * stratum + SELF] : unit_bounds[4 * stratum + SELF + 1]] = True
    return is_self


def _unit_verdicts(verdicts: PairVerdicts, pair_key: np.ndarray, n: int, is_self: np.ndarray) -> np.ndarray:
    """Verdict counts (3, units) of each unit's pair (``low·n + high``; ascending within each class);
    none for self pairs. Counts keep their type: whole verdicts, or fractions (a posterior's share
    of *equivalent*)."""
    kind = np.result_type(np.int64, verdicts.equivalent, verdicts.not_equivalent, verdicts.unsure)
    out = np.zeros((3, len(pair_key)), dtype=kind)
    if len(verdicts.a) == 0 or len(pair_key) == 0:
        return out
    known = verdicts.a * n + verdicts.b
    # Both are ascending runs (the units' one per (stratum, class)), which a stable sort merges
    # in about half the time of a binary search per unit: a judged unit's key lands right after
    # its verdicts' equal key.
    keys = np.concatenate((known, pair_key))
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    at = np.flatnonzero(keys[1:] == keys[:-1])
    index, unit = order[at], order[at + 1] - len(known)
    found = (index < len(known)) & (unit >= 0)
    found[found] = ~is_self[unit[found]]
    index, unit = index[found], unit[found]
    for column, values in zip(out, (verdicts.equivalent, verdicts.not_equivalent, verdicts.unsure)):
        column[unit] = values[index]
    return out


def _share(equivalent: np.ndarray, verdicts: np.ndarray, is_self: np.ndarray) -> np.ndarray:
    """Share of equivalent verdicts; NaN without one, 1 for self pairs."""
    share = np.divide(equivalent, verdicts, out=np.full(len(verdicts), np.nan), where=verdicts > 0)
    share[is_self] = 1.0
    return share
