"""The EM iterations of the Dawid-Skene model (SQUAREM-accelerated), for a stack of weightings at once."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True, eq=False)
class VerdictData:
    """Validated verdicts as codes: per verdict row its unit, rater, ``said`` (1 equivalent) and
    whether it is sure; per unit its truth (NaN unknown), group and weight."""

    unit: np.ndarray
    rater: np.ndarray
    said: np.ndarray
    sure: np.ndarray
    truth: np.ndarray
    group: np.ndarray
    weight: np.ndarray
    rater_labels: np.ndarray

    @property
    def shape(self) -> tuple[int, int, int]:
        """Units, raters and groups: codes of each run from 0 (a group may have no unit)."""
        return len(self.truth), len(self.rater_labels), int(self.group.max(initial=-1)) + 1


_EPS = 1e-12


_MAX_STEP = 100.0  # SQUAREM step length cap


@dataclass(frozen=True)
class EmResult:
    """EM estimates for a stack of ``B`` weightings: arrays with a leading axis of length B."""

    sensitivity: np.ndarray  # (B, raters)
    specificity: np.ndarray
    prevalence: np.ndarray  # (B, groups)
    posterior: np.ndarray  # (B, units); NaN where a unit has no weighted sure verdict
    iterations: int
    converged: bool
    log_likelihood: np.ndarray  # (B,)


def em_fit(
    data: VerdictData,
    *,
    unit_weight: np.ndarray | None = None,
    rater_weight: np.ndarray | None = None,
    start: np.ndarray | None = None,
    smoothing: float = 1e-3,
    max_iter: int = 1000,
    tol: float = 1e-10,
) -> EmResult:
    """The EM of :func:`fit_dawid_skene` on ``B`` weightings at once.

    ``unit_weight`` (B, units) and ``rater_weight`` (B, raters) multiply ``data.weight``; a
    verdict weighs its unit's weight times its rater's. Without them, B is 1. ``start``
    (units,) is the posterior to start from instead of the raw shares (a bootstrap starts
    from the fit of the data). Every sum over verdicts is a product with the (units, raters)
    verdict counts, so an iteration costs O(B · units · raters) in a few matrix products.
    """
    with_verdicts = np.zeros(len(data.truth), dtype=bool)
    with_verdicts[data.unit[data.sure]] = True
    if with_verdicts.all():
        return _em(data, unit_weight, rater_weight, start, smoothing, max_iter, tol)
    # Units without a sure verdict (self pairs, gold pairs nobody saw, pairs only called unsure)
    # carry no likelihood: fit without them and give them their truth, or NaN.
    kept = np.flatnonzero(with_verdicts)
    new_code = np.cumsum(with_verdicts) - 1
    rows = with_verdicts[data.unit]
    sub = VerdictData(
        new_code[data.unit[rows]],
        data.rater[rows],
        data.said[rows],
        data.sure[rows],
        data.truth[kept],
        data.group[kept],
        data.weight[kept],
        data.rater_labels,
    )
    pick = lambda w: None if w is None else np.atleast_2d(w)[:, kept]  # noqa: E731
    fit = _em(
        sub,
        pick(unit_weight),
        rater_weight,
        None if start is None else np.asarray(start)[kept],
        smoothing,
        max_iter,
        tol,
    )
    n_units, _, n_groups = data.shape
    posterior = np.broadcast_to(data.truth, (fit.posterior.shape[0], n_units)).copy()
    posterior[:, kept] = fit.posterior
    prevalence = np.full((fit.posterior.shape[0], n_groups), np.nan)
    prevalence[:, : fit.prevalence.shape[1]] = fit.prevalence
    return replace(fit, posterior=posterior, prevalence=prevalence)


def _em(data, unit_weight, rater_weight, start, smoothing, max_iter, tol) -> EmResult:
    n_units, n_raters, n_groups = data.shape
    unit_w = data.weight[None, :] if unit_weight is None else np.atleast_2d(unit_weight) * data.weight
    n_boot = unit_w.shape[0]
    rater_w = np.ones((n_boot, n_raters)) if rater_weight is None else np.atleast_2d(rater_weight)
    said_eq, said_not = (_unit_rater_counts(data, said) for said in (1.0, 0.0))
    # Weighted sure verdicts of each unit, and the raw share of equivalent among them.
    eq_w = unit_w * (rater_w @ said_eq.T)
    not_w = unit_w * (rater_w @ said_not.T)
    judged = eq_w + not_w > 0
    known = ~np.isnan(data.truth)
    free = judged & ~known[None, :]
    if start is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            post = np.where(judged, eq_w / (eq_w + not_w), np.nan)
    else:
        post = np.where(judged, np.asarray(start, dtype=np.float64)[None, :], np.nan)
    post[:, known] = data.truth[known]
    groups = np.zeros((n_units, max(n_groups, 1)))
    groups[np.arange(n_units), data.group] = 1.0
    free_w = np.where(free, unit_w, 0.0)
    group_w = free_w @ groups
    half = smoothing / 2.0

    said_both = np.concatenate([said_eq, said_not], axis=1)  # (units, 2·raters)

    def m_step(post: np.ndarray) -> np.ndarray:
        """Sensitivities, specificities and group priors, side by side: (B, 2·raters + groups)."""
        p = np.where(np.isnan(post), 0.0, post)
        sums = np.concatenate([p * unit_w, (1.0 - p) * unit_w]) @ said_both
        t_eq, t_not = sums[:n_boot, :n_raters], sums[:n_boot, n_raters:]
        f_eq, f_not = sums[n_boot:, :n_raters], sums[n_boot:, n_raters:]
        sensitivity = (rater_w * t_eq + half) / (rater_w * (t_eq + t_not) + smoothing + _EPS)
        specificity = (rater_w * f_not + half) / (rater_w * (f_eq + f_not) + smoothing + _EPS)
        with np.errstate(invalid="ignore", divide="ignore"):
            prevalence = np.where(group_w > 0, (free_w * p) @ groups / group_w, 0.5)
        return np.clip(np.concatenate([sensitivity, specificity, prevalence], axis=1), _EPS, 1.0 - _EPS)

    said = np.ascontiguousarray(np.concatenate([said_eq, said_not], axis=1).T)  # (2·raters, units)

    def e_step(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Posteriors, and each unit's log-likelihood if equivalent and if not (prior included)."""
        sensitivity, specificity = theta[:, :n_raters], theta[:, n_raters : 2 * n_raters]
        log_prior = np.log(theta[:, 2 * n_raters :])[:, data.group]
        log_not_prior = np.log1p(-theta[:, 2 * n_raters :])[:, data.group]
        # A unit drawn twice by the bootstrap is two units with these verdicts, each with this
        # posterior: its weight counts in the M-step, not here. A rater drawn twice is two raters.
        coefficients = np.concatenate(
            [
                np.concatenate([np.log(sensitivity), np.log1p(-sensitivity)], axis=1),
                np.concatenate([np.log1p(-specificity), np.log(specificity)], axis=1),
            ]
        ) * np.tile(rater_w, (2, 2))
        ll = coefficients @ said
        log_eq, log_not = log_prior + ll[:n_boot], log_not_prior + ll[n_boot:]
        new = np.where(free, 1.0 / (1.0 + np.exp(np.clip(log_not - log_eq, -700.0, 700.0))), post0)
        return new, log_eq, log_not

    post0 = post
    theta = m_step(post)
    converged = False
    # SQUAREM (Varadhan & Roland 2008): two EM steps, an extrapolated one along them, and an EM
    # step from there; plain EM needs hundreds of iterations where posteriors are uncertain.
    iteration = 0
    while iteration < max_iter:
        iteration += 1
        theta1 = m_step(e_step(theta)[0])
        theta2 = m_step(e_step(theta1)[0])
        r, v = theta1 - theta, theta2 - 2.0 * theta1 + theta
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = -np.sqrt(np.sum(r**2, axis=1, keepdims=True) / np.sum(v**2, axis=1, keepdims=True))
        alpha = np.clip(np.nan_to_num(alpha, nan=-1.0), -_MAX_STEP, -1.0)
        jump = np.clip(theta - 2.0 * alpha * r + alpha**2 * v, _EPS, 1.0 - _EPS)
        new = m_step(e_step(jump)[0])
        change = float(np.max(np.abs(new - theta), initial=0.0))
        theta = new
        if change <= tol:
            converged = True
            break
    post, log_eq, log_not = e_step(theta)
    ll_eq, ll_not = (
        log_eq - np.log(theta[:, 2 * n_raters :][:, data.group]),
        log_not - np.log1p(-theta[:, 2 * n_raters :][:, data.group]),
    )
    gold_ll = np.where(judged & known[None, :], np.where(data.truth[None, :] == 1.0, ll_eq, ll_not), 0.0)
    log_lik = np.sum(unit_w * (np.where(free, np.logaddexp(log_eq, log_not), 0.0) + gold_ll), axis=1)
    prevalence = np.where(group_w > 0, theta[:, 2 * n_raters :], np.nan)
    return EmResult(
        theta[:, :n_raters], theta[:, n_raters : 2 * n_raters], prevalence, post, iteration, converged, log_lik
    )


def _unit_rater_counts(data: VerdictData, said: float) -> np.ndarray:
    """(units, raters): how many sure verdicts each rater gave each unit that said ``said``."""
    rows = data.sure & (data.said == said)
    n_units, n_raters, _ = data.shape
    counts = np.bincount(data.unit[rows] * n_raters + data.rater[rows], minlength=n_units * n_raters)
    return counts.reshape(n_units, n_raters).astype(np.float64)
