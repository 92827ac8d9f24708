"""Weighted means over judged draws (spec §6) and the estimates made of them."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..masses import SELF
from ..proportions import wilson_interval
from ..results import Estimate
from ..sequential import confidence_sequence_half_width, share_confidence_sequence
from .draws import Draws
from .frames import Frame, Mean, Unsettled, Weights

if TYPE_CHECKING:
    from .assist import Assist

_SHIFTED = ("value", "ci_low", "ci_high", "cs_low", "cs_high", "unsure_low", "unsure_high")


class MeanOf(NamedTuple):
    """What :meth:`Estimator.means` averages: ``x`` over the judged draws of ``classes`` in
    ``stratum``, each draw weighted by its class's reweighting times its ``importance``."""

    stratum: int
    classes: tuple[int, ...]
    x: str  # "share" or "precision"
    importance: str | None = None  # "base" or "exp"; None: 1


class Estimator:
    """The estimates of one set of draws. ``points_only``: values without intervals (spec §12's passes)."""

    def __init__(
        self,
        draws: Draws,
        z: float,
        confidence: float,
        horizon: int,
        points_only: bool = False,
        assist: Assist | None = None,
    ):
        self.d = draws
        self.z = z
        self.confidence = confidence
        self.horizon = horizon
        self.points_only = points_only
        self.assist = assist  # the scores of model-assisted means (spec §15); None: §14's
        self._frames: dict[int, Frame] = {}

    def resolved(self, unsure_as: np.ndarray | float) -> Estimator:
        """Point estimates had the unsure verdicts been decided (:meth:`Draws.resolved`), with the
        same scores and ``λ``s."""
        resolved = self.d.resolved(unsure_as)
        return Estimator(resolved, self.z, self.confidence, self.horizon, points_only=True, assist=self.assist)

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
        return [p.settled() if isinstance(p, Unsettled) else p for p in passes]

    def _pass(self, stratum: int, classes: tuple[int, ...], x: str, importance: str | None) -> Mean | Unsettled:
        """A mean of :meth:`means`, with its SE's dot products still to do when it has an SE."""
        human, parts = self._human_pass(stratum, classes, x, importance)
        if self.assist is None or not parts:
            return human
        return self.assist.mean(self.d, stratum, parts, human, x, importance, self.points_only)

    def _human_pass(
        self, stratum: int, classes: tuple[int, ...], x: str, importance: str | None
    ) -> tuple[Mean | Unsettled, list[tuple[int, Weights, np.ndarray]]]:
        """The §14 mean, and its judged parts (group, weights, ``w·x``) when model-assisted means need them."""
        d = self.d
        frames = [self._frame(stratum * 4 + c) for c in classes]
        horizon = d.class_horizon(stratum, classes, self.horizon)
        judged, drawn = sum(f.judged for f in frames), sum(f.drawn for f in frames)
        verdict_draws = sum(f.judged for c, f in zip(classes, frames) if c != SELF)
        mean_of = partial(Mean, judged_draws=judged, drawn_draws=drawn, horizon=horizon, verdict_draws=verdict_draws)
        # A class drawn but not judged leaves a mean over several classes unknown: leaving the
        # class out would bias it (ΔPrecision without its split pairs looks better).
        if judged == 0 or any(f.drawn and not f.judged for f in frames):
            return mean_of(value=math.nan, n_eff=0.0), []
        parts = []
        for f in frames:
            if not f.judged:
                continue
            if importance is None:
                w, weights = f.unit_draws, f.plain
            else:
                w = f.unit_sums(d, d.ratios.of(importance, f.rows))
                weights = Weights(f, f.v * w)
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
        groups = [stratum * 4 + c for c, f in zip(classes, frames) if f.judged]
        kept = [] if self.assist is None else [(g, w, wx.copy()) for g, (w, wx) in zip(groups, parts)]
        if self.points_only:
            return mean_of(value=m, n_eff=math.nan), kept
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
        return Unsettled(mean=mean_of(value=m, n_eff=n_eff, floor=floor), total=total, terms=terms), kept

    def _floor(self, frames: list[Frame], classes: tuple[int, ...], drawn: int) -> float:
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

    def _frame(self, group: int) -> Frame:
        """The judged units of one (stratum, class) (what :meth:`mean` needs whatever it
        averages), built once per estimator."""
        if group not in self._frames:
            self._frames[group] = Frame.build(self.d, group)
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
