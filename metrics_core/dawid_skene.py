"""Raters who err: a Dawid–Skene model fitted by EM (abcde-spec §13).

Each unit (an unordered item pair) is truly *equivalent* (1) or not (0). Each rater ``r`` says
*equivalent* with probability ``sensitivity[r]`` on an equivalent unit and *not equivalent*
with probability ``specificity[r]`` on a non-equivalent one: a 2×2 confusion matrix per rater
(Dawid & Skene 1979, binary case). Units fall into groups (in the product: the pair classes of
the sample) that each have their own prior probability of *equivalent*: split pairs are mostly
not equivalent and merge pairs mostly equivalent, and one shared prior would pull every
posterior towards the mixture's mean and bias the class estimates that average them.

Conventions:

- *unsure* is no observation (spec §13 fits a 2×2 matrix, and §5 drops unsure verdicts): it
  is counted per rater for the report and left out of the likelihood. A unit with only unsure
  verdicts has no posterior (NaN), like an unjudged pair.
- Gold units have a known truth: their posterior is that truth, fixed; their verdicts inform
  the raters' matrices only.
- The EM starts from each unit's share of *equivalent* verdicts (the raw estimate), so the
  labels cannot swap, and the M-step adds ``smoothing`` pseudo-verdicts (half each way) to
  every rater's counts, which keeps a probability off 0 and 1 without moving perfect raters by
  more than ``smoothing / verdicts``.
- Every count may carry a weight (``unit_weight`` × ``rater_weight``), and the EM runs on a
  stack of weightings at once: the bootstrap of :mod:`metrics_core.rater_aware` fits all its
  replicates in one call.

Sensitivity and specificity are higher-is-better, both in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import as_1d, positive_int, same_length
from .agreement import label_codes, sorted_codes, verdict_codes
from .dawid_skene_em import VerdictData, em_fit
from .judgements import EQUIVALENT, UNSURE


@dataclass(frozen=True, eq=False)
class DawidSkeneFit:
    """A fitted Dawid–Skene model of binary verdicts.

    Attributes
    ----------
    raters : ndarray
        Rater labels, sorted where they can be; the order of every per-rater array.
    sensitivity, specificity : ndarray of float
        P(says equivalent | equivalent) and P(says not equivalent | not equivalent) per rater.
    sure_verdicts, unsure_verdicts : ndarray of int
        Each rater's equivalent/not-equivalent verdicts (the ones fitted) and unsure verdicts.
    prevalence : ndarray of float
        Prior probability of *equivalent* per unit group (NaN for a group without unknown units).
    posterior : ndarray of float
        P(equivalent | verdicts) per unit; the truth for gold units; NaN without sure verdicts.
    iterations : int
    converged : bool
    log_likelihood : float
        Of the sure verdicts of the non-gold units plus the gold units' verdicts given their truth.
    """

    raters: np.ndarray
    sensitivity: np.ndarray
    specificity: np.ndarray
    sure_verdicts: np.ndarray
    unsure_verdicts: np.ndarray
    prevalence: np.ndarray
    posterior: np.ndarray
    iterations: int
    converged: bool
    log_likelihood: float

    def confusion(self) -> np.ndarray:
        """Confusion matrices, shape (raters, 2, 2): ``[r, truth, said]`` with index 0 for
        *equivalent* and 1 for *not equivalent*; rows sum to 1."""
        s, c = self.sensitivity, self.specificity
        return np.stack([np.stack([s, 1.0 - s], axis=-1), np.stack([1.0 - c, c], axis=-1)], axis=1)

    def raters_dict(self) -> list[dict]:
        """One JSON-ready row per rater."""
        return [
            {
                "rater": rater.item() if hasattr(rater, "item") else rater,
                "sensitivity": float(self.sensitivity[k]),
                "specificity": float(self.specificity[k]),
                "verdicts": int(self.sure_verdicts[k]),
                "unsure": int(self.unsure_verdicts[k]),
            }
            for k, rater in enumerate(self.raters.tolist())
        ]


def fit_dawid_skene(
    *,
    unit: Any,
    rater: Any,
    verdict: Any,
    truth: Any = None,
    unit_group: Any = None,
    unit_weight: Any = None,
    smoothing: float = 1e-3,
    max_iter: int = 1000,
    tol: float = 1e-10,
) -> DawidSkeneFit:
    """Fit each rater's sensitivity and specificity and each unit's posterior by EM.

    Parameters
    ----------
    unit : array-like of int
        The unit (0 .. U-1) of each verdict.
    rater : array-like of hashable
        Who gave each verdict.
    verdict : array-like
        Names from :data:`~metrics_core.judgements.VERDICTS`, or their codes 0, 1, 2.
    truth : array-like of float, optional
        Per unit: 1.0 (gold *equivalent*), 0.0 (gold *not equivalent*) or NaN (unknown; default).
    unit_group : array-like of int, optional
        Per unit, its prior's group (0 .. G-1; default all 0).
    unit_weight : array-like of float, optional
        Per unit, the weight of its verdicts and of its share in its group's prior (default 1).
    smoothing : float
        Pseudo-verdicts added to each rater's counts, half each way (≥ 0).
    max_iter : int
    tol : float
        Stop when no probability moves by more than this in one iteration.

    Returns
    -------
    DawidSkeneFit

    Examples
    --------
    Three raters on four pairs; ``cy`` contradicts the other two on pair 3 and is found the
    less reliable, and pair 3 is believed equivalent.

    >>> fit = fit_dawid_skene(
    ...     unit=[0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...     rater=["ann", "bob", "cy"] * 4,
    ...     verdict=["equivalent"] * 3 + ["not_equivalent"] * 3 + ["equivalent"] * 3
    ...     + ["equivalent", "equivalent", "not_equivalent"],
    ... )
    >>> fit.raters.tolist(), [round(float(s), 3) for s in fit.sensitivity]
    (['ann', 'bob', 'cy'], [1.0, 1.0, 0.667])
    >>> round(float(fit.posterior[3]), 3)
    1.0
    """
    data = verdict_data(unit, rater, verdict, truth, unit_group, unit_weight)
    if smoothing < 0:
        raise ValueError(f"smoothing must be ≥ 0, got {smoothing!r}")
    result = em_fit(data, smoothing=smoothing, max_iter=positive_int("max_iter", max_iter), tol=tol)
    return fit_from_em(data, result)


def fit_from_em(data: VerdictData, result: Any) -> DawidSkeneFit:
    """The fit of the first (point) replicate of an :func:`em_fit` result on ``data``."""
    n_raters = len(data.rater_labels)
    return DawidSkeneFit(
        raters=data.rater_labels,
        sensitivity=result.sensitivity[0],
        specificity=result.specificity[0],
        sure_verdicts=np.bincount(data.rater[data.sure], minlength=n_raters),
        unsure_verdicts=np.bincount(data.rater[~data.sure], minlength=n_raters),
        prevalence=result.prevalence[0],
        posterior=result.posterior[0],
        iterations=result.iterations,
        converged=result.converged,
        log_likelihood=float(result.log_likelihood[0]),
    )


def verdict_data(unit, rater, verdict, truth, unit_group, unit_weight) -> VerdictData:
    unit = as_1d("unit", unit).astype(np.int64)
    codes = verdict_codes("verdict", verdict).astype(np.int64)
    rater_codes, rater_labels = label_codes("rater", rater)
    same_length(unit=unit, rater=rater_codes, verdict=codes)
    rater_codes, rater_labels = sorted_codes(rater_codes, rater_labels)
    if len(unit) and unit.min() < 0:
        raise ValueError("unit codes must be ≥ 0")
    n_units = int(unit.max(initial=-1)) + 1
    per_unit = {"truth": truth, "unit_group": unit_group, "unit_weight": unit_weight}
    for name, values in per_unit.items():
        if values is not None and len(as_1d(name, values)) < n_units:
            raise ValueError(f"{name} has {len(as_1d(name, values))} values; units go up to {n_units - 1}")
    # Units past the last judged one (nobody judged them) exist when a per-unit array says so.
    n_units = max([n_units] + [len(as_1d(name, values)) for name, values in per_unit.items() if values is not None])
    truth = np.full(n_units, np.nan) if truth is None else as_1d("truth", truth).astype(np.float64)
    known = ~np.isnan(truth)
    if not np.isin(truth[known], (0.0, 1.0)).all():
        raise ValueError("truth must be 1.0 (equivalent), 0.0 (not equivalent) or NaN (unknown)")
    group = np.zeros(n_units, dtype=np.int64) if unit_group is None else as_1d("unit_group", unit_group)
    weight = np.ones(n_units) if unit_weight is None else as_1d("unit_weight", unit_weight).astype(np.float64)
    if len(group) != n_units or len(weight) != n_units:
        raise ValueError("truth, unit_group and unit_weight need one value per unit")
    if len(group) and group.min() < 0:
        raise ValueError("unit_group codes must be ≥ 0")
    if not (np.isfinite(weight).all() and (weight >= 0).all()):
        raise ValueError("unit_weight must be finite and ≥ 0")
    sure = codes != UNSURE
    return VerdictData(
        unit,
        rater_codes,
        (codes == EQUIVALENT).astype(np.float64),
        sure,
        truth,
        group.astype(np.int64),
        weight,
        rater_labels,
    )
