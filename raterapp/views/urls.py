"""URLs of the server-rendered pages."""

from django.urls import include, path

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

experiment_urlpatterns = [
    path("", ExperimentPageView.as_view(), name="experiment-detail"),
    path("budget/", ExperimentBudgetPageView.as_view(), name="experiment-budget"),
    path("prepare/", ExperimentPreparePageView.as_view(), name="experiment-prepare"),
    path("archive/", ExperimentArchivePageView.as_view(), name="experiment-archive"),
    path("pairs/", ExplorerPageView.as_view(), name="experiment-pairs"),
    path("rater-quality/", ExperimentRaterQualityPageView.as_view(), name="experiment-rater-quality"),
    path("steps/", ExperimentStepsPartialView.as_view(), name="experiment-steps"),
]

console_urlpatterns = [
    path("", console.ConsoleHomeView.as_view(), name="console"),
    path("gold/", console.GoldPageView.as_view(), name="console-gold"),
    path("reports/", console.ReportsPageView.as_view(), name="console-reports"),
    path("assignments/", console.AssignmentsPageView.as_view(), name="console-assignments"),
    path("pools/", console.PoolsPageView.as_view(), name="console-pools"),
    path("audit/", console.AuditPageView.as_view(), name="console-audit"),
]

urlpatterns = [
    path("experiments/", ExperimentListPageView.as_view(), name="experiment-list"),
    path("experiments/glossary/", GlossaryPageView.as_view(), name="glossary"),
    path("experiments/new/", ExperimentCreatePageView.as_view(), name="experiment-new"),
    path("experiments/<int:experiment_id>/", include(experiment_urlpatterns)),
    path("overview/", OverviewPageView.as_view(), name="overview"),
    path("raters/", RatersPageView.as_view(), name="raters"),
    path("raters/<int:rater_id>/row/", RaterRowPartialView.as_view(), name="rater-row"),
    path("rate/", RaterHomePageView.as_view(), name="rate-home"),
    path("rate/<int:experiment_id>/", JudgePageView.as_view(), name="rate-experiment"),
    path("account/tokens/", ApiTokensPageView.as_view(), name="api-tokens-page"),
    path("account/tokens/<int:token_id>/revoke/", ApiTokenRevokePageView.as_view(), name="api-token-revoke-page"),
    path("console/", include(console_urlpatterns)),
]
