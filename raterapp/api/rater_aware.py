"""Estimates that account for raters who err, each rater's fitted sensitivity and specificity,
and the transitivity review list (abcde-spec §13), as the worker last computed them.

Roles: the rater-aware estimates are read by engineers (own or granted) and admins; the
transitivity review (it names raters beside their verdicts) and a rater's fits across
experiments by admins only. Raters 403, anonymous users 401; an experiment or rater that is
not visible 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_rater_for_admin
from raterapp.selectors.experiments import estimate_snapshot_latest
from raterapp.selectors.rater_aware import experiment_transitivity_get, rater_aware_panel_get, rater_confusion_list

from .common import ExperimentReadApi, IsAdmin, read_schema

NOT_FOUND = OpenApiResponse(description="Not visible to you, or not computed yet.")


class ExperimentRaterAwareApi(ExperimentReadApi):
    """The estimates from a Dawid–Skene model of the raters beside the raw-verdict ones
    (``raw_value``), each rater's sensitivity and specificity, and the transitivity counts
    (404 until first computed; it follows the estimates by a few seconds).
    Roles: engineer (own or granted), admin."""

    missing = "No rater-aware estimates yet."

    def read(self, *, experiment):
        snapshot = estimate_snapshot_latest(experiment=experiment)
        raw = snapshot.estimates["estimates"] if snapshot is not None else None
        panel = rater_aware_panel_get(experiment=experiment, raw=raw)
        return None if panel is None else {"experiment": experiment.pk, **panel}

    @read_schema(OpenApiTypes.OBJECT, NOT_FOUND)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


class ExperimentTransitivityApi(ExperimentReadApi):
    """Inconsistent triangles (two pairs judged equivalent, the third not) of the experiment
    and of each rater, and every inconsistent triangle with its three pairs, their verdicts,
    raters and pair-explorer links (404 until first computed). Roles: admin."""

    permission_classes = [IsAdmin]
    missing = "No transitivity counts yet."
    read = staticmethod(experiment_transitivity_get)

    @read_schema(OpenApiTypes.OBJECT, NOT_FOUND)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


class RaterSensitivityApi(APIView):
    """A rater's estimated sensitivity and specificity (Dawid–Skene) in each experiment they
    rated, from its latest fit. Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: NOT_FOUND})
    def get(self, request, rater_id: int):
        rater = access_rater_for_admin(request.user, rater_id)
        return Response(
            {"rater": rater.pk, "username": rater.username, "experiments": rater_confusion_list(rater=rater)}
        )
