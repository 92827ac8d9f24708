"""Quality control of an experiment's raters: gold questions, gold accuracy, reported pairs.

Roles: engineers (own or granted experiments) and admins read; only admins create gold
questions and set the gold rate (403 for others, nothing changed).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer
from raterapp.selectors.quality import gold_accuracy_list, gold_pairs_list, pair_reports_list
from raterapp.services.gold import experiment_gold_rate_set, gold_pair_create

from .common import IsEngineerOrAdmin
from .serializers.quality import (
    GoldAccuracySerializer,
    GoldPairCreateSerializer,
    GoldPairSerializer,
    GoldRateSerializer,
    PairReportListSerializer,
)

NOT_FOUND = OpenApiResponse(description="No such experiment visible to you.")
ADMINS_ONLY = OpenApiResponse(description="Only admins may do this; nothing changed.")


class GoldPairsApi(APIView):
    """The experiment's gold questions with how often they were answered and answered right
    (GET); mark a pair of its items as gold with a known answer (POST, admins).
    Roles: engineer (own or granted) reads, admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: GoldPairSerializer(many=True), 404: NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(GoldPairSerializer(gold_pairs_list(experiment=experiment), many=True).data)

    @extend_schema(
        request=GoldPairCreateSerializer,
        responses={201: GoldPairSerializer, 400: OpenApiResponse(description="Unknown items."), 403: ADMINS_ONLY},
    )
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        data = GoldPairCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        task = gold_pair_create(experiment=experiment, actor=request.user, **data.validated_data)
        return Response(GoldPairSerializer(task).data, status=status.HTTP_201_CREATED)


class GoldRateApi(APIView):
    """The share of gold questions in raters' queues (0 to 0.5). Roles: admin changes it."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(request=GoldRateSerializer, responses={200: GoldRateSerializer, 403: ADMINS_ONLY})
    def put(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        data = GoldRateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        experiment = experiment_gold_rate_set(experiment=experiment, actor=request.user, **data.validated_data)
        return Response(GoldRateSerializer(experiment).data)


class GoldAccuracyApi(APIView):
    """Each rater's accuracy on the experiment's gold questions, with a Wilson interval.
    Roles: engineer (own or granted), admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: GoldAccuracySerializer(many=True), 404: NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(GoldAccuracySerializer(gold_accuracy_list(experiment=experiment), many=True).data)


class PairReportsApi(APIView):
    """Pairs raters reported as broken (data missing or unreadable), newest first.
    Roles: engineer (own or granted), admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: PairReportListSerializer(many=True), 404: NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(PairReportListSerializer(pair_reports_list(experiment=experiment), many=True).data)
