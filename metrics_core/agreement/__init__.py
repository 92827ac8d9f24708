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

from .codes import (
    category_counts,
    label_codes,
    pairs_within_units,
    rater_verdict_codes,
    reject_repeated_raters,
    sorted_codes,
    verdict_codes,
)
from .coefficients import fleiss_from_counts, gwet_ac1_from_counts, krippendorff_from_counts, observed_agreement
from .kappa import RaterPairKappa, cohens_kappa, pairwise_cohens_kappa
from .summary import AgreementSummary, agreement_summary

__all__ = [
    "AgreementSummary",
    "RaterPairKappa",
    "agreement_summary",
    "category_counts",
    "cohens_kappa",
    "fleiss_from_counts",
    "gwet_ac1_from_counts",
    "krippendorff_from_counts",
    "label_codes",
    "observed_agreement",
    "pairs_within_units",
    "pairwise_cohens_kappa",
    "rater_verdict_codes",
    "reject_repeated_raters",
    "sorted_codes",
    "verdict_codes",
]
