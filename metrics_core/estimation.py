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

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from ._validation import positive_int
from .context import SampleContext, sample_context
from .judgements import PairVerdicts
from .masses import INTERSECTION, MERGE, SELF, SPLIT
from .population import Population
from .proportions import wilson_interval
from .results import Estimate, QualityEstimates
from .sampling import ALL, DIFF, SCHEME_STRATA, STABLE, PairSample
from .sequential import confidence_sequence_half_width, share_confidence_sequence

ESTIMATED_METRICS: tuple[str, ...] = (
    "GoodSplitDistance",
    "BadSplitDistance",
    "GoodMergeDistance",
    "BadMergeDistance",
    "GoodDistance",
    "BadDistance",
    "GoodMinusBadDistance",
    "AffectedGoodIndex",
    "AffectedBadIndex",
    "DeltaPrecision",
    "GoodSplitRate",
    "BadSplitRate",
    "GoodMergeRate",
    "BadMergeRate",
)
_PRECISION_METRICS = ("DeltaPrecision", "GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate")


def metrics_for_scheme(scheme: str) -> tuple[str, ...]:
    """Names of the metrics a sampling scheme estimates, in report order."""
    return _PRECISION_METRICS if scheme == "precision" else ESTIMATED_METRICS


def estimate_quality(
    population: Population | SampleContext,
    sample: PairSample,
    verdicts: PairVerdicts,
    *,
    confidence: float = 0.95,
    vantage: Any = None,
    horizon: int | None = None,
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
    draws = _Draws.build(population, sample, verdicts, vantage)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    estimator = _Estimator(draws, z, confidence, horizon)
    estimates = _scheme_estimates(estimator, sample.scheme)
    estimates = _with_unsure_bounds(estimates, estimator, sample.scheme)
    return QualityEstimates(
        sample.scheme, confidence, {name: estimates[name] for name in metrics_for_scheme(sample.scheme)}
    )


_STRATUM_OF = {
    "jaccard": {c: ALL for c in range(4)},
    "stratified": {SPLIT: DIFF, MERGE: DIFF, SELF: STABLE, INTERSECTION: STABLE},
    "precision": {c: ALL for c in range(4)},
}


@dataclass(frozen=True)
class _Draws:
    """Per sample row (within the vantage mask): what the estimators need."""

    stratum: np.ndarray
    pair_class: np.ndarray
    draws: np.ndarray
    equivalent: np.ndarray  # share of equivalent verdicts; NaN when unjudged
    unit: np.ndarray  # code of the distinct unordered pair within its stratum, ordered by (stratum, class)
    union_over_base: np.ndarray  # weight(U)/weight(Base(i)): importance of a split draw for the rates
    union_over_exp: np.ndarray
    precision_label: np.ndarray  # l_ij of ΔPrecision for this scheme (JDD eqs 92-94; spec §4c)
    totals: np.ndarray  # exact sampling-weight total per (stratum, class), shape (3, 4)
    split_rate: float  # exact SplitRate(T) (or the vantage slice's contribution)
    merge_rate: float
    verdict_counts: np.ndarray  # (3, rows): equivalent, not equivalent, unsure verdicts of the row's pair
    stratum_mass: np.ndarray  # (3,): the whole population's sampling mass of each stratum
    stratum_share: np.ndarray  # (3,): each stratum's share of the whole sample's draws
    # (stratum, class) -> its rows, and the range [start, end) of its unit codes
    class_rows: dict[tuple[int, int], np.ndarray]
    class_units: dict[tuple[int, int], tuple[int, int]]

    @classmethod
    def build(
        cls, source: Population | SampleContext, sample: PairSample, verdicts: PairVerdicts, vantage: Any
    ) -> _Draws:
        if isinstance(source, SampleContext):
            if vantage is not None:
                raise ValueError("vantage needs the population; restrict a SampleContext where it is built")
            context = source
        else:
            context = sample_context(source, sample, vantage)
        rows = context.rows
        if len(rows) and rows.max() >= len(sample):
            raise ValueError(f"the context has rows up to {rows.max()}; the sample has {len(sample)}")
        i, j = sample.i[rows], sample.j[rows]
        n = int(max(sample.i.max(initial=0), sample.j.max(initial=0))) + 1
        pair_class = sample.pair_class[rows]
        # A pair and its reverse are of one class: with the class in the key, the units of each
        # (stratum, class) are a contiguous range of codes.
        group = sample.stratum[rows].astype(np.int64) * 4 + pair_class
        unit_keys = (group * n + np.minimum(i, j)) * n + np.maximum(i, j)
        unit_of_key, unit = np.unique(unit_keys, return_inverse=True)
        class_rows, class_units = _class_layout(group, unit, unit_of_key // (n * n))
        sets = {"union": context.union, "base": context.base, "exp": context.exp}
        if sample.scheme == "precision":
            stable = np.sign(1.0 / sets["exp"] - 1.0 / sets["base"])
            label = np.select([pair_class == MERGE, pair_class == SPLIT], [1.0, -1.0], stable)
        else:
            a, b = sets["union"] / sets["exp"], sets["union"] / sets["base"]
            label = np.select([pair_class == MERGE, pair_class == SPLIT], [a, -b], a - b)
        totals = np.zeros((3, 4))
        stratum_mass = np.zeros(3)
        whole = context.totals if context.sampling_totals is None else context.sampling_totals
        for stratum, classes in SCHEME_STRATA[sample.scheme].items():
            totals[stratum, list(classes)] = context.totals[list(classes)]
            stratum_mass[stratum] = float(np.sum(whole[list(classes)]))
        all_draws = max(sample.n_draws, 1)
        stratum_share = np.bincount(sample.stratum, weights=sample.draws, minlength=3)[:3] / all_draws
        counts = verdicts.counts(i, j)
        return cls(
            stratum=sample.stratum[rows],
            pair_class=pair_class,
            draws=sample.draws[rows],
            equivalent=verdicts.share_of_counts(i, j, counts),
            unit=unit,
            union_over_base=sets["union"] / sets["base"],
            union_over_exp=sets["union"] / sets["exp"],
            precision_label=label,
            totals=totals,
            split_rate=float(context.rate_totals[SPLIT]),
            merge_rate=float(context.rate_totals[MERGE]),
            verdict_counts=np.stack(counts),
            stratum_mass=stratum_mass,
            stratum_share=stratum_share,
            class_rows=class_rows,
            class_units=class_units,
        )

    def resolved(self, unsure_as: np.ndarray | float) -> _Draws:
        """These draws had every unsure verdict said *equivalent* (``unsure_as`` 1) or not (0), per row."""
        equivalent, not_equivalent, unsure = self.verdict_counts
        verdicts = equivalent + not_equivalent + unsure
        share = np.full(len(verdicts), np.nan)
        usable = verdicts > 0
        resolved = equivalent + np.broadcast_to(np.asarray(unsure_as, dtype=np.float64), verdicts.shape) * unsure
        share[usable] = resolved[usable] / verdicts[usable]
        share[self.pair_class == SELF] = 1.0
        return replace(self, equivalent=share)

    def class_horizon(self, stratum: int, classes: tuple[int, ...], horizon: int) -> float:
        """The planned judged draws of ``classes``: horizon × the stratum's draws × their mass share."""
        mass = self.stratum_mass[stratum]
        if mass <= 0:
            return math.nan
        return horizon * self.stratum_share[stratum] * float(self.totals[stratum, list(classes)].sum()) / mass


@dataclass(frozen=True)
class _Mean:
    """A weighted mean over judged draws, with what its interval and sequence need."""

    value: float
    stderr: float
    n_eff: float
    judged_draws: int
    drawn_draws: int
    horizon: float  # planned judged draws of its classes (spec §9)


@dataclass(frozen=True)
class _Frame:
    """The judged rows of some classes of a stratum, with their reweighting and units."""

    judged: int
    drawn: int
    rows: np.ndarray
    v: np.ndarray  # the class's drawn/judged, per row
    q: np.ndarray  # the class's share of distinct pairs judged, per row
    unit: np.ndarray  # unit code from 0 within the classes' range
    draws: np.ndarray  # float64
    n_units: int
    present: np.ndarray
    unit_draws: np.ndarray  # of the present units

    @classmethod
    def build(cls, d: _Draws, stratum: int, classes: tuple[int, ...]) -> _Frame:
        parts = [d.class_rows[(stratum, c)] for c in classes]
        judged_parts = [rows[~np.isnan(d.equivalent[rows])] for rows in parts]
        drawn = sum(int(d.draws[rows].sum()) for rows in parts)
        judged = sum(int(d.draws[rows].sum()) for rows in judged_parts)
        # Per class: reweighting v = drawn/judged and q = share of distinct pairs judged. Units are
        # counted within the classes' range of unit codes only.
        first = min(d.class_units[(stratum, c)][0] for c in classes)
        n_units = max(d.class_units[(stratum, c)][1] for c in classes) - first
        v_parts, q_parts = [], []
        for c, rows, judged_rows in zip(classes, parts, judged_parts):
            start, end = d.class_units[(stratum, c)]
            v = d.draws[rows].sum() / d.draws[judged_rows].sum() if len(judged_rows) else 0.0
            q = _distinct(d.unit[judged_rows] - start, end - start) / (end - start) if len(judged_rows) else 0.0
            v_parts.append(np.full(len(judged_rows), v))
            q_parts.append(np.full(len(judged_rows), q))
        judged_rows = np.concatenate(judged_parts)
        unit = d.unit[judged_rows] - first
        draws = d.draws[judged_rows].astype(np.float64)
        unit_draws = np.bincount(unit, weights=draws, minlength=n_units)
        present = unit_draws > 0
        return cls(
            judged,
            drawn,
            judged_rows,
            np.concatenate(v_parts),
            np.concatenate(q_parts),
            unit,
            draws,
            n_units,
            present,
            unit_draws[present],
        )

    def unit_q(self) -> np.ndarray:
        """The mean ``q`` of each present unit's rows."""
        return (
            np.bincount(self.unit, weights=self.q, minlength=self.n_units)[self.present]
            / np.bincount(self.unit, minlength=self.n_units)[self.present]
        )


class _Estimator:
    """The estimates of one set of draws. ``points_only``: values without intervals (spec §12's passes)."""

    def __init__(self, draws: _Draws, z: float, confidence: float, horizon: int, points_only: bool = False):
        self.d = draws
        self.z = z
        self.confidence = confidence
        self.horizon = horizon
        self.points_only = points_only
        self._frames: dict[tuple[int, tuple[int, ...]], _Frame] = {}

    def resolved(self, unsure_as: np.ndarray | float) -> _Estimator:
        """Point estimates had the unsure verdicts been decided (:meth:`_Draws.resolved`)."""
        return _Estimator(self.d.resolved(unsure_as), self.z, self.confidence, self.horizon, points_only=True)

    def mean(
        self, stratum: int, classes: tuple[int, ...], x: np.ndarray, importance: np.ndarray | None = None
    ) -> _Mean:
        """Weighted mean of ``x`` over the judged draws of ``classes`` in ``stratum`` (spec §6).

        A draw's weight is its class's drawn/judged reweighting times its
        ``importance`` (1 unless given). In the spec's SE formula ``v_u`` is then the
        unit's mean weight per draw.
        """
        d = self.d
        frame = self._frame(stratum, classes)
        horizon = d.class_horizon(stratum, classes, self.horizon)
        judged, drawn = frame.judged, frame.drawn
        if judged == 0:
            return _Mean(math.nan, math.nan, 0.0, 0, drawn, horizon)
        judged_rows, v_of_row, unit, draws = frame.rows, frame.v, frame.unit, frame.draws
        n_units, present, unit_draws = frame.n_units, frame.present, frame.unit_draws
        weight = v_of_row * (1.0 if importance is None else importance[judged_rows])
        unit_weight = np.bincount(unit, weights=draws * weight, minlength=n_units)[present]
        unit_x = np.bincount(unit, weights=draws * weight * x[judged_rows], minlength=n_units)[present] / unit_weight
        unit_v = unit_weight / unit_draws
        total = float(np.sum(unit_v * unit_draws))
        m = float(np.sum(unit_v * unit_draws * unit_x) / total)
        if self.points_only:
            return _Mean(m, math.nan, math.nan, judged, drawn, horizon)
        unit_q = frame.unit_q()
        k = unit_draws + (1.0 - unit_q) * unit_draws * (unit_draws - 1.0)
        spread = float(np.sum(unit_v**2 * k * (unit_x - m) ** 2))
        stderr = math.sqrt(judged / (judged - 1) * spread) / total if judged > 1 else math.nan
        n_eff = total**2 / float(np.sum(unit_v**2 * k))
        return _Mean(m, stderr, n_eff, judged, drawn, horizon)

    def _frame(self, stratum: int, classes: tuple[int, ...]) -> _Frame:
        """The judged draws of ``classes`` in ``stratum`` and their units (what :meth:`mean`
        needs whatever it averages), built once per estimator."""
        key = (stratum, classes)
        if key not in self._frames:
            self._frames[key] = _Frame.build(self.d, stratum, classes)
        return self._frames[key]

    def indicator(self, multiplier: float, mean: _Mean, complement: bool = False) -> Estimate:
        """``multiplier × share`` with a Wilson interval on the effective size and a clipped sequence."""
        if multiplier == 0.0:
            return Estimate(0.0, 0.0, 0.0, 0.0, mean.judged_draws, mean.drawn_draws, 0.0, 0.0, 0.0, 0.0)
        if math.isnan(mean.value):
            bounds = (0.0, multiplier) * 2
            return Estimate(math.nan, math.nan, *bounds[:2], mean.judged_draws, mean.drawn_draws, *bounds[2:])
        share = 1.0 - mean.value if complement else mean.value
        if self.points_only:
            return Estimate(multiplier * share, math.nan, math.nan, math.nan, mean.judged_draws, mean.drawn_draws)
        low, high = wilson_interval(mean.value, mean.n_eff, self.z)
        cs_low, cs_high = self._share_sequence(mean)
        if complement:
            low, high, cs_low, cs_high = 1.0 - high, 1.0 - low, 1.0 - cs_high, 1.0 - cs_low
        value = multiplier * share
        return Estimate(
            value,
            multiplier * mean.stderr,
            min(multiplier * low, value),
            max(multiplier * high, value),
            mean.judged_draws,
            mean.drawn_draws,
            min(multiplier * cs_low, value),
            max(multiplier * cs_high, value),
        )

    def _share_sequence(self, mean: _Mean) -> tuple[float, float]:
        if not mean.horizon > 0:
            return math.nan, math.nan
        return share_confidence_sequence(
            share=mean.value,
            stderr=mean.stderr,
            n_eff=mean.n_eff,
            judged=mean.judged_draws,
            horizon=mean.horizon,
            confidence=self.confidence,
        )

    def _sequence_half_width(self, stderr: float, judged: int, horizon: float) -> float:
        if not (math.isfinite(stderr) and horizon > 0):
            return math.nan
        return confidence_sequence_half_width(stderr=stderr, judged=judged, horizon=horizon, confidence=self.confidence)

    def normal(self, parts: list[tuple[float, _Mean]]) -> Estimate:
        """``Σ multiplier × mean`` over independent parts, with a normal interval and sequence."""
        parts = [(mult, mean) for mult, mean in parts if mult != 0.0]
        judged = sum(mean.judged_draws for _, mean in parts)
        drawn = sum(mean.drawn_draws for _, mean in parts)
        if not parts:
            return Estimate(0.0, 0.0, 0.0, 0.0, judged, drawn, 0.0, 0.0, 0.0, 0.0)
        value = sum(mult * mean.value for mult, mean in parts)
        if self.points_only:
            return Estimate(value, math.nan, math.nan, math.nan, judged, drawn)
        stderr = math.sqrt(sum((mult * mean.stderr) ** 2 for mult, mean in parts))
        half = math.sqrt(
            sum(
                (mult * self._sequence_half_width(mean.stderr, mean.judged_draws, mean.horizon)) ** 2
                for mult, mean in parts
            )
        )
        return Estimate(
            value,
            stderr,
            value - self.z * stderr,
            value + self.z * stderr,
            judged,
            drawn,
            value - half,
            value + half,
        )


def _scheme_estimates(est: _Estimator, scheme: str) -> dict[str, Estimate]:
    if scheme == "precision":
        return _precision_scheme(est)
    return _jaccard_schemes(est, _STRATUM_OF[scheme])


def _jaccard_schemes(est: _Estimator, stratum_of: dict[int, int]) -> dict[str, Estimate]:
    d = est.d
    p = d.equivalent
    total = lambda c: float(d.totals[stratum_of[c], c])  # noqa: E731
    split = est.mean(stratum_of[SPLIT], (SPLIT,), p)
    merge = est.mean(stratum_of[MERGE], (MERGE,), p)
    stable = est.mean(stratum_of[SELF], (SELF, INTERSECTION), p)
    out = {
        "GoodSplitDistance": est.indicator(total(SPLIT), split, complement=True),
        "BadSplitDistance": est.indicator(total(SPLIT), split),
        "GoodMergeDistance": est.indicator(total(MERGE), merge),
        "BadMergeDistance": est.indicator(total(MERGE), merge, complement=True),
        "AffectedGoodIndex": est.indicator(total(SELF) + total(INTERSECTION), stable),
        "AffectedBadIndex": est.indicator(total(SELF) + total(INTERSECTION), stable, complement=True),
    }
    out["GoodDistance"] = _sum(out["GoodSplitDistance"], out["GoodMergeDistance"])
    out["BadDistance"] = _sum(out["BadSplitDistance"], out["BadMergeDistance"])
    # Good and Bad of one class are one share and its complement: their difference is
    # multiplier × (1 − 2·share), with twice the share's SE, interval and sequence.
    out["GoodMinusBadDistance"] = _sum(
        _difference(out["GoodSplitDistance"], out["BadSplitDistance"]),
        _difference(out["GoodMergeDistance"], out["BadMergeDistance"]),
    )
    out["DeltaPrecision"] = _delta_precision(est, stratum_of)
    split_rate = est.mean(stratum_of[SPLIT], (SPLIT,), p, importance=d.union_over_base)
    merge_rate = est.mean(stratum_of[MERGE], (MERGE,), p, importance=d.union_over_exp)
    out["GoodSplitRate"] = est.indicator(d.split_rate, split_rate, complement=True)
    out["BadSplitRate"] = est.indicator(d.split_rate, split_rate)
    out["GoodMergeRate"] = est.indicator(d.merge_rate, merge_rate)
    out["BadMergeRate"] = est.indicator(d.merge_rate, merge_rate, complement=True)
    return out


def _delta_precision(est: _Estimator, stratum_of: dict[int, int]) -> Estimate:
    """ΔPrecision: each stratum's mean of ``l_ij · 1(i≡j)`` times its exact total, summed."""
    d = est.d
    x = d.precision_label * d.equivalent
    strata = sorted(set(stratum_of.values()))
    return est.normal(
        [(float(d.totals[s].sum()), est.mean(s, tuple(c for c in range(4) if stratum_of[c] == s), x)) for s in strata]
    )


def _precision_scheme(est: _Estimator) -> dict[str, Estimate]:
    d = est.d
    p = d.equivalent
    split = est.mean(ALL, (SPLIT,), p)
    merge = est.mean(ALL, (MERGE,), p)
    return {
        "DeltaPrecision": _delta_precision(est, _STRATUM_OF["precision"]),
        "GoodSplitRate": est.indicator(d.split_rate, split, complement=True),
        "BadSplitRate": est.indicator(d.split_rate, split),
        "GoodMergeRate": est.indicator(d.merge_rate, merge),
        "BadMergeRate": est.indicator(d.merge_rate, merge, complement=True),
    }


def _with_unsure_bounds(estimates: dict[str, Estimate], est: _Estimator, scheme: str) -> dict[str, Estimate]:
    """Each estimate with ``unsure_low``/``unsure_high`` (spec §12), from point estimates only.

    Deciding unsure verdicts moves a class's share one way: its bounds are the estimates with
    every unsure verdict of the class *equivalent* and with every one *not equivalent*. A sum
    of classes adds its parts' bounds (the classes' unsure verdicts are different ones), and
    ΔPrecision, a mean of ``l_ij · 1(i≡j)`` over all classes, is highest with the unsure pairs
    that pull it up (positive label) equivalent and the others not, lowest the other way round.
    """
    as_equivalent = _scheme_estimates(est.resolved(1.0), scheme)
    as_not = _scheme_estimates(est.resolved(0.0), scheme)
    # With unsure verdicts counted as judged the weights no longer depend on them, so ΔPrecision
    # moves with a pair's verdict by Σ over its rows of draws × label (its rows, one per
    # orientation, lie in one cell: they share the label's sign).
    d = est.d
    pull = np.bincount(d.unit, weights=d.draws * d.precision_label, minlength=d.unit.max(initial=-1) + 1)
    positive = (pull[d.unit] > 0).astype(np.float64)
    stratum_of = _STRATUM_OF[scheme]
    highest = _delta_precision(est.resolved(positive), stratum_of).value
    lowest = _delta_precision(est.resolved(1.0 - positive), stratum_of).value
    bounds = {"DeltaPrecision": _ordered(lowest, highest)}
    sums = ("GoodDistance", "BadDistance", "GoodMinusBadDistance")
    for name in estimates:
        if name not in bounds and name not in sums:
            bounds[name] = _ordered(as_equivalent[name].value, as_not[name].value)
    if "GoodMinusBadDistance" in estimates:
        # In the order the values are summed, so that without unsure verdicts they are the value.
        (gs_low, gs_high), (bs_low, bs_high), (gm_low, gm_high), (bm_low, bm_high) = (
            bounds[name] for name in ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance")
        )
        bounds["GoodDistance"] = (gs_low + gm_low, gs_high + gm_high)
        bounds["BadDistance"] = (bs_low + bm_low, bs_high + bm_high)
        bounds["GoodMinusBadDistance"] = (
            (gs_low - bs_high) + (gm_low - bm_high),
            (gs_high - bs_low) + (gm_high - bm_low),
        )
    return {name: replace(e, unsure_low=bounds[name][0], unsure_high=bounds[name][1]) for name, e in estimates.items()}


def _ordered(first: float, second: float) -> tuple[float, float]:
    if math.isnan(first) or math.isnan(second):
        return math.nan, math.nan
    return min(first, second), max(first, second)


def _sum(first: Estimate, second: Estimate) -> Estimate:
    """Sum of two independent estimates: SEs in quadrature, interval and sequence by MOVER."""
    value = first.value + second.value
    stderr = math.hypot(first.stderr, second.stderr)
    return Estimate(
        value,
        stderr,
        *_mover(value, first, second, "ci_low", "ci_high"),
        first.judged_draws + second.judged_draws,
        first.drawn_draws + second.drawn_draws,
        *_mover(value, first, second, "cs_low", "cs_high"),
    )


def _mover(value: float, first: Estimate, second: Estimate, low: str, high: str) -> tuple[float, float]:
    """Bounds of a sum of independent estimates from their bounds (MOVER, Zou & Donner 2008)."""
    (l1, h1), (l2, h2) = (getattr(first, low), getattr(first, high)), (getattr(second, low), getattr(second, high))
    if math.isnan(value):
        return l1 + l2, h1 + h2
    return (
        value - math.hypot(first.value - l1, second.value - l2),
        value + math.hypot(h1 - first.value, h2 - second.value),
    )


def _difference(good: Estimate, bad: Estimate) -> Estimate:
    """``good − bad`` of one class, whose shares are complements: every bound comes from the other's."""
    return Estimate(
        good.value - bad.value,
        good.stderr + bad.stderr,
        good.ci_low - bad.ci_high,
        good.ci_high - bad.ci_low,
        good.judged_draws,
        good.drawn_draws,
        good.cs_low - bad.cs_high,
        good.cs_high - bad.cs_low,
    )


def _class_layout(
    group: np.ndarray, unit: np.ndarray, group_of_unit: np.ndarray
) -> tuple[dict[tuple[int, int], np.ndarray], dict[tuple[int, int], tuple[int, int]]]:
    """The rows of each (stratum, class) ``group`` (ascending) and the range of its unit codes."""
    order = np.argsort(group, kind="stable")
    row_counts = np.bincount(group, minlength=12)
    unit_counts = np.bincount(group_of_unit, minlength=12)
    row_end, unit_end = np.cumsum(row_counts), np.cumsum(unit_counts)
    rows, units = {}, {}
    for g in range(12):
        key = (g // 4, g % 4)
        rows[key] = order[row_end[g] - row_counts[g] : row_end[g]]
        units[key] = (int(unit_end[g] - unit_counts[g]), int(unit_end[g]))
    return rows, units


def _distinct(units: np.ndarray, n_units: int) -> int:
    return int(np.count_nonzero(np.bincount(units, minlength=n_units)))
