"""Experiments, their uploads, impact and sample."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from raterapp.models import Experiment, ImpactGroup, UploadedFile
from raterapp.services.preparation.control import preparation_stalled
from raterapp.vocabulary import PARAMETER_HELP, input_help

FILE_KINDS = tuple(UploadedFile.Kind.values)
# Upload fields renamed, by their old name: accepted for one release, flagged deprecated (README).
DEPRECATED_FILE_KINDS = {"gold": UploadedFile.Kind.GROUND_TRUTH}


def deprecated_file_kinds_used(data) -> list[str]:
    """What to send instead of each deprecated upload field in ``data``, in words."""
    return [
        f"The upload field '{old}' is deprecated: send the file as '{new}'."
        for old, new in DEPRECATED_FILE_KINDS.items()
        if old in data
    ]


@extend_schema_serializer(deprecate_fields=list(DEPRECATED_FILE_KINDS))
class ExperimentCreateSerializer(serializers.Serializer):
    """The fields of ``experiment_create``; files are either ``items`` or ``base`` + ``exp``,
    with an optional ``weights``, and always a ``catalogue``; ``kind=absolute`` takes ``base``
    (and ``weights``) only; a ``ground_truth`` clustering is optional. Only types are checked here:
    the service checks values and file combinations (errors keyed by field, or ``files``).
    A deprecated field name comes out under its new name."""

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
    scheme = serializers.ChoiceField(
        choices=Experiment.Scheme.choices, required=False, help_text=PARAMETER_HELP["scheme"]
    )
    n_draws = serializers.IntegerField(required=False, help_text=PARAMETER_HELP["n_draws"])
    diff_share = serializers.FloatField(required=False, help_text=PARAMETER_HELP["diff_share"])
    replication = serializers.IntegerField(required=False, help_text=PARAMETER_HELP["replication"])
    seed = serializers.IntegerField(required=False, help_text=PARAMETER_HELP["seed"])
    confidence = serializers.FloatField(required=False, help_text=PARAMETER_HELP["confidence"])
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
    requested_verdicts = serializers.IntegerField(
        required=False, allow_null=True, help_text="The budget to ask admins for, in verdicts (a new one has none)."
    )
    rating_request = serializers.CharField(
        required=False, allow_blank=True, max_length=2000, help_text="A note to the admins: which raters, by when."
    )
    items = serializers.FileField(required=False, help_text=input_help("items"))
    base = serializers.FileField(required=False, help_text=input_help("base"))
    exp = serializers.FileField(required=False, help_text=input_help("exp"))
    weights = serializers.FileField(required=False, help_text="Optional. " + input_help("weights"))
    catalogue = serializers.FileField(required=False, help_text=input_help("catalogue"))
    ground_truth = serializers.FileField(required=False, help_text="Optional. " + input_help("ground_truth"))
    gold = serializers.FileField(
        required=False, help_text="Deprecated: the old name of ground_truth, accepted for one release."
    )

    def validate(self, data):
        for old, new in DEPRECATED_FILE_KINDS.items():
            if old in data:
                if new in data:
                    raise serializers.ValidationError({old: f"Give the file once, as {new} ({old} is its old name)."})
                data[new] = data.pop(old)
        return data


class WaitingSerializer(serializers.Serializer):
    raters = serializers.BooleanField(help_text="No active, unpaused rater may rate it.")
    budget = serializers.BooleanField(help_text="Its budget (or its pool) has no verdict left.")
    label = serializers.CharField(help_text="'Waiting for raters', 'Waiting for budget' or both.")  # type: ignore[assignment]  # a field named label: the stubs see Serializer's own Field.label
    reasons = serializers.ListField(child=serializers.CharField())
    who = serializers.CharField(help_text="Who can act: an admin.")
    fix_url = serializers.CharField(help_text="The admin console's page where they do.")
    fix_label = serializers.CharField()
    requested_verdicts = serializers.IntegerField(allow_null=True, help_text="The budget its owner asked for.")
    request = serializers.CharField(help_text="Its owner's note to the admins.")


class ExperimentSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    waiting = serializers.SerializerMethodField(
        help_text="In rating, what it waits for before a rater can be offered a pair; null: nothing."
    )
    workspace = serializers.CharField(source="workspace.name", read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)

    class Meta:
        model = Experiment
        fields: tuple[str, ...] = (
            "id", "name", "description", "kind", "engine", "items_location", "catalogue_location", "question",
            "guidelines", "owner",
            "scheme", "n_draws", "diff_share", "replication", "seed", "confidence", "gold_rate",
            "status", "status_label", "progress", "error", "error_id", "error_step", "heartbeat_at",
            "preparation_attempts", "items_count", "dropped_items", "created_at", "updated_at",
            "archived_at", "workspace", "reuse_verdicts", "task_order", "requested_verdicts", "rating_request",
            "waiting",
        )  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(WaitingSerializer(allow_null=True))
    def get_waiting(self, experiment) -> dict | None:
        """Set on the experiment by the view (the list: for a page at once)."""
        return getattr(experiment, "waiting", None)


class ExperimentCreatedSerializer(ExperimentSerializer):
    warnings = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only when the request used a deprecated name: what to use instead (see the Deprecation header).",
    )

    class Meta(ExperimentSerializer.Meta):
        fields = (*ExperimentSerializer.Meta.fields, "warnings")


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
    score = serializers.FloatField(
        allow_null=True,
        help_text="The pair's score for the model-assisted estimates (abcde-spec §15; higher: more likely "
        "equivalent); null until scored.",
    )
    positions = serializers.CharField(
        required=False,
        help_text="Exports of a draw-order experiment only (one row per batch that drew the pair, ``batch`` that "
        "batch): the positions of the pair's draws in the batch's permutation, as metrics_core writes them.",
    )
