"""The judged draws an estimate is computed from: rows sorted into units (distinct pairs) per class."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from .._sorting import stable_argsort_codes
from ..context import SampleContext, context_rows, context_totals
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

    stratum: np.ndarray
    pair_class: np.ndarray
    draws: np.ndarray
    unit: np.ndarray  # code of the row's unit, ascending with the rows
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

    @cached_property
    def equivalent(self) -> np.ndarray:
        """Each row's share of equivalent verdicts; NaN when unjudged."""
        return self.unit_share[self.unit]

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
        # numpy releases the GIL: the rows' weights are gathered while the rows are sorted.
        with ThreadPoolExecutor(max_workers=1) as pool:
            if isinstance(source, SampleContext):
                gathering = pool.submit(_context_ratios, source)
            else:
                gathering = pool.submit(_population_ratios, source, sample, rows, mask)
            units = _Units.build(sample, rows, verdicts)
            ratios, context = gathering.result()
        order = units.order
        union_over_base, union_over_exp = ratios[0][order], ratios[1][order]
        pair_class = (units.group % 4).astype(np.int8)
        if sample.scheme == "precision":
            stable = ratios[2][order]  # the sign of 1/weight(Exp) − 1/weight(Base)
            label = np.where(pair_class == MERGE, 1.0, np.where(pair_class == SPLIT, -1.0, stable))
        else:
            label = np.where(
                pair_class == MERGE,
                union_over_exp,
                np.where(pair_class == SPLIT, -union_over_base, union_over_exp - union_over_base),
            )
        totals = np.zeros((3, 4))
        stratum_mass = np.zeros(3)
        whole_totals = context["totals"] if context["sampling_totals"] is None else context["sampling_totals"]
        for s, classes in SCHEME_STRATA[sample.scheme].items():
            totals[s, list(classes)] = context["totals"][list(classes)]
            stratum_mass[s] = float(np.sum(whole_totals[list(classes)]))
        all_draws = max(sample.n_draws, 1)
        stratum_share = np.bincount(sample.stratum, weights=sample.draws, minlength=3)[:3] / all_draws
        draws = sample.draws[order if rows is None else rows[order]]
        unit_verdicts = _unit_verdicts(verdicts, units.pair_key, units.n)
        equivalent, not_equivalent, _ = unit_verdicts
        unit_bounds = np.searchsorted(units.group[units.starts], np.arange(13))
        return cls(
            stratum=(units.group // 4).astype(np.int8),
            pair_class=pair_class,
            draws=draws,
            unit=units.unit,
            union_over_base=union_over_base,
            union_over_exp=union_over_exp,
            precision_label=label,
            totals=totals,
            split_rate=float(context["rate_totals"][SPLIT]),
            merge_rate=float(context["rate_totals"][MERGE]),
            unit_verdicts=unit_verdicts,
            unit_share=_share(equivalent, equivalent + not_equivalent, _self_units(unit_bounds)),
            unit_draws=np.add.reduceat(draws, units.starts).astype(np.float64) if len(draws) else np.zeros(0),
            stratum_mass=stratum_mass,
            stratum_share=stratum_share,
            row_bounds=np.searchsorted(units.group, np.arange(13)),
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
    group: np.ndarray  # 4·stratum + class of each sorted row
    unit: np.ndarray  # unit code of each sorted row
    starts: np.ndarray  # first sorted row of each unit
    pair_key: np.ndarray  # low·n + high of each unit's pair
    n: int

    @classmethod
    def build(cls, sample: PairSample, rows: np.ndarray | None, verdicts: PairVerdicts) -> _Units:
        pick = (lambda values: values) if rows is None else (lambda values: values[rows])  # noqa: E731
        i, j = pick(sample.i), pick(sample.j)
        n = int(max(i.max(initial=0), j.max(initial=0), verdicts.b.max(initial=0))) + 1
        # A pair and its reverse are of one class: with the class in the key, the units of each
        # (stratum, class) are a contiguous range of codes.
        key = pick(sample.stratum).astype(np.int64) * 4 + pick(sample.pair_class)
        key *= n
        key += np.minimum(i, j)
        key *= n
        key += np.maximum(i, j)
        order = stable_argsort_codes(key, 12 * n * n)
        key = key[order]
        first = np.empty(len(key), dtype=bool)
        first[:1] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        unit = np.cumsum(first) - 1
        del first
        pair_key = key[starts] % (n * n)
        key //= n * n
        return cls(order, key, unit, starts, pair_key, n)


def _population_ratios(
    population: Population, sample: PairSample, rows: np.ndarray | None, mask: np.ndarray | None
) -> tuple[tuple[np.ndarray, ...], dict]:
    """Per row (in scope, in order): weight(U)/weight(Base(i)), weight(U)/weight(Exp(i)) and the sign
    of 1/weight(Exp(i)) − 1/weight(Base(i)) (``precision`` only); and the context's totals."""
    sets = population.cell_sets
    cell = population.cell[sample.i if rows is None else sample.i[rows]]
    per_cell = [sets["union"] / sets["base"], sets["union"] / sets["exp"]]
    if sample.scheme == "precision":
        per_cell.append(np.sign(1.0 / sets["exp"] - 1.0 / sets["base"]))
    return tuple(values[cell] for values in per_cell), context_totals(population, sample.scheme, mask)


def _context_ratios(context: SampleContext) -> tuple[tuple[np.ndarray, ...], dict]:
    """:func:`_population_ratios` of a :class:`SampleContext`."""
    union, base, exp = context.union, context.base, context.exp
    ratios = (union / base, union / exp, np.sign(1.0 / exp - 1.0 / base))
    fields = ("totals", "rate_totals", "exact", "sampling_totals")
    return ratios, {name: getattr(context, name) for name in fields}


def _self_units(unit_bounds: np.ndarray) -> np.ndarray:
    """Whether each unit is a self pair (from the unit bounds of each (stratum, class))."""
    is_self = np.zeros(int(unit_bounds[-1]), dtype=bool)
    for stratum in range(3):
        is_self[unit_bounds[4 * stratum + SELF] : unit_bounds[4 * stratum + SELF + 1]] = True
    return is_self


def _unit_verdicts(verdicts: PairVerdicts, pair_key: np.ndarray, n: int) -> np.ndarray:
    """Verdict counts (3, units) of each unit's pair (``low·n + high``; ascending within each class).
    Counts keep their type: whole verdicts, or fractions (a posterior's share of *equivalent*)."""
    kind = np.result_type(np.int64, verdicts.equivalent, verdicts.not_equivalent, verdicts.unsure)
    out = np.zeros((3, len(pair_key)), dtype=kind)
    if len(verdicts.a) == 0 or len(pair_key) == 0:
        return out
    known = verdicts.a * n + verdicts.b
    # The keys ascend within each of the 12 (stratum, class) runs: a cache-friendly search.
    index = np.minimum(np.searchsorted(known, pair_key), len(known) - 1)
    found = known[index] == pair_key
    found &= pair_key // n != pair_key % n  # self pairs need no verdict
    rows = np.flatnonzero(found)
    index = index[rows]
    for column, values in zip(out, (verdicts.equivalent, verdicts.not_equivalent, verdicts.unsure)):
        column[rows] = values[index]
    return out


def _share(equivalent: np.ndarray, verdicts: np.ndarray, is_self: np.ndarray) -> np.ndarray:
    """Share of equivalent verdicts; NaN without one, 1 for self pairs."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(verdicts > 0, equivalent / verdicts, np.nan)
    share[is_self] = 1.0
    return share
