"""Request and response shapes of the JSON API (names are unique: they are the OpenAPI components)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from metrics_core import metrics_for_scheme
from raterapp.models import BudgetChange, Experiment, ImpactGroup, Judgement, PairReport, PairTask
from raterapp.services.preparation_control import preparation_stalled

FILE_KINDS = ("items", "base", "exp", "weights", "catalogue", "gold")


class ExperimentCreateSerializer(serializers.Serializer):
    """The fields of ``experiment_create``; files are either ``items`` or ``base`` + ``exp``,
    with an optional ``weights``, and always a ``catalogue``; ``kind=absolute`` takes ``base``
    (and ``weights``) only; a ``gold`` clustering is optional. Only types are checked here:
    the service checks values and file combinations (errors keyed by field, or ``files``)."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=Experiment.Kind.choices, required=False)
    items_location = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=1000,
        help_text="Partitioned Parquet items (item_id, base_cluster, exp_cluster[, weight], attributes) under one "
        "of the server's DATA_LOCATIONS, instead of an items upload; prepared on Dask.",
    )
    catalogue_location = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=1000,
        help_text="With items_location: a Parquet catalogue under DATA_LOCATIONS instead of the catalogue upload; "
        "only the sampled items' rows are read.",
    )
    question = serializers.CharField(required=False, max_length=500)
    guidelines = serializers.CharField(required=False, allow_blank=True)
    scheme = serializers.ChoiceField(choices=Experiment.Scheme.choices, required=False)
    n_draws = serializers.IntegerField(required=False)
    diff_share = serializers.FloatField(required=False)
    replication = serializers.IntegerField(required=False)
    seed = serializers.IntegerField(required=False)
    confidence = serializers.FloatField(required=False)
    workspace = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The workspace (by name; made if new) whose experiments share this catalogue's item ids and "
        "verdicts; empty: a workspace of its own.",
    )
    # A default, else a multipart request without the field reads as false (HTML checkbox rules).
    reuse_verdicts = serializers.BooleanField(
        required=False, default=True, help_text="Take verdicts of the workspace and offer its own (default true)."
    )
    items = serializers.FileField(required=False)
    base = serializers.FileField(required=False)
    exp = serializers.FileField(required=False)
    weights = serializers.FileField(required=False)
    catalogue = serializers.FileField(required=False)
    gold = serializers.FileField(required=False, help_text="Optional gold clustering: item_id, cluster_id.")


class ExperimentSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    workspace = serializers.CharField(source="workspace.name", read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)

    class Meta:
        model = Experiment
        fields = (
            "id", "name", "description", "kind", "engine", "items_location", "catalogue_location", "question",
            "guidelines", "owner",
            "scheme", "n_draws", "diff_share", "replication", "seed", "confidence", "gold_rate",
            "status", "status_label", "progress", "error", "error_id", "error_step", "heartbeat_at",
            "preparation_attempts", "items_count", "dropped_items", "created_at", "updated_at",
            "archived_at", "workspace", "reuse_verdicts",
        )  # fmt: skip
        read_only_fields = fields


class JudgingProgressSerializer(serializers.Serializer):
    tasks = serializers.IntegerField(help_text="Pairs to judge.")
    verdicts = serializers.IntegerField(help_text="Verdicts received.")
    wanted = serializers.IntegerField(help_text="Verdicts wanted (pairs × replication).")
    done = serializers.BooleanField()


class ExperimentDetailSerializer(ExperimentSerializer):
    judging = JudgingProgressSerializer(read_only=True)
    stalled = serializers.SerializerMethodField(
        help_text="Preparing with no sign of life for PREPARATION_STALL_SECONDS: the owner may re-run it."
    )

    class Meta(ExperimentSerializer.Meta):
        fields = (*ExperimentSerializer.Meta.fields, "judging", "stalled")
        read_only_fields = fields

    def get_stalled(self, experiment) -> bool:
        return preparation_stalled(experiment=experiment)


class ExperimentImpactSerializer(serializers.Serializer):
    overall = serializers.JSONField(allow_null=True, help_text="metrics_core impact output for all items.")
    dimensions = serializers.ListField(child=serializers.CharField(), help_text="Values of ?dimension= for groups.")


class ImpactGroupSerializer(serializers.ModelSerializer):
    class Meta:
        model = ImpactGroup
        fields = ("dimension", "label", "items", "affected_items", "weight", "metrics")


class SampledPairSerializer(serializers.Serializer):
    i = serializers.CharField(help_text="Item id of the vantage item.")
    j = serializers.CharField(help_text="Item id of the partner.")
    pair_class = serializers.CharField(help_text="self, split, merge or intersection.")
    stratum = serializers.CharField(help_text="all, or diff/stable for the stratified scheme.")
    draws = serializers.IntegerField()
    scheme = serializers.CharField()
    jaccard_contribution = serializers.FloatField(help_text="Share of JaccardDistance this row stands for.")
    task = serializers.IntegerField(allow_null=True, help_text="The judging task; null for self pairs.")
    verdicts = serializers.IntegerField(allow_null=True)
    wanted = serializers.IntegerField(allow_null=True)
    batch = serializers.IntegerField(help_text="The batch of draws that first drew the pair.")


class EstimateSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    stderr = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    judged_draws = serializers.IntegerField()
    drawn_draws = serializers.IntegerField()
    cs_low = serializers.FloatField(
        allow_null=True, required=False, help_text="Confidence sequence (abcde-spec §9): valid at every look."
    )
    cs_high = serializers.FloatField(allow_null=True, required=False)
    unsure_low = serializers.FloatField(
        allow_null=True, required=False, help_text="The estimate had every unsure verdict gone one way (§12)."
    )
    unsure_high = serializers.FloatField(allow_null=True, required=False)


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


class JudgementExportSerializer(serializers.Serializer):
    i = serializers.CharField()
    j = serializers.CharField()
    verdict = serializers.ChoiceField(choices=Judgement.Verdict.choices)
    task = serializers.IntegerField()
    rater = serializers.IntegerField()
    comment = serializers.CharField()
    created_at = serializers.DateTimeField()
    reused = serializers.BooleanField(help_text="Given in another experiment of the workspace (abcde-spec §11).")
    source_experiment = serializers.IntegerField(allow_null=True, help_text="The experiment a reused verdict is from.")


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


QUEUE_CLOSED_REASONS = (
    "queue_empty",
    "quota_daily",
    "quota_total",
    "budget_spent",
    "budget_paused",
    "rater_paused",
    "not_assigned",
)


class NextPairSerializer(serializers.Serializer):
    pair = PairSerializer(allow_null=True)
    reason = serializers.ChoiceField(
        choices=QUEUE_CLOSED_REASONS,
        allow_null=True,
        help_text="Why pair is null.",
    )
    question = serializers.CharField()
    guidelines = serializers.CharField(allow_blank=True)
    progress = RaterProgressSerializer()


class JudgementCreateSerializer(serializers.Serializer):
    task = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Judgement.Verdict.choices)
    client_id = serializers.UUIDField(help_text="Made by the client once per verdict: a retry sends it again.")
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class JudgementSerializer(serializers.ModelSerializer):
    progress = RaterProgressSerializer(read_only=True, required=False)

    class Meta:
        model = Judgement
        fields = ("id", "task", "verdict", "client_id", "comment", "created_at", "progress")
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
    unsure = serializers.IntegerField()
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


class TargetSerializer(serializers.Serializer):
    target_half_width = serializers.FloatField(
        min_value=0.0, max_value=1.0, help_text="ΔPrecision interval half-width at which there is enough data."
    )


class BudgetPoolSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    max_verdicts = serializers.IntegerField()
    spent = serializers.IntegerField()
    remaining = serializers.IntegerField()
    paused = serializers.BooleanField()
    experiments = serializers.ListField(child=serializers.IntegerField())


class BudgetPlanRowSerializer(serializers.Serializer):
    metric = serializers.CharField()
    half_width = serializers.FloatField(allow_null=True)
    more_verdicts = serializers.FloatField(allow_null=True, help_text="Expected further verdicts to the target.")
    cost = serializers.FloatField(allow_null=True)


class BudgetPlanSerializer(serializers.Serializer):
    target_half_width = serializers.FloatField()
    judgements = serializers.IntegerField()
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
    replication = serializers.IntegerField(min_value=1, max_value=20, required=False)
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
