from django.urls import path

from .experiments import (
    ExperimentDetailApi,
    ExperimentEstimatesApi,
    ExperimentEstimatesHistoryApi,
    ExperimentImpactApi,
    ExperimentImpactGroupsApi,
    ExperimentListCreateApi,
    ExperimentPairsApi,
)
from .exports import ExperimentEstimatesExportApi, ExperimentJudgementsExportApi, ExperimentPairsExportApi
from .health import HealthApi
from .judging import (
    JudgementCreateApi,
    JudgementUndoApi,
    LeaseRenewApi,
    NextPairApi,
    PairReportCreateApi,
    RaterProgressApi,
)
from .quality import GoldAccuracyApi, GoldPairsApi, GoldRateApi, PairReportsApi

experiment = "experiments/<int:experiment_id>/"

urlpatterns = [
    path("health/", HealthApi.as_view(), name="api-health"),
    path("experiments/", ExperimentListCreateApi.as_view(), name="api-experiments"),
    path(experiment, ExperimentDetailApi.as_view(), name="api-experiment"),
    path(experiment + "impact/", ExperimentImpactApi.as_view(), name="api-experiment-impact"),
    path(experiment + "impact/groups/", ExperimentImpactGroupsApi.as_view(), name="api-experiment-impact-groups"),
    path(experiment + "pairs/", ExperimentPairsApi.as_view(), name="api-experiment-pairs"),
    path(experiment + "estimates/", ExperimentEstimatesApi.as_view(), name="api-experiment-estimates"),
    path(
        experiment + "estimates/history/",
        ExperimentEstimatesHistoryApi.as_view(),
        name="api-experiment-estimates-history",
    ),
    path(experiment + "exports/pairs/", ExperimentPairsExportApi.as_view(), name="api-export-pairs"),
    path(experiment + "exports/judgements/", ExperimentJudgementsExportApi.as_view(), name="api-export-judgements"),
    path(experiment + "exports/estimates/", ExperimentEstimatesExportApi.as_view(), name="api-export-estimates"),
    path(experiment + "next-pair/", NextPairApi.as_view(), name="api-next-pair"),
    path(experiment + "progress/", RaterProgressApi.as_view(), name="api-rater-progress"),
    path("judgements/", JudgementCreateApi.as_view(), name="api-judgements"),
    path("judgements/<int:judgement_id>/undo/", JudgementUndoApi.as_view(), name="api-judgement-undo"),
    path("tasks/<int:task_id>/report/", PairReportCreateApi.as_view(), name="api-task-report"),
    path("leases/renew/", LeaseRenewApi.as_view(), name="api-leases-renew"),
    path(experiment + "gold-pairs/", GoldPairsApi.as_view(), name="api-gold-pairs"),
    path(experiment + "gold-rate/", GoldRateApi.as_view(), name="api-gold-rate"),
    path(experiment + "gold-accuracy/", GoldAccuracyApi.as_view(), name="api-gold-accuracy"),
    path(experiment + "reports/", PairReportsApi.as_view(), name="api-pair-reports"),
]
