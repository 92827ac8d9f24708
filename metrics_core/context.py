"""What the estimators need of the population beyond the sample: :class:`SampleContext`.

An estimate reads, for each sampled pair, three weights of its vantage item's cell
(``weight(Base(i) ∪ Exp(i))``, ``weight(Base(i))``, ``weight(Exp(i))``), and a few exact
population totals: the class totals of the sampling weights (the multipliers), those of
the ``precision`` scheme (SplitRate(T) and MergeRate(T)) and, for the derived metrics, the
impact metrics. A population in memory gives them through :func:`sample_context`; a
backend that never holds the population (:mod:`metrics_core.dask_backend`) computes the
same numbers where the data lives, and the estimates are the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._validation import as_1d
from .impact import impact_metrics
from .masses import class_totals, class_totals_of_schemes
from .population import Population
from .sampling.core import PairSample

# The impact metrics the derived metrics read (MQM §3.2's diagram).
CONTEXT_EXACT = ("AffectedWeightFraction", "WeightFractionOfBaseCluster", "JaccardDistance", "SplitRate", "MergeRate")


@dataclass(frozen=True, eq=False)
class SampleContext:
    """The population as the estimators of one sample see it.

    Attributes
    ----------
    rows : ndarray of int
        The sample rows estimated from (all, or those whose vantage item is in a slice).
    union, base, exp : ndarray of float, aligned with ``rows``
        ``weight(Base(i) ∪ Exp(i))``, ``weight(Base(i))`` and ``weight(Exp(i))`` of the row's
        vantage item ``i``.
    totals : ndarray of shape (4,)
        Exact class totals (self, split, merge, intersection) of the sample's scheme over
        the vantage items in scope (:func:`metrics_core.masses.class_totals`).
    rate_totals : ndarray of shape (4,)
        The same for the ``precision`` scheme: split and merge are SplitRate(T) and MergeRate(T).
    exact : mapping
        The impact metrics of T named in :data:`CONTEXT_EXACT`.
    sampling_totals : ndarray of shape (4,), optional
        The class totals of the scheme over *all* vantage items: the sampling mass, whose
        shares plan each class's draws (the horizon of its confidence sequence, spec §9).
        ``None`` means ``totals`` (a context of the whole population).
    """

    rows: np.ndarray
    union: np.ndarray
    base: np.ndarray
    exp: np.ndarray
    totals: np.ndarray
    rate_totals: np.ndarray
    exact: Mapping[str, float]
    sampling_totals: np.ndarray | None = None

    @classmethod
    def from_columns(
        cls,
        *,
        union,
        base,
        exp,
        totals,
        rate_totals,
        exact: Mapping[str, float],
    ) -> SampleContext:
        """A context of every row of a sample from per-row columns and totals computed elsewhere."""
        union, base, exp = (
            as_1d(name, v).astype(float) for name, v in (("union", union), ("base", base), ("exp", exp))
        )
        if not len(union) == len(base) == len(exp):
            raise ValueError("union, base and exp need one value per sample row")
        totals, rate_totals = (np.asarray(t, dtype=float).reshape(4) for t in (totals, rate_totals))
        missing = [name for name in CONTEXT_EXACT if name not in exact]
        if missing:
            raise ValueError(f"exact lacks {', '.join(missing)}")
        return cls(
            np.arange(len(union)), union, base, exp, totals, rate_totals, {n: float(exact[n]) for n in CONTEXT_EXACT}
        )


def exact_metrics(population: Population | SampleContext) -> Mapping[str, float]:
    """The impact metrics the derived metrics read: a context's own, or the population's."""
    return population.exact if isinstance(population, SampleContext) else impact_metrics(population).metrics


def sample_context(population: Population, sample: PairSample, vantage=None) -> SampleContext:
    """The :class:`SampleContext` of ``sample`` in ``population`` (restricted to a ``vantage`` mask of items).

    Examples
    --------
    >>> import numpy as np
    >>> from metrics_core import population_from_labels, sample_pairs
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> context = sample_context(pop, sample_pairs(pop, n_draws=50, rng=np.random.default_rng(0)))
    >>> sorted(set(context.base.tolist())), round(float(context.totals[1]), 4)
    ([3.0], 0.4444)
    """
    rows, mask = context_rows(population, sample, vantage)
    cell = population.cell[sample.i[rows]]
    sets = population.cell_sets
    return SampleContext(
        rows=rows,
        union=sets["union"][cell],
        base=sets["base"][cell],
        exp=sets["exp"][cell],
        **context_totals(population, sample.scheme, mask),
    )


def context_rows(population: Population, sample: PairSample, vantage=None) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows of ``sample`` whose vantage item is in the ``vantage`` mask (all without one), and the mask."""
    rows = np.arange(len(sample))
    if vantage is None:
        return rows, None
    mask = as_1d("vantage", vantage).astype(bool)
    if len(mask) != population.n_items:
        raise ValueError(f"vantage has {len(mask)} values, expected {population.n_items}")
    return rows[mask[sample.i]], mask


def context_totals(population: Population, scheme: str, mask: np.ndarray | None) -> dict:
    """The population totals of a :class:`SampleContext` (its fields but the per-row ones)."""
    metrics = impact_metrics(population).metrics
    return {**context_class_totals(population, scheme, mask), "exact": {name: metrics[name] for name in CONTEXT_EXACT}}


def context_class_totals(population: Population, scheme: str, mask: np.ndarray | None) -> dict:
    """The class totals of a :class:`SampleContext`, all the estimates need of the population
    (the impact metrics are for the derived metrics)."""
    totals = class_totals_of_schemes(population, (scheme, "precision"), mask)
    return {
        "totals": totals[scheme],
        "rate_totals": totals["precision"],
        "sampling_totals": None if mask is None else class_totals(population, scheme),
    }
