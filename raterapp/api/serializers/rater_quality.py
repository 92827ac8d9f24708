"""Rater quality: gold questions, gold accuracy and the reports inbox."""

from __future__ import annotations

from rest_framework import serializers

from raterapp.models import PairReport, PairTask


class GoldPairCreateSerializer(serializers.Serializer):
    item_a = serializers.CharField(help_text="Item id.")
    item_b = serializers.CharField(help_text="Item id.")
    answer = serializers.ChoiceField(choices=PairTask.GOLD_ANSWERS)


class GoldPairSerializer(serializers.Serializer):
    task = serializers.IntegerField(source="pk")
    item_a = serializers.CharField(source="item_a.item_id")
    item_b = serializers.CharField(source="item_b.item_id")
    answer = serializers.CharField(source="gold_answer")
    judged = serializers.IntegerField(required=False, help_text="Verdicts given on it.")
    correct = serializers.IntegerField(required=False, help_text="Verdicts equal to the answer.")
    retired_at = serializers.DateTimeField(allow_null=True, help_text="Served to no rater since (null: served).")


class GoldAccuracySerializer(serializers.Serializer):
    rater = serializers.IntegerField()
    username = serializers.CharField()
    answered = serializers.IntegerField(help_text="Gold questions answered.")
    unsure = serializers.IntegerField(help_text="Answered unsure: not counted in the accuracy.")
    correct = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True, help_text="Correct among sure answers.")
    ci_low = serializers.FloatField(allow_null=True, help_text="Wilson interval at the experiment's confidence.")
    ci_high = serializers.FloatField(allow_null=True)


class GoldRateSerializer(serializers.Serializer):
    gold_rate = serializers.FloatField(min_value=0.0, max_value=0.5)


class PairReportListSerializer(serializers.ModelSerializer):
    item_a = serializers.CharField(source="task.item_a.item_id")
    item_b = serializers.CharField(source="task.item_b.item_id")
    rater = serializers.CharField(source="rater.username")

    class Meta:
        model = PairReport
        fields = ("id", "task", "item_a", "item_b", "rater", "reason", "note", "created_at")
        read_only_fields = fields
