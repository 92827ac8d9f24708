"""Quality estimates with confidence intervals from judged pair samples (abcde-spec §5-6).

Conventions: ``Good*`` metrics and ``AffectedGoodIndex`` are higher-is-better, ``Bad*``
and ``AffectedBadIndex`` lower-is-better, ``DeltaPrecision`` > 0 favours Exp.

Every estimate is ``multiplier × m`` with ``m`` a weighted mean of a per-draw value
over the judged draws of some pair classes. The multiplier is an exact total of the
sampling weight (for example SplitDistance(T) for the split pairs), so only ``m`` is
uncertain. Unjudged and unsure draws are dropped and the rest of each class
reweighted by drawn/judged (JDD §8). The unit of the variance is the distinct
unordered pair, whose draws share one verdict (spec §6).

Ours, beyond the spec's table: the four ABCDE rates from a ``jaccard`` or
``stratified`` sample are the spec's importance weighting, self-normalised on exactly
known totals: ``GoodSplitRate = SplitRate(T) · Σ 1(i≢j)·ι / Σ ι`` over the judged
split draws with importance ``ι = weight(U)/weight(Base(i))`` (``Σ_split w_ij·ι`` is
exactly SplitRate(T)). Good + Bad then equals SplitRate(T) exactly, the interval is a
Wilson interval on the effective size and stays in [0, SplitRate(T)], and a class
without draws gives an undefined estimate instead of a confident zero. A normal
interval on the raw importance-weighted mean covered the truth only ~92% of the time
with ~80 split draws. Intervals of sums of
independent estimates (Good/BadDistance) combine the parts' Wilson intervals by
MOVER (Zou & Donner 2008), so they stay valid when a part is at its bound.

``GoodMinusBadDistance`` = GoodDistance − BadDistance, the deciding metric of the ``jaccard``
and ``stratified`` schemes (spec §9): SplitDistance·(1 − 2·p_split) + MergeDistance·(2·p_merge
− 1). Good and Bad of one class are a share and its complement, so a class's part has twice
the class's SE and its interval is the share's interval mapped through ``1 − 2p`` (Wilson,
like the parts it is made of, rather than a normal interval that collapses when all verdicts
of a class agree); the two classes' parts combine by MOVER.

Every estimate also carries (spec §9) an anytime-valid confidence sequence
(:mod:`metrics_core.sequential`), its ``ρ`` set by the class's planned judged draws: the
``horizon`` × the stratum's share of the draws × the class's share of the stratum's sampling
mass; and (spec §12) the range over deciding the *unsure* verdicts, from point estimates
with the unsure verdicts counted as judged.
"""

from __future__ import annotations

from typing import Any

from .._validation import positive_int
from ..context import SampleContext
from ..judgements import PairVerdicts
from ..population import Population
from ..results import QualityEstimates
from ..sampling import PairSample
from .assisted import AssistedClass, ModelAssistedEstimates, estimate_quality_assisted
from .draws import Draws
from .quality import ESTIMATED_METRICS, metrics_for_scheme, quality_of_draws

__all__ = [
    "ESTIMATED_METRICS",
    "AssistedClass",
    "Draws",
    "ModelAssistedEstimates",
    "estimate_quality",
    "estimate_quality_assisted",
    "metrics_for_scheme",
    "quality_of_draws",
]


def estimate_quality(
    population: Population | SampleContext,
    sample: PairSample,
    verdicts: PairVerdicts,
    *,
    confidence: float = 0.95,
    vantage: Any = None,
    horizon: int | None = None,
    labelled_draws: Any = None,
) -> QualityEstimates:
    """Estimate every quality metric the sample's scheme supports.

    Parameters
    ----------
    population : Population or SampleContext
        The population, or only what the estimators need of it (:func:`sample_context`;
        a backend that never holds the population builds one); the estimates are the same.
    sample : PairSample
    verdicts : PairVerdicts
    confidence : float
        Level of the intervals and confidence sequences, in (0, 1).
    vantage : array-like of bool, optional
        Restrict to pairs whose vantage item is in this mask. The estimates are then
        the slice's contributions to the overall metrics (multipliers are the
        slice's exact class totals); divide by the slice's weight fraction for the
        slice's own metric.
    horizon : int, optional
        The planned judged draws of the whole sample (default ``sample.n_draws``): each
        class's confidence sequence is tightest at this times the class's share of the
        sampling mass (abcde-spec §9). Fix it when the experiment is planned; it never
        affects ``ci_low``/``ci_high``.
    labelled_draws : array-like of int, optional
        Each sample row's draws in its batch's labelled prefix (abcde-spec §14,
        :func:`~metrics_core.labelled_draws`): the estimates use these draws only, each class
        reweighted by its drawn draws over its labelled draws with a usable verdict. Default:
        every draw (a sample judged in no particular order).

    Returns
    -------
    QualityEstimates
        Each :class:`Estimate` carries the fixed interval (§6), the confidence sequence
        ``cs_low``/``cs_high`` (§9) and the range ``unsure_low``/``unsure_high`` over
        deciding the *unsure* verdicts (§12).

    Examples
    --------
    Base {a,b,c}, Exp {a,b},{c}: judge the only split pair {b,c} as not equivalent.

    >>> import numpy as np
    >>> from metrics_core import population_from_labels, sample_pairs, verdicts_from_judgements
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> s = sample_pairs(pop, n_draws=200, rng=np.random.default_rng(0))
    >>> q = estimate_quality(pop, s, verdicts_from_judgements([0, 1], [2, 2], ["not_equivalent"] * 2))
    >>> round(q["GoodSplitDistance"].value, 4), q["BadSplitDistance"].value
    (0.4444, 0.0)
    >>> e = q["GoodSplitDistance"]
    >>> bool(e.cs_low <= e.ci_low <= e.value == e.unsure_low == e.unsure_high <= e.ci_high <= e.cs_high)
    True
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    horizon = sample.n_draws if horizon is None else positive_int("horizon", horizon)
    draws = Draws.build(population, sample, verdicts, vantage, labelled_draws)
    return quality_of_draws(draws, sample.scheme, confidence, horizon)
