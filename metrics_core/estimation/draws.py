"""The judged draws an estimate is computed from: rows sorted into units (distinct pairs) per class."""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from ..context import SampleContext, context_class_totals, context_rows
from ..judgements import PairVerdicts
from ..masses import MERGE, SELF, SPLIT
from ..population import Population
from ..sampling import SCHEME_STRATA, PairSample
from .units import Units, self_ranges

# Below this many sample rows a thread costs more than the overlap it buys (a dashboard's sample).
_THREAD_FROM_ROWS = 100_000


class RowRatios:
    """Each sorted row's weight(U)/weight(Base(i)) (``"base"``) and weight(U)/weight(Exp(i))
    (``"exp"``), the importances of the rates: gathered from the values computed per row in scope
    (per context row for a SampleContext) when read, and only for the rows read (the estimates
    read those of the split or merge rows, which ΔPrecision's label reads first)."""

    def __init__(self, values: dict[str, np.ndarray], index: np.ndarray):
        self.values = values
        self.index = index  # each sorted row's position in ``values``
        self._read: dict[tuple[str, int, int], np.ndarray] = {}

    def of_all(self, name: str) -> np.ndarray:
        return self.of(name, slice(0, len(self.index)))

    def of(self, name: str, rows: slice) -> np.ndarray:
        key = (name, rows.start, rows.stop)
        if key not in self._read:
            self._read[key] = self.values[name][self.index[rows]]
        return self._read[key]

    def gather(self, name: str, rows: slice, out: np.ndarray) -> None:
        np.take(self.values[name], self.index[rows], out=out, mode="clip")  # valid positions: no buffer


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
    ratios: RowRatios  # the rates' importances (union_over_base, union_over_exp)
    precision_label: np.ndarray  # l_ij of ΔPrecision for this scheme (JDD eqs 92-94; spec §4c)
    totals: np.ndarray  # exact sampling-weight total per (stratum, class), shape (3, 4)
    split_rate: float  # exact SplitRate(T) (or the vantage slice's contribution)
    merge_rate: float
    verdicts: PairVerdicts
    judged: tuple[np.ndarray, np.ndarray]  # the units with a verdict, and its row in ``verdicts``
    unit_share: np.ndarray  # (units,): share of equivalent verdicts; NaN unjudged, 1 for self pairs
    unit_draws: np.ndarray  # (units,): draws of the unit's rows (float64)
    stratum_mass: np.ndarray  # (3,): the whole population's sampling mass of each stratum
    stratum_share: np.ndarray  # (3,): each stratum's share of the whole sample's draws
    # (12,): the drawn draws of each (stratum, class) in scope when only a labelled prefix is
    # estimated from (spec §14; ``draws`` are then the labelled ones); ``None``: every draw.
    class_drawn: np.ndarray | None
    # bounds of the rows and of the unit codes of each (stratum, class) g = 4·stratum + class
    row_bounds: np.ndarray  # (13,)
    unit_bounds: np.ndarray  # (13,)
    # The units of two rows (a pair drawn both ways) and their second row; ``None`` when a unit
    # has more (a sample with repeated rows).
    second_rows: tuple[np.ndarray, np.ndarray] | None
    sample_row: np.ndarray  # the sample row of each sorted row (model-assisted estimates read its score)

    @property
    def union_over_base(self) -> np.ndarray:
        """weight(U)/weight(Base(i)) of each row: importance of a split draw for the rates."""
        return self.ratios.of_all("base")

    @property
    def union_over_exp(self) -> np.ndarray:
        return self.ratios.of_all("exp")

    @cached_property
    def unit_verdicts(self) -> np.ndarray:
        """(3, units): equivalent, not equivalent, unsure verdicts of each unit's pair; none for self
        pairs. Counts keep their type: whole verdicts, or fractions (a posterior's share of
        *equivalent*)."""
        v = self.verdicts
        kind = np.result_type(np.int64, v.equivalent, v.not_equivalent, v.unsure)
        out = np.zeros((3, len(self.unit_starts)), dtype=kind)
        unit, index = self.judged
        for column, values in zip(out, (v.equivalent, v.not_equivalent, v.unsure)):
            column[unit] = values[index]
        return out

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
    def _products(self) -> np.ndarray:
        """A row-sized buffer for :meth:`unit_sums`, one for all the means of these draws."""
        return np.empty(len(self.draws))

    def unit_sums(self, values: np.ndarray, rows: slice, units: slice) -> np.ndarray:
        """Σ draws·values over the rows of each of ``units``, whose rows are ``rows`` (not empty);
        ``values`` are those rows'."""
        products = np.multiply(self.draws[rows], values, out=self._products[rows])
        if self.second_rows is None:
            return np.add.reduceat(products, self.unit_starts[units] - rows.start)
        # Units have one or two rows: the first row's value, plus the second's (as reduceat adds).
        paired, second = self.second_rows
        lo, hi = np.searchsorted(paired, (units.start, units.stop))
        sums = self._products[self.unit_starts[units]]
        sums[paired[lo:hi] - units.start] += self._products[second[lo:hi]]
        return sums

    @classmethod
    def build(
        cls,
        source: Population | SampleContext,
        sample: PairSample,
        verdicts: PairVerdicts,
        vantage: Any,
        labelled_draws: Any = None,
    ) -> Draws:
        """``labelled_draws``: each sample row's draws in its batch's labelled prefix (spec §14), or
        ``None`` to estimate from every draw. Rows without a labelled draw are left out; each
        class keeps its drawn draws for the reweighting."""
        mask = None
        rows: np.ndarray | None  # None: every row of the sample, in order
        if isinstance(source, SampleContext):
            if vantage is not None:
                raise ValueError("vantage needs the population; restrict a SampleContext where it is built")
            rows = source.rows
        else:
            rows, mask = context_rows(source, sample, vantage)
        if len(rows) and rows.max() >= len(sample):
            raise ValueError(f"the context has rows up to {rows.max()}; the sample has {len(sample)}")
        counts, class_drawn, kept = sample.draws, None, None
        if labelled_draws is not None:
            counts = labelled_counts(sample, labelled_draws)
            group = 4 * sample.stratum[rows].astype(np.int64) + sample.pair_class[rows]
            class_drawn = np.bincount(group, weights=sample.draws[rows], minlength=12)[:12]
            kept = np.flatnonzero(counts[rows] > 0)  # positions among the rows in scope
            rows = rows[kept]
        if len(rows) == len(sample):
            rows = None  # every row, in order
        gather: Callable[[], tuple[tuple[dict[str, np.ndarray], np.ndarray | None], dict]]
        if isinstance(source, SampleContext):
            gather = lambda: _context_ratios(source, sample.scheme, kept)  # noqa: E731
        else:
            gather = lambda: _population_ratios(source, sample, rows, mask)  # noqa: E731
        if len(sample) < _THREAD_FROM_ROWS:
            units = Units.build(sample, rows, verdicts)
            (per_index, index), context = gather()
        else:
            # numpy releases the GIL: the rows' cells and the class totals are read while the rows are sorted.
            with ThreadPoolExecutor(max_workers=1) as pool:
                gathering = pool.submit(gather)
                units = Units.build(sample, rows, verdicts)
                (per_index, index), context = gathering.result()
        order, row_bounds, unit_bounds = units.order, units.row_bounds, units.unit_bounds
        ratios = RowRatios(per_index, order if index is None else index[order])
        del index
        totals = np.zeros((3, 4))
        stratum_mass = np.zeros(3)
        whole_totals = context["totals"] if context["sampling_totals"] is None else context["sampling_totals"]
        for s, classes in SCHEME_STRATA[sample.scheme].items():
            totals[s, list(classes)] = context["totals"][list(classes)]
            stratum_mass[s] = float(np.sum(whole_totals[list(classes)]))
        sample_row = order if rows is None else rows[order]
        draws = counts[sample_row]
        unit_draws = _unit_draws(draws, units)
        if rows is None and class_drawn is None:
            per_stratum = np.array([unit_draws[unit_bounds[4 * s] : unit_bounds[4 * s + 4]].sum() for s in range(3)])
        else:
            per_stratum = np.bincount(sample.stratum, weights=sample.draws, minlength=3)[:3]
        judged = units.judged
        return cls(
            draws=draws,
            unit_starts=units.starts,
            ratios=ratios,
            precision_label=_precision_label(sample.scheme, ratios, row_bounds),
            totals=totals,
            split_rate=float(context["rate_totals"][SPLIT]),
            merge_rate=float(context["rate_totals"][MERGE]),
            verdicts=verdicts,
            judged=judged,
            unit_share=_judged_share(verdicts, judged, unit_bounds),
            unit_draws=unit_draws,
            stratum_mass=stratum_mass,
            stratum_share=per_stratum / max(sample.n_draws, 1),
            row_bounds=row_bounds,
            unit_bounds=unit_bounds,
            second_rows=units.second_rows,
            class_drawn=class_drawn,
            sample_row=sample_row,
        )

    @property
    def has_unsure(self) -> bool:
        unsure = self.verdicts.unsure
        return bool(unsure.any() and unsure[self.judged[1]].any())

    def resolved(self, unsure_as: np.ndarray | float) -> Draws:
        """These draws had every unsure verdict said *equivalent* (``unsure_as`` 1) or not (0), per unit."""
        equivalent, not_equivalent, unsure = self.unit_verdicts
        resolved = equivalent + np.asarray(unsure_as, dtype=np.float64) * unsure
        share = _share(resolved, equivalent + not_equivalent + unsure, np.full(len(resolved), np.nan))
        return replace(self, unit_share=_with_self_pairs(share, self.unit_bounds))

    def class_horizon(self, stratum: int, classes: tuple[int, ...], horizon: int) -> float:
        """The planned judged draws of ``classes``: horizon × the stratum's draws × their mass share."""
        mass = self.stratum_mass[stratum]
        if mass <= 0:
            return math.nan
        return horizon * self.stratum_share[stratum] * float(self.totals[stratum, list(classes)].sum()) / mass


def labelled_counts(sample: PairSample, labelled_draws: Any) -> np.ndarray:
    """Each sample row's draws an estimate uses from its labelled prefix (spec §14), checked.

    Self pairs are known, not judged: every self draw is labelled, wherever it lies (the prefix of
    each other class stays a simple random sample of that class's draws)."""
    return np.where(sample.pair_class == SELF, sample.draws, _labelled_counts(labelled_draws, sample))


def _labelled_counts(labelled_draws: Any, sample: PairSample) -> np.ndarray:
    counts = np.asarray(labelled_draws)
    if counts.shape != (len(sample),) or not np.issubdtype(counts.dtype, np.integer):
        raise ValueError(f"labelled_draws must be {len(sample)} integers, one per sample row")
    bad = np.flatnonzero((counts < 0) | (counts > sample.draws))
    if len(bad):
        raise ValueError(f"labelled_draws[{bad[0]}] = {counts[bad[0]]} is not within 0..{sample.draws[bad[0]]}")
    return counts.astype(np.int64, copy=False)


def _unit_draws(draws: np.ndarray, units: Units) -> np.ndarray:
    """The draws of each unit's rows, as float64: integer sums, exact in any order."""
    if units.second_rows is None:
        return np.add.reduceat(draws, units.starts, dtype=np.float64) if len(draws) else np.zeros(0)
    unit_draws = draws[units.starts].astype(np.float64)
    paired, second = units.second_rows
    unit_draws[paired] += draws[second]
    return unit_draws


def _precision_label(scheme: str, ratios: RowRatios, row_bounds: np.ndarray) -> np.ndarray:
    """ΔPrecision's ``l_ij`` of each sorted row, set one (stratum, class) range of rows at a time."""
    label = np.empty(len(ratios.index))
    for g in range(12):
        rows = slice(int(row_bounds[g]), int(row_bounds[g + 1]))
        if rows.start == rows.stop:
            continue
        if g % 4 == MERGE:
            label[rows] = 1.0 if scheme == "precision" else ratios.of("exp", rows)
        elif g % 4 == SPLIT:
            if scheme == "precision":
                label[rows] = -1.0
            else:
                np.negative(ratios.of("base", rows), out=label[rows])
        else:  # precision: the sign of 1/weight(Exp) − 1/weight(Base); otherwise exp − base
            ratios.gather("sign" if scheme == "precision" else "difference", rows, out=label[rows])
    return label


def _ratios_of(union: np.ndarray, base: np.ndarray, exp: np.ndarray, scheme: str) -> dict[str, np.ndarray]:
    """weight(U)/weight(Base(i)), weight(U)/weight(Exp(i)), and the label of a self or intersection
    pair: the sign of 1/weight(Exp(i)) − 1/weight(Base(i)) (``precision``), their difference otherwise."""
    ratios = {"base": union / base, "exp": union / exp}
    if scheme == "precision":
        ratios["sign"] = np.sign(1.0 / exp - 1.0 / base)
    else:
        ratios["difference"] = ratios["exp"] - ratios["base"]
    return ratios


def _population_ratios(
    population: Population, sample: PairSample, rows: np.ndarray | None, mask: np.ndarray | None
) -> tuple[tuple[dict[str, np.ndarray], None], dict]:
    """The ratios of :func:`_ratios_of` of each row (in scope, in order; ``None``: no index into
    them needed) and the context's totals. Per row, not per cell: a sample's rows are far fewer
    than the population's cells, and each cell-sized array is memory the kernel zeroes."""
    totals = context_class_totals(population, sample.scheme, mask)  # first: it computes the cell sets
    sets = population.cell_sets_at(population.cell[sample.i if rows is None else sample.i[rows]])
    per_row = _ratios_of(sets["union"], sets["base"], sets["exp"], sample.scheme)
    return (per_row, None), totals


def _context_ratios(
    context: SampleContext, scheme: str, kept: np.ndarray | None
) -> tuple[tuple[dict[str, np.ndarray], np.ndarray | None], dict]:
    """:func:`_population_ratios` of a :class:`SampleContext`: per context row, and the context row of
    each row kept (``kept``, ``None``: every row)."""
    ratios = _ratios_of(context.union, context.base, context.exp, scheme)
    fields = ("totals", "rate_totals", "sampling_totals")
    return (ratios, kept), {name: getattr(context, name) for name in fields}


def _judged_share(verdicts: PairVerdicts, judged: tuple[np.ndarray, np.ndarray], unit_bounds: np.ndarray) -> np.ndarray:
    """Each unit's share of equivalent verdicts; NaN without one, 1 for self pairs."""
    share = np.full(int(unit_bounds[-1]), np.nan)
    unit, index = judged
    equivalent = verdicts.equivalent[index]
    share[unit] = _share(equivalent, equivalent + verdicts.not_equivalent[index], np.full(len(index), np.nan))
    return _with_self_pairs(share, unit_bounds)


def _share(equivalent: np.ndarray, verdicts: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Share of equivalent verdicts into ``out`` (NaN-filled): left NaN without a verdict."""
    return np.divide(equivalent, verdicts, out=out, where=verdicts > 0)


def _with_self_pairs(share: np.ndarray, unit_bounds: np.ndarray) -> np.ndarray:
    for lo, hi in self_ranges(unit_bounds):
        share[lo:hi] = 1.0
    return share
