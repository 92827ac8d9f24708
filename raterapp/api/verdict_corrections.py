"""Putting verdicts right: a rater's own recent verdicts (the judging page's history strip, which
a reload reads again), a rater's change of one of them, and an admin's void of one verdict or
of a rater's verdicts in a time range, with a reason.

Roles: the history and the change are the rater's, of their own verdicts only (others' answer
404, other roles 403); a void is the admin's (403 for engineers and raters, nothing changed).
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_rater, access_judgement_for_rater, access_rater_for_admin
from raterapp.models import Judgement
from raterapp.selectors.verdict_history import rater_recent_verdicts_list
from raterapp.services.judging import judgement_change, judgements_void

from .common import ONLY_ADMINS, IsAdmin, IsRater, validated
from .serializers.judging import ItemCardSerializer

NOT_FOUND = OpenApiResponse(description="No such experiment or verdict of yours.")
REFUSED = OpenApiResponse(description="Refused (too old, undone or voided); nothing was changed.")


class RecentVerdictSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The verdict (judgement) id: change or undo it by this id.")
    task = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Judgement.Verdict.choices)
    comment = serializers.CharField(allow_blank=True)
    client_id = serializers.UUIDField()
    created_at = serializers.DateTimeField()
    left = ItemCardSerializer()
    right = ItemCardSerializer()


class RecentVerdictsSerializer(serializers.Serializer):
    undo_seconds = serializers.IntegerField(help_text="How long a verdict can be changed (UNDO_SECONDS).")
    verdicts = RecentVerdictSerializer(many=True, help_text="Newest first.")


class RaterRecentVerdictsApi(APIView):
    """The rater's own verdicts in the experiment of the last ``UNDO_SECONDS`` (at most 50),
    newest first, with the pair's cards as the rater saw them: what the judging page's history
    strip shows, also after a reload. Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rater_poll"

    @extend_schema(responses={200: RecentVerdictsSerializer, 404: NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_rater(request.user, experiment_id)
        body = {
            "undo_seconds": settings.UNDO_SECONDS,
            "verdicts": rater_recent_verdicts_list(rater=request.user, experiment=experiment),
        }
        return Response(RecentVerdictsSerializer(body).data)


class JudgementChangeSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=Judgement.Verdict.choices)
    comment = serializers.CharField(
        required=False, allow_blank=True, max_length=5000, help_text="Left as it was when absent."
    )


class ChangedJudgementSerializer(serializers.ModelSerializer):
    class Meta:
        model = Judgement
        fields = ("id", "task", "verdict", "comment", "client_id", "created_at")


class JudgementChangeApi(APIView):
    """Change one of one's own verdicts of the last ``UNDO_SECONDS`` (any of them, also after a
    reload) in place (PUT): it stays one verdict (same id, budget unit and ``client_id``), the
    estimates are recomputed, and the change goes to the audit log. 409 for a too old verdict or
    one undone or voided. Roles: rater (own verdicts)."""

    permission_classes = [IsRater]
    throttle_scope = "rating"

    @extend_schema(
        request=JudgementChangeSerializer,
        responses={
            200: ChangedJudgementSerializer,
            400: OpenApiResponse(description="Invalid verdict."),
            404: NOT_FOUND,
            409: REFUSED,
        },
    )
    def put(self, request, judgement_id: int):
        judgement = access_judgement_for_rater(request.user, judgement_id)
        values = validated(JudgementChangeSerializer, request.data)
        changed = judgement_change(judgement_id=judgement.pk, rater=request.user, **values)
        return Response(ChangedJudgementSerializer(changed).data)


class VerdictVoidSerializer(serializers.Serializer):
    judgement = serializers.IntegerField(required=False, help_text="One verdict to void; or rater, since and until.")
    rater = serializers.IntegerField(required=False, help_text="The rater whose verdicts in [since, until) are voided.")
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    experiment = serializers.IntegerField(required=False, help_text="Only this experiment's verdicts (optional).")
    reason = serializers.CharField(max_length=2000, help_text="Why: kept in the audit log.")


class VerdictVoidResultSerializer(serializers.Serializer):
    voided = serializers.ListField(child=serializers.IntegerField(), help_text="The verdict ids voided.")


class VerdictVoidApi(APIView):
    """Void one verdict, or all of a rater's verdicts given in ``[since, until)`` (POST), with a
    reason. Voided verdicts leave the estimates (recomputed), their budget units go back to the
    budget and the pool each was charged to (refunds in the ledger), their pairs are offered again
    while replication asks for them, and the audit log keeps who, when, the range, the count and
    the reason (one entry per experiment). 400 without a reason or when nothing matches; 404 for an
    unknown rater. Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(
        request=VerdictVoidSerializer,
        responses={
            200: VerdictVoidResultSerializer,
            400: OpenApiResponse(description="No reason, no verdict or range, or nothing matches."),
            403: ONLY_ADMINS,
        },
    )
    def post(self, request):
        values = validated(VerdictVoidSerializer, request.data)
        rater = access_rater_for_admin(request.user, values["rater"]) if "rater" in values else None
        voided = judgements_void(
            actor=request.user,
            reason=values["reason"],
            judgement_id=values.get("judgement"),
            rater=rater,
            since=values.get("since"),
            until=values.get("until"),
            experiment_id=values.get("experiment"),
        )
        return Response(VerdictVoidResultSerializer({"voided": voided}).data)
