"""How far each rater agrees with the others on the pairs they judged together.

The per-rater view of :mod:`metrics_core.agreement`: the same units (item pairs), verdicts
and conventions (the three verdicts are the categories, *unsure* included; every number is
higher-is-better; undefined values are NaN, never made up). Two numbers per rater:

- ``mean_kappa``: Cohen's kappa with each other rater over the units both judged (from
  :func:`~metrics_core.agreement.pairwise_cohens_kappa`), averaged with weights equal to the
  units they share, over the other raters with a defined kappa. Weighting by shared units
  keeps a rater who shares two pairs with one colleague and two hundred with another from
  being judged on the two.
- ``majority_share``: of this rater's verdicts on units where the *other* raters have a
  strict majority (more than half of their verdicts in one category; with one other rater,
  their verdict), the share that agrees with it. Units where the others tie are left out.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .agreement import category_counts, pairwise_cohens_kappa, rater_verdict_codes


class RaterAgreement(NamedTuple):
    """One rater's agreement with the others (NaN where undefined).

    Attributes
    ----------
    rater : hashable
        The rater's label.
    replicated_verdicts : int
        The rater's verdicts on units that at least one other rater judged too.
    mean_kappa : float
        Mean of Cohen's kappa with each other rater, weighted by the units they share, over
        the raters with a defined kappa; NaN when there is none.
    kappa_raters : int
        Other raters with a defined kappa against this one.
    majority_units : int
        The rater's verdicts on units where the other raters have a strict majority.
    majority_matches : int
        Of those, the verdicts that agree with the majority of the others.
    majority_share : float
        ``majority_matches / majority_units``; NaN when ``majority_units`` is 0.
    """

    rater: Any
    replicated_verdicts: int
    mean_kappa: float
    kappa_raters: int
    majority_units: int
    majority_matches: int
    majority_share: float


def rater_agreement(*, unit: Any, verdict: Any, rater: Any) -> list[RaterAgreement]:
    """Each rater's agreement with the other raters on the units they judged together.

    ``unit``, ``verdict`` and ``rater`` are the verdict table, one verdict per rater and unit, as
    :func:`~metrics_core.agreement.pairwise_cohens_kappa` takes it.

    Returns
    -------
    list of RaterAgreement
        One row per rater, sorted by rater (first-seen order when the labels cannot be
        sorted); see the module docstring for the definitions.

    Examples
    --------
    Three raters on two pairs. On pair 1, Ann and Bob say *equivalent* and Cy *not
    equivalent*: Cy's others (Ann and Bob) have a majority, which Cy does not share, while
    Ann's others (Bob and Cy) tie, so pair 1 does not count for Ann, nor for Bob. On pair 2
    all say *not equivalent*.

    >>> rows = rater_agreement(
    ...     unit=[1, 1, 1, 2, 2, 2],
    ...     verdict=["equivalent", "equivalent", "not_equivalent"] + ["not_equivalent"] * 3,
    ...     rater=["ann", "bob", "cy", "ann", "bob", "cy"],
    ... )
    >>> [(r.rater, r.majority_units, r.majority_matches, r.majority_share) for r in rows]
    [('ann', 1, 1, 1.0), ('bob', 1, 1, 1.0), ('cy', 2, 1, 0.5)]
    >>> [(r.rater, round(r.mean_kappa, 4), r.kappa_raters) for r in rows]
    [('ann', 0.5, 2), ('bob', 0.5, 2), ('cy', 0.0, 2)]
    """
    unit_codes, codes, rater_codes, rater_labels = rater_verdict_codes(unit, verdict, rater)
    codes = codes.astype(np.int64)
    n_raters = len(rater_labels)
    if n_raters == 0:
        return []

    counts = category_counts(unit_codes, codes)
    # The other raters' verdicts on the unit of each row: the unit's counts minus this verdict.
    others = counts[unit_codes].copy()
    others[np.arange(len(codes)), codes] -= 1
    n_others = others.sum(axis=1)
    top = others.argmax(axis=1)
    has_majority = (n_others > 0) & (2 * others.max(axis=1) > n_others)
    replicated = np.bincount(rater_codes, weights=n_others > 0, minlength=n_raters)
    majority_units = np.bincount(rater_codes, weights=has_majority, minlength=n_raters)
    majority_matches = np.bincount(rater_codes, weights=has_majority & (top == codes), minlength=n_raters)

    kappa_sum, kappa_weight, kappa_raters = _kappa_sums(unit_codes, codes, rater_codes, n_raters)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_kappa = np.where(kappa_weight > 0, kappa_sum / np.where(kappa_weight > 0, kappa_weight, 1), np.nan)
        share = np.where(majority_units > 0, majority_matches / np.where(majority_units > 0, majority_units, 1), np.nan)
    labels = rater_labels.tolist()
    return [
        RaterAgreement(
            labels[k],
            int(replicated[k]),
            float(mean_kappa[k]),
            int(kappa_raters[k]),
            int(majority_units[k]),
            int(majority_matches[k]),
            float(share[k]),
        )
        for k in range(n_raters)
    ]


def _kappa_sums(unit_codes, codes, rater_codes, n_raters) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rater: Σ units·kappa and Σ units over the other raters with a defined kappa, and their number."""
    kappa_sum, weight, defined = np.zeros(n_raters), np.zeros(n_raters), np.zeros(n_raters, dtype=np.int64)
    pairs = pairwise_cohens_kappa(unit=unit_codes, verdict=codes, rater=rater_codes)
    if not pairs:
        return kappa_sum, weight, defined
    a = np.array([p.rater_a for p in pairs], dtype=np.int64)
    b = np.array([p.rater_b for p in pairs], dtype=np.int64)
    units = np.array([p.units for p in pairs], dtype=np.float64)
    kappa = np.array([p.kappa for p in pairs], dtype=np.float64)
    ok = ~np.isnan(kappa)
    for side in (a, b):
        np.add.at(kappa_sum, side[ok], units[ok] * kappa[ok])
        np.add.at(weight, side[ok], units[ok])
        np.add.at(defined, side[ok], 1)
    return kappa_sum, weight, defined
