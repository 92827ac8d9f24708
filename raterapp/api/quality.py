"""Rater quality of an experiment: gold questions, gold accuracy, reported pairs.

Roles: engineers (own or granted experiments) and admins read; only admins create gold
questions and set the gold rate (403 for others, nothing changed).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer
from raterapp.selectors.rater_quality import gold_accuracy_list, gold_pairs_list, pair_reports_list
from raterapp.services.judging.gold import experiment_gold_rate_set, gold_pair_create

from .common import ONLY_ADMINS, ExperimentReadApi, IsEngineerOrAdmin, change_schema, read_schema, validated
from .serializers.rater_quality import (
    GoldAccuracySerializer,
    GoldPairCreateSerializer,
    GoldPairSerializer,
    GoldRateSerializer,
    PairReportListSerializer,
)

NOT_FOUND = OpenApiResponse(description="No such experiment visible to you.")


class _RaterQualityListApi(ExperimentReadApi):
    many = True


class GoldPairsApi(_RaterQualityListApi):
    """The experiment's gold questions with how often they were answered and answered right
    (GET); mark a pair of its items as gold with a known answer (POST, admins).
    Roles: engineer (own or granted) reads, admin."""

    body_serializer = GoldPairSerializer
    read = staticmethod(gold_pairs_list)

    @read_schema(GoldPairSerializer(many=True), NOT_FOUND)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)

    @change_schema(
        GoldPairCreateSerializer, GoldPairSerializer, status=201, invalid="Unknown items.", refused=ONLY_ADMINS
    )
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        task = gold_pair_create(
            experiment=experiment, actor=request.user, **validated(GoldPairCreateSerializer, request.data)
        )
        return Response(GoldPairSerializer(task).data, status=status.HTTP_201_CREATED)


class GoldRateApi(APIView):
    """The share of gold questions in raters' queues (0 to 0.5). Roles: admin changes it."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(request=GoldRateSerializer, responses={200: GoldRateSerializer, 403: ONLY_ADMINS})
    def put(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        rate = validated(GoldRateSerializer, request.data)
        experiment = experiment_gold_rate_set(experiment=experiment, actor=request.user, **rate)
        return Response(GoldRateSerializer(experiment).data)


class GoldAccuracyApi(_RaterQualityListApi):
    """Each rater's accuracy on the experiment's gold questions, with a Wilson interval.
    Roles: engineer (own or granted), admin."""

    body_serializer = GoldAccuracySerializer
    read = staticmethod(gold_accuracy_list)

    @read_schema(GoldAccuracySerializer(many=True), NOT_FOUND)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


class PairReportsApi(_RaterQualityListApi):
    """Pairs raters reported as broken (data missing or unreadable), newest first.
    Roles: engineer (own or granted), admin."""

    body_serializer = PairReportListSerializer
    read = staticmethod(pair_reports_list)

    @read_schema(PairReportListSerializer(many=True), NOT_FOUND)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)
