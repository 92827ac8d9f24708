"""Pages for admins: the overview of spend, throughput, budgets and raters, and the budget form;
the rater management page.

Roles: admins (and superusers); anyone else signed in gets a friendly 403 page, anonymous
users go to the sign-in page. The overview's data is the overview API's, embedded as
``json_script`` and drawn by ``static/raterapp/js/overview.js`` with Chart.js. The rater
page renders the rows of ``/api/raters/`` (the same selector; the agreement as the worker last
stored it, and when, or that it is not computed yet) and
``static/raterapp/js/raters_page.js`` changes raters through that API.
"""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import render
from django.urls import reverse
from django.views import View

from raterapp.selectors.overview import spend_overview_get
from raterapp.selectors.raters import rater_agreement_computed_get, rater_stats_list

from .roles import AdminPageMixin

DAYS = 14


class OverviewPageView(AdminPageMixin, View):
    def get(self, request):
        context = self.page_context(
            overview=spend_overview_get(days=DAYS),
            raters=rater_stats_list(agreement=True),
            agreement_computed=rater_agreement_computed_get(),
            days=DAYS,
        )
        return render(request, "raterapp/admin/overview.html", context)


class RatersPageView(AdminPageMixin, View):
    nav_active = "raters"

    def get(self, request):
        context = self.page_context(
            raters=rater_stats_list(agreement=True),
            agreement_computed=rater_agreement_computed_get(),
            min_seconds=settings.RATER_MIN_SECONDS,
            min_gold_accuracy=settings.RATER_MIN_GOLD_ACCURACY,
            link_days=max(settings.PASSWORD_RESET_TIMEOUT // 86400, 1),
            api_urls={
                "raters": reverse("api-raters"),
                "rater": reverse("api-rater", args=[0]),
                "password_link": reverse("api-rater-password-link", args=[0]),
            },
        )
        return render(request, "raterapp/admin/raters.html", context)
