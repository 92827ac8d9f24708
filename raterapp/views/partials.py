"""Fragments of pages the pages' scripts swap in, so that a row or a list drawn twice (on the
page, then again after a change) follows one rule, the server's. GET only; no layout."""

from django.shortcuts import render
from django.views import View

from raterapp.access import access_experiment_for_engineer, access_rater_for_admin
from raterapp.selectors.dashboard import experiment_badge_for
from raterapp.selectors.raters import rater_stats_list

from .admin_pages import AdminPageMixin
from .experiments import EngineerPageMixin, preparation_steps


class ExperimentStepsPartialView(EngineerPageMixin, View):
    """The preparation steps of the experiment page (``_steps.html``)."""

    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        context = {
            "experiment": experiment,
            "steps": preparation_steps(experiment),
            "waiting_label": (experiment_badge_for(experiment=experiment).get("waiting") or {}).get("label", ""),
            "progress_percent": round(100 * min(max(experiment.progress, 0.0), 1.0)),
        }
        return render(request, "raterapp/experiments/_steps.html", context)


class RaterRowPartialView(AdminPageMixin, View):
    """One row of the raters page (``_rater_row.html``), as ``GET /api/raters/<id>/`` counts it."""

    def get(self, request, rater_id: int):
        rater = access_rater_for_admin(request.user, rater_id)
        (row,) = rater_stats_list(raters=[rater.pk])
        return render(request, "raterapp/admin/_rater_row.html", {"row": row})
