"""Exact impact metrics: how big the clustering diff is (abcde-spec §2; JDD §4-5; MQM §3.2).

Conventions: every metric is a weight-weighted mean of a pointwise metric over a set
of items, in [0, 1]. Distances are 0 for an unchanged item, JaccardIndex is 1 for an
unchanged item. None of these involve human judgement.

All work happens on *units*: groups of items that share a cell (Base cluster,
Exp cluster) and, for slices, a slice value. A unit's items have identical
pointwise metrics, so lifting to any grouping is a weighted ``bincount`` over units.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .factorize import factorize_keys, factorize_labels
from .population import Population
from .results import IMPACT_METRICS, ImpactMetrics, ImpactTable

POINTWISE_METRICS: tuple[str, ...] = (
    "SplitDistance",
    "MergeDistance",
    "JaccardDistance",
    "JaccardIndex",
    "SplitRate",
    "MergeRate",
)


def cell_pointwise_metrics(population: Population) -> _Pointwise:
    """Pointwise metrics of the items of each cell (JDD eqs 1-3, 37; MQM eqs 11-12).

    Each metric is computed when it is read, and not kept: at most one per-cell array at a
    time instead of six (cells can number nearly as many as items).
    """
    return cell_pointwise(population.cell_sets)


def cell_pointwise(w: Mapping[str, np.ndarray]) -> _Pointwise:
    """The pointwise metrics of cells from their set weights (every backend's one formula)."""
    return _Pointwise(w)


class _Pointwise(Mapping[str, np.ndarray]):
    """The :data:`POINTWISE_METRICS` of some cells, each computed when read (of the cells ``pick``)."""

    def __init__(self, sets: Mapping[str, np.ndarray], pick: np.ndarray | None = None):
        self._sets, self._pick = sets, pick

    def __getitem__(self, name: str) -> np.ndarray:
        w = self._sets
        if name == "JaccardDistance":
            value = w["split"] / w["union"] + w["merge"] / w["union"]
        else:
            numerator, denominator = _RATIOS[name]
            value = w[numerator] / w[denominator]
        return value if self._pick is None else value[self._pick]

    def __iter__(self) -> Iterator[str]:
        return iter(POINTWISE_METRICS)

    def __len__(self) -> int:
        return len(POINTWISE_METRICS)

    def of_cells(self, pick: np.ndarray | None) -> _Pointwise:
        return self if pick is None else _Pointwise(self._sets, pick)


_RATIOS = {
    "SplitDistance": ("split", "union"),
    "MergeDistance": ("merge", "union"),
    "JaccardIndex": ("both", "union"),
    "SplitRate": ("split", "base"),
    "MergeRate": ("merge", "exp"),
}


def impact_per_item(population: Population) -> dict[str, np.ndarray]:
    """Pointwise impact metrics of every item.

    Returns
    -------
    dict of str to ndarray
        The :data:`POINTWISE_METRICS`, ``WeightFractionOfBaseCluster`` (MQM eq 48) and
        ``Affected`` (bool), each of shape (N,).

    Examples
    --------
    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels(["x", "x", "x", "y"], [1, 1, 2, 2])
    >>> impact_per_item(pop)["JaccardDistance"].round(3).tolist()
    [0.333, 0.333, 0.75, 0.5]
    """
    pop = population
    per_cell = cell_pointwise_metrics(pop)
    result = {name: values[pop.cell] for name, values in per_cell.items()}
    result["WeightFractionOfBaseCluster"] = pop.weight / pop.base_weight[pop.base]
    result["Affected"] = pop.cell_affected()[pop.cell]
    return result


def impact_metrics(population: Population) -> ImpactMetrics:
    """Overall exact impact metrics of the population.

    Examples
    --------
    Base {a,b,c},{d}; Exp {a,b},{c,d}; unit weights. SplitDistance of a and b is
    1/3, of c 2/4 (its union is {a,b,c,d}), of d 0, so SplitDistance(T) = 7/24;
    MergeDistance is 1/4 for c and 1/2 for d, so MergeDistance(T) = 3/16.

    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels(["B1", "B1", "B1", "B2"], ["E1", "E1", "E2", "E2"])
    >>> m = impact_metrics(pop)
    >>> round(m.metrics["SplitDistance"], 6), round(m.metrics["MergeDistance"], 6)
    (0.291667, 0.1875)
    >>> m.affected_items
    4
    """
    if population not in _OVERALL:
        _OVERALL[population] = _overall(population)
    return _OVERALL[population]


# Estimates read the overall metrics of their population on every call: computed once.
_OVERALL: weakref.WeakKeyDictionary[Population, ImpactMetrics] = weakref.WeakKeyDictionary()


def _overall(population: Population) -> ImpactMetrics:
    units = _cell_units(population, None)
    table = _lift(population, units, n_groups=1, labels=np.array(["all"], dtype=object))
    return ImpactMetrics(
        items=int(table.items[0]),
        affected_items=int(table.affected_items[0]),
        total_weight=float(table.weight[0]),
        affected_weight=float(table.weight[0] * table.metrics["AffectedWeightFraction"][0]),
        metrics={name: float(table.metrics[name][0]) for name in IMPACT_METRICS},
    )


def impact_per_base_cluster(population: Population) -> ImpactTable:
    """Impact metrics of the items of each Base cluster."""
    units = _cell_units(population, population.cell_base)
    return _lift(population, units, n_groups=len(population.base_labels), labels=population.base_labels)


def impact_per_exp_cluster(population: Population) -> ImpactTable:
    """Impact metrics of the items of each Exp cluster."""
    units = _cell_units(population, population.cell_exp)
    return _lift(population, units, n_groups=len(population.exp_labels), labels=population.exp_labels)


def impact_by_group(population: Population, groups: Any) -> ImpactTable:
    """Impact metrics of each group of items, for any per-item attribute (a slice).

    Parameters
    ----------
    population : Population
    groups : array-like of length N
        The group (slice value) of each item.

    Examples
    --------
    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels([1, 1, 2, 3], [1, 1, 2, 2])
    >>> table = impact_by_group(pop, ["old", "old", "new", "new"])
    >>> table.labels.tolist(), table.metrics["JaccardDistance"].round(3).tolist()
    (['old', 'new'], [0.0, 0.5])
    """
    if len(groups) != population.n_items:
        raise ValueError(f"groups has {len(groups)} values, expected {population.n_items}")
    group_codes, labels = factorize_labels("groups", groups)
    n_cells = len(population.cell_weight)
    keys = group_codes * n_cells + population.cell
    unit_of_item, unit_keys = factorize_keys(keys, len(labels) * n_cells)
    units = _Units(
        group=unit_keys // n_cells,
        cell=unit_keys % n_cells,
        weight=np.bincount(unit_of_item, weights=population.weight, minlength=len(unit_keys)),
        weight_sq=np.bincount(unit_of_item, weights=population.weight**2, minlength=len(unit_keys)),
        items=np.bincount(unit_of_item, minlength=len(unit_keys)),
    )
    return _lift(population, units, n_groups=len(labels), labels=labels)


@dataclass(frozen=True)
class _Units:
    """Sets of items sharing a group and a cell, with their weight sums."""

    group: np.ndarray | None  # None: all units in one group
    cell: np.ndarray | None  # None: unit k is cell k
    weight: np.ndarray
    weight_sq: np.ndarray
    items: np.ndarray


def _cell_units(population: Population, group_of_cell: np.ndarray | None) -> _Units:
    """Units for groupings that cells nest in (clusters, the whole population)."""
    pop = population
    return _Units(
        group=group_of_cell,
        cell=None,
        weight=pop.cell_weight,
        weight_sq=pop.cell_weight_sq,
        items=pop.cell_size,
    )


def _lift(population: Population, units: _Units, *, n_groups: int, labels: np.ndarray) -> ImpactTable:
    pop = population

    def of_unit(per_cell: np.ndarray) -> np.ndarray:
        return per_cell if units.cell is None else per_cell[units.cell]

    def group_sum(values: np.ndarray) -> np.ndarray:
        if units.group is None:
            return np.array([values.sum()])
        return np.bincount(units.group, weights=values, minlength=n_groups)

    terms = impact_unit_terms(
        cell_pointwise_metrics(pop).of_cells(units.cell),
        affected=of_unit(pop.cell_affected()),
        weight=units.weight,
        weight_sq=units.weight_sq,
        items=units.items,
        base_weight=of_unit(pop.cell_sets["base"]),
    )
    # One term at a time: a cluster table holds a handful of unit-sized arrays at most.
    sums = {name: group_sum(values) for name, values in terms}
    for name in ("items", "affected_items"):
        sums[name] = sums[name].astype(np.int64)
    return ImpactTable(
        labels=labels,
        items=sums["items"],
        affected_items=sums["affected_items"],
        weight=pop.given_weight(sums["weight"]),
        metrics=impact_from_sums(sums),
    )


IMPACT_SUMS: tuple[str, ...] = (
    "items",
    "affected_items",
    "weight",
    "affected_weight",
    *POINTWISE_METRICS,
    "AffectedJaccardIndex",
    "WeightFractionOfBaseCluster",
)


def impact_unit_terms(
    per_cell: Mapping[str, np.ndarray],
    *,
    affected: np.ndarray,
    weight: np.ndarray,
    weight_sq: np.ndarray,
    items: np.ndarray,
    base_weight: np.ndarray,
) -> Iterator[tuple[str, np.ndarray]]:
    """The summable terms of the impact metrics of *units* (items sharing a cell), one at a time.

    A unit is a set of items of one cell (and one group). ``per_cell`` holds the
    :data:`POINTWISE_METRICS` of the unit's cell, ``affected`` whether it is affected,
    ``weight``/``weight_sq``/``items`` the unit's weight, squared weight and item count, and
    ``base_weight`` the weight of the cell's Base cluster. Summing each term over the units of
    a group and passing the sums to :func:`impact_from_sums` gives the group's metrics; every
    backend goes through these two functions (in memory: ``bincount``; on Dask: group-bys).
    Yields ``(name, array)`` in the order of :data:`IMPACT_SUMS`.
    """
    yield "items", items
    yield "affected_items", items * affected
    yield "weight", weight
    yield "affected_weight", weight * affected
    for name in POINTWISE_METRICS:
        yield name, weight * per_cell[name]
    yield "AffectedJaccardIndex", weight * per_cell["JaccardIndex"] * affected
    # MQM eq 49: Σ over affected items of w_i · w_i/weight(Base(i)), over their weight.
    yield "WeightFractionOfBaseCluster", weight_sq / base_weight * affected


def impact_from_sums(sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The :data:`IMPACT_METRICS` of groups from the group sums of :func:`impact_unit_terms`."""
    weight, affected_weight = sums["weight"], sums["affected_weight"]
    metrics = {name: sums[name] / weight for name in POINTWISE_METRICS}
    metrics["AffectedJaccardIndex"] = sums["AffectedJaccardIndex"] / weight
    metrics["UnaffectedJaccardIndex"] = (weight - affected_weight) / weight
    metrics["AffectedWeightFraction"] = affected_weight / weight
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.asarray(sums["WeightFractionOfBaseCluster"] / affected_weight, dtype=np.float64)
    fraction[np.asarray(affected_weight) == 0] = np.nan
    metrics["WeightFractionOfBaseCluster"] = fraction
    return {name: metrics[name] for name in IMPACT_METRICS}
