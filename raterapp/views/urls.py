"""URLs of the server-rendered pages."""

from django.urls import path

from . import accounts, admin_pages, console, console_access, experiments, explorer, partials, rater_quality, rating
from .console_audit import AuditPageView
from .console_verdicts import VerdictsPageView

EXPERIMENT = "experiments/<int:experiment_id>/"

urlpatterns = [
    path("rate/", rating.RaterHomePageView.as_view(), name="rate-home"),
    path("rate/<int:experiment_id>/", rating.JudgePageView.as_view(), name="rate-experiment"),
    path("experiments/", experiments.ExperimentListPageView.as_view(), name="experiment-list"),
    path("experiments/glossary/", experiments.GlossaryPageView.as_view(), name="glossary"),
    path("experiments/new/", experiments.ExperimentCreatePageView.as_view(), name="experiment-new"),
    path(EXPERIMENT, experiments.ExperimentPageView.as_view(), name="experiment-detail"),
    path(EXPERIMENT + "budget/", experiments.ExperimentBudgetPageView.as_view(), name="experiment-budget"),
    path(EXPERIMENT + "prepare/", experiments.ExperimentPreparePageView.as_view(), name="experiment-prepare"),
    path(EXPERIMENT + "archive/", experiments.ExperimentArchivePageView.as_view(), name="experiment-archive"),
    path(EXPERIMENT + "delete/", experiments.ExperimentDeletePageView.as_view(), name="experiment-delete"),
    path(EXPERIMENT + "pairs/", explorer.ExplorerPageView.as_view(), name="experiment-pairs"),
    path(
        EXPERIMENT + "rater-quality/",
        rater_quality.ExperimentRaterQualityPageView.as_view(),
        name="experiment-rater-quality",
    ),
    path(EXPERIMENT + "steps/", partials.ExperimentStepsPartialView.as_view(), name="experiment-steps"),
    path("overview/", admin_pages.OverviewPageView.as_view(), name="overview"),
    path("raters/", admin_pages.RatersPageView.as_view(), name="raters"),
    path("raters/<int:rater_id>/row/", partials.RaterRowPartialView.as_view(), name="rater-row"),
    path("console/", console.ConsoleHomeView.as_view(), name="console"),
    path("console/gold/", console.GoldPageView.as_view(), name="console-gold"),
    path("console/reports/", console.ReportsPageView.as_view(), name="console-reports"),
    path("console/assignments/", console_access.AssignmentsPageView.as_view(), name="console-assignments"),
    path("console/pools/", console_access.PoolsPageView.as_view(), name="console-pools"),
    path("console/audit/", AuditPageView.as_view(), name="console-audit"),
    path("console/verdicts/", VerdictsPageView.as_view(), name="console-verdicts"),
    path("account/tokens/", accounts.ApiTokensPageView.as_view(), name="api-tokens-page"),
    path(
        "account/tokens/<int:token_id>/revoke/", accounts.ApiTokenRevokePageView.as_view(), name="api-token-revoke-page"
    ),
]
