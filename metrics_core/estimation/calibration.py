"""The cross-fitted calibration of a pair score into a probability of *equivalent* (abcde-spec §15).

A penalised logistic fit of each judged pair's share of *equivalent* verdicts on the score's
feature: an intercept per class, a common slope and a slope deviation per class, every
coefficient with a ridge of 1 (a class whose verdicts all agree then has a finite intercept).
The pairs are split into ``K`` folds **by pair** (a pair's draws share its verdict: folds by draw
would let a pair predict itself); a judged pair gets the prediction of the model fitted without
its fold, an unjudged pair the mean of the ``K`` models' predictions. Predicting a pair from a fit
that saw its own verdict would make the intervals too narrow (spec §15: 71–90% coverage).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FOLDS = 5
RIDGE = 1.0
_NEWTON_STEPS = 50


def score_feature(scores: np.ndarray) -> np.ndarray:
    """The calibration's feature of raw scores: ``logit(s)`` when every score is a probability
    (in [0, 1], clipped away from 0 and 1), otherwise the scores standardised (any real scale)."""
    s = np.asarray(scores, dtype=np.float64)
    if len(s) and s.min() >= 0.0 and s.max() <= 1.0:
        p = np.clip(s, 1e-6, 1.0 - 1e-6)
        return np.log(p) - np.log1p(-p)
    sd = float(s.std()) if len(s) else 0.0
    return (s - float(s.mean())) / sd if sd > 0 else np.zeros_like(s)


def pair_folds(low: np.ndarray, high: np.ndarray, folds: int = FOLDS) -> np.ndarray:
    """Each pair's fold, fixed by the pair alone (a hash of its two item positions): the same pair
    is in the same fold at every look and whatever else was judged."""
    key = low.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ high.astype(np.uint64)
    # splitmix64's finaliser: every bit of the key reaches the low bits the fold is taken from
    key ^= key >> np.uint64(30)
    key *= np.uint64(0xBF58476D1CE4E5B9)
    key ^= key >> np.uint64(27)
    key *= np.uint64(0x94D049BB133111EB)
    key ^= key >> np.uint64(31)
    return (key % np.uint64(folds)).astype(np.intp)


@dataclass(frozen=True)
class Calibration:
    """What :func:`cross_fit` gives: the judged pairs' out-of-fold predictions, and the models."""

    out_of_fold: np.ndarray  # (judged,)
    coefficients: np.ndarray  # (K, 1 + 2·classes): the fold models

    def predict(self, feature: np.ndarray, group: np.ndarray) -> np.ndarray:
        """The mean of the ``K`` models' probabilities for pairs none of them saw."""
        classes = (self.coefficients.shape[1] - 1) // 2
        total = np.zeros(len(feature))
        for beta in self.coefficients:
            total += _probability(beta, feature, group, classes)
        return total / len(self.coefficients)


def cross_fit(feature: np.ndarray, group: np.ndarray, share: np.ndarray, fold: np.ndarray, classes: int) -> Calibration:
    """Fit the calibration on the judged pairs (their ``feature``, class code ``group`` in
    ``range(classes)``, ``share`` of equivalent verdicts and ``fold``), one model per fold left out."""
    models = np.zeros((FOLDS, 1 + 2 * classes))
    out_of_fold = np.empty(len(share))
    for k in range(FOLDS):
        held = fold == k
        models[k] = _fit(feature[~held], group[~held], share[~held], classes)
        out_of_fold[held] = _probability(models[k], feature[held], group[held], classes)
    return Calibration(out_of_fold, models)


def _probability(beta: np.ndarray, feature: np.ndarray, group: np.ndarray, classes: int) -> np.ndarray:
    """The model's probability: coefficients ``[common slope, intercept per class, slope deviation per class]``."""
    return _sigmoid(beta[1 + group] + (beta[0] + beta[1 + classes + group]) * feature)


def _fit(feature: np.ndarray, group: np.ndarray, share: np.ndarray, classes: int) -> np.ndarray:
    """Ridge-penalised logistic regression of a share in [0, 1] by Newton's method. The design (the
    common slope, a class's intercept and its slope deviation) is sparse: its normal matrix is read
    off sums by class, in one pass over the pairs per step."""
    size = 1 + 2 * classes
    intercept, deviation = 1 + np.arange(classes), 1 + classes + np.arange(classes)
    beta = np.zeros(size)

    def by_class(values: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=values, minlength=classes)[:classes]

    for _ in range(_NEWTON_STEPS):
        p = _probability(beta, feature, group, classes)
        residual = share - p
        weight = p * (1.0 - p)
        weighted_feature = weight * feature
        w, wf, wff = by_class(weight), by_class(weighted_feature), by_class(weighted_feature * feature)
        residual_feature = by_class(residual * feature)
        gradient = np.concatenate(([residual_feature.sum()], by_class(residual), residual_feature)) - RIDGE * beta
        hessian = RIDGE * np.eye(size)
        hessian[0, 0] += wff.sum()
        hessian[0, intercept] = hessian[intercept, 0] = wf
        hessian[0, deviation] = hessian[deviation, 0] = wff
        hessian[intercept, intercept] += w
        hessian[intercept, deviation] = hessian[deviation, intercept] = wf
        hessian[deviation, deviation] += wff
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return beta


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # exact in both tails, no overflow warning
