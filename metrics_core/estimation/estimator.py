"""Weighted means over judged draws (spec §6) and the estimates made of them."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import NamedTuple

import numpy as np

from ..masses import SELF
from ..proportions import wilson_interval
from ..results import Estimate
from ..sequential import confidence_sequence_half_width, share_confidence_sequence
from .draws import Draws

_SHIFTED = ("value", "ci_low", "ci_high", "cs_low", "cs_high", "unsure_low", "unsure_high")


class MeanOf(NamedTuple):
    """What :meth:`Estimator.means` averages: ``x`` over the judged draws of ``classes`` in
    ``stratum``, each draw weighted by its class's reweighting times its ``importance``."""

    stratum: int
    classes: tuple[int, ...]
    x: str  # "share" or "precision"
    importance: str | None = None  # "base" or "exp"; None: 1


@dataclass(frozen=True, kw_only=True)
class Mean:
    """A weighted mean over judged draws, with what its interval and sequence need."""

    value: float
    n_eff: float
    judged_draws: int
    drawn_draws: int
    horizon: float  # planned judged draws of its classes (spec §9)
    stderr: float = math.nan
    # The judged draws that carry a verdict (self pairs are known, not judged: spec §14), and a
    # floor under SE(m)² from the smoothed share of each judged class (``normal`` means only).
    verdict_draws: int = 0
    floor: float = 0.0

    @property
    def floored_stderr(self) -> float:
        """The SE the sequence uses: at least the floor's (defined from the first verdict on)."""
        stderr = self.stderr
        floor = math.sqrt(self.floor)
        return floor if math.isnan(stderr) else max(stderr, floor)


@dataclass(frozen=True, kw_only=True)
class _Unsettled:
    """A mean whose SE waits for its spread ``Σ v_u² k_u (x_u − m)²`` (spec §6): the dot products
    of each ``(v_u² k_u, (x_u − m)²)`` in ``terms``, then divided by ``total``, the sum of weights."""

    mean: Mean
    total: float
    terms: list[tuple[np.ndarray, np.ndarray]]

    def settled(self) -> Mean:
        judged = self.mean.judged_draws
        if judged <= 1:
            return self.mean
        spread = 0.0
        for vk, squares in self.terms:
            spread += float(np.dot(vk, squares))
        return replace(self.mean, stderr=math.sqrt(judged / (judged - 1) * spread) / self.total)


@dataclass(frozen=True)
class _Frame:
    """The judged units of one (stratum, class), with the class's reweighting."""

    rows: slice
    units: slice
    drawn: int
    judged: int
    v: float  # drawn/judged
    q: float  # share of the class's distinct pairs (labelled pairs in a prefix) judged
    # In a labelled prefix (spec §14), the class's judged draws over its drawn draws; None otherwise.
    labelled: float | None
    present: np.ndarray | slice  # the class's units with a verdict (a slice when all are)
    unit_draws: np.ndarray  # draws of the present units
    share: np.ndarray  # share of equivalent verdicts of the present units

    @classmethod
    def build(cls, d: Draws, group: int) -> _Frame:
        rows = slice(int(d.row_bounds[group]), int(d.row_bounds[group + 1]))
        units = slice(int(d.unit_bounds[group]), int(d.unit_bounds[group + 1]))
        share = d.unit_share[units]
        present = np.isnan(share)
        np.logical_not(present, out=present)
        if present.all():
            present = slice(None)  # views, not copies (self pairs; every pair judged)
        all_draws = d.unit_draws[units]
        unit_draws = all_draws[present]
        drawn = int(all_draws.sum()) if d.class_drawn is None else int(d.class_drawn[group])
        judged = int(unit_draws.sum())
        n_units = units.stop - units.start
        return cls(
            rows,
            units,
            drawn,
            judged,
            drawn / judged if judged else 0.0,
            len(unit_draws) / n_units if n_units else 0.0,
            None if d.class_drawn is None else (judged / drawn if drawn else 0.0),
            present,
            unit_draws,
            share[present],
        )

    @cached_property
    def k(self) -> np.ndarray:
        """The spec's ``k_u`` of each present unit: its draws and their within-unit pairs."""
        # unit_draws + (1 − q)·unit_draws·(unit_draws − 1), in place (products commute exactly)
        k = np.multiply(self.unit_draws, 1.0 - self.q)
        k *= self.unit_draws - 1.0
        k += self.unit_draws
        return k

    @cached_property
    def plain(self) -> _Weights:
        """The unit weights without importance: every such mean over this class shares them."""
        return _Weights(self, self.v * self.unit_draws)

    def unit_sums(self, d: Draws, values: np.ndarray) -> np.ndarray:
        """Σ draws·values over the rows of each present unit (``values`` of this class's rows)."""
        return d.unit_sums(values, self.rows, self.units)[self.present]


class _Weights:
    """A class's weight of each present unit, and the spec's ``v_u² k_u`` (``v_u`` the unit's
    mean weight per draw) for the SE, with their sums."""

    def __init__(self, frame: _Frame, unit_weight: np.ndarray):
        self.frame = frame
        self.unit_weight = unit_weight
        self.total = float(unit_weight.sum())

    @cached_property
    def vk(self) -> np.ndarray:
        vk = self.unit_weight / self.frame.unit_draws
        np.multiply(vk, vk, out=vk)
        vk *= self.frame.k
        return vk

    @cached_property
    def vk_total(self) -> float:
        return float(self.vk.sum())

    def split_terms(self, x: np.ndarray, m: float, class_mean: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """``v_u² k_u (x_u − m)²`` with ``k_u = q D_u + (1 − q) D_u²`` split in its two parts, the
        second (the variance of losing a pair's draws together) centred at the class's mean."""
        f = self.frame
        per_draw = self.unit_weight / f.unit_draws
        per_draw *= per_draw
        return [
            (per_draw * (f.q * f.unit_draws), np.square(x - m)),
            (per_draw * ((1.0 - f.q) * f.unit_draws * f.unit_draws), np.square(x - class_mean)),
        ]

    def prefix_terms(self, x: np.ndarray, m: float, class_mean: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """The same in a labelled prefix (spec §14), which is a simple random sample of the draws
        post-stratified by class: ``v_u² k_u`` centred at the class's mean (within the class), and
        the class's mean off the pooled one weighted as the class's share of all drawn draws varies,
        ``N_g (ȳ_g − m)²`` (``v_u² D_u`` summed times the labelled share ``n_g/N_g``). Centred at
        ``m`` as in §6, that term would be ``N_g²/n_g``: overstated by the unlabelled draws."""
        f = self.frame
        assert f.labelled is not None, "a class of a labelled prefix"
        per_draw = self.unit_weight / f.unit_draws
        per_draw *= per_draw
        between = f.labelled * float(np.dot(per_draw, f.unit_draws))
        return [(self.vk, np.square(x - class_mean)), (np.array([between]), np.array([(class_mean - m) ** 2]))]


class Estimator:
    """The estimates of one set of draws. ``points_only``: values without intervals (spec §12's passes)."""

    def __init__(self, draws: Draws, z: float, confidence: float, horizon: int, points_only: bool = False):
        self.d = draws
        self.z = z
        self.confidence = confidence
        self.horizon = horizon
        self.points_only = points_only
        self._frames: dict[int, _Frame] = {}

    def resolved(self, unsure_as: np.ndarray | float) -> Estimator:
        """Point estimates had the unsure verdicts been decided (:meth:`Draws.resolved`)."""
        return Estimator(self.d.resolved(unsure_as), self.z, self.confidence, self.horizon, points_only=True)

    def means(self, *wanted: MeanOf) -> list[Mean]:
        """The weighted mean over judged draws (spec §6) of each :class:`MeanOf`, in order.

        ``x`` is ``"share"``, the share of equivalent verdicts, or ``"precision"``, ΔPrecision's
        label times it. A draw's weight is its class's drawn/judged reweighting times its
        ``importance`` (1 unless given: ``"base"`` or ``"exp"``, the :class:`RowRatios` of the
        rates). In the spec's SE formula ``v_u`` is then the unit's mean weight per draw.

        The SEs' dot products run back to back after every mean's pass: numpy's dot of long
        vectors wakes a BLAS thread that then spins for a while, which would slow the passes
        between. Ask for every mean an estimate needs in one call.
        """
        passes = [self._pass(*w) for w in wanted]
        return [p.settled() if isinstance(p, _Unsettled) else p for p in passes]

    def _pass(self, stratum: int, classes: tuple[int, ...], x: str, importance: str | None) -> Mean | _Unsettled:
        """A mean of :meth:`means`, with its SE's dot products still to do when it has an SE."""
        d = self.d
        frames = [self._frame(stratum * 4 + c) for c in classes]
        horizon = d.class_horizon(stratum, classes, self.horizon)
        judged, drawn = sum(f.judged for f in frames), sum(f.drawn for f in frames)
        verdict_draws = sum(f.judged for c, f in zip(classes, frames) if c != SELF)
        mean_of = partial(Mean, judged_draws=judged, drawn_draws=drawn, horizon=horizon, verdict_draws=verdict_draws)
        # A class drawn but not judged leaves a mean over several classes unknown: leaving the
        # class out would bias it (ΔPrecision without its split pairs looks better).
        if judged == 0 or any(f.drawn and not f.judged for f in frames):
            return mean_of(value=math.nan, n_eff=0.0)
        parts = []
        for f in frames:
            if not f.judged:
                continue
            if importance is None:
                w, weights = f.unit_draws, f.plain
            else:
                w = f.unit_sums(d, d.ratios.of(importance, f.rows))
                weights = _Weights(f, f.v * w)
            # A unit's rows share its verdicts: x is the share times a per-row factor at most.
            if x == "share":
                wx = w * f.share
            else:
                wx = f.unit_sums(d, d.precision_label[f.rows])
                wx *= f.share
            wx *= f.v
            parts.append((weights, wx))
        total = sum(weights.total for weights, _ in parts)
        m = sum(float(unit_wx.sum()) for _, unit_wx in parts) / total
        if self.points_only:
            return mean_of(value=m, n_eff=math.nan)
        terms: list[tuple[np.ndarray, np.ndarray]] = []
        vk_total = 0.0
        for weights, unit_wx in parts:
            class_mean = float(unit_wx.sum()) / weights.total
            unit_x = np.divide(unit_wx, weights.unit_weight, out=unit_wx)  # unit_wx is not read again
            vk_total += weights.vk_total
            if len(parts) == 1 or (weights.frame.labelled is None and weights.frame.q == 1.0):
                terms.append((weights.vk, np.square(unit_x - m)))
            elif weights.frame.labelled is None:  # spec §14: what missing pairs add is centred within their class
                terms.extend(weights.split_terms(unit_x, m, class_mean))
            else:
                terms.extend(weights.prefix_terms(unit_x, m, class_mean))
        n_eff = total**2 / vk_total
        floor = self._floor(frames, classes, drawn) if x == "precision" else 0.0
        return _Unsettled(mean=mean_of(value=m, n_eff=n_eff, floor=floor), total=total, terms=terms)

    def _floor(self, frames: list[_Frame], classes: tuple[int, ...], drawn: int) -> float:
        """A floor under SE(m)² of ΔPrecision's mean: ``Σ_g (N_g/N)² · l̄²_g · p̃_g(1 − p̃_g) / n_eff,g``
        over the judged classes but self, with ``p̃ = (k + 1)/(n + 2)`` the class's smoothed share
        of equivalent draws, ``l̄²`` its mean squared label and ``n_eff`` its draws over the design
        effect of pairs drawn several times. It is the variance a class of constant label and
        share ``p̃`` would have: a run of identical verdicts (0 or 1 judged pairs, all agreeing)
        no longer gives a point (spec §14), and it rarely binds once a class has verdicts both ways."""
        d, floor = self.d, 0.0
        for c, f in zip(classes, frames):
            if c == SELF or not f.judged:
                continue
            n = f.judged
            p = (float(np.dot(f.unit_draws, f.share)) + 1.0) / (n + 2.0)
            squares = f.unit_sums(d, np.square(d.precision_label[f.rows]))
            n_eff = n * n / float(f.k.sum())
            floor += (f.drawn / drawn) ** 2 * float(squares.sum()) / n * p * (1.0 - p) / n_eff
        return floor

    def _frame(self, group: int) -> _Frame:
        """The judged units of one (stratum, class) (what :meth:`mean` needs whatever it
        averages), built once per estimator."""
        if group not in self._frames:
            self._frames[group] = _Frame.build(self.d, group)
        return self._frames[group]

    def indicator(self, multiplier: float, mean: Mean, complement: bool = False, offset: float = 0.0) -> Estimate:
        """``offset + multiplier × share`` with a Wilson interval on the effective size and a clipped
        sequence (``offset``: an exactly known part, such as the self pairs of an index)."""
        estimate = self._share_estimate(multiplier, mean, complement)
        if offset == 0.0:
            return estimate
        shifted = {name: getattr(estimate, name) + offset for name in _SHIFTED}
        return replace(estimate, **shifted)

    def _share_estimate(self, multiplier: float, mean: Mean, complement: bool) -> Estimate:
        if multiplier == 0.0:
            return _exact_zero(mean.judged_draws, mean.drawn_draws)
        if math.isnan(mean.value):
            return Estimate(
                value=math.nan,
                stderr=math.nan,
                ci_low=0.0,
                ci_high=multiplier,
                judged_draws=mean.judged_draws,
                drawn_draws=mean.drawn_draws,
                cs_low=0.0,
                cs_high=multiplier,
            )
        share = 1.0 - mean.value if complement else mean.value
        if self.points_only:
            return _point(multiplier * share, mean.judged_draws, mean.drawn_draws)
        low, high = wilson_interval(mean.value, mean.n_eff, self.z)
        cs_low, cs_high = self._share_sequence(mean)
        if complement:
            low, high, cs_low, cs_high = 1.0 - high, 1.0 - low, 1.0 - cs_high, 1.0 - cs_low
        value = multiplier * share
        return Estimate(
            value=value,
            stderr=multiplier * mean.stderr,
            ci_low=min(multiplier * low, value),
            ci_high=max(multiplier * high, value),
            judged_draws=mean.judged_draws,
            drawn_draws=mean.drawn_draws,
            cs_low=min(multiplier * cs_low, value),
            cs_high=max(multiplier * cs_high, value),
        )

    def _share_sequence(self, m: Mean) -> tuple[float, float]:
        """The share's sequence ``m ± ...`` (spec §9); none without a horizon."""
        if not m.horizon > 0:
            return math.nan, math.nan
        n = m.judged_draws
        return share_confidence_sequence(
            share=m.value, stderr=m.stderr, n_eff=m.n_eff, judged=n, horizon=m.horizon, confidence=self.confidence
        )

    def _sequence_half_width(self, stderr: float, judged: int, horizon: float) -> float:
        if not (math.isfinite(stderr) and horizon > 0):
            return math.nan
        return confidence_sequence_half_width(stderr=stderr, judged=judged, horizon=horizon, confidence=self.confidence)

    def normal(self, parts: list[tuple[float, Mean]]) -> Estimate:
        """``Σ multiplier × mean`` over independent parts, with a normal interval and sequence."""
        parts = [(mult, mean) for mult, mean in parts if mult != 0.0]
        # Judged by a rater: self pairs are known, not judged (spec §14), as the sequence counts.
        judged = sum(mean.verdict_draws for _, mean in parts)
        drawn = sum(mean.drawn_draws for _, mean in parts)
        if not parts:
            return _exact_zero(judged, drawn)
        if not sum(mean.verdict_draws for _, mean in parts):
            # Self pairs alone say nothing of the pairs that need a verdict, whose mass is in ``mult``.
            return _point(math.nan, judged, drawn)
        value = sum(mult * mean.value for mult, mean in parts)
        if self.points_only:
            return _point(value, judged, drawn)
        stderr = math.sqrt(sum((mult * mean.stderr) ** 2 for mult, mean in parts))
        # The sequence is watched from the first verdict: its SE is floored, and its t is the
        # draws judged by a rater (self pairs do not stand in; spec §14). The fixed interval is
        # §6's, for a given number of verdicts.
        half = math.sqrt(
            sum(
                (mult * self._sequence_half_width(mean.floored_stderr, mean.verdict_draws, mean.horizon)) ** 2
                for mult, mean in parts
            )
        )
        return Estimate(
            value=value,
            stderr=stderr,
            ci_low=value - self.z * stderr,
            ci_high=value + self.z * stderr,
            judged_draws=judged,
            drawn_draws=drawn,
            cs_low=value - half,
            cs_high=value + half,
        )


def _exact_zero(judged: int, drawn: int) -> Estimate:
    """An estimate known to be 0 (nothing to estimate): every bound 0."""
    return Estimate(
        value=0.0,
        stderr=0.0,
        ci_low=0.0,
        ci_high=0.0,
        judged_draws=judged,
        drawn_draws=drawn,
        cs_low=0.0,
        cs_high=0.0,
        unsure_low=0.0,
        unsure_high=0.0,
    )


def _point(value: float, judged: int, drawn: int) -> Estimate:
    """A value without SE, interval or sequence (all nan)."""
    return Estimate(
        value=value, stderr=math.nan, ci_low=math.nan, ci_high=math.nan, judged_draws=judged, drawn_draws=drawn
    )
