"""Rater management: raters with their numbers and rater-quality flags, their accounts, quotas,
pause and assignment to experiments, and the agreement among an experiment's raters.

Roles: admins list, create and change raters (``/api/raters/``) and assign them to
experiments; engineers read the raters and the agreement of experiments they own or were
granted (other experiments 404); a rater reads only their own standing
(``/api/raters/me/``; any other rater's id is 403, and it shares a rater's polls' rate,
``rater_poll``). Everyone else 403, and a refused change changes nothing. Tables download as CSV
with ``?format=csv``.
"""

from __future__ import annotations

from datetime import datetime, time

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer, access_rater_for_admin
from raterapp.api.serializers.raters import (
    ExperimentAgreementSerializer,
    ExperimentRatersSerializer,
    ExperimentRatersUpdateSerializer,
    RaterCreatedSerializer,
    RaterCreateSerializer,
    RaterDetailSerializer,
    RaterMeSerializer,
    RaterPairKappaSerializer,
    RaterSerializer,
    RaterStatsSerializer,
    RaterUpdateSerializer,
)
from raterapp.selectors.rater_home import rater_summary_get
from raterapp.selectors.raters import (
    experiment_agreement_get,
    experiment_raters_get,
    rater_detail_get,
    rater_stats_list,
)
from raterapp.services.accounts.raters import experiment_raters_set, rater_create, rater_update

from .common import (
    FORMAT,
    ExperimentReadApi,
    ExportApi,
    IsAdmin,
    IsRater,
    change_schema,
    download_responses,
    not_found,
    refused_unless,
    validated,
)

NOT_FOUND = not_found("rater or experiment")
ADMINS_ONLY = refused_unless("admins manage raters")
SINCE = OpenApiParameter(
    "since", str, description="Only verdicts from this moment on (ISO date or date-time; a date means its midnight)."
)
EXPERIMENT = OpenApiParameter("experiment", int, description="Only verdicts in this experiment.")


def _fields(serializer) -> tuple[str, ...]:
    return tuple(name for name in serializer().fields if name not in ("flags", "assigned_experiments"))


def _since(request) -> datetime | None:
    value = request.query_params.get("since")
    if not value:
        return None
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.combine(day, time.min)
    if moment is None:
        raise ValidationError({"since": "Give an ISO date or date-time."})
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


class RatersApi(ExportApi):
    """Every rater with their numbers and rater-quality flags (GET), or a new rater (POST: without
    a password the answer carries a one-time link to choose one). The agreement columns are the
    worker's, computed after the estimate snapshots (empty until first computed); with ``since``
    they are computed from that window's verdicts. Roles: admin."""

    permission_classes = [IsAdmin]
    export_name = "raters"
    csv_fields = _fields(RaterSerializer)

    @extend_schema(
        parameters=[FORMAT, SINCE, EXPERIMENT],
        responses=download_responses(RaterSerializer(many=True), NOT_FOUND),
    )
    def get(self, request):
        experiment_id = request.query_params.get("experiment")
        experiment = access_experiment_for_engineer(request.user, experiment_id) if experiment_id else None
        rows = rater_stats_list(experiment=experiment, since=_since(request))
        return Response(RaterSerializer(rows, many=True).data)

    @change_schema(
        RaterCreateSerializer, RaterCreatedSerializer, status=201, invalid="Invalid or taken.", refused=ADMINS_ONLY
    )
    def post(self, request):
        user, path = rater_create(actor=request.user, **validated(RaterCreateSerializer, request.data))
        (row,) = rater_stats_list(raters=[user.pk])
        body = {**row, "set_password_url": request.build_absolute_uri(path) if path else None}
        return Response(RaterCreatedSerializer(body).data, status=status.HTTP_201_CREATED)


class RaterApi(APIView):
    """One rater's numbers across experiments and the experiments assigned to them (GET);
    change their quotas, pause (with a reason) or unpause them, deactivate or reactivate
    them (PATCH; all or nothing). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: RaterDetailSerializer, 404: NOT_FOUND})
    def get(self, request, rater_id: int):
        rater = access_rater_for_admin(request.user, rater_id)
        return Response(RaterDetailSerializer(rater_detail_get(rater=rater)).data)

    @extend_schema(request=RaterUpdateSerializer, responses={200: RaterDetailSerializer, 404: NOT_FOUND})
    def patch(self, request, rater_id: int):
        rater = access_rater_for_admin(request.user, rater_id)
        rater_update(actor=request.user, rater=rater, changes=dict(validated(RaterUpdateSerializer, request.data)))
        return Response(RaterDetailSerializer(rater_detail_get(rater=rater)).data)


class RaterMeApi(APIView):
    """The signed-in rater's own standing: pause, quota and progress (not other raters',
    and not why they were paused). Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rater_poll"

    @extend_schema(responses={200: RaterMeSerializer})
    def get(self, request):
        return Response(RaterMeSerializer(rater_summary_get(rater=request.user)).data)


def _table_schema(body):
    return extend_schema(parameters=[FORMAT], responses=download_responses(body, NOT_FOUND))


class _ExperimentTableApi(ExperimentReadApi, ExportApi):
    """The experiment's numbers as ``body_serializer`` (JSON), or one of their tables as CSV:
    the rows of ``body[table]`` as ``row_serializer``."""

    body_serializer: type[BaseSerializer]
    row_serializer: type[BaseSerializer]
    table: str

    def body(self, experiment):
        found = self.read(experiment=experiment)
        if self.request.accepted_renderer.format == "csv":
            return self.row_serializer(found[self.table], many=True).data
        return self.body_serializer(found).data


class ExperimentRatersApi(_ExperimentTableApi):
    """Who may rate the experiment (its assigned raters; none assigned: every rater if it is
    open to all raters) and the numbers of its raters (GET; CSV: one row per rater); set the
    assigned raters and ``open_to_all`` (PUT, admins; live leases of raters it is no longer
    open to are released).
    Roles: engineer (own or granted) reads, admin."""

    export_name = "raters"
    body_serializer, row_serializer, table = ExperimentRatersSerializer, RaterStatsSerializer, "raters"
    read = staticmethod(experiment_raters_get)
    csv_fields = _fields(RaterStatsSerializer)

    @_table_schema(ExperimentRatersSerializer)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)

    @change_schema(
        ExperimentRatersUpdateSerializer, ExperimentRatersSerializer, invalid="Not raters.", refused=ADMINS_ONLY
    )
    def put(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        values = validated(ExperimentRatersUpdateSerializer, request.data)
        experiment_raters_set(
            actor=request.user, experiment=experiment, rater_ids=values["raters"], open_to_all=values.get("open_to_all")
        )
        return Response(ExperimentRatersSerializer(experiment_raters_get(experiment=experiment)).data)


class ExperimentAgreementApi(_ExperimentTableApi):
    """Agreement among the raters of the experiment's replicated pairs: Fleiss' kappa,
    Krippendorff's alpha and Gwet's AC1 overall, each rater's agreement with the others,
    and Cohen's kappa of every two raters who share pairs (CSV: that pairwise table).
    Roles: engineer (own or granted), admin."""

    export_name = "agreement"
    body_serializer, row_serializer, table = ExperimentAgreementSerializer, RaterPairKappaSerializer, "pairwise"
    read = staticmethod(experiment_agreement_get)
    csv_fields = _fields(RaterPairKappaSerializer)

    @_table_schema(ExperimentAgreementSerializer)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)
