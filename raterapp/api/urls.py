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
from .judging import JudgementCreateApi, NextPairApi

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
    path("judgements/", JudgementCreateApi.as_view(), name="api-judgements"),
]
