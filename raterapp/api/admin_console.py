"""The admin console's actions as API endpoints: a rater's new password link, a gold
question's answer and retirement, and the resolution of a broken-pair report.

Roles: admin (403 for engineers and raters, nothing changed; 404 for an unknown id).
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_rater_for_admin
from raterapp.models import PairReport, PairTask
from raterapp.services.accounts.password_links import rater_password_link
from raterapp.services.judging.gold import gold_answer_set, gold_restore, gold_retire
from raterapp.services.judging.report_resolution import pair_report_resolve

from .common import ONLY_ADMINS, IsAdmin, validated


class PasswordLinkSerializer(serializers.Serializer):
    username = serializers.CharField()
    set_password_url = serializers.CharField(help_text="One-time link to choose a new password; not stored.")


class RaterPasswordLinkApi(APIView):
    """A new one-time link at which the rater chooses a new password (POST). It is in this
    answer only. Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(request=None, responses={200: PasswordLinkSerializer, 403: ONLY_ADMINS})
    def post(self, request, rater_id: int):
        rater = access_rater_for_admin(request.user, rater_id)
        path = rater_password_link(actor=request.user, rater=rater)
        body = {"username": rater.get_username(), "set_password_url": request.build_absolute_uri(path)}
        return Response(PasswordLinkSerializer(body).data, headers={"Cache-Control": "no-store"})


class GoldPairChangeSerializer(serializers.Serializer):
    answer = serializers.ChoiceField(choices=PairTask.GOLD_ANSWERS, required=False)
    retired = serializers.BooleanField(required=False)


class GoldPairStateSerializer(serializers.ModelSerializer):
    gold_answer = serializers.CharField(read_only=True, help_text="equivalent or not_equivalent")
    retired = serializers.SerializerMethodField()

    class Meta:
        model = PairTask
        fields = ("id", "gold_answer", "retired", "retired_at")

    def get_retired(self, task) -> bool:
        return task.retired_at is not None


class GoldPairApi(APIView):
    """Correct a gold question's answer, retire it or serve it again (PATCH). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(request=GoldPairChangeSerializer, responses={200: GoldPairStateSerializer, 403: ONLY_ADMINS})
    def patch(self, request, task_id: int):
        task = get_object_or_404(PairTask.objects.gold(), pk=task_id)
        values = validated(GoldPairChangeSerializer, request.data)
        if "answer" in values:
            gold_answer_set(task=task, actor=request.user, answer=values["answer"])
        if values.get("retired") is True:
            gold_retire(task=task, actor=request.user)
        elif values.get("retired") is False:
            gold_restore(task=task, actor=request.user)
        task.refresh_from_db()
        return Response(GoldPairStateSerializer(task).data)


class ReportResolveSerializer(serializers.Serializer):
    resolution = serializers.ChoiceField(choices=PairReport.Resolution.choices)
    answer = serializers.ChoiceField(choices=PairTask.GOLD_ANSWERS, required=False, default="")
    note = serializers.CharField(max_length=2000)


class ReportResolvedSerializer(serializers.ModelSerializer):
    resolved_by = serializers.CharField(source="resolved_by.username", default=None)

    class Meta:
        model = PairReport
        fields = ("id", "task", "reason", "note", "resolution", "resolution_note", "resolved_at", "resolved_by")


class PairReportResolveApi(APIView):
    """Resolve a broken-pair report with a note: keep the pair, exclude it from rating, or make
    it a gold question with an answer (POST). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(request=ReportResolveSerializer, responses={200: ReportResolvedSerializer, 403: ONLY_ADMINS})
    def post(self, request, report_id: int):
        report = get_object_or_404(PairReport.objects.select_related("task__experiment"), pk=report_id)
        report = pair_report_resolve(
            report=report, actor=request.user, **validated(ReportResolveSerializer, request.data)
        )
        return Response(ReportResolvedSerializer(report).data)
