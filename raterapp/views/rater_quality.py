"""The admins' page of an experiment's raters as the Dawid–Skene model sees them (sensitivity
and specificity) and the transitivity review: every inconsistent triangle with its three pairs,
verdicts and raters, each pair linked to the pair explorer.

Roles: admins; anyone else signed in gets the admins' 403 page, anonymous users go to the
sign-in page; an experiment that does not exist 404.
"""

from __future__ import annotations

from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.views import View

from raterapp.access import access_experiment_for_engineer
from raterapp.selectors.experiments import estimate_snapshot_latest
from raterapp.selectors.rater_aware import (
    experiment_rater_quality_rows,
    experiment_transitivity_get,
    rater_aware_panel_get,
)
from raterapp.views.roles import AdminPageMixin
from raterapp.vocabulary import RATER_FIT_HELP


class ExperimentRaterQualityPageView(AdminPageMixin, View):
    nav_active = "raters"

    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        snapshot = estimate_snapshot_latest(experiment=experiment)
        raw = snapshot.estimates["estimates"] if snapshot is not None else None
        panel = rater_aware_panel_get(experiment=experiment, raw=raw)
        transitivity = experiment_transitivity_get(experiment=experiment)
        context = self.page_context(
            experiment=experiment,
            rater_aware=panel,
            transitivity=transitivity,
            raters=experiment_rater_quality_rows(panel=panel, transitivity=transitivity),
            raters_help=RATER_FIT_HELP,
            computed_at=parse_datetime(transitivity["computed_at"]) if transitivity else None,
        )
        return render(request, "raterapp/rater_quality/experiment.html", context)
