"""Experiments, their workspace and question version, uploads, sample batches and items."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from raterapp.reuse_keys import question_digest


class Verdict(models.TextChoices):
    EQUIVALENT = "equivalent", "Equivalent"
    NOT_EQUIVALENT = "not_equivalent", "Not equivalent"
    UNSURE = "unsure", "Unsure"


def new_experiment_open_to_all() -> bool:
    return settings.NEW_EXPERIMENT_OPEN_TO == "all"


class Workspace(models.Model):
    """Experiments on one item catalogue (one namespace of item ids): they share verdicts (abcde-spec §11)."""

    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class QuestionVersion(models.Model):
    """One wording of the question with its guidelines: verdicts are shared only under the same one."""

    digest = models.CharField(max_length=64, unique=True, help_text="reuse_keys.question_digest of the texts.")
    question = models.CharField(max_length=500)
    guidelines = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    @classmethod
    def for_texts(cls, *, question: str, guidelines: str) -> QuestionVersion:
        digest = question_digest(question, guidelines)
        version, _ = cls.objects.get_or_create(digest=digest, defaults={"question": question, "guidelines": guidelines})
        return version


def location_field(help_text: str) -> models.CharField:
    """Data read where it lies (a folder or fsspec URL), instead of an upload; empty: uploaded."""
    return models.CharField(max_length=1000, blank=True, help_text=help_text)


class Experiment(models.Model):
    class Scheme(models.TextChoices):
        JACCARD = "jaccard", "Jaccard (JDD §7)"
        STRATIFIED = "stratified", "Stratified: diff and stable pairs"
        PRECISION = "precision", "ΔPrecision's natural distribution"

    class Status(models.TextChoices):
        """Where the experiment is: queued, the preparation's three steps (validating, computing
        impact, sampling), then rating, done or failed; a failed one can be prepared again."""

        QUEUED = "queued", "Queued"
        VALIDATING = "validating", "Validating the upload"
        COMPUTING_IMPACT = "computing_impact", "Computing impact metrics"
        SAMPLING = "sampling", "Sampling pairs"
        RATING = "rating", "Rating"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Kind(models.TextChoices):
        CHANGE = "change", "Change: Base against Exp"
        ABSOLUTE = "absolute", "Absolute quality of one clustering (Exp: every item alone)"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(
        max_length=20,
        choices=Kind.choices,
        default=Kind.CHANGE,
        help_text="Absolute (MQM §5.1): the uploaded clustering is Base and Exp puts every item alone.",
    )
    question = models.CharField(
        max_length=500, default="Do these two items refer to the same thing?", help_text="What raters are asked."
    )
    guidelines = models.TextField(blank=True, help_text="Shown to raters beside every pair (plain text).")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="experiments")
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_experiments")
    assigned_raters = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="assigned_experiments",
        help_text="Raters who may judge it; none assigned: every rater may if it is open to all raters.",
    )
    open_to_all_raters = models.BooleanField(
        default=new_experiment_open_to_all,
        help_text="With no raters assigned, every rater may judge it (default: NEW_EXPERIMENT_OPEN_TO).",
    )
    rating_request = models.TextField(
        blank=True,
        max_length=2000,
        help_text="What the owner asked admins for at creation: raters, a budget (shown in the admin console).",
    )
    requested_verdicts = models.PositiveIntegerField(
        null=True, blank=True, help_text="The budget the owner asked for, in verdicts (the console proposes it)."
    )
    scheme = models.CharField(max_length=20, choices=Scheme.choices, default=Scheme.JACCARD)
    n_draws = models.PositiveIntegerField(default=2000, help_text="Number of pair draws (with replacement).")
    diff_share = models.FloatField(default=0.5, help_text="Share of draws for the diff stratum (stratified).")
    replication = models.PositiveSmallIntegerField(default=1, help_text="Verdicts wanted per pair.")
    seed = models.BigIntegerField(default=0)
    confidence = models.FloatField(default=0.95)
    gold_rate = models.FloatField(
        default=0.1, help_text="Share of a rater's pairs that are gold questions, while gold pairs are left."
    )
    target_half_width = models.FloatField(
        default=0.01, help_text="The ΔPrecision interval half-width at which the experiment has enough data."
    )
    decision_metric = models.CharField(
        max_length=40,
        blank=True,
        help_text="The metric whose confidence sequence decides (abcde-spec §9); empty: the scheme's default.",
    )
    equivalence_margin = models.FloatField(
        default=0.0,
        help_text="Differences within ±margin of zero count as no meaningful difference (abcde-spec §9).",
    )
    recall_base_low = models.FloatField(
        default=0.4,
        help_text="ΔRecall and IQ assume Recall_Base(AffectedItems) between this and recall_base_high "
        "(abcde-spec §14); a ground-truth clustering's own Recall_Base replaces the range.",
    )
    recall_base_high = models.FloatField(default=0.8, help_text="The upper end of the Recall_Base range assumed.")

    class TaskOrder(models.TextChoices):
        RANDOM = "random", "Random order of pairs (experiments created before draw order)"
        DRAW = "draw", "Draw order: by each pair's first draw (abcde-spec §14)"

    task_order = models.CharField(
        max_length=8,
        choices=TaskOrder.choices,
        default=TaskOrder.DRAW,
        help_text="The order in which the pairs became tasks: in draw order the estimates use each batch's "
        "labelled prefix (abcde-spec §14); in random order (older experiments) every verdict.",
    )
    sample_version = models.PositiveIntegerField(
        default=0, help_text="Batches of draws appended so far: changes whenever the sample grows."
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="Archived: hidden from the default experiment list; its verdicts stay."
    )
    workspace = models.ForeignKey(
        Workspace,
        on_delete=models.PROTECT,
        related_name="experiments",
        help_text="Experiments of one workspace share item ids and, under the same question, verdicts.",
    )
    question_version = models.ForeignKey(QuestionVersion, on_delete=models.PROTECT, related_name="experiments")
    reuse_verdicts = models.BooleanField(
        default=True,
        help_text="Takes verdicts of its workspace for pairs judged there, and offers its own; off: neither.",
    )
    model_assisted = models.BooleanField(
        default=True,
        help_text="Estimates corrected from a score of every drawn pair (abcde-spec §15): the built-in card "
        "similarity, or the team's uploaded scores. Off: the human-only estimates.",
    )

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0, help_text="Progress of the current step, 0 to 1.")
    error = models.TextField(blank=True, help_text="Why the preparation failed, naming file, row and problem.")
    error_id = models.CharField(
        max_length=32, blank=True, help_text="An unexpected failure's id: the worker's log has its traceback under it."
    )
    error_step = models.CharField(max_length=20, blank=True, help_text="The preparation step that failed (a status).")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the running preparation (PREPARATION_HEARTBEAT_SECONDS)."
    )
    preparation_attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Runs of the preparation started since the upload or the last re-run."
    )
    items_count = models.PositiveIntegerField(null=True, blank=True)
    dropped_items = models.PositiveIntegerField(null=True, blank=True)
    population_file = models.CharField(max_length=300, blank=True, help_text="Normalised Parquet in media storage.")

    class Engine(models.TextChoices):
        MEMORY = "memory", "In memory (the worker holds the population)"
        DASK = "dask", "Dask (the population stays on the Dask cluster)"

    engine = models.CharField(max_length=10, choices=Engine.choices, default=Engine.MEMORY)
    items_location = location_field(
        "Partitioned Parquet items (a folder or fsspec URL) instead of an upload (Dask engine)."
    )
    catalogue_location = location_field(
        "A Parquet catalogue (folder or fsspec URL) instead of an upload; only sampled items are read."
    )
    impact = models.JSONField(null=True, blank=True, help_text="metrics_core impact output (overall).")
    ground_truth_metrics = models.JSONField(
        null=True,
        blank=True,
        help_text="With a ground-truth clustering: the exact quality metrics and the true ΔRecall and IQ "
        "(metrics_core).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(diff_share__gt=0) & Q(diff_share__lt=1), name="experiment_diff_share_open_unit"
            ),
            models.CheckConstraint(
                condition=Q(confidence__gt=0) & Q(confidence__lt=1), name="experiment_confidence_open_unit"
            ),
            models.CheckConstraint(condition=Q(replication__gte=1), name="experiment_replication_positive"),
            models.CheckConstraint(condition=Q(n_draws__gte=1), name="experiment_n_draws_positive"),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0) & Q(gold_rate__lte=1), name="experiment_gold_rate_unit"
            ),
            models.CheckConstraint(
                condition=Q(target_half_width__gt=0) & Q(target_half_width__lte=1),
                name="experiment_target_half_width_positive",
            ),
            models.CheckConstraint(
                condition=Q(equivalence_margin__gte=0) & Q(equivalence_margin__lt=1),
                name="experiment_equivalence_margin_unit",
            ),
            models.CheckConstraint(
                condition=Q(recall_base_low__gt=0)
                & Q(recall_base_low__lte=F("recall_base_high"))
                & Q(recall_base_high__lte=1),
                name="experiment_recall_base_range_unit",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        # Without a workspace, an experiment has one of its own: it shares verdicts with no other.
        if self.workspace_id is None:
            self.workspace = Workspace.objects.create(name=f"{self.name[:150]} ({uuid.uuid4().hex[:12]})")
        # A changed question or guidelines is a new version: later tasks share under it only.
        digest = question_digest(self.question, self.guidelines)
        if self.question_version_id is None or self.question_version.digest != digest:
            self.question_version = QuestionVersion.for_texts(question=self.question, guidelines=self.guidelines)
        if "update_fields" in kwargs and kwargs["update_fields"] is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "workspace", "question_version"}
        super().save(*args, **kwargs)


# The preparation's steps in their order; a queued experiment waits before the first.
PREPARATION_STEPS = (Experiment.Status.VALIDATING, Experiment.Status.COMPUTING_IMPACT, Experiment.Status.SAMPLING)
PREPARING = (Experiment.Status.QUEUED, *PREPARATION_STEPS)


def upload_path(instance: UploadedFile, filename: str) -> str:
    """Beside the experiment's population file, so that one folder holds all its data."""
    return f"experiments/{instance.experiment_id}/uploads/{filename}"


class UploadedFile(models.Model):
    """An input file of an experiment, kept as uploaded."""

    class Kind(models.TextChoices):
        """Which input the file is, one form and API field each: the items (or Base and Exp,
        with optional weights), the optional catalogue and the optional ground truth for
        calibration."""

        ITEMS = "items", "Items with base_cluster and exp_cluster"
        BASE = "base", "Base clustering"
        EXP = "exp", "Exp clustering"
        WEIGHTS = "weights", "Item weights"
        CATALOGUE = "catalogue", "Item catalogue"
        GROUND_TRUTH = "ground_truth", "Ground-truth clustering (item_id, cluster_id)"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="files")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    file = models.FileField(upload_to=upload_path)
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["experiment", "kind"], name="one_file_per_kind")]


class SampleBatch(models.Model):
    """One batch of draws of an experiment's sample (abcde-spec §10). Batch 0 is the sample the
    preparation draws; later ones are drawn on request and appended: new distinct pairs become
    tasks, pairs drawn again get more draws. Batch ``index`` depends only on the seed and the index."""

    class Status(models.TextChoices):
        DRAWING = "drawing", "Drawing"
        DONE = "done", "Drawn"
        FAILED = "failed", "Failed"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="batches")
    index = models.PositiveIntegerField()
    draws = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAWING)
    error = models.TextField(blank=True)
    drawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    new_pairs = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Sample rows no earlier batch drew (each order of a pair, self pairs too); the "
        "new pairs to judge are new_tasks.",
    )
    new_tasks = models.PositiveIntegerField(null=True, blank=True, help_text="Pairs that became judgement tasks.")
    repeated_pairs = models.PositiveIntegerField(null=True, blank=True, help_text="Pairs drawn again: more draws.")
    expected_verdicts = models.FloatField(null=True, blank=True, help_text="The plan shown before drawing.")
    coupled_to = models.ForeignKey(
        "Experiment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Drawn coupled to this experiment's batch of the same index (abcde-spec §11); empty: ordinary.",
    )
    coupled_kept = models.PositiveIntegerField(
        null=True, blank=True, help_text="Draws of the batch that kept the coupled experiment's draw."
    )
    request_id = models.UUIDField(
        null=True, blank=True, help_text="The client's id of the request: the same id asks for the same batch."
    )

    class Meta:
        ordering = ["experiment", "index"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "index"], name="sample_batch_unique_index"),
            models.UniqueConstraint(fields=["experiment", "request_id"], name="sample_batch_unique_request"),
            models.UniqueConstraint(
                fields=["experiment"], condition=Q(status="drawing"), name="sample_batch_one_drawing"
            ),
            models.CheckConstraint(condition=Q(draws__gte=1), name="sample_batch_draws_positive"),
        ]

    def __str__(self) -> str:
        return f"Batch {self.index} of {self.experiment}"


class Item(models.Model):
    """An item of an experiment that appears in a sampled pair: its card and its clusters."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="items")
    item_id = models.CharField(max_length=255)
    position = models.PositiveIntegerField(help_text="Index in the experiment's population file.")
    title = models.TextField(blank=True)
    description = models.TextField(blank=True)
    image_url = models.TextField(blank=True)
    url = models.TextField(blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    base_cluster = models.CharField(max_length=255)
    exp_cluster = models.CharField(max_length=255)
    weight = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["experiment", "item_id"], name="item_unique_id"),
            models.UniqueConstraint(fields=["experiment", "position"], name="item_unique_position"),
        ]

    def __str__(self) -> str:
        return self.item_id
