"""The chance-corrected coefficients from per-unit category counts or contingency tables."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..judgements import VERDICTS

Q = len(VERDICTS)  # the categories of a verdict: equivalent, not equivalent, unsure


class Coefficient(NamedTuple):
    observed: float
    expected: float
    value: float


def observed_agreement(counts: Any) -> float:
    """Fleiss' P-bar over the units with at least 2 ratings: mean share of agreeing rating pairs."""
    counts = np.asarray(counts, dtype=np.float64)
    raters = _row_sums(counts)
    keep = raters >= 2
    if not keep.any():
        return float("nan")
    counts, raters = counts[keep], raters[keep]
    return float(np.mean(_row_sums(counts * (counts - 1)) / (raters * (raters - 1))))


def category_shares(counts: Any) -> np.ndarray:
    """``π_k``: mean over the units with a rating of the share of their ratings in ``k``."""
    counts = np.asarray(counts, dtype=np.float64)
    raters = _row_sums(counts)
    rated = raters >= 1
    if not rated.any():
        return np.full(counts.shape[1], np.nan)
    return (1.0 / raters[rated]) @ counts[rated] / rated.sum()


def fleiss_from_counts(counts: Any) -> Coefficient:
    """Fleiss' kappa, generalised to varying raters per unit as in Gwet (2014) / irrCAC."""
    return fleiss_coefficient(observed_agreement(counts), category_shares(counts))


def gwet_ac1_from_counts(counts: Any) -> Coefficient:
    """Gwet's AC1 for several raters, varying per unit (Gwet 2008; Gwet 2014 / irrCAC)."""
    return gwet_ac1_coefficient(observed_agreement(counts), category_shares(counts))


def fleiss_coefficient(observed: float, shares: np.ndarray) -> Coefficient:
    expected = float(np.dot(shares, shares))
    return Coefficient(observed, expected, chance_corrected(observed, expected))


def gwet_ac1_coefficient(observed: float, shares: np.ndarray) -> Coefficient:
    q = len(shares)
    expected = float(np.dot(shares, 1.0 - shares) / (q - 1)) if q >= 2 else float("nan")
    return Coefficient(observed, expected, chance_corrected(observed, expected))


def _row_sums(matrix: np.ndarray) -> np.ndarray:
    # A matrix-vector product: much faster than .sum(axis=1) over rows of 3.
    return matrix @ np.ones(matrix.shape[1])


def krippendorff_from_counts(counts: Any) -> Coefficient:
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
        return Coefficient(float("nan"), float("nan"), float("nan"))
    observed = float((_row_sums(counts * (counts - 1)) / (values - 1)).sum() / n)
    per_category = counts.sum(axis=0)
    expected = float((per_category * (per_category - 1)).sum() / (n * (n - 1)))
    return Coefficient(observed, expected, chance_corrected(observed, expected))


def chance_corrected(observed: float, expected: float) -> float:
    """``(p_a - p_e) / (1 - p_e)``; NaN when ``p_e`` is 1 (or anything is undefined)."""
    if not (expected < 1.0) or np.isnan(observed):
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def cohen_from_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each ``q × q`` table in ``tables`` (last two axes), in exact integers."""
    tables = np.asarray(tables, dtype=np.int64)
    n = tables.sum(axis=(-2, -1))
    agree = np.trace(tables, axis1=-2, axis2=-1)
    chance = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1)
    numerator, denominator = n * agree - chance, n * n - chance
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


# -- Rows to codes ------------------------------------------------------------------------------
