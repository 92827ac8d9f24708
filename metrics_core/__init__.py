"""ABCDE statistics: exact impact metrics, weighted pair sampling, estimates with intervals.

The mathematics is in ``abcde-spec.md`` (van Staden, "Decomposing the Jaccard
Distance and the Jaccard Index in ABCDE", 2024, and "More Clustering Quality
Metrics for ABCDE", 2024). This package is pure numpy/pandas/pyarrow and never
imports Django; the web app calls it and never re-derives a formula.

Direction of the metrics: distances and rates are shares of weight in [0, 1];
``Good*`` metrics and ``AffectedGoodIndex`` are higher-is-better, ``Bad*`` and
``AffectedBadIndex`` lower-is-better; ``DeltaPrecision`` > 0 means Exp is more
precise than Base, and ``GoodMinusBadDistance`` (GoodDistance − BadDistance) > 0 means
Exp's changes do more good than harm: the two deciding metrics of :mod:`.decision`.
Every estimate carries a fixed interval, an anytime-valid confidence sequence
(:mod:`.sequential`) and its range over the *unsure* verdicts.
"""

from .agreement import AgreementSummary, RaterPairKappa, agreement_summary, cohens_kappa, pairwise_cohens_kappa
from .context import SampleContext, sample_context
from .contributions import group_contribution
from .dawid_skene import DawidSkeneFit, fit_dawid_skene
from .decision import DECISIONS, Decision, decide, deciding_metric
from .derived import (
    ABSOLUTE_METRICS,
    DERIVED_METRICS,
    AffectedItemDiagram,
    DerivedMetrics,
    RecallBaseCurve,
    RecallPrecisionHeatMap,
    absolute_quality,
    affected_item_diagram,
    affected_item_diagram_from_metrics,
    calibration_against_gold,
    derived_metrics,
    recall_base_matching,
)
from .estimation import (
    ESTIMATED_METRICS,
    AssistedClass,
    ModelAssistedEstimates,
    estimate_quality,
    estimate_quality_assisted,
    metrics_for_scheme,
)
from .external import EXTERNAL_MEASURES, external_measures, external_per_item
from .gold import quality_from_gold, truth_from_gold
from .impact import (
    POINTWISE_METRICS,
    impact_by_group,
    impact_metrics,
    impact_per_base_cluster,
    impact_per_exp_cluster,
    impact_per_item,
)
from .judgements import VERDICTS, PairVerdicts, verdicts_from_judgements
from .planning import PLAN_KINDS, Plan, judgements_to_target, plan_to_half_width, settle_plan
from .population import Population, population_from_labels
from .rater_agreement import RaterAgreement, rater_agreement
from .rater_aware import RaterAwareQuality, estimate_quality_rater_aware
from .reading import interval_reading, metric_direction
from .results import IMPACT_METRICS, Estimate, ImpactMetrics, ImpactTable, QualityEstimates
from .sampling import (
    PAIR_CLASSES,
    SCHEMES,
    STRATA,
    CoupledSample,
    CouplingError,
    PairSample,
    SampleError,
    batch_order_rng,
    batch_rng,
    concatenate_samples,
    couple_sample,
    coupling_rng,
    draw_positions,
    item_positions,
    jaccard_contributions,
    labelled_draws,
    labelled_of_batches,
    labelled_prefix,
    pair_classes_of,
    pair_probabilities,
    pairs_for_judgement,
    pairs_in_draw_order,
    sample_coupled,
    sample_pairs,
    waiting_verdicts,
)
from .sequential import (
    confidence_sequence_factor,
    confidence_sequence_half_width,
    horizon_rho_squared,
    judged_for_half_width,
    share_confidence_sequence,
)
from .similarity import card_similarity
from .situation import SITUATION_PARTS, AffectedItemSituation, affected_item_situation
from .slices import SliceQuality, estimate_quality_by_slice
from .transitivity import InconsistentTriangle, JudgedPair, TransitivityReport, transitivity_report

__all__ = [
    "SampleContext",
    "sample_context",
    "ABSOLUTE_METRICS",
    "DECISIONS",
    "PLAN_KINDS",
    "DERIVED_METRICS",
    "ESTIMATED_METRICS",
    "EXTERNAL_MEASURES",
    "IMPACT_METRICS",
    "PAIR_CLASSES",
    "POINTWISE_METRICS",
    "SCHEMES",
    "SITUATION_PARTS",
    "STRATA",
    "VERDICTS",
    "AffectedItemDiagram",
    "AffectedItemSituation",
    "AgreementSummary",
    "AssistedClass",
    "Decision",
    "Plan",
    "DerivedMetrics",
    "Estimate",
    "ImpactMetrics",
    "ImpactTable",
    "ModelAssistedEstimates",
    "PairSample",
    "PairVerdicts",
    "Population",
    "QualityEstimates",
    "RaterAgreement",
    "RaterPairKappa",
    "RecallBaseCurve",
    "RecallPrecisionHeatMap",
    "SampleError",
    "SliceQuality",
    "affected_item_diagram",
    "affected_item_diagram_from_metrics",
    "affected_item_situation",
    "agreement_summary",
    "batch_order_rng",
    "batch_rng",
    "concatenate_samples",
    "confidence_sequence_factor",
    "confidence_sequence_half_width",
    "decide",
    "deciding_metric",
    "horizon_rho_squared",
    "judged_for_half_width",
    "plan_to_half_width",
    "settle_plan",
    "share_confidence_sequence",
    "cohens_kappa",
    "derived_metrics",
    "estimate_quality",
    "estimate_quality_assisted",
    "estimate_quality_by_slice",
    "external_measures",
    "external_per_item",
    "group_contribution",
    "impact_by_group",
    "impact_metrics",
    "impact_per_base_cluster",
    "impact_per_exp_cluster",
    "impact_per_item",
    "interval_reading",
    "jaccard_contributions",
    "judgements_to_target",
    "metric_direction",
    "metrics_for_scheme",
    "pair_classes_of",
    "pairs_for_judgement",
    "pairwise_cohens_kappa",
    "population_from_labels",
    "quality_from_gold",
    "truth_from_gold",
    "absolute_quality",
    "calibration_against_gold",
    "recall_base_matching",
    "rater_agreement",
    "sample_pairs",
    "verdicts_from_judgements",
    # Coupled sampling across experiments (abcde-spec §11)
    "CoupledSample",
    "CouplingError",
    "couple_sample",
    "coupling_rng",
    "item_positions",
    "pair_probabilities",
    "sample_coupled",
    # Judging in draw order (abcde-spec §14)
    "draw_positions",
    "labelled_draws",
    "labelled_of_batches",
    "labelled_prefix",
    "pairs_in_draw_order",
    "waiting_verdicts",
    # Raters who err, transitivity (abcde-spec §13)
    "DawidSkeneFit",
    "InconsistentTriangle",
    "JudgedPair",
    "RaterAwareQuality",
    "TransitivityReport",
    "estimate_quality_rater_aware",
    "fit_dawid_skene",
    "transitivity_report",
    # Model-assisted estimates (abcde-spec §15): the built-in score of a pair
    "card_similarity",
]
