"""Quality estimates that account for raters who err (abcde-spec §13).

A Dawid–Skene model (:mod:`metrics_core.dawid_skene`) is fitted on all the verdicts of an
experiment, replicated pairs and gold questions together, and each sampled pair's value
``x_u`` becomes its posterior probability of *equivalent* instead of its share of
*equivalent* verdicts. The point estimates are then exactly :func:`estimate_quality`'s on those
posteriors (same reweighting of unjudged and unsure pairs, same multipliers), so with raters
who never err they are the raw-verdict estimates.

Conventions (ours):

- Each (stratum, pair class) of the sample has its own prior in the model, and so do gold
  pairs and judged pairs outside the sample; self pairs are equivalent and have no verdicts.
- ``stderr``, ``ci_low`` and ``ci_high`` come from a bootstrap over the pairs that refits the
  raters: each replicate draws the distinct pairs again within their (stratum, class) (gold
  pairs among gold pairs), each with all its verdicts, refits every rater's confusion matrix
  on them and recomputes every estimate; ``stderr`` is the replicates' standard deviation and
  the interval their percentiles (for ΔPrecision, as in §6, the normal interval on that SE).
  The raters' errors so enter twice: through the verdicts that travel with their pairs and
  through the refitted matrices. Drawing the raters themselves again as well
  (``resample_raters=True``: the two-way bootstrap over pairs and raters that §13 names)
  counts the verdicts' noise a second time, and a rater drawn twice looks like two raters who
  always agree, which the model reads as evidence. With five raters (seeded simulation of
  ``tests/metrics_core/test_rater_aware.py``, 100 repetitions) its 95% intervals covered the
  truth 100% of the time for the four class distances, 99% for ΔPrecision and 83% for
  AffectedGoodIndex, against 96%, 95% and 91-95% without. It is there for panels of many
  raters, where who sat on the panel is itself a source of error.
- ``cs_low``/``cs_high`` are :func:`estimate_quality`'s confidence sequence on the posteriors,
  widened about the value by the ratio of the bootstrap SE to its pair-level SE where that is
  above 1 (the sequence of §9 knows sampling error only). ``unsure_low``/``unsure_high`` are the
  range had every unsure verdict been decided, each pair's posterior standing for its sure
  verdicts.
- With ``labelled_draws`` (a sample judged in draw order, abcde-spec §14) the estimates use the
  labelled prefix as :func:`estimate_quality` does: a class's judged draws are its labelled draws
  with a verdict, reweighted to all its drawn draws (self draws are always labelled), in the
  point estimates and in every bootstrap replicate alike. Verdicts on sampled pairs without a
  labelled draw wait: the model is fitted without them (gold pairs and pairs outside the sample
  have no prefix and always count), so nothing beyond the prefix moves an estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from ._validation import generator, positive_int
from .context import sample_context
from .dawid_skene import DawidSkeneFit, em_fit, fit_from_em
from .estimation import estimate_quality, metrics_for_scheme
from .estimation.draws import labelled_counts
from .judgements import PairVerdicts
from .population import Population
from .rater_units import RaterLayout, RaterUnits
from .results import Estimate, QualityEstimates
from .sampling import PairSample

# Like estimate_quality, a normal interval for ΔPrecision, whose values are not bounded by a
# share; percentiles for the rest, which stay inside their bounds.
_NORMAL_INTERVAL = ("DeltaPrecision",)
_BLOCK = 100  # bootstrap replicates fitted at once: bounds memory at O(_BLOCK · pairs)


@dataclass(frozen=True, eq=False)
class RaterAwareQuality:
    """Rater-aware estimates, the fitted model and what the bootstrap saw.

    Attributes
    ----------
    quality : QualityEstimates
        Every metric of the scheme, from the pairs' posteriors (module docstring).
    model : DawidSkeneFit
        The raters' confusion matrices; its units are the rows of ``a``/``b``.
    a, b : ndarray of int
        The unordered item pair (``a < b``, positions) of each unit of ``model``.
    verdicts : PairVerdicts
        The posteriors as verdict counts: ``equivalent / (equivalent + not_equivalent)`` is a
        pair's posterior, ``unsure`` its unsure verdicts; what ``estimate_quality`` was given.
    n_boot : int
    converged_replicates : int
        Bootstrap replicates whose EM converged.
    """

    quality: QualityEstimates
    model: DawidSkeneFit
    a: np.ndarray
    b: np.ndarray
    verdicts: PairVerdicts
    n_boot: int
    converged_replicates: int

    def as_dict(self) -> dict:
        """JSON-ready: the estimates, the raters and the model's fit."""
        return {
            "model": "dawid-skene",
            "estimates": self.quality.as_dict()["estimates"],
            "raters": self.model.raters_dict(),
            "iterations": int(self.model.iterations),
            "converged": bool(self.model.converged),
            "bootstrap_replicates": int(self.n_boot),
            "converged_replicates": int(self.converged_replicates),
        }


def estimate_quality_rater_aware(
    population: Population,
    sample: PairSample,
    *,
    i: Any,
    j: Any,
    verdict: Any,
    rater: Any,
    gold_i: Any = (),
    gold_j: Any = (),
    gold_answer: Any = (),
    rng: np.random.Generator,
    n_boot: int = 1000,
    confidence: float = 0.95,
    horizon: int | None = None,
    smoothing: float = 1e-3,
    resample_raters: bool = False,
    labelled_draws: Any = None,
) -> RaterAwareQuality:
    """Estimate every quality metric of the sample's scheme from Dawid–Skene posteriors.

    Parameters
    ----------
    population : Population
    sample : PairSample
    i, j, verdict, rater : array-like
        One row per verdict: item positions, the verdict (names of
        :data:`~metrics_core.judgements.VERDICTS` or codes) and who gave it. Verdicts on gold
        pairs belong here too.
    gold_i, gold_j, gold_answer : array-like, optional
        Gold pairs (item positions) and their known answer, ``equivalent`` or ``not_equivalent``.
    rng : numpy.random.Generator
        Drives the bootstrap.
    n_boot : int
        Bootstrap replicates.
    confidence : float
    horizon : int, optional
        As in :func:`estimate_quality`.
    smoothing : float
        Pseudo-verdicts per rater in the model (:func:`~metrics_core.dawid_skene.fit_dawid_skene`).
    resample_raters : bool
        Also draw the raters again in each replicate (a two-way bootstrap). Off by default: see
        the module docstring.
    labelled_draws : array-like of int, optional
        Each sample row's draws in its batch's labelled prefix (abcde-spec §14,
        :func:`~metrics_core.labelled_prefix`), as in :func:`estimate_quality`: the estimates and
        the model use the prefix only (module docstring). Default: every draw.

    Returns
    -------
    RaterAwareQuality

    Examples
    --------
    Two raters who agree on the only split pair: their posterior is their verdict, so the
    estimate is the raw one.

    >>> import numpy as np
    >>> from metrics_core import population_from_labels, sample_pairs
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> s = sample_pairs(pop, n_draws=200, rng=np.random.default_rng(0))
    >>> q = estimate_quality_rater_aware(
    ...     pop, s, i=[0, 0, 1, 1], j=[2, 2, 2, 2], verdict=["not_equivalent"] * 4,
    ...     rater=["ann", "bob", "ann", "bob"], rng=np.random.default_rng(1), n_boot=50,
    ... )
    >>> round(q.quality["GoodSplitDistance"].value, 4)
    0.4444
    """
    rng = generator("rng", rng)
    n_boot = positive_int("n_boot", n_boot)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    labelled = None if labelled_draws is None else labelled_counts(sample, labelled_draws)
    units = RaterUnits.build(sample, i, j, verdict, rater, gold_i, gold_j, gold_answer, labelled)
    data = units.data
    point = em_fit(data, smoothing=smoothing)
    model = fit_from_em(data, point)
    posterior = model.posterior
    verdicts = units.posterior_verdicts(posterior)
    context = sample_context(population, sample)
    raw = estimate_quality(
        context, sample, verdicts, confidence=confidence, horizon=horizon, labelled_draws=labelled_draws
    )
    layout = RaterLayout.build(context, sample, units.unit_of_row, labelled)
    replicates, converged = _bootstrap(
        layout, units, posterior, rng=rng, n_boot=n_boot, smoothing=smoothing, resample_raters=resample_raters
    )
    quality = _with_bootstrap(raw, layout, posterior, replicates, confidence)
    return RaterAwareQuality(quality, model, units.a, units.b, verdicts, n_boot, converged)


def _bootstrap(
    layout: RaterLayout,
    units: RaterUnits,
    posterior: np.ndarray,
    *,
    rng: np.random.Generator,
    n_boot: int,
    smoothing: float,
    resample_raters: bool,
) -> tuple[dict[str, np.ndarray], int]:
    """Every metric in each of ``n_boot`` replicates over pairs (within groups) and raters."""
    data = units.data
    n_units, n_raters, _ = data.shape
    members = [np.flatnonzero(units.group == g) for g in range(14)]
    members = [m for m in members if len(m)]
    out: dict[str, list[np.ndarray]] = {}
    converged = 0
    for start in range(0, n_boot, _BLOCK):
        size = min(_BLOCK, n_boot - start)
        unit_weight = np.zeros((size, n_units))
        for m in members:
            unit_weight[:, m] = rng.multinomial(len(m), np.full(len(m), 1.0 / len(m)), size=size)
        rater_weight: np.ndarray = np.ones((size, n_raters))
        if resample_raters and n_raters:  # no verdict yet: no rater to draw
            rater_weight = rng.multinomial(n_raters, np.full(n_raters, 1.0 / n_raters), size=size)
        fit = em_fit(
            data,
            unit_weight=unit_weight,
            rater_weight=rater_weight.astype(np.float64),
            start=posterior,
            smoothing=smoothing,
            tol=1e-7,
        )
        converged += size if fit.converged else 0
        x = fit.posterior[:, layout.unit]
        for name, values in layout.estimates(x, unit_weight[:, layout.unit]).items():
            out.setdefault(name, []).append(values)
    return {name: np.concatenate(parts) for name, parts in out.items()}, converged


# An SE below this is rounding: every verdict of the class agrees (values are O(1) shares).
_ROUNDING_SE = 1e-10


def _widened_sequence(e: Estimate, stderr: float, z: float) -> tuple[float, float]:
    """The pair-level sequence widened about the value by the bootstrap SE over the pair-level
    one where that is above 1. With no pair-level spread (every verdict agrees, the SE rounding)
    a ratio means nothing: the sequence gains the bootstrap's normal half-width instead."""
    if e.stderr > _ROUNDING_SE:
        widen = max(stderr / e.stderr, 1.0)
        return e.value - widen * (e.value - e.cs_low), e.value + widen * (e.cs_high - e.value)
    extra = z * stderr if stderr > _ROUNDING_SE else 0.0
    return e.cs_low - extra, e.cs_high + extra


def _with_bootstrap(
    raw: QualityEstimates,
    layout: RaterLayout,
    posterior: np.ndarray,
    replicates: dict[str, np.ndarray],
    confidence: float,
) -> QualityEstimates:
    """The posterior estimates with the bootstrap's SE and percentile interval."""
    tail = (1.0 - confidence) / 2.0
    out = {}
    for name, e in raw.estimates.items():
        values = replicates[name]
        values = values[~np.isnan(values)]
        if math.isnan(e.value) or len(values) < 2:
            out[name] = e  # nothing judged: estimate_quality's undefined value and widest bounds
            continue
        stderr = float(np.std(values, ddof=1))
        if name in _NORMAL_INTERVAL:
            z = NormalDist().inv_cdf(1.0 - tail)
            low, high = e.value - z * stderr, e.value + z * stderr
        else:
            low, high = (float(q) for q in np.quantile(values, [tail, 1.0 - tail]))
        cs_low, cs_high = _widened_sequence(e, stderr, NormalDist().inv_cdf(1.0 - tail))
        out[name] = replace(
            e, stderr=stderr, ci_low=min(low, e.value), ci_high=max(high, e.value), cs_low=cs_low, cs_high=cs_high
        )
    return QualityEstimates(
        scheme=raw.scheme, confidence=raw.confidence, estimates={n: out[n] for n in metrics_for_scheme(raw.scheme)}
    )
