"""Pair scores (abcde-spec §15): the team's own scores uploaded, and every pair's score exported as
the command line's SCORES file.

Roles: engineers read the experiments they own or were granted, admins all; only the owner or an
admin uploads (403 for a granted engineer, nothing changed); raters 403, anonymous users 401.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_owner
from raterapp.selectors.scores import SCORE_FIELDS, pair_scores_rows
from raterapp.services.sampling.uploaded_scores import pair_scores_upload

from .common import EXPERIMENT_NOT_FOUND, OWNER_ONLY, ExperimentReadApi, ExportApi, IsEngineerOrAdmin, validated
from .exports import export_schema


class ScoresUploadSerializer(serializers.Serializer):
    scores = serializers.FileField(
        help_text="CSV or Parquet with columns i, j (item ids, as in the pairs export; either order) and score "
        "(any finite number, higher: more likely equivalent): your own model's scores of the sampled pairs."
    )


class ScoresUploadedSerializer(serializers.Serializer):
    scored_pairs = serializers.IntegerField(help_text="Distinct sampled pairs now scored by the file.")
    built_in_pairs = serializers.IntegerField(help_text="Distinct sampled pairs it left out (built-in score kept).")
    unmatched_rows = serializers.IntegerField(help_text="Rows of the file for pairs the sample lacks (ignored).")


class PairScoreSerializer(serializers.Serializer):
    i = serializers.CharField(help_text="Item id of one item of the pair.")
    j = serializers.CharField(help_text="Item id of the other.")
    score = serializers.FloatField(help_text="Higher: more likely equivalent.")
    score_source = serializers.CharField(help_text="built_in (the card similarity) or uploaded.")


class ExperimentScoresApi(APIView):
    """POST the team's own pair scores (owner or admin): they replace the built-in card similarity
    for the sampled pairs they cover, all or nothing (a bad row refuses the file, naming the line),
    and the estimates are recomputed. Raters never see a score."""

    permission_classes = [IsEngineerOrAdmin]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=ScoresUploadSerializer,
        responses={200: ScoresUploadedSerializer, 403: OWNER_ONLY, 404: EXPERIMENT_NOT_FOUND},
    )
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        upload = validated(ScoresUploadSerializer, request.data)["scores"]
        return Response(ScoresUploadedSerializer(pair_scores_upload(experiment=experiment, upload=upload)).data)


class ExperimentScoresExportApi(ExperimentReadApi, ExportApi):
    """Every scored non-self sampled pair once, as ``python -m metrics_core estimate --scores`` reads it.
    Roles: engineer (own or granted), admin."""

    many = True
    export_name = "scores"
    csv_fields = SCORE_FIELDS
    body_serializer = PairScoreSerializer
    read = staticmethod(pair_scores_rows)

    @export_schema(PairScoreSerializer(many=True))
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)
