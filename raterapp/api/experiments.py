"""Experiments for engineers: upload, status, impact, sampled pairs and estimates.

Roles: engineers see the experiments they own or were granted, admins all of them
(``access.experiments_visible_to``); raters and anonymous users are refused (403), and
an experiment that is not visible answers 404 like a missing one.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_owner
from raterapp.models import EstimateSnapshot, Experiment, ImpactGroup, SampledPair
from raterapp.selectors.experiments import (
    archived_filter,
    estimate_snapshot_latest,
    estimate_snapshots_list,
    experiment_judging_progress_get,
    experiment_list,
    impact_dimensions_list,
    impact_groups_list,
)
from raterapp.selectors.rating_access import experiment_waiting_get, experiments_waiting_of
from raterapp.selectors.samples import sampled_pairs_rows
from raterapp.services.experiments.create import experiment_create
from raterapp.services.experiments.deletion import experiment_delete
from raterapp.services.experiments.spec import experiment_spec
from raterapp.services.preparation.control import experiment_preparation_rerun

from .common import (
    EXPERIMENT_NOT_FOUND,
    ExperimentReadApi,
    ExperimentRowsApi,
    IsEngineerOrAdmin,
    read_schema,
    validated,
)
from .deprecation import GROUND_TRUTH_RENAMED, deprecation_flag
from .serializers.estimates import EstimateSnapshotSerializer
from .serializers.experiments import (
    FILE_KINDS,
    ExperimentCreatedSerializer,
    ExperimentCreateSerializer,
    ExperimentDetailSerializer,
    ExperimentImpactSerializer,
    ExperimentSerializer,
    ImpactGroupSerializer,
    SampledPairSerializer,
    deprecated_file_kinds_used,
)


class ExperimentListCreateApi(generics.ListAPIView):
    """GET: the experiments visible to the user (engineer: own and granted; admin: all).
    POST: upload a new experiment (engineer, admin); it is prepared in the background. The
    deprecated upload field ``gold`` still works as ``ground_truth``: the answer then carries a
    ``Deprecation`` header, a ``Link`` to these docs and ``warnings``. Roles: engineer, admin."""

    permission_classes = [IsEngineerOrAdmin]
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = ExperimentSerializer
    queryset = Experiment.objects.none()  # the real one depends on the user: get_queryset

    def get_queryset(self):
        return experiment_list(user=self.request.user, archived=archived_filter(self.request.query_params))

    def get_serializer(self, *args, **kwargs):
        if args and kwargs.get("many"):  # the page of the list: what each waits for, at once
            experiments = list(args[0])
            waiting = experiments_waiting_of(experiments=experiments)
            for experiment in experiments:
                experiment.waiting = waiting.get(experiment.pk)
            args = (experiments, *args[1:])
        return super().get_serializer(*args, **kwargs)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "archived", str, enum=["false", "true", "all"], description="Archived: hidden (default), only, or all."
            )
        ]
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=ExperimentCreateSerializer,
        responses={
            201: ExperimentCreatedSerializer,
            400: OpenApiResponse(
                description=(
                    "Every problem, by field; under `files` one message per problem of the uploads, each naming "
                    "the kind, the file, the line and the problem. The first rows of each file are checked here "
                    "(a missing column, a value of the wrong type, an item id missing from the catalogue); a "
                    "problem further on fails the experiment's preparation instead."
                )
            ),
        },
    )
    def post(self, request):
        values = validated(ExperimentCreateSerializer, request.data)
        fields = {k: v for k, v in values.items() if k not in FILE_KINDS}
        files = {k: v for k, v in values.items() if k in FILE_KINDS}
        spec = experiment_spec(files=files, **fields)
        experiment = experiment_create(owner=request.user, spec=spec, files=files)
        response = Response(ExperimentCreatedSerializer(experiment).data, status=status.HTTP_201_CREATED)
        if warnings := deprecated_file_kinds_used(request.data):
            deprecation_flag(response, request=request, since=GROUND_TRUTH_RENAMED, warnings=warnings)
        return response


class ExperimentDetailApi(ExperimentReadApi):
    """An experiment with its preparation status, progress, error and judging progress.
    Roles: engineer (own or granted), admin. DELETE: a failed experiment with its files (204),
    audited; 409 for any other (archive it instead). Roles: owner, admin."""

    body_serializer = ExperimentDetailSerializer

    def read(self, *, experiment):
        experiment.judging = experiment_judging_progress_get(experiment=experiment)
        experiment.waiting = experiment_waiting_get(experiment=experiment)
        return experiment

    @read_schema(ExperimentDetailSerializer)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)

    @extend_schema(
        responses={
            204: None,
            403: OpenApiResponse(description="Not the owner or an admin."),
            404: EXPERIMENT_NOT_FOUND,
            409: OpenApiResponse(description="Not failed: only a failed experiment can be deleted."),
        }
    )
    def delete(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        experiment_delete(actor=request.user, experiment=experiment)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ExperimentImpactApi(ExperimentReadApi):
    """The exact impact metrics over all items, and the dimensions of the per-group breakdown.
    Roles: engineer (own or granted), admin."""

    body_serializer = ExperimentImpactSerializer

    def read(self, *, experiment):
        return {"overall": experiment.impact, "dimensions": impact_dimensions_list(experiment=experiment)}

    @read_schema(ExperimentImpactSerializer)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


@extend_schema(
    parameters=[OpenApiParameter("dimension", str, description="Only this dimension ('base', 'exp', a slice).")],
    responses={200: ImpactGroupSerializer(many=True), 404: EXPERIMENT_NOT_FOUND},
)
class ExperimentImpactGroupsApi(ExperimentRowsApi):
    """Impact metrics per group (Base cluster, Exp cluster, slice value), paginated.
    Roles: engineer (own or granted), admin."""

    serializer_class = ImpactGroupSerializer
    queryset = ImpactGroup.objects.none()

    def get(self, request, experiment_id: int):
        return self.list(request)

    def rows(self, *, experiment):
        return impact_groups_list(experiment=experiment, dimension=self.request.query_params.get("dimension"))


@extend_schema(responses={200: SampledPairSerializer(many=True), 404: EXPERIMENT_NOT_FOUND})
class ExperimentPairsApi(ExperimentRowsApi):
    """The sampled pairs, paginated: item ids, class, stratum, draws, contribution to
    JaccardDistance and the verdicts of their task. Roles: engineer (own or granted), admin."""

    serializer_class = SampledPairSerializer
    queryset = SampledPair.objects.none()
    rows = staticmethod(sampled_pairs_rows)

    def get(self, request, experiment_id: int):
        return self.list(request)


class ExperimentEstimatesApi(ExperimentReadApi):
    """The latest estimates (404 until the first verdict is in).
    Roles: engineer (own or granted), admin."""

    body_serializer = EstimateSnapshotSerializer
    missing = "No estimates yet."
    read = staticmethod(estimate_snapshot_latest)

    @read_schema(EstimateSnapshotSerializer)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


@extend_schema(responses={200: EstimateSnapshotSerializer(many=True), 404: EXPERIMENT_NOT_FOUND})
class ExperimentEstimatesHistoryApi(ExperimentRowsApi):
    """Every estimate snapshot, oldest first, paginated: how the estimates moved as verdicts
    came in. Roles: engineer (own or granted), admin."""

    serializer_class = EstimateSnapshotSerializer
    queryset = EstimateSnapshot.objects.none()
    rows = staticmethod(estimate_snapshots_list)

    def get(self, request, experiment_id: int):
        return self.list(request)


class ExperimentPrepareApi(APIView):
    """Re-run a failed or stalled preparation from the upload (202; it runs in the background).
    409 with a message while it runs and is healthy, or once it is prepared. Roles: owner, admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(
        request=None,
        responses={
            202: ExperimentSerializer,
            403: OpenApiResponse(description="Not the owner or an admin."),
            404: EXPERIMENT_NOT_FOUND,
            409: OpenApiResponse(description="Running and healthy, or prepared already."),
        },
    )
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        experiment = experiment_preparation_rerun(experiment=experiment)
        return Response(ExperimentSerializer(experiment).data, status=status.HTTP_202_ACCEPTED)
