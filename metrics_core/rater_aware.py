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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from ._validation import as_1d, generator, positive_int, same_length
from .agreement import verdict_codes
from .context import SampleContext, sample_context
from .dawid_skene import DawidSkeneFit, VerdictData, _data, em_fit, fit_from_em
from .estimation import estimate_quality, metrics_for_scheme
from .judgements import EQUIVALENT, NOT_EQUIVALENT, UNSURE, PairVerdicts
from .masses import INTERSECTION, MERGE, SELF, SPLIT
from .population import Population
from .results import QualityEstimates
from .sampling import SCHEME_STRATA, PairSample

_GOLD_ANSWERS = {"equivalent": 1.0, "not_equivalent": 0.0}
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
    units = _Units.build(sample, i, j, verdict, rater, gold_i, gold_j, gold_answer)
    data = units.data
    point = em_fit(data, smoothing=smoothing)
    model = fit_from_em(data, point)
    posterior = model.posterior
    verdicts = units.posterior_verdicts(posterior)
    context = sample_context(population, sample)
    raw = estimate_quality(context, sample, verdicts, confidence=confidence, horizon=horizon)
    layout = _Layout.build(context, sample, units.unit_of_row)
    replicates, converged = _bootstrap(
        layout, units, posterior, rng=rng, n_boot=n_boot, smoothing=smoothing, resample_raters=resample_raters
    )
    quality = _with_bootstrap(raw, layout, posterior, replicates, confidence)
    return RaterAwareQuality(quality, model, units.a, units.b, verdicts, n_boot, converged)


@dataclass(frozen=True, eq=False)
class _Units:
    """The distinct unordered pairs of the sample, the verdicts and the gold list.

    A unit's group is its (stratum, class) in the sample (codes 0..11), 12 for a gold pair
    outside the sample and 13 for any other judged pair; groups are the model's priors and the
    bootstrap's strata.
    """

    a: np.ndarray
    b: np.ndarray
    group: np.ndarray
    data: VerdictData
    unit_of_row: np.ndarray  # per sample row, its unit
    counts: np.ndarray  # (3, units): equivalent, not equivalent and unsure verdicts

    @classmethod
    def build(cls, sample, i, j, verdict, rater, gold_i, gold_j, gold_answer) -> _Units:
        i, j = as_1d("i", i).astype(np.int64), as_1d("j", j).astype(np.int64)
        codes = verdict_codes("verdict", verdict).astype(np.int64)
        rater = as_1d("rater", rater)
        same_length(i=i, j=j, verdict=codes, rater=rater)
        gold_i, gold_j = as_1d("gold_i", gold_i).astype(np.int64), as_1d("gold_j", gold_j).astype(np.int64)
        answers = as_1d("gold_answer", gold_answer)
        same_length(gold_i=gold_i, gold_j=gold_j, gold_answer=answers)
        truth_of_gold = np.array([_GOLD_ANSWERS.get(str(a), np.nan) for a in answers.tolist()], dtype=np.float64)
        if np.isnan(truth_of_gold).any():
            k = int(np.flatnonzero(np.isnan(truth_of_gold))[0])
            raise ValueError(f"gold_answer[{k}] = {answers.tolist()[k]!r}: must be equivalent or not_equivalent")
        n = (
            int(
                max(
                    np.max(sample.i, initial=-1),
                    np.max(sample.j, initial=-1),
                    np.max(i, initial=-1),
                    np.max(j, initial=-1),
                    np.max(gold_i, initial=-1),
                    np.max(gold_j, initial=-1),
                )
            )
            + 1
        )
        key = lambda x, y: np.minimum(x, y) * n + np.maximum(x, y)  # noqa: E731
        sample_keys, judged_keys, gold_keys = key(sample.i, sample.j), key(i, j), key(gold_i, gold_j)
        keep = i != j
        keys, first = np.unique(np.concatenate([sample_keys, gold_keys, judged_keys[keep]]), return_index=True)
        unit_of_row = np.searchsorted(keys, sample_keys)
        n_units = len(keys)
        group = np.full(n_units, 13, dtype=np.int64)
        group[np.searchsorted(keys, gold_keys)] = 12
        group[unit_of_row] = sample.stratum.astype(np.int64) * 4 + sample.pair_class
        truth = np.full(n_units, np.nan)
        truth[np.searchsorted(keys, gold_keys)] = truth_of_gold
        truth[unit_of_row[sample.pair_class == SELF]] = 1.0  # self pairs: equivalent, never judged
        unit = np.searchsorted(keys, judged_keys[keep])
        data = _data(unit, rater[keep], codes[keep], truth, group, None)
        counts = np.stack([np.bincount(unit[codes[keep] == c], minlength=n_units) for c in range(3)])
        return cls(keys // n, keys % n, group, data, unit_of_row, counts)

    def posterior_verdicts(self, posterior: np.ndarray) -> PairVerdicts:
        """Verdict counts whose share of *equivalent* is the posterior: the sure verdicts split
        by it; unsure verdicts and pairs without sure verdicts as they were. Gold pairs with
        no verdict are left out, like the pairs nobody judged."""
        sure = (self.counts[EQUIVALENT] + self.counts[NOT_EQUIVALENT]).astype(np.float64)
        has = (sure + self.counts[UNSURE] > 0) & (self.a != self.b)
        p = np.nan_to_num(posterior)
        return PairVerdicts(
            self.a[has], self.b[has], (sure * p)[has], (sure * (1.0 - p))[has], self.counts[UNSURE][has].astype(float)
        )


@dataclass(frozen=True, eq=False)
class _Layout:
    """Per sample row what every estimate needs: its class, stratum, draws and unit, the
    ΔPrecision label, the rates' importances, and the exact totals (abcde-spec §4-6)."""

    scheme: str
    pair_class: np.ndarray
    stratum: np.ndarray
    draws: np.ndarray
    unit: np.ndarray
    label: np.ndarray
    union_over_base: np.ndarray
    union_over_exp: np.ndarray
    totals: np.ndarray  # (4,) class totals of the sampling weight
    rate_totals: np.ndarray  # (4,) SplitRate(T), MergeRate(T) at SPLIT, MERGE

    @classmethod
    def build(cls, context: SampleContext, sample: PairSample, unit_of_row: np.ndarray) -> _Layout:
        pair_class = sample.pair_class.astype(np.int64)
        union, base, exp = context.union, context.base, context.exp
        if sample.scheme == "precision":
            stable = np.sign(1.0 / exp - 1.0 / base)
            label = np.select([pair_class == MERGE, pair_class == SPLIT], [1.0, -1.0], stable)
        else:
            label = np.select(
                [pair_class == MERGE, pair_class == SPLIT], [union / exp, -union / base], union / exp - union / base
            )
        return cls(
            sample.scheme,
            pair_class,
            sample.stratum.astype(np.int64),
            sample.draws.astype(np.float64),
            unit_of_row,
            label,
            union / base,
            union / exp,
            np.asarray(context.totals, dtype=float),
            np.asarray(context.rate_totals, dtype=float),
        )

    def estimates(self, x: np.ndarray, weight: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric of the scheme for each row of ``x`` (B, rows): a pair's value (NaN where
        unjudged), with ``weight`` (B, rows) its pair's bootstrap multiplicity."""
        strata = SCHEME_STRATA[self.scheme]
        stratum_of = {c: s for s, classes in strata.items() for c in classes}
        judged = ~np.isnan(x)
        value = np.where(judged, x, 0.0)
        w = weight * self.draws

        def share(classes: tuple[int, ...], v: np.ndarray, importance: np.ndarray | None = None) -> np.ndarray:
            """The mean of ``v`` over the judged draws of ``classes`` (one stratum), each class
            reweighted to its drawn draws (spec §5)."""
            total, drawn_total = 0.0, 0.0
            for c in classes:
                rows = (self.pair_class == c) & (self.stratum == stratum_of[c])
                a = w[:, rows] * (1.0 if importance is None else importance[rows])
                judged_a = np.where(judged[:, rows], a, 0.0)
                drawn, judged_sum = np.sum(a, axis=1), np.sum(judged_a, axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mean = np.sum(judged_a * v[:, rows], axis=1) / judged_sum
                ok = judged_sum > 0
                total = total + np.where(ok, drawn * np.nan_to_num(mean), 0.0)
                drawn_total = drawn_total + np.where(ok, drawn, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(drawn_total > 0, total / drawn_total, np.nan)

        def scaled(multiplier: float, mean: np.ndarray) -> np.ndarray:
            """``multiplier × mean``; exactly 0 for a class the population does not have."""
            return np.zeros(len(x)) if multiplier == 0.0 else multiplier * mean

        def delta_precision() -> np.ndarray:
            parts = [scaled(float(self.totals[list(c)].sum()), share(c, self.label * value)) for c in strata.values()]
            return np.sum(parts, axis=0)

        split_rate, merge_rate = float(self.rate_totals[SPLIT]), float(self.rate_totals[MERGE])
        p_split, p_merge = share((SPLIT,), value), share((MERGE,), value)
        if self.scheme == "precision":
            return {
                "DeltaPrecision": delta_precision(),
                "GoodSplitRate": scaled(split_rate, 1.0 - p_split),
                "BadSplitRate": scaled(split_rate, p_split),
                "GoodMergeRate": scaled(merge_rate, p_merge),
                "BadMergeRate": scaled(merge_rate, 1.0 - p_merge),
            }
        t = self.totals
        p_stable = share((SELF, INTERSECTION), value)
        rate_split = share((SPLIT,), value, self.union_over_base)
        rate_merge = share((MERGE,), value, self.union_over_exp)
        out = {
            "GoodSplitDistance": scaled(t[SPLIT], 1.0 - p_split),
            "BadSplitDistance": scaled(t[SPLIT], p_split),
            "GoodMergeDistance": scaled(t[MERGE], p_merge),
            "BadMergeDistance": scaled(t[MERGE], 1.0 - p_merge),
            "AffectedGoodIndex": scaled(t[SELF] + t[INTERSECTION], p_stable),
            "AffectedBadIndex": scaled(t[SELF] + t[INTERSECTION], 1.0 - p_stable),
            "DeltaPrecision": delta_precision(),
            "GoodSplitRate": scaled(split_rate, 1.0 - rate_split),
            "BadSplitRate": scaled(split_rate, rate_split),
            "GoodMergeRate": scaled(merge_rate, rate_merge),
            "BadMergeRate": scaled(merge_rate, 1.0 - rate_merge),
        }
        out["GoodDistance"] = out["GoodSplitDistance"] + out["GoodMergeDistance"]
        out["BadDistance"] = out["BadSplitDistance"] + out["BadMergeDistance"]
        out["GoodMinusBadDistance"] = out["GoodDistance"] - out["BadDistance"]
        return out


def _bootstrap(
    layout: _Layout,
    units: _Units,
    posterior: np.ndarray,
    *,
    rng: np.random.Generator,
    n_boot: int,
    smoothing: float,
    resample_raters: bool,
) -> tuple[dict[str, np.ndarray], int]:
    """Every metric in each of ``n_boot`` replicates over pairs (within groups) and raters."""
    data = units.data
    members = [np.flatnonzero(units.group == g) for g in range(14)]
    members = [m for m in members if len(m)]
    out: dict[str, list[np.ndarray]] = {}
    converged = 0
    for start in range(0, n_boot, _BLOCK):
        size = min(_BLOCK, n_boot - start)
        unit_weight = np.zeros((size, data.n_units))
        for m in members:
            unit_weight[:, m] = rng.multinomial(len(m), np.full(len(m), 1.0 / len(m)), size=size)
        rater_weight = np.ones((size, data.n_raters))
        if resample_raters:
            rater_weight = rng.multinomial(data.n_raters, np.full(data.n_raters, 1.0 / data.n_raters), size=size)
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


def _with_bootstrap(
    raw: QualityEstimates, layout: _Layout, posterior: np.ndarray, replicates: dict[str, np.ndarray], confidence: float
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
        widen = stderr / e.stderr if e.stderr > 0 and stderr > e.stderr else 1.0
        cs_low, cs_high = e.value - widen * (e.value - e.cs_low), e.value + widen * (e.cs_high - e.value)
        out[name] = replace(
            e, stderr=stderr, ci_low=min(low, e.value), ci_high=max(high, e.value), cs_low=cs_low, cs_high=cs_high
        )
    return QualityEstimates(raw.scheme, raw.confidence, {n: out[n] for n in metrics_for_scheme(raw.scheme)})
