"""Request and response shapes of the rater management API (``raterapp/api/raters.py``).

Numbers that can be undefined (no verdicts, no gold answer, no replicated pair) are null.
"""

from __future__ import annotations

from rest_framework import serializers

from raterapp.api.serializers.judging import QuotaSerializer
from raterapp.models import Experiment
from raterapp.selectors.raters import FLAGS

FLAG_HELP = (
    "too_fast: median seconds per verdict below RATER_MIN_SECONDS; low_gold_accuracy: gold accuracy below "
    "RATER_MIN_GOLD_ACCURACY on at least RATER_MIN_GOLD_ANSWERS sure gold answers."
)


class RaterStatsSerializer(serializers.Serializer):
    """A rater's numbers over the verdicts in scope (an experiment or all; since a moment or ever)."""

    rater = serializers.IntegerField(help_text="The rater's user id.")
    username = serializers.CharField()
    is_active = serializers.BooleanField(help_text="False: deactivated, cannot sign in; their verdicts stay.")
    paused = serializers.BooleanField(help_text="True: no pairs are leased to them until an admin unpauses them.")
    verdicts = serializers.IntegerField(help_text="Verdicts given, gold questions included.")
    unsure = serializers.IntegerField()
    unsure_share = serializers.FloatField(allow_null=True)
    last_verdict_at = serializers.DateTimeField(allow_null=True)
    timed_verdicts = serializers.IntegerField(help_text="Verdicts less than 10 minutes after the rater's previous one.")
    median_seconds = serializers.FloatField(
        allow_null=True, help_text="Median gap to the rater's previous verdict, over the timed verdicts."
    )
    gold_answered = serializers.IntegerField(help_text="Answers to gold questions.")
    gold_unsure = serializers.IntegerField()
    gold_correct = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True, help_text="Correct share of the sure gold answers.")
    gold_ci_low = serializers.FloatField(allow_null=True, help_text="Wilson interval of the gold accuracy.")
    gold_ci_high = serializers.FloatField(allow_null=True)
    replicated_verdicts = serializers.IntegerField(help_text="Verdicts on pairs other raters judged too.")
    mean_kappa = serializers.FloatField(
        allow_null=True, help_text="Cohen's kappa with each other rater, averaged weighted by the pairs they share."
    )
    kappa_raters = serializers.IntegerField(help_text="Other raters with a defined kappa against this one.")
    majority_verdicts = serializers.IntegerField(help_text="Verdicts on pairs where the other raters have a majority.")
    majority_share = serializers.FloatField(allow_null=True, help_text="Share of those that agree with the majority.")
    too_fast = serializers.BooleanField()
    low_gold_accuracy = serializers.BooleanField()
    flags = serializers.ListField(child=serializers.ChoiceField(choices=FLAGS), help_text=FLAG_HELP)


class RaterSerializer(RaterStatsSerializer):
    """What admins see of a rater: the numbers, the account, the quotas and the pause."""

    email = serializers.EmailField(allow_blank=True)
    daily_quota = serializers.IntegerField(allow_null=True, help_text="Verdicts per day; null: no limit.")
    total_quota = serializers.IntegerField(allow_null=True, help_text="Verdicts in all; null: no limit.")
    paused_reason = serializers.CharField(allow_blank=True)
    paused_at = serializers.DateTimeField(allow_null=True)


class AssignedExperimentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=Experiment.Status.choices)


class RaterDetailSerializer(RaterSerializer):
    assigned_experiments = AssignedExperimentSerializer(
        many=True, help_text="Experiments the rater is assigned to (besides, they rate every unrestricted one)."
    )


class RaterCreatedSerializer(RaterSerializer):
    set_password_url = serializers.CharField(
        allow_null=True, help_text="One-time link for the rater to choose a password (null when one was given)."
    )


class RaterCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField()
    password = serializers.CharField(
        required=False, write_only=True, max_length=128, help_text="Leave out to get a set-password link instead."
    )


class RaterUpdateSerializer(serializers.Serializer):
    """Any of: quotas, pause (with a reason) or unpause, deactivate or reactivate."""

    daily_quota = serializers.IntegerField(min_value=0, allow_null=True, required=False)
    total_quota = serializers.IntegerField(min_value=0, allow_null=True, required=False)
    quota_reason = serializers.CharField(
        max_length=2000,
        required=False,
        help_text="Why the quotas change: required when one does; kept in the audit log.",
    )
    paused = serializers.BooleanField(required=False)
    paused_reason = serializers.CharField(
        max_length=2000, required=False, help_text="Why the rater is paused: required with paused=true."
    )
    is_active = serializers.BooleanField(required=False)

    def validate(self, data):
        if data.get("paused") is True and not data.get("paused_reason", "").strip():
            raise serializers.ValidationError({"paused_reason": "Say why the rater is paused."})
        return data


class RaterExperimentSerializer(serializers.Serializer):
    experiment = serializers.IntegerField()
    name = serializers.CharField()
    mine = serializers.IntegerField(help_text="Your verdicts in it.")
    remaining = serializers.IntegerField(help_text="Verdicts it still wants from all raters.")
    blocked = serializers.CharField(
        allow_null=True,
        help_text="Why you cannot get a pair of it now (the reasons of next-pair: rater_paused, quota_daily, "
        "quota_total, budget_paused, budget_spent, queue_empty); null when you can.",
    )


class RaterMeSerializer(serializers.Serializer):
    rater = serializers.IntegerField()
    username = serializers.CharField()
    paused = serializers.BooleanField(help_text="An admin paused your rating: no pairs until they resume it.")
    paused_at = serializers.DateTimeField(allow_null=True)
    today = serializers.IntegerField(help_text="Your verdicts today, all experiments.")
    total = serializers.IntegerField(help_text="Your verdicts in all.")
    quota = QuotaSerializer()
    experiments = RaterExperimentSerializer(many=True, help_text="Experiments open to you for rating.")


class AssignedRaterSerializer(serializers.Serializer):
    rater = serializers.IntegerField()
    username = serializers.CharField()
    is_active = serializers.BooleanField()
    paused = serializers.BooleanField()


class RaterFitSerializer(serializers.Serializer):
    rater = serializers.IntegerField()
    username = serializers.CharField()
    sensitivity = serializers.FloatField(help_text="P(says equivalent | equivalent), Dawid–Skene.")
    specificity = serializers.FloatField(help_text="P(says not equivalent | not equivalent), Dawid–Skene.")
    verdicts = serializers.IntegerField(help_text="Sure verdicts fitted.")
    unsure = serializers.IntegerField()


class ExperimentRatersSerializer(serializers.Serializer):
    experiment = serializers.IntegerField()
    open_to_all = serializers.BooleanField(
        help_text="No rater is assigned and it is open to all raters: every rater may rate it."
    )
    who = serializers.ChoiceField(
        choices=["every_rater", "assigned", "nobody"],
        help_text="Who may rate it: every rater, only its assigned raters, or nobody (none assigned, not open to all).",
    )
    assigned = AssignedRaterSerializer(many=True)
    raters = RaterStatsSerializer(many=True, help_text="Assigned raters and everyone with a verdict in it.")
    fits = RaterFitSerializer(
        many=True, help_text="Each rater's estimated sensitivity and specificity (latest fit; empty until computed)."
    )


class ExperimentRatersUpdateSerializer(serializers.Serializer):
    raters = serializers.ListField(
        child=serializers.IntegerField(), max_length=10000,
        help_text="User ids of the raters who may rate the experiment; empty: every rater may if open_to_all.",
    )  # fmt: skip
    open_to_all = serializers.BooleanField(
        required=False, help_text="With no rater assigned, every rater may rate it (default: unchanged)."
    )


class AgreementSummarySerializer(serializers.Serializer):
    replicated_pairs = serializers.IntegerField()
    verdicts = serializers.IntegerField()
    unanimous_share = serializers.FloatField(allow_null=True)
    observed_agreement = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    gwet_ac1 = serializers.FloatField(allow_null=True)
    unsure_share = serializers.FloatField(allow_null=True)


class RaterAgreementSerializer(serializers.Serializer):
    rater = serializers.IntegerField()
    username = serializers.CharField()
    replicated_verdicts = serializers.IntegerField()
    mean_kappa = serializers.FloatField(allow_null=True)
    kappa_raters = serializers.IntegerField()
    majority_verdicts = serializers.IntegerField()
    majority_share = serializers.FloatField(allow_null=True)


class RaterPairKappaSerializer(serializers.Serializer):
    rater_a = serializers.IntegerField()
    rater_a_username = serializers.CharField()
    rater_b = serializers.IntegerField()
    rater_b_username = serializers.CharField()
    pairs = serializers.IntegerField(help_text="Pairs both judged.")
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's kappa; null when undefined.")


class ExperimentAgreementSerializer(serializers.Serializer):
    experiment = serializers.IntegerField()
    summary = AgreementSummarySerializer()
    raters = RaterAgreementSerializer(many=True)
    pairwise = RaterPairKappaSerializer(many=True)
