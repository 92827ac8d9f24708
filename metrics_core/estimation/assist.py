"""Model-assisted means (abcde-spec §15): a cheap score of every drawn pair, corrected by the verdicts.

Per (stratum, class) ``g`` of a mean, with ``h`` the pair's score (its raw score, or its
cross-fitted calibrated probability; for ΔPrecision times the pair's mean label):
``m_g = λ_g · Σ_{all draws} ω h / Σ_{all draws} ω + Σ_J w_u (y_u − λ_g h_u) / Σ_J w_u``, the
all-draws part over every drawn draw of the class (labelled or not, unsure pairs included) and
the correction over the judged units ``J`` with their weights ``w_u`` of §6. With ``λ_g = 0`` it
is the §14 mean; with every draw judged it is the §14 mean whatever ``λ`` (the two sums cancel).

The variance splits the error in two independent parts: the draws' own sampling (as if every
drawn draw were judged, ``ρ_g Σ_J a_u (y_u − m₀)²`` with ``ρ_g`` the class's labelled share and
``a_u = (w_u/D_u)² D_u``), in which the score's share ``λ²·var(h)`` is read off every drawn draw
rather than the judged ones; and the judged draws' error about all draws, ``Σ_J (w_u/D_u)²
(k_u − ρ_g D_u) e_u²`` with §14's ``k_u`` and the residuals ``e = r − r̄``, ``r = y − λh``. This
is the spec's formula with §14's ``k_u`` in place of ``D_u²``: within a prefix a pair's draws are
labelled one by one (``k_u = D_u``), and only a pair lost whole (unsure) carries ``D_u²``; with
it ``λ = 0`` reproduces §14 exactly. In the mean case (one draw per pair, ``λ`` not clipped) it
is ``ppi-python``'s variance with every drawn draw as the unlabelled set, times ``n/(n−1)``.

``λ_g`` is the weighted least-squares slope of ``y`` on ``h`` over ``J`` (weights ``w_u²``,
proportional to the spec's ``D_u²``), clipped to [0, 1]; the small-class rule of §15 picks
``h``. Model assistance needs draw order: without a labelled prefix (a sample judged in no
particular order) every class keeps ``λ = 0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..masses import SELF
from ..sampling import PairSample
from .calibration import cross_fit, pair_folds, score_feature
from .draws import Draws
from .frames import Frame, Mean, Unsettled, Weights

RAW_FROM = 20  # judged pairs from which a class uses its raw score (λ = 0 below)
CALIBRATED_FROM = 50  # ... and its cross-fitted calibrated score
UNSURE_WARNING = 0.1  # a class's share of unsure verdicts above which the page says so

RULES = ("none", "raw", "calibrated")


@dataclass(frozen=True)
class ClassTerms:
    """One class's judged units in a mean: weights, draws, values, scores, and the class's all-draws part."""

    frame: Frame
    weight: np.ndarray  # w_u of §6 (the class's reweighting included)
    y: np.ndarray
    h: np.ndarray
    lam: float
    all_mean: float  # Σ ω h / Σ ω over every drawn draw of the class
    all_spread: float  # Σ ω² (h − h̄)² over them


class Assist:
    """The scores of a sample and what the model-assisted means need of them, built once per estimate.

    ``d`` are the draws estimated from (a labelled prefix, or every draw), ``full`` every drawn draw
    (``d`` itself without a prefix), ``scores`` one per sample row. ``score_lambda`` fixes every
    class's ``λ`` (0: the human-only estimates through this code); ``None`` tunes it.
    """

    def __init__(self, d: Draws, full: Draws, sample: PairSample, scores: np.ndarray, score_lambda: float | None):
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != (len(sample),) or not np.isfinite(scores).all():
            raise ValueError(f"scores must be {len(sample)} finite numbers, one per sample row")
        self.full = full
        self.fixed = score_lambda
        self.draw_order = d.class_drawn is not None
        unit_group = np.repeat(np.arange(12), np.diff(d.unit_bounds))
        share = d.unit_share
        judged = np.flatnonzero(~np.isnan(share) & (unit_group % 4 != SELF))
        self.judged_pairs = np.bincount(unit_group[judged], minlength=12)[:12]
        unsure = (d.unit_verdicts[2] > 0) & np.isnan(share)  # labelled pairs with only unsure verdicts
        self.unsure_pairs = np.bincount(unit_group[unsure & (unit_group % 4 != SELF)], minlength=12)[:12]
        row_group = 4 * sample.stratum.astype(np.int64) + sample.pair_class
        self.rules = np.array([_rule(int(n)) if self.draw_order else "none" for n in self.judged_pairs])
        self.rules[SELF::4] = "none"
        # Nothing to assist in a class whose draws are all judged, or whose score never varies.
        judged_draws = np.bincount(unit_group[judged], weights=d.unit_draws[judged], minlength=12)[:12]
        drawn = d.class_drawn if d.class_drawn is not None else judged_draws
        low = np.full(12, np.inf)
        high = np.full(12, -np.inf)
        np.minimum.at(low, row_group, scores)
        np.maximum.at(high, row_group, scores)
        self.rules[(judged_draws >= drawn) | ~(high > low)] = "none"
        self.h_row = np.where(self.rules[row_group] == "raw", scores, 0.0)
        if (self.rules == "calibrated").any():
            self.h_row = np.where(
                self.rules[row_group] == "calibrated",
                _calibrated(d, sample, score_feature(scores), row_group, judged, unit_group),
                self.h_row,
            )
        self.lambdas: dict[tuple[int, str, str | None], float] = {}
        self.saved: dict[tuple[int, str, str | None], float] = {}

    def unit_scores(self, d: Draws, frame: Frame, x: str) -> np.ndarray:
        """``h`` of the frame's present units: the score, times the unit's mean label for ΔPrecision."""
        units = np.arange(frame.units.start, frame.units.stop)[frame.present]
        h = self.h_row[d.sample_row[d.unit_starts[units]]]
        if x == "precision":
            h = h * frame.unit_sums(d, d.precision_label[frame.rows]) / frame.unit_draws
        return h

    def all_draws(self, group: int, x: str, importance: str | None) -> tuple[float, float]:
        """Σ ω h / Σ ω over every drawn draw of ``group`` (ω: the importance or 1), and the spread of
        ``h`` over the group's units as the judged units' is read: ``Σ_u a_u (h_u − h̄)²`` with
        ``a_u = W_u²/D_u`` (``W_u`` the unit's ω over its draws, ``h_u`` its ω-weighted mean)."""
        full = self.full
        rows = slice(int(full.row_bounds[group]), int(full.row_bounds[group + 1]))
        units = slice(int(full.unit_bounds[group]), int(full.unit_bounds[group + 1]))
        if rows.start == rows.stop:
            return 0.0, 0.0
        h = self.h_row[full.sample_row[rows]]
        if x == "precision":
            h = h * full.precision_label[rows]
        draws = full.unit_draws[units]
        if importance is None:
            weight = draws
        else:
            omega = full.ratios.of(importance, rows)
            weight = full.unit_sums(omega, rows, units).copy()
            h = h * omega
        unit_h = full.unit_sums(h, rows, units) / weight
        total = float(weight.sum())
        a = np.square(weight) / draws
        centre = float(np.dot(a, unit_h)) / float(a.sum())
        return float(np.dot(weight, unit_h)) / total, float(np.dot(a, np.square(unit_h - centre)))

    def mean(
        self,
        d: Draws,
        stratum: int,
        parts: list[tuple[int, Weights, np.ndarray]],
        human: Mean | Unsettled,
        x: str,
        importance: str | None,
        points_only: bool,
    ) -> Mean | Unsettled:
        """The model-assisted version of the §14 mean ``human`` whose judged parts are ``parts``
        (each class's group ``4·stratum + class``, weights and ``w·x``)."""
        terms = []
        for group, weights, wx in parts:
            frame = weights.frame
            y = np.divide(wx, weights.unit_weight, out=wx)
            h = self.unit_scores(d, frame, x)
            lam_key = (group, x, importance)
            if lam_key not in self.lambdas:
                self.lambdas[lam_key] = self._lambda(group, weights.unit_weight, y, h)
            lam = self.lambdas[lam_key]
            all_mean, all_spread = self.all_draws(group, x, importance) if lam else (0.0, 0.0)
            terms.append(ClassTerms(frame, weights.unit_weight, y, h, lam, all_mean, all_spread))
        if not any(t.lam for t in terms):
            return human
        value = sum(_class_total(t) for t in terms) / sum(float(t.weight.sum()) for t in terms)
        mean = human.mean if isinstance(human, Unsettled) else human
        if points_only:
            return Mean(
                value=value,
                n_eff=math.nan,
                judged_draws=mean.judged_draws,
                drawn_draws=mean.drawn_draws,
                horizon=mean.horizon,
                verdict_draws=mean.verdict_draws,
            )
        settled = human.settled() if isinstance(human, Unsettled) else human
        stderr = _stderr(terms, settled)
        # SE₀ = 0 (every verdict of the classes alike, a fixed λ): no ratio to read the saving from
        saved = (settled.stderr / stderr) ** 2 if stderr > 0 and settled.stderr > 0 else 1.0
        if len(parts) == 1:
            self.saved[(parts[0][0], x, importance)] = saved
        return Mean(
            value=value,
            n_eff=min(settled.n_eff * saved, float(settled.drawn_draws)),
            judged_draws=settled.judged_draws,
            drawn_draws=settled.drawn_draws,
            horizon=settled.horizon,
            stderr=stderr,
            verdict_draws=settled.verdict_draws,
            floor=settled.floor / max(saved, 1.0),
        )

    def _lambda(self, group: int, weight: np.ndarray, y: np.ndarray, h: np.ndarray) -> float:
        if self.rules[group] == "none" or len(y) < 2:
            return 0.0
        if self.fixed is not None:
            return self.fixed
        return tuned_lambda(np.square(weight), y, h)


def tuned_lambda(weight: np.ndarray, y: np.ndarray, h: np.ndarray) -> float:
    """The weighted least-squares slope of ``y`` on ``h``, clipped to [0, 1] (0 when ``h`` is constant)."""
    total = float(weight.sum())
    hc = h - float(np.dot(weight, h)) / total
    spread = float(np.dot(weight, hc * hc))
    if not spread > 0:
        return 0.0
    slope = float(np.dot(weight, hc * (y - float(np.dot(weight, y)) / total))) / spread
    return min(max(slope, 0.0), 1.0)


def _rule(judged_pairs: int) -> str:
    if judged_pairs >= CALIBRATED_FROM:
        return "calibrated"
    return "raw" if judged_pairs >= RAW_FROM else "none"


def _class_total(t: ClassTerms) -> float:
    """``Σ_J w_u · m_g``: the class's weight times its model-assisted mean."""
    total = float(t.weight.sum())
    judged_part = float(np.dot(t.weight, t.y)) - t.lam * float(np.dot(t.weight, t.h))
    return total * t.lam * t.all_mean + judged_part


def _stderr(terms: list[ClassTerms], human: Mean) -> float:
    """The model-assisted SE of the mean (module docstring), with §14's ``n/(n−1)``."""
    judged = human.judged_draws
    if judged <= 1:
        return math.nan
    m0 = human.value
    spread = 0.0
    for t in terms:
        f = t.frame
        rho = 1.0 if f.labelled is None else f.labelled
        per_draw = np.square(t.weight / f.unit_draws)
        a = per_draw * f.unit_draws
        own = rho * float(np.dot(a, np.square(t.y - m0)))
        r = t.y - t.lam * t.h
        if t.lam:
            centre = float(np.dot(a, t.h)) / float(a.sum())
            own += t.lam**2 * (t.all_spread - rho * float(np.dot(a, np.square(t.h - centre))))
        e = r - float(np.dot(t.weight, r)) / float(t.weight.sum())
        spread += max(own, 0.0) + float(np.dot(per_draw * (f.k - rho * f.unit_draws), np.square(e)))
    total = sum(float(t.weight.sum()) for t in terms)
    return math.sqrt(judged / (judged - 1) * spread) / total


def _calibrated(
    d: Draws,
    sample: PairSample,
    feature: np.ndarray,
    row_group: np.ndarray,
    judged: np.ndarray,
    unit_group: np.ndarray,
) -> np.ndarray:
    """Each sample row's cross-fitted calibrated score: a judged pair's out-of-fold prediction, any
    other pair the mean of the fold models (abcde-spec §15)."""
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    rows = d.sample_row[d.unit_starts[judged]]
    fit = cross_fit(feature[rows], unit_group[judged], d.unit_share[judged], pair_folds(low[rows], high[rows]), 12)
    calibrated = fit.predict(feature, row_group)
    # A pair is one class: its two item positions name it. Both its rows take its out-of-fold value.
    n = np.int64(max(int(high.max(initial=0)) + 1, 1))
    pair_key = low.astype(np.int64) * n + high
    judged_key = pair_key[rows]
    order = np.argsort(judged_key)
    at = np.searchsorted(judged_key[order], pair_key)
    at = np.minimum(at, len(order) - 1)
    hit = judged_key[order][at] == pair_key
    calibrated[hit] = fit.out_of_fold[order][at[hit]]
    return calibrated
