"""Agreement between raters who judged the same item pairs (replication).

Raters give each pair one verdict of :data:`~metrics_core.judgements.VERDICTS`; a pair
judged by two or more raters is *replicated*, and only replicated pairs say anything
about agreement. A *unit* here is one such pair, identified by any hashable key.

Conventions:

- The categories are always the three verdicts, ``unsure`` being a category of its own
  (two raters who both answer *unsure* agree). Chance agreement therefore counts three
  categories even when one is never used; this matters for Gwet's AC1, whose chance
  term divides by ``q - 1 = 2``.
- Every coefficient is higher-is-better: 1 is perfect agreement, 0 the agreement chance
  alone would give, negative values worse than chance.
- Undefined values are NaN here and ``None`` in ``as_dict``: no replicated pair, or a
  chance agreement of 1 (every verdict in one category, where kappa and alpha are 0/0;
  AC1 is then 1). No number is made up for them.
- Everything is a group-by over units (``np.bincount``), with no Python loop over units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._validation import as_1d, same_length
from .judgements import UNSURE, VERDICTS, _verdict_codes
from .population import factorize_keys, factorize_labels
from .results import json_number

_Q = len(VERDICTS)


@dataclass(frozen=True)
class AgreementSummary:
    """How far raters agree on the replicated pairs (units with at least 2 verdicts).

    Attributes
    ----------
    replicated_pairs : int
        Units with at least two verdicts; the other units are ignored.
    verdicts : int
        Verdicts on the replicated pairs.
    unanimous_share : float
        Share of replicated pairs whose verdicts are all the same.
    observed_agreement : float
        Mean over replicated pairs of the share of agreeing pairs of verdicts
        (Fleiss' P-bar, each unit weighted equally whatever its number of raters).
    fleiss_kappa : float
        Fleiss' kappa generalised to a varying number of raters per unit.
    krippendorff_alpha : float
        Krippendorff's alpha for nominal data.
    gwet_ac1 : float
        Gwet's AC1 for several raters, varying per unit.
    unsure_share : float
        Share of the verdicts on replicated pairs that are *unsure*.
    """

    replicated_pairs: int
    verdicts: int
    unanimous_share: float
    observed_agreement: float
    fleiss_kappa: float
    krippendorff_alpha: float
    gwet_ac1: float
    unsure_share: float

    def as_dict(self) -> dict:
        return {
            "replicated_pairs": int(self.replicated_pairs),
            "verdicts": int(self.verdicts),
            "unanimous_share": json_number(self.unanimous_share),
            "observed_agreement": json_number(self.observed_agreement),
            "fleiss_kappa": json_number(self.fleiss_kappa),
            "krippendorff_alpha": json_number(self.krippendorff_alpha),
            "gwet_ac1": json_number(self.gwet_ac1),
            "unsure_share": json_number(self.unsure_share),
        }


class RaterPairKappa(NamedTuple):
    """Cohen's kappa of two raters over the units they both judged (NaN if undefined)."""

    rater_a: Any
    rater_b: Any
    units: int
    kappa: float


def agreement_summary(*, unit: Any, verdict: Any, rater: Any = None) -> AgreementSummary:
    """Agreement statistics over the units that received at least two verdicts.

    Parameters
    ----------
    unit : array-like of hashable
        The unit (item pair) each verdict is about, e.g. an integer pair id. Units
        with a single verdict are ignored.
    verdict : array-like
        Names from :data:`VERDICTS`, or their codes 0, 1, 2.
    rater : array-like of hashable, optional
        Who gave each verdict. When given, a rater with two verdicts on one unit is
        an error: agreement is between different raters.

    Returns
    -------
    AgreementSummary
        All coefficients are computed on the replicated units only, with the three
        verdicts as categories. ``fleiss_kappa`` and ``gwet_ac1`` use the chance
        model of Gwet (2014) for a varying number of raters per unit: with ``r_u``
        verdicts on unit ``u`` of which ``r_uk`` in category ``k``,
        ``p_a = mean_u Σ_k r_uk (r_uk - 1) / (r_u (r_u - 1))`` and
        ``π_k = mean_u r_uk / r_u``; Fleiss' kappa takes ``p_e = Σ_k π_k²`` and AC1
        ``p_e = Σ_k π_k (1 - π_k) / (q - 1)``, each coefficient being
        ``(p_a - p_e) / (1 - p_e)``. With the same number of raters on every unit this
        is exactly Fleiss (1971). ``krippendorff_alpha`` is Krippendorff's nominal
        alpha from the coincidence matrix, which handles varying raters natively.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76(5), 378-382.
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced
    Analytics (Fleiss' generalised kappa and AC1 with missing ratings; the same
    formulas as Gwet's R package irrCAC, ``fleiss.kappa.raw`` and ``gwet.ac1.raw``,
    which also count single-rated units in ``π_k``, where we count only replicated ones).
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the
    presence of high agreement. Br. J. Math. Stat. Psychol. 61, 29-48.
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg
    School for Communication, Departmental Papers 43.

    Examples
    --------
    Pair 1 gets two *equivalent* verdicts, pair 2 one *equivalent* and two *not
    equivalent*; pair 3 has a single verdict and is ignored.

    >>> s = agreement_summary(
    ...     unit=[1, 1, 2, 2, 2, 3],
    ...     verdict=["equivalent", "equivalent", "equivalent", "not_equivalent", "not_equivalent", "unsure"],
    ... )
    >>> s.replicated_pairs, s.verdicts, s.unanimous_share, round(s.observed_agreement, 4)
    (2, 5, 0.5, 0.6667)
    >>> round(s.fleiss_kappa, 4), round(s.krippendorff_alpha, 4), round(s.gwet_ac1, 4)
    (0.25, 0.3333, 0.5714)
    >>> agreement_summary(unit=[], verdict=[]).as_dict()["fleiss_kappa"] is None
    True
    """
    unit_codes, _ = _labels("unit", unit)
    codes = _codes("verdict", verdict)
    if rater is None:
        same_length(unit=unit_codes, verdict=codes)
    else:
        rater_codes, _ = _labels("rater", rater)
        same_length(unit=unit_codes, verdict=codes, rater=rater_codes)
        _reject_repeated_raters(unit_codes, rater_codes)
    counts = _category_counts(unit_codes, codes)
    raters = counts @ np.ones(_Q, dtype=np.int64)
    replicated = raters >= 2
    counts, raters = counts[replicated].astype(np.float64), raters[replicated]
    n_verdicts = int(raters.sum())
    if len(counts):
        unanimous = float(np.mean(counts.max(axis=1) == raters))
        unsure = float(counts[:, UNSURE].sum() / n_verdicts)
    else:
        unanimous = unsure = float("nan")
    observed, shares = _observed_agreement(counts), _category_shares(counts)
    return AgreementSummary(
        replicated_pairs=len(counts),
        verdicts=n_verdicts,
        unanimous_share=unanimous,
        observed_agreement=observed,
        fleiss_kappa=_fleiss(observed, shares).value,
        krippendorff_alpha=_krippendorff_from_counts(counts).value,
        gwet_ac1=_gwet_ac1(observed, shares).value,
        unsure_share=unsure,
    )


def cohens_kappa(*, a: Any, b: Any) -> float:
    """Cohen's kappa of two raters who judged the same units, ``a[k]`` and ``b[k]`` on unit ``k``.

    ``κ = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of units where they agree
    and ``p_e = Σ_k p_a(k) p_b(k)`` from each rater's own marginals (Cohen 1960). The
    three verdicts are the categories; categories neither rater used do not change κ.

    Parameters
    ----------
    a, b : array-like
        Verdict names from :data:`VERDICTS` (or codes 0, 1, 2), one per unit.

    Returns
    -------
    float
        NaN when undefined: no units, or both raters always gave the same single
        verdict (``p_e = 1``).

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
    Psychological Measurement 20(1), 37-46.

    Examples
    --------
    >>> cohens_kappa(a=["equivalent", "equivalent", "not_equivalent", "unsure"],
    ...              b=["equivalent", "not_equivalent", "not_equivalent", "unsure"])
    0.6363636363636364
    """
    a_codes, b_codes = _codes("a", a), _codes("b", b)
    same_length(a=a_codes, b=b_codes)
    table = np.bincount(a_codes.astype(np.int64) * _Q + b_codes, minlength=_Q * _Q).reshape(_Q, _Q)
    return float(_cohen_from_tables(table))


def pairwise_cohens_kappa(*, unit: Any, verdict: Any, rater: Any) -> list[RaterPairKappa]:
    """Cohen's kappa of every two raters over the units both of them judged.

    Parameters
    ----------
    unit : array-like of hashable
        The unit (item pair) each verdict is about.
    verdict : array-like
        Names from :data:`VERDICTS`, or their codes 0, 1, 2.
    rater : array-like of hashable
        Who gave each verdict; one verdict per rater and unit.

    Returns
    -------
    list of RaterPairKappa
        ``(rater_a, rater_b, units, kappa)`` for each pair of raters sharing at least
        one unit, ``rater_a`` before ``rater_b`` in sorted order, the list sorted by
        ``(rater_a, rater_b)``. ``kappa`` is NaN where undefined (see
        :func:`cohens_kappa`), so callers that write JSON pass it through
        ``json_number``. Time and memory grow with ``Σ_u r_u (r_u - 1) / 2``, the
        number of rater pairs on the same unit (3 per unit at replication 3).

    Examples
    --------
    Ann and Bob agree on both pairs they share. Ann and Cy share one pair, which both
    call equivalent: with a single verdict each, chance agreement is 1 and kappa is
    undefined.

    >>> rows = pairwise_cohens_kappa(
    ...     unit=[1, 1, 2, 2, 3, 3],
    ...     verdict=["equivalent", "equivalent", "not_equivalent", "not_equivalent", "equivalent", "equivalent"],
    ...     rater=["ann", "bob", "ann", "bob", "ann", "cy"],
    ... )
    >>> for row in rows:
    ...     print(row)
    RaterPairKappa(rater_a='ann', rater_b='bob', units=2, kappa=1.0)
    RaterPairKappa(rater_a='ann', rater_b='cy', units=1, kappa=nan)
    """
    unit_codes, _ = _labels("unit", unit)
    codes = _codes("verdict", verdict)
    rater_codes, rater_labels = _labels("rater", rater)
    same_length(unit=unit_codes, verdict=codes, rater=rater_codes)
    _reject_repeated_raters(unit_codes, rater_codes)
    rater_codes, rater_labels = _sorted_codes(rater_codes, rater_labels)

    first, second = _pairs_within_units(unit_codes)
    low = np.minimum(rater_codes[first], rater_codes[second])
    high = np.maximum(rater_codes[first], rater_codes[second])
    swapped = rater_codes[first] > rater_codes[second]
    code_low = np.where(swapped, codes[second], codes[first]).astype(np.int64)
    code_high = np.where(swapped, codes[first], codes[second]).astype(np.int64)
    n_raters = len(rater_labels)
    pair_of, rater_pairs = factorize_keys(low * n_raters + high, n_raters * n_raters)
    by_raters = np.argsort(rater_pairs)
    rank = np.empty(len(by_raters), dtype=np.int64)
    rank[by_raters] = np.arange(len(by_raters))
    pair_of, rater_pairs = rank[pair_of], rater_pairs[by_raters]
    cell = (pair_of * _Q + code_low) * _Q + code_high
    tables = np.bincount(cell, minlength=len(rater_pairs) * _Q * _Q).reshape(-1, _Q, _Q)
    kappas = _cohen_from_tables(tables)
    units = tables.sum(axis=(1, 2))
    labels = rater_labels.tolist()
    return [
        RaterPairKappa(labels[key // n_raters], labels[key % n_raters], int(n), float(k))
        for key, n, k in zip(rater_pairs.tolist(), units.tolist(), kappas.tolist())
    ]


# -- Coefficients from a units × categories count matrix ---------------------------------------
# ``counts[u, k]`` is the number of raters who put unit ``u`` in category ``k``. These work for
# any number of categories (the published examples use 5) and are tested on those examples.


class _Coefficient(NamedTuple):
    observed: float
    expected: float
    value: float


def _observed_agreement(counts: Any) -> float:
    """Fleiss' P-bar over the units with at least 2 ratings: mean share of agreeing rating pairs."""
    counts = np.asarray(counts, dtype=np.float64)
    raters = _row_sums(counts)
    keep = raters >= 2
    if not keep.any():
        return float("nan")
    counts, raters = counts[keep], raters[keep]
    return float(np.mean(_row_sums(counts * (counts - 1)) / (raters * (raters - 1))))


def _category_shares(counts: Any) -> np.ndarray:
    """``π_k``: mean over the units with a rating of the share of their ratings in ``k``."""
    counts = np.asarray(counts, dtype=np.float64)
    raters = _row_sums(counts)
    rated = raters >= 1
    if not rated.any():
        return np.full(counts.shape[1], np.nan)
    return (1.0 / raters[rated]) @ counts[rated] / rated.sum()


def _fleiss_from_counts(counts: Any) -> _Coefficient:
    """Fleiss' kappa, generalised to varying raters per unit as in Gwet (2014) / irrCAC."""
    return _fleiss(_observed_agreement(counts), _category_shares(counts))


def _gwet_ac1_from_counts(counts: Any) -> _Coefficient:
    """Gwet's AC1 for several raters, varying per unit (Gwet 2008; Gwet 2014 / irrCAC)."""
    return _gwet_ac1(_observed_agreement(counts), _category_shares(counts))


def _fleiss(observed: float, shares: np.ndarray) -> _Coefficient:
    expected = float(np.dot(shares, shares))
    return _Coefficient(observed, expected, _chance_corrected(observed, expected))


def _gwet_ac1(observed: float, shares: np.ndarray) -> _Coefficient:
    q = len(shares)
    expected = float(np.dot(shares, 1.0 - shares) / (q - 1)) if q >= 2 else float("nan")
    return _Coefficient(observed, expected, _chance_corrected(observed, expected))


def _row_sums(matrix: np.ndarray) -> np.ndarray:
    # A matrix-vector product: much faster than .sum(axis=1) over rows of 3.
    return matrix @ np.ones(matrix.shape[1])


def _krippendorff_from_counts(counts: Any) -> _Coefficient:
    """Krippendorff's alpha, nominal, as ``(A_o - A_e) / (1 - A_e)`` from the coincidence matrix.

    With ``m_u`` pairable values in unit ``u`` (units with ``m_u >= 2``), ``n`` of them in
    all and ``n_k`` in category ``k``: ``A_o = Σ_u Σ_k n_uk (n_uk - 1) / (m_u - 1) / n``
    (the diagonal of the coincidence matrix over ``n``) and
    ``A_e = Σ_k n_k (n_k - 1) / (n (n - 1))``; ``1 - A_o = D_o`` and ``1 - A_e = D_e``
    of Krippendorff (2011), so this is his ``1 - D_o / D_e``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    values = _row_sums(counts)
    keep = values >= 2
    counts, values = counts[keep], values[keep]
    n = values.sum()
    if n < 2:
        return _Coefficient(float("nan"), float("nan"), float("nan"))
    observed = float((_row_sums(counts * (counts - 1)) / (values - 1)).sum() / n)
    per_category = counts.sum(axis=0)
    expected = float((per_category * (per_category - 1)).sum() / (n * (n - 1)))
    return _Coefficient(observed, expected, _chance_corrected(observed, expected))


def _chance_corrected(observed: float, expected: float) -> float:
    """``(p_a - p_e) / (1 - p_e)``; NaN when ``p_e`` is 1 (or anything is undefined)."""
    if not (expected < 1.0) or np.isnan(observed):
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def _cohen_from_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each ``q × q`` table in ``tables`` (last two axes), in exact integers."""
    tables = np.asarray(tables, dtype=np.int64)
    n = tables.sum(axis=(-2, -1))
    agree = np.trace(tables, axis1=-2, axis2=-1)
    chance = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1)
    numerator, denominator = n * agree - chance, n * n - chance
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


# -- Rows to codes ------------------------------------------------------------------------------


def _codes(name: str, verdict: Any) -> np.ndarray:
    """Verdict codes 0..2; string arrays are compared in C rather than looked up one by one."""
    array = as_1d(name, verdict)
    if array.dtype.kind in "UO" and len(array):
        codes = np.full(len(array), -1, dtype=np.int8)
        for code, label in enumerate(VERDICTS):
            codes[array == label] = code
        if (codes >= 0).all():
            return codes
    try:
        return _verdict_codes(array)
    except ValueError as exc:
        raise ValueError(str(exc).replace("verdict[", f"{name}[", 1)) from None


def _labels(name: str, values: Any) -> tuple[np.ndarray, np.ndarray]:
    array = as_1d(name, values)
    if array.dtype.kind in "fO" and len(array):
        missing = pd.isna(array)
        if missing.any():
            k = int(np.flatnonzero(missing)[0])
            raise ValueError(f"{name}[{k}] is missing: every verdict needs a {name}")
    if len(array) == 0:
        return np.zeros(0, dtype=np.int64), array
    return factorize_labels(name, array)


def _sorted_codes(codes: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recode so that code order is label order, when the labels can be sorted."""
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:  # labels of mixed types: keep first-seen order
        return codes, labels
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], labels[order]


def _category_counts(unit_codes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``counts[u, k]``: verdicts in category ``k`` on unit ``u`` (units × 3, int64)."""
    n_units = int(unit_codes.max()) + 1 if len(unit_codes) else 0
    flat = np.bincount(unit_codes * _Q + codes, minlength=n_units * _Q)
    return flat.reshape(n_units, _Q)


def _reject_repeated_raters(unit_codes: np.ndarray, rater_codes: np.ndarray) -> None:
    if len(unit_codes) < 2:
        return
    n_raters = int(rater_codes.max()) + 1
    keys = unit_codes * n_raters + rater_codes
    _, distinct = factorize_keys(keys, (int(unit_codes.max()) + 1) * n_raters)
    if len(distinct) == len(keys):
        return
    order = np.argsort(keys, kind="stable")
    k = int(np.flatnonzero(keys[order][1:] == keys[order][:-1])[0])
    first, again = sorted((int(order[k]), int(order[k + 1])))
    raise ValueError(
        f"rows {first} and {again} are two verdicts of the same rater on the same unit; "
        "agreement needs one verdict per rater and unit"
    )


def _pairs_within_units(unit_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(first, second)`` of every two rows of the same unit, each pair once."""
    order = np.argsort(unit_codes)
    sizes = np.bincount(unit_codes) if len(unit_codes) else np.zeros(0, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    position = np.arange(len(order)) - starts[unit_codes[order]]
    later = sizes[unit_codes[order]] - 1 - position
    total = int(later.sum())
    first = np.repeat(np.arange(len(order)), later)
    offset = np.arange(total) - np.repeat(np.cumsum(later) - later, later) + 1
    return order[first], order[first + offset]
