"""The rater's loop: pairs, verdicts, undo, reports and leases."""

from __future__ import annotations

from rest_framework import serializers

from raterapp.models import Judgement, PairReport
from raterapp.vocabulary import QueueClosedReason


class ItemCardSerializer(serializers.Serializer):
    title = serializers.CharField()
    description = serializers.CharField()
    image_url = serializers.CharField()
    url = serializers.CharField()
    attributes = serializers.DictField()


class QuotaSerializer(serializers.Serializer):
    daily = serializers.IntegerField(allow_null=True, help_text="Verdicts per day; null: no daily quota.")
    daily_left = serializers.IntegerField(allow_null=True)
    total = serializers.IntegerField(allow_null=True, help_text="Verdicts in all; null: no total quota.")
    total_left = serializers.IntegerField(allow_null=True)


class RaterProgressSerializer(serializers.Serializer):
    session = serializers.IntegerField(
        allow_null=True, help_text="Your verdicts in this experiment since you signed in (null without a session)."
    )
    today = serializers.IntegerField(help_text="Your verdicts today, all experiments.")
    mine = serializers.IntegerField(help_text="Your verdicts in this experiment.")
    remaining = serializers.IntegerField(help_text="Verdicts the experiment still wants from all raters.")
    quota = QuotaSerializer()


class PairSerializer(serializers.Serializer):
    task = serializers.IntegerField()
    lease_expires_at = serializers.DateTimeField()
    left = ItemCardSerializer()
    right = ItemCardSerializer()


class NextPairRequestSerializer(serializers.Serializer):
    holding = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list, max_length=10,
        help_text="Tasks the page already shows or preloaded: the answer is another one.",
    )  # fmt: skip


class LeasedPairSerializer(serializers.Serializer):
    pair = PairSerializer(allow_null=True)
    reason = serializers.ChoiceField(
        choices=QueueClosedReason.choices,
        allow_null=True,
        help_text="Why pair is null.",
    )


class NextPairSerializer(LeasedPairSerializer):
    question = serializers.CharField()
    guidelines = serializers.CharField(allow_blank=True)
    progress = RaterProgressSerializer()


class JudgementCreateSerializer(serializers.Serializer):
    task = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Judgement.Verdict.choices)
    client_id = serializers.UUIDField(help_text="Made by the client once per verdict: a retry sends it again.")
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    next = NextPairRequestSerializer(
        required=False, allow_null=True,
        help_text="Also lease the next pair, as next-pair would with this body: the answer's `next` carries it.",
    )  # fmt: skip


class JudgementSerializer(serializers.ModelSerializer):
    progress = RaterProgressSerializer(
        read_only=True, required=False, allow_null=True,
        help_text="Null when it could not be read after the verdict was stored (see `degraded`).",
    )  # fmt: skip
    next = LeasedPairSerializer(
        read_only=True, required=False, allow_null=True,
        help_text="With `next` in the request: the next pair, or null when it could not be leased "
        "(the rater holds two pairs already, or see `degraded`): ask next-pair then.",
    )  # fmt: skip
    degraded = serializers.CharField(
        read_only=True, required=False,
        help_text="Present when the verdict was stored but what follows it (the next pair, the progress) "
        "failed on the server: what is missing and what to do.",
    )  # fmt: skip

    class Meta:
        model = Judgement
        fields = ("id", "task", "verdict", "client_id", "comment", "created_at", "progress", "next", "degraded")
        read_only_fields = fields


class JudgementUndoSerializer(serializers.Serializer):
    pair = PairSerializer(help_text="The pair again, leased back to you, on the same sides.")
    progress = RaterProgressSerializer()


class PairReportCreateSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=PairReport.Reason.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class PairReportSerializer(serializers.ModelSerializer):
    progress = RaterProgressSerializer(read_only=True, required=False)

    class Meta:
        model = PairReport
        fields = ("id", "task", "reason", "note", "created_at", "progress")
        read_only_fields = fields


class LeaseRenewRequestSerializer(serializers.Serializer):
    tasks = serializers.ListField(child=serializers.IntegerField(), max_length=10)


class LeaseSerializer(serializers.Serializer):
    task = serializers.IntegerField()
    lease_expires_at = serializers.DateTimeField()


class LeaseRenewSerializer(serializers.Serializer):
    leases = LeaseSerializer(many=True)
    lost = serializers.ListField(child=serializers.IntegerField(), help_text="Tasks whose lease is gone.")
