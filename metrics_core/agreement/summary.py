"""The agreement summary of all replicated pairs: Fleiss, Krippendorff, Gwet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import same_length
from ..judgements import UNSURE
from ..results import FlatResult
from .codes import category_counts, label_codes, rater_verdict_codes, verdict_codes
from .coefficients import (
    Q,
    category_shares,
    fleiss_coefficient,
    gwet_ac1_coefficient,
    krippendorff_from_counts,
    observed_agreement,
)


@dataclass(frozen=True, kw_only=True)
class AgreementSummary(FlatResult):
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
    if rater is None:
        unit_codes, codes = label_codes("unit", unit)[0], verdict_codes("verdict", verdict)
        same_length(unit=unit_codes, verdict=codes)
    else:
        unit_codes, codes, _, _ = rater_verdict_codes(unit, verdict, rater)
    counts = category_counts(unit_codes, codes)
    raters = counts @ np.ones(Q, dtype=np.int64)
    replicated = raters >= 2
    counts, raters = counts[replicated].astype(np.float64), raters[replicated]
    n_verdicts = int(raters.sum())
    if len(counts):
        unanimous = float(np.mean(counts.max(axis=1) == raters))
        unsure = float(counts[:, UNSURE].sum() / n_verdicts)
    else:
        unanimous = unsure = float("nan")
    observed, shares = observed_agreement(counts), category_shares(counts)
    return AgreementSummary(
        replicated_pairs=len(counts),
        verdicts=n_verdicts,
        unanimous_share=unanimous,
        observed_agreement=observed,
        fleiss_kappa=fleiss_coefficient(observed, shares).value,
        krippendorff_alpha=krippendorff_from_counts(counts).value,
        gwet_ac1=gwet_ac1_coefficient(observed, shares).value,
        unsure_share=unsure,
    )
