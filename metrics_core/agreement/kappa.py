"""Cohen's kappa of two raters, and of every pair of raters."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._validation import same_length
from ..factorize import factorize_keys
from .codes import pairs_within_units, rater_verdict_codes, verdict_codes
from .coefficients import Q, cohen_from_tables


class RaterPairKappa(NamedTuple):
    """Cohen's kappa of two raters over the units they both judged (NaN if undefined)."""

    rater_a: Any
    rater_b: Any
    units: int
    kappa: float


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
    a_codes, b_codes = verdict_codes("a", a), verdict_codes("b", b)
    same_length(a=a_codes, b=b_codes)
    table = np.bincount(a_codes.astype(np.int64) * Q + b_codes, minlength=Q * Q).reshape(Q, Q)
    return float(cohen_from_tables(table))


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
    unit_codes, codes, rater_codes, rater_labels = rater_verdict_codes(unit, verdict, rater)
    first, second = pairs_within_units(unit_codes)
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
    cell = (pair_of * Q + code_low) * Q + code_high
    tables = np.bincount(cell, minlength=len(rater_pairs) * Q * Q).reshape(-1, Q, Q)
    kappas = cohen_from_tables(tables)
    units = tables.sum(axis=(1, 2))
    labels = rater_labels.tolist()
    return [
        RaterPairKappa(labels[key // n_raters], labels[key % n_raters], int(n), float(k))
        for key, n, k in zip(rater_pairs.tolist(), units.tolist(), kappas.tolist())
    ]


# -- Coefficients from a units × categories count matrix ---------------------------------------
# ``counts[u, k]`` is the number of raters who put unit ``u`` in category ``k``. These work for
# any number of categories (the published examples use 5) and are tested on those examples.
