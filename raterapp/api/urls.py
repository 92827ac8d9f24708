from django.urls import include, path

from .admin_console import GoldPairApi, PairReportResolveApi, RaterPasswordLinkApi
from .audit import AuditEntriesApi
from .budgets import BudgetPoolApi, BudgetPoolsApi, ExperimentBudgetApi, ExperimentBudgetChangesApi
from .dashboard import ExperimentConvergenceApi, ExperimentDashboardApi, ExperimentDerivedApi, ExperimentSlicesApi
from .decisions import (
    ExperimentBatchesApi,
    ExperimentBatchPlanApi,
    ExperimentDecisionApi,
    ExperimentModelAssistedApi,
    ExperimentRecallBaseApi,
)
from .events import ExperimentEventsApi
from .experiment_control import (
    ExperimentArchiveApi,
    ExperimentCloseApi,
    ExperimentReopenApi,
    ExperimentTargetApi,
    ExperimentUnarchiveApi,
)
from .experiments import (
    ExperimentDetailApi,
    ExperimentEstimatesApi,
    ExperimentEstimatesHistoryApi,
    ExperimentImpactApi,
    ExperimentImpactGroupsApi,
    ExperimentListCreateApi,
    ExperimentPairsApi,
    ExperimentPrepareApi,
)
from .explorer import ExplorerClustersApi, ExplorerPairDetailApi, ExplorerPairsApi
from .exports import (
    ExperimentEstimatesExportApi,
    ExperimentImpactExportApi,
    ExperimentJudgementsExportApi,
    ExperimentPairsExportApi,
)
from .health import HealthApi, HealthDetailApi
from .judging import (
    JudgementCreateApi,
    JudgementUndoApi,
    LeaseRenewApi,
    NextPairApi,
    PairReportCreateApi,
    RaterProgressApi,
)
from .overview import OverviewApi
from .quality import GoldAccuracyApi, GoldPairsApi, GoldRateApi, PairReportsApi
from .rater_aware import ExperimentRaterAwareApi, ExperimentTransitivityApi, RaterSensitivityApi
from .raters import ExperimentAgreementApi, ExperimentRatersApi, RaterApi, RaterMeApi, RatersApi
from .scores import ExperimentScoresApi, ExperimentScoresExportApi
from .tokens import ApiTokenApi, ApiTokensApi, UserApiTokensApi
from .verdict_corrections import JudgementChangeApi, RaterRecentVerdictsApi, VerdictVoidApi

# The routes below one experiment, /api/experiments/<experiment_id>/...
experiment_urlpatterns = [
    path("", ExperimentDetailApi.as_view(), name="api-experiment"),
    path("prepare/", ExperimentPrepareApi.as_view(), name="api-experiment-prepare"),
    path("impact/", ExperimentImpactApi.as_view(), name="api-experiment-impact"),
    path("impact/groups/", ExperimentImpactGroupsApi.as_view(), name="api-experiment-impact-groups"),
    path("pairs/", ExperimentPairsApi.as_view(), name="api-experiment-pairs"),
    path("explorer/pairs/", ExplorerPairsApi.as_view(), name="api-explorer-pairs"),
    path("explorer/pairs/<int:sampled_pair_id>/", ExplorerPairDetailApi.as_view(), name="api-explorer-pair"),
    path("explorer/clusters/", ExplorerClustersApi.as_view(), name="api-explorer-clusters"),
    path("estimates/", ExperimentEstimatesApi.as_view(), name="api-experiment-estimates"),
    path("estimates/history/", ExperimentEstimatesHistoryApi.as_view(), name="api-experiment-estimates-history"),
    path("exports/pairs/", ExperimentPairsExportApi.as_view(), name="api-export-pairs"),
    path("exports/judgements/", ExperimentJudgementsExportApi.as_view(), name="api-export-judgements"),
    path("exports/scores/", ExperimentScoresExportApi.as_view(), name="api-export-scores"),
    path("exports/estimates/", ExperimentEstimatesExportApi.as_view(), name="api-export-estimates"),
    path("exports/impact/", ExperimentImpactExportApi.as_view(), name="api-export-impact"),
    path("next-pair/", NextPairApi.as_view(), name="api-next-pair"),
    path("progress/", RaterProgressApi.as_view(), name="api-rater-progress"),
    path("gold-pairs/", GoldPairsApi.as_view(), name="api-gold-pairs"),
    path("gold-rate/", GoldRateApi.as_view(), name="api-gold-rate"),
    path("gold-accuracy/", GoldAccuracyApi.as_view(), name="api-gold-accuracy"),
    path("reports/", PairReportsApi.as_view(), name="api-pair-reports"),
    path("dashboard/", ExperimentDashboardApi.as_view(), name="api-experiment-dashboard"),
    path("events/", ExperimentEventsApi.as_view(), name="api-experiment-events"),
    path("derived/", ExperimentDerivedApi.as_view(), name="api-experiment-derived"),
    path("estimates/convergence/", ExperimentConvergenceApi.as_view(), name="api-experiment-convergence"),
    path("slices/", ExperimentSlicesApi.as_view(), name="api-experiment-slices"),
    path("target/", ExperimentTargetApi.as_view(), name="api-experiment-target"),
    path("decision/", ExperimentDecisionApi.as_view(), name="api-experiment-decision"),
    path("model-assisted/", ExperimentModelAssistedApi.as_view(), name="api-experiment-model-assisted"),
    path("scores/", ExperimentScoresApi.as_view(), name="api-experiment-scores"),
    path("recall-base/", ExperimentRecallBaseApi.as_view(), name="api-experiment-recall-base"),
    path("batches/", ExperimentBatchesApi.as_view(), name="api-experiment-batches"),
    path("batches/plan/", ExperimentBatchPlanApi.as_view(), name="api-experiment-batch-plan"),
    path("close/", ExperimentCloseApi.as_view(), name="api-experiment-close"),
    path("reopen/", ExperimentReopenApi.as_view(), name="api-experiment-reopen"),
    path("archive/", ExperimentArchiveApi.as_view(), name="api-experiment-archive"),
    path("unarchive/", ExperimentUnarchiveApi.as_view(), name="api-experiment-unarchive"),
    path("budget/", ExperimentBudgetApi.as_view(), name="api-experiment-budget"),
    path("budget/changes/", ExperimentBudgetChangesApi.as_view(), name="api-experiment-budget-changes"),
    path("raters/", ExperimentRatersApi.as_view(), name="api-experiment-raters"),
    path("agreement/", ExperimentAgreementApi.as_view(), name="api-experiment-agreement"),
    path("rater-aware/", ExperimentRaterAwareApi.as_view(), name="api-experiment-rater-aware"),
    path("transitivity/", ExperimentTransitivityApi.as_view(), name="api-experiment-transitivity"),
    path("my-verdicts/", RaterRecentVerdictsApi.as_view(), name="api-experiment-my-verdicts"),
]

urlpatterns = [
    path("health/", HealthApi.as_view(), name="api-health"),
    path("health/detail/", HealthDetailApi.as_view(), name="api-health-detail"),
    path("overview/", OverviewApi.as_view(), name="api-overview"),
    path("experiments/", ExperimentListCreateApi.as_view(), name="api-experiments"),
    path("experiments/<int:experiment_id>/", include(experiment_urlpatterns)),
    path("judgements/", JudgementCreateApi.as_view(), name="api-judgements"),
    path("judgements/<int:judgement_id>/", JudgementChangeApi.as_view(), name="api-judgement"),
    path("judgements/<int:judgement_id>/undo/", JudgementUndoApi.as_view(), name="api-judgement-undo"),
    path("tasks/<int:task_id>/report/", PairReportCreateApi.as_view(), name="api-task-report"),
    path("leases/renew/", LeaseRenewApi.as_view(), name="api-leases-renew"),
    path("budget-pools/", BudgetPoolsApi.as_view(), name="api-budget-pools"),
    path("budget-pools/<int:pool_id>/", BudgetPoolApi.as_view(), name="api-budget-pool"),
    path("raters/", RatersApi.as_view(), name="api-raters"),
    path("raters/me/", RaterMeApi.as_view(), name="api-rater-me"),
    path("raters/<int:rater_id>/", RaterApi.as_view(), name="api-rater"),
    path("raters/<int:rater_id>/password-link/", RaterPasswordLinkApi.as_view(), name="api-rater-password-link"),
    path("raters/<int:rater_id>/sensitivity/", RaterSensitivityApi.as_view(), name="api-rater-sensitivity"),
    path("gold-pairs/<int:task_id>/", GoldPairApi.as_view(), name="api-gold-pair"),
    path("reports/<int:report_id>/resolve/", PairReportResolveApi.as_view(), name="api-report-resolve"),
    path("audit/", AuditEntriesApi.as_view(), name="api-audit"),
    path("verdict-voids/", VerdictVoidApi.as_view(), name="api-verdict-voids"),
    path("tokens/", ApiTokensApi.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>/", ApiTokenApi.as_view(), name="api-token"),
    path("users/<int:user_id>/tokens/", UserApiTokensApi.as_view(), name="api-user-tokens"),
]
