"""URLs of the server-rendered pages."""

from django.urls import path

from . import console
from .accounts import ApiTokenRevokePageView, ApiTokensPageView
from .admin_pages import OverviewPageView, RatersPageView
from .experiments import (
    ExperimentArchivePageView,
    ExperimentBudgetPageView,
    ExperimentCreatePageView,
    ExperimentListPageView,
    ExperimentPageView,
    ExperimentPreparePageView,
    GlossaryPageView,
)
from .explorer import ExplorerPageView
from .partials import ExperimentStepsPartialView, RaterRowPartialView
from .rater_quality import ExperimentRaterQualityPageView
from .rating import JudgePageView, RaterHomePageView

urlpatterns = [
    path("experiments/", ExperimentListPageView.as_view(), name="experiment-list"),
    path("experiments/glossary/", GlossaryPageView.as_view(), name="glossary"),
    path("experiments/new/", ExperimentCreatePageView.as_view(), name="experiment-new"),
    path("experiments/<int:experiment_id>/", ExperimentPageView.as_view(), name="experiment-detail"),
    path("experiments/<int:experiment_id>/budget/", ExperimentBudgetPageView.as_view(), name="experiment-budget"),
    path("experiments/<int:experiment_id>/prepare/", ExperimentPreparePageView.as_view(), name="experiment-prepare"),
    path("experiments/<int:experiment_id>/archive/", ExperimentArchivePageView.as_view(), name="experiment-archive"),
    path("experiments/<int:experiment_id>/pairs/", ExplorerPageView.as_view(), name="experiment-pairs"),
    path(
        "experiments/<int:experiment_id>/rater-quality/",
        ExperimentRaterQualityPageView.as_view(),
        name="experiment-rater-quality",
    ),
    path("experiments/<int:experiment_id>/steps/", ExperimentStepsPartialView.as_view(), name="experiment-steps"),
    path("overview/", OverviewPageView.as_view(), name="overview"),
    path("raters/", RatersPageView.as_view(), name="raters"),
    path("raters/<int:rater_id>/row/", RaterRowPartialView.as_view(), name="rater-row"),
    path("rate/", RaterHomePageView.as_view(), name="rate-home"),
    path("rate/<int:experiment_id>/", JudgePageView.as_view(), name="rate-experiment"),
    path("account/tokens/", ApiTokensPageView.as_view(), name="api-tokens-page"),
    path("account/tokens/<int:token_id>/revoke/", ApiTokenRevokePageView.as_view(), name="api-token-revoke-page"),
]

urlpatterns += [
    path("console/", console.ConsoleHomeView.as_view(), name="console"),
    path("console/gold/", console.GoldPageView.as_view(), name="console-gold"),
    path("console/reports/", console.ReportsPageView.as_view(), name="console-reports"),
    path("console/assignments/", console.AssignmentsPageView.as_view(), name="console-assignments"),
    path("console/pools/", console.PoolsPageView.as_view(), name="console-pools"),
    path("console/audit/", console.AuditPageView.as_view(), name="console-audit"),
]
