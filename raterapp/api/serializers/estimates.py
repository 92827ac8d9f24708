"""Estimates, their snapshots and exports, and the experiment's target."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from metrics_core import metrics_for_scheme
from raterapp.models import Judgement


class EstimateSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="The estimate (abcde-spec §6); null: undefined.")
    stderr = serializers.FloatField(allow_null=True, help_text="Its standard error; null: undefined.")
    ci_low = serializers.FloatField(
        allow_null=True,
        help_text="The fixed-n interval at the experiment's confidence (abcde-spec §6): valid at one look.",
    )
    ci_high = serializers.FloatField(allow_null=True)
    judged_draws = serializers.IntegerField(
        help_text="Draws it rests on that had a verdict (self pairs count as judged)."
    )
    drawn_draws = serializers.IntegerField(help_text="Draws it rests on, judged or not.")
    cs_low = serializers.FloatField(
        allow_null=True, required=False, help_text="Confidence sequence (abcde-spec §9): valid at every look."
    )
    cs_high = serializers.FloatField(allow_null=True, required=False)
    unsure_low = serializers.FloatField(
        allow_null=True, required=False, help_text="The estimate had every unsure verdict gone one way (§12)."
    )
    unsure_high = serializers.FloatField(allow_null=True, required=False)
    recall_base_low = serializers.FloatField(
        allow_null=True,
        required=False,
        help_text="ΔRecall and IQ only: the Recall_Base(AffectedItems) range they assume (abcde-spec §14).",
    )
    recall_base_high = serializers.FloatField(allow_null=True, required=False)
    assumption = serializers.CharField(
        required=False, help_text='ΔRecall and IQ only: that assumption in words ("assuming Recall_Base 40–80%").'
    )
    labelled_draws = serializers.IntegerField(
        required=False, help_text="Draw order only: the draws of its labelled prefix it rests on (abcde-spec §14)."
    )

    def to_representation(self, instance):
        """Keys an estimate does not have stay absent, as in metrics_core's JSON (the Recall_Base
        range is ΔRecall's and IQ's only), rather than null."""
        data = super().to_representation(instance)
        for name in ("recall_base_low", "recall_base_high"):
            if name not in instance:
                data.pop(name, None)
        return data


class EstimateSnapshotSerializer(serializers.Serializer):
    """An ``EstimateSnapshot``: the same keys as the JSON published on the live channel."""

    id = serializers.IntegerField()
    experiment = serializers.IntegerField(source="experiment_id")
    created_at = serializers.DateTimeField()
    scheme = serializers.CharField(source="estimates.scheme")
    confidence = serializers.FloatField(source="estimates.confidence")
    judgements = serializers.IntegerField()
    judged_pairs = serializers.IntegerField()
    exact = serializers.DictField(
        source="estimates.exact", child=serializers.FloatField(allow_null=True), help_text="Exact impact metrics."
    )
    estimates = serializers.DictField(
        source="estimates.estimates", child=EstimateSerializer(), help_text="Estimated metric by name."
    )
    agreement = serializers.SerializerMethodField(help_text="Rater agreement on replicated pairs (null before).")
    new_pair_share = serializers.FloatField(
        source="estimates.new_pair_share",
        allow_null=True,
        required=False,
        help_text="Chance that another draw is a pair not drawn yet (Good–Turing), for the plan of more draws.",
    )
    sample_draws = serializers.IntegerField(
        source="estimates.sample_draws", required=False, help_text="Draws of the sample, every batch."
    )
    labelled = serializers.DictField(
        source="estimates.labelled",
        required=False,
        help_text="Draw order only (abcde-spec §14): the labelled prefix's draws, the verdicts waiting for it "
        "and each batch's prefix, as the metrics_core ``estimate`` output's ``labelled``.",
    )
    model_assisted = serializers.DictField(
        source="estimates.model_assisted",
        required=False,
        help_text="With a score of every drawn pair, in draw order (abcde-spec §15): the model-assisted estimates "
        "(each with lambda and verdicts_saved) and the classes, as ``estimate --scores`` prints them.",
    )

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_agreement(self, snapshot) -> dict | None:
        return snapshot.estimates.get("agreement")

    def to_representation(self, instance):
        """The metrics in report order (the database's JSON keeps no key order)."""
        data = super().to_representation(instance)
        order = {name: k for k, name in enumerate(metrics_for_scheme(data["scheme"]))}
        data["estimates"] = dict(sorted(data["estimates"].items(), key=lambda item: order.get(item[0], len(order))))
        return data


class EstimateRowSerializer(EstimateSerializer):
    metric = serializers.CharField()
    estimator = serializers.ChoiceField(
        choices=["human_only", "model_assisted"],
        help_text="human_only: from the verdicts alone; model_assisted: a score of every drawn pair corrected by "
        "the verdicts (abcde-spec §15), the estimates the headline decides on while the owner keeps them on.",
    )
    verdicts_saved = serializers.FloatField(
        allow_null=True, required=False, help_text="model_assisted: how many times the verdicts the score is worth."
    )

    def get_fields(self):
        fields = super().get_fields()
        # "lambda" is a Python keyword: the field is added by name.
        fields["lambda"] = serializers.FloatField(
            allow_null=True,
            required=False,
            help_text="model_assisted: the weight given to the score (null for ΔRecall and IQ).",
        )
        return fields


class JudgementExportSerializer(serializers.Serializer):
    i = serializers.CharField()
    j = serializers.CharField()
    verdict = serializers.ChoiceField(choices=Judgement.Verdict.choices)
    task = serializers.IntegerField()
    rater = serializers.IntegerField(
        allow_null=True,
        help_text="The rater's user id; null on the unsure row that closes a pair excluded after a report "
        "without a verdict (draw order: the command line then counts it resolved, as the app does).",
    )
    comment = serializers.CharField(help_text="The rater's comment; empty when none.")
    created_at = serializers.DateTimeField()
    reused = serializers.BooleanField(help_text="Given in another experiment of the workspace (abcde-spec §11).")
    source_experiment = serializers.IntegerField(allow_null=True, help_text="The experiment a reused verdict is from.")


class TargetSerializer(serializers.Serializer):
    target_half_width = serializers.FloatField(
        min_value=0.0, max_value=1.0, help_text="ΔPrecision interval half-width at which there is enough data."
    )
