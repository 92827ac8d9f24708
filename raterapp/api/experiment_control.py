"""What the owner of an experiment changes on it: the precision target, closing and reopening
rating, archiving.

Roles: the owner or an admin (403 for an engineer it is only shared with, nothing changed);
raters 403, anonymous users 401; an experiment that is not visible 404.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_owner
from raterapp.services.experiments.control import (
    experiment_archive,
    experiment_rating_close,
    experiment_rating_reopen,
    experiment_target_set,
    experiment_unarchive,
)

from .common import EXPERIMENT_NOT_FOUND, OWNER_ONLY, IsEngineerOrAdmin, change_schema, owner_setting_put
from .serializers.estimates import TargetSerializer
from .serializers.experiments import ExperimentSerializer


class ExperimentTargetApi(APIView):
    """The ΔPrecision interval half-width at which the experiment has enough data.
    Roles: the owner or an admin changes it."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(
        request=TargetSerializer, responses={200: TargetSerializer, 403: OWNER_ONLY, 404: EXPERIMENT_NOT_FOUND}
    )
    def put(self, request, experiment_id: int):
        return owner_setting_put(request, experiment_id, TargetSerializer, experiment_target_set)


class _RatingSwitchApi(APIView):
    permission_classes = [IsEngineerOrAdmin]
    switch = staticmethod(experiment_rating_close)

    @change_schema(None, ExperimentSerializer, invalid="Not in that state.", refused=OWNER_ONLY)
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        experiment = self.switch(experiment=experiment)
        return Response(ExperimentSerializer(experiment).data)


class ExperimentCloseApi(_RatingSwitchApi):
    """Close rating: raters get no more pairs of it, every verdict stays. Roles: owner, admin."""

    switch = staticmethod(experiment_rating_close)


class ExperimentReopenApi(_RatingSwitchApi):
    """Open a closed experiment for rating again. Roles: owner, admin."""

    switch = staticmethod(experiment_rating_reopen)


class ExperimentArchiveApi(_RatingSwitchApi):
    """Archive a finished or failed experiment: hidden from the default list (``?archived=true``
    lists archived ones), every verdict and estimate kept. Roles: owner, admin."""

    switch = staticmethod(experiment_archive)


class ExperimentUnarchiveApi(_RatingSwitchApi):
    """Show an archived experiment in the default list again. Roles: owner, admin."""

    switch = staticmethod(experiment_unarchive)
