"""Budgets, pools and their changes."""

from __future__ import annotations

from rest_framework import serializers

from raterapp.models import BudgetChange
from raterapp.services.experiments.budgets import MAX_REPLICATION


class BudgetPoolSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    max_verdicts = serializers.IntegerField(help_text="Verdicts the pool pays for in all.")
    spent = serializers.IntegerField()
    remaining = serializers.IntegerField()
    paused = serializers.BooleanField(help_text="No new pairs are leased while paused.")
    experiments = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of its experiments.")


class BudgetPlanRowSerializer(serializers.Serializer):
    metric = serializers.CharField()
    half_width = serializers.FloatField(allow_null=True)
    more_verdicts = serializers.FloatField(allow_null=True, help_text="Expected further verdicts to the target.")
    cost = serializers.FloatField(allow_null=True)


class BudgetPlanSerializer(serializers.Serializer):
    target_half_width = serializers.FloatField()
    judgements = serializers.IntegerField()
    model_assisted = serializers.BooleanField(
        help_text="The half-widths are the model-assisted estimates': the plan counts the score's saving."
    )
    metrics = BudgetPlanRowSerializer(many=True)


class BudgetSerializer(serializers.Serializer):
    experiment = serializers.IntegerField()
    max_verdicts = serializers.IntegerField(allow_null=True, help_text="Null: no limit.")
    replication = serializers.IntegerField(help_text="Verdicts wanted per sampled pair.")
    cost_per_verdict = serializers.DecimalField(max_digits=12, decimal_places=4)
    total_cost = serializers.DecimalField(max_digits=24, decimal_places=4, allow_null=True)
    spent = serializers.IntegerField(help_text="Verdicts given (gold questions included).")
    spent_cost = serializers.DecimalField(max_digits=24, decimal_places=4)
    remaining = serializers.IntegerField(allow_null=True)
    held = serializers.IntegerField(help_text="Pairs leased to raters right now.")
    paused = serializers.BooleanField()
    pool = BudgetPoolSerializer(allow_null=True)
    plan = BudgetPlanSerializer()


class BudgetUpdateSerializer(serializers.Serializer):
    max_verdicts = serializers.IntegerField(min_value=0, allow_null=True, required=False)
    replication = serializers.IntegerField(min_value=1, max_value=MAX_REPLICATION, required=False)
    cost_per_verdict = serializers.DecimalField(max_digits=12, decimal_places=4, min_value=0, required=False)
    paused = serializers.BooleanField(required=False)
    pool = serializers.IntegerField(allow_null=True, required=False, help_text="A pool id, or null for none.")
    reason = serializers.CharField(max_length=2000, help_text="Why: written to the audit log.")


class BudgetPoolCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    max_verdicts = serializers.IntegerField(min_value=0)
    reason = serializers.CharField(max_length=2000)


class BudgetPoolUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    max_verdicts = serializers.IntegerField(min_value=0, required=False)
    paused = serializers.BooleanField(required=False)
    reason = serializers.CharField(max_length=2000)


class BudgetChangeSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.get_username")
    experiment = serializers.IntegerField(source="budget.experiment_id", allow_null=True, default=None)

    class Meta:
        model = BudgetChange
        fields = ("id", "experiment", "pool", "actor", "field", "old_value", "new_value", "reason", "via", "created_at")
