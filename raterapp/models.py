"""The records of the rating loop: experiments, their items and sampled pairs, judgements, estimates.

Bulk data (the whole population of an experiment) lives in a normalised Parquet file
in the media storage, the canonical input of metrics_core; the database holds what is
queried and updated transactionally: the items of sampled pairs, the pairs and their
judgement tasks, the verdicts and the estimate snapshots.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

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


class Experiment(models.Model):
    class Scheme(models.TextChoices):
        JACCARD = "jaccard", "Jaccard (JDD §7)"
        STRATIFIED = "stratified", "Stratified: diff and stable pairs"
        PRECISION = "precision", "ΔPrecision's natural distribution"

    class Status(models.TextChoices):
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
    items_location = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Partitioned Parquet items (a folder or fsspec URL) instead of an upload (Dask engine).",
    )
    catalogue_location = models.CharField(
        max_length=1000,
        blank=True,
        help_text="A Parquet catalogue (folder or fsspec URL) instead of an upload; only sampled items are read.",
    )
    impact = models.JSONField(null=True, blank=True, help_text="metrics_core impact output (overall).")
    gold = models.JSONField(
        null=True,
        blank=True,
        help_text="With a gold clustering: its exact quality metrics and the true ΔRecall and IQ (metrics_core).",
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


def upload_path(instance: UploadedFile, filename: str) -> str:
    """Beside the experiment's population file, so that one folder holds all its data."""
    return f"experiments/{instance.experiment_id}/uploads/{filename}"


class UploadedFile(models.Model):
    """An input file of an experiment, kept as uploaded."""

    class Kind(models.TextChoices):
        ITEMS = "items", "Items with base_cluster and exp_cluster"
        BASE = "base", "Base clustering"
        EXP = "exp", "Exp clustering"
        WEIGHTS = "weights", "Item weights"
        CATALOGUE = "catalogue", "Item catalogue"
        GOLD = "gold", "Gold clustering (item_id, cluster_id)"

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
    new_pairs = models.PositiveIntegerField(null=True, blank=True, help_text="Distinct pairs no earlier batch drew.")
    new_tasks = models.PositiveIntegerField(null=True, blank=True, help_text="Pairs that became judgement tasks.")
    repeated_pairs = models.PositiveIntegerField(null=True, blank=True, help_text="Pairs drawn again: more draws.")
    expected_verdicts = models.FloatField(null=True, blank=True, help_text="The plan shown before drawing.")

    class Meta:
        ordering = ["experiment", "index"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "index"], name="sample_batch_unique_index"),
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


class SampledPair(models.Model):
    """A distinct ordered pair (i, j) of the sample, with its class, stratum and draw count."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="sampled_pairs")
    vantage = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    partner = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    pair_class = models.CharField(max_length=12)
    stratum = models.CharField(max_length=6)
    draws = models.PositiveIntegerField()
    task = models.ForeignKey("PairTask", null=True, blank=True, on_delete=models.CASCADE, related_name="draws")
    batch = models.PositiveIntegerField(default=0, help_text="The batch of draws that first drew the pair.")
    # Experiments prepared on Dask keep no population: what the estimators need of the vantage
    # item's cell (metrics_core.SampleContext) is stored with the pair. Null for in-memory ones.
    vantage_union = models.FloatField(null=True, blank=True, help_text="weight(Base(i) ∪ Exp(i)) (Dask engine).")
    vantage_base = models.FloatField(null=True, blank=True, help_text="weight(Base(i)) (Dask engine).")
    vantage_exp = models.FloatField(null=True, blank=True, help_text="weight(Exp(i)) (Dask engine).")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["experiment", "vantage", "partner"], name="sampled_pair_unique"),
            models.CheckConstraint(condition=Q(draws__gte=1), name="sampled_pair_draws_positive"),
        ]


def sampled_q(prefix: str = "") -> Q:
    """Sampled tasks (not gold questions); ``prefix`` reaches them through a relation, e.g.
    ``Judgement.objects.filter(sampled_q("task__"))``."""
    return Q(**{f"{prefix}gold_answer": ""})


class PairTaskQuerySet(models.QuerySet):
    def sampled(self) -> PairTaskQuerySet:
        """The pairs the sample drew: those that count in estimates."""
        return self.filter(sampled_q())

    def gold(self) -> PairTaskQuerySet:
        """The gold questions: pairs with a known answer, in no estimate."""
        return self.exclude(sampled_q())


class PairTask(models.Model):
    """A distinct unordered non-self pair that needs verdicts, shown in random ``rank`` order.

    A *gold* task (``gold_answer`` set) is a pair with a known answer that admins mix into
    raters' queues: any number of raters may judge it, and it counts in no estimate.
    """

    GOLD_ANSWERS = [(v, label) for v, label in Verdict.choices if v != Verdict.UNSURE]

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="tasks")
    item_a = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    item_b = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField(help_text="Random position in the rating order.")
    wanted = models.PositiveSmallIntegerField(default=1, help_text="Verdicts wanted (replication).")
    verdicts = models.PositiveSmallIntegerField(default=0, help_text="Verdicts received.")
    gold_answer = models.CharField(
        max_length=20, blank=True, default="", choices=GOLD_ANSWERS, help_text="Known answer; empty unless gold."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    retired_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Served to no rater any more (a retired gold question, an excluded broken pair); verdicts stay.",
    )
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    question_version = models.ForeignKey(
        QuestionVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    pair_key = models.CharField(max_length=64, blank=True, help_text="reuse_keys.pair_key of its item ids.")

    objects = PairTaskQuerySet.as_manager()

    class Meta:
        ordering = ["experiment", "rank"]
        constraints = [
            models.UniqueConstraint(
                fields=["experiment", "item_a", "item_b"], condition=Q(gold_answer=""), name="task_unique_pair"
            ),
            models.UniqueConstraint(
                fields=["experiment", "item_a", "item_b"], condition=~Q(gold_answer=""), name="task_unique_gold_pair"
            ),
            models.UniqueConstraint(
                fields=["experiment", "rank"], condition=Q(gold_answer=""), name="task_unique_rank"
            ),
            models.CheckConstraint(
                condition=Q(verdicts__lte=F("wanted")) | ~Q(gold_answer=""), name="task_verdicts_within_wanted"
            ),
        ]
        indexes = [
            models.Index(fields=["experiment", "verdicts", "rank"], name="task_queue"),
            # The rating queue as index rows: a pair leaves it with its last wanted verdict, so
            # taking the next one reads past live leases only, never past the judged pairs.
            models.Index(
                fields=["experiment", "rank"],
                condition=Q(gold_answer="") & Q(retired_at__isnull=True) & Q(verdicts__lt=F("wanted")),
                name="task_open_queue",
            ),
            # Verdict reuse looks pairs up by key and question across the experiments of a workspace.
            models.Index(
                fields=["pair_key", "question_version"], condition=Q(gold_answer=""), name="task_reuse_lookup"
            ),
        ]

    @property
    def is_gold(self) -> bool:
        return bool(self.gold_answer)


class ExperimentProgress(models.Model):
    """Verdicts the experiment's sampled (not gold) pairs still want, kept as a row so that a
    rater's progress costs one read instead of a sum over every task. Moved by the services
    that add tasks, change replication, record and undo verdicts (in their transactions);
    an experiment without the row is summed over its tasks (``experiment_progress_recount``
    writes it)."""

    experiment = models.OneToOneField(Experiment, on_delete=models.CASCADE, related_name="verdicts_left_row")
    verdicts_left = models.IntegerField(default=0)


class Lease(models.Model):
    """A task held by one rater until ``expires_at``; renewed while the rater is on it."""

    task = models.ForeignKey(PairTask, on_delete=models.CASCADE, related_name="leases")
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leases")
    token = models.UUIDField(default=uuid.uuid4, unique=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "rater"], name="lease_one_per_rater")]
        indexes = [models.Index(fields=["expires_at"], name="lease_expiry")]


class Judgement(models.Model):
    Verdict = Verdict

    task = models.ForeignKey(PairTask, on_delete=models.PROTECT, related_name="judgements")
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgements")
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    client_id = models.UUIDField(unique=True, help_text="Generated by the client: a retried submit is one verdict.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "rater"], name="judgement_one_per_rater")]
        indexes = [models.Index(fields=["rater", "created_at"], name="judgement_rater_time")]


class ReusedVerdict(models.Model):
    """A verdict of another experiment of the workspace that answers a task of this one (abcde-spec §11):
    counted in its estimates like its own, charged to no budget. Recorded when the pair is sampled."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="reused_verdicts")
    task = models.ForeignKey(PairTask, on_delete=models.CASCADE, related_name="reused_verdicts")
    source = models.ForeignKey(Judgement, on_delete=models.CASCADE, related_name="reuses")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "source"], name="reused_verdict_once")]
        indexes = [models.Index(fields=["experiment", "task"], name="reused_verdict_experiment")]


class RetractedJudgement(models.Model):
    """A verdict its rater undid: kept for the record (and to recognise a late retry of its
    submit by ``client_id``), counted nowhere."""

    task = models.ForeignKey(PairTask, on_delete=models.PROTECT, related_name="retracted_judgements")
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    client_id = models.UUIDField(unique=True)
    judged_at = models.DateTimeField()
    retracted_at = models.DateTimeField(auto_now_add=True)


class PairReport(models.Model):
    """A rater's report that a pair cannot be judged; the pair stays unjudged, for admins to look at."""

    class Reason(models.TextChoices):
        MISSING_DATA = "missing_data", "Data missing"
        UNREADABLE = "unreadable", "Unreadable"
        OTHER = "other", "Something else"

    task = models.ForeignKey(PairTask, on_delete=models.CASCADE, related_name="reports")
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pair_reports")
    reason = models.CharField(max_length=20, choices=Reason.choices)

    class Resolution(models.TextChoices):
        KEPT = "kept", "Pair kept as it is"
        EXCLUDED = "excluded", "Pair excluded from rating"
        GOLD = "gold", "Pair made a gold question"

    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolution = models.CharField(max_length=10, choices=Resolution.choices, blank=True)
    resolution_note = models.TextField(blank=True, help_text="The admin's note on what was done.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "rater"], name="pair_report_one_per_rater")]


class RaterProfile(models.Model):
    """A rater's quotas (verdicts per day and in all, across experiments; none: unlimited)
    and pause: a paused rater is leased no pair until an admin unpauses them.

    ``unpaused_at`` is when an admin last lifted a pause: the automatic pause judges only
    the verdicts given since, so a rater an admin let back in is not paused again on the
    evidence the admin already overruled.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rater_profile")
    daily_quota = models.PositiveIntegerField(null=True, blank=True)
    total_quota = models.PositiveIntegerField(null=True, blank=True)
    paused = models.BooleanField(default=False, help_text="No new pairs are leased to a paused rater.")
    paused_reason = models.TextField(blank=True, help_text="Why the rater was paused (not shown to the rater).")
    paused_at = models.DateTimeField(null=True, blank=True)
    unpaused_at = models.DateTimeField(
        null=True, blank=True, help_text="Last manual unpause: the automatic pause looks at later verdicts only."
    )

    def __str__(self) -> str:
        return f"Rater profile of {self.user}"


class EstimateSnapshot(models.Model):
    """Every estimate of an experiment at one moment, as published to live pages."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="snapshots")
    created_at = models.DateTimeField(auto_now_add=True)
    judgements = models.PositiveIntegerField()
    judged_pairs = models.PositiveIntegerField()
    estimates = models.JSONField(help_text="metrics_core QualityEstimates.as_dict().")
    slices = models.JSONField(
        null=True,
        blank=True,
        help_text="Quality estimates per slice value; null on snapshots from before they were stored.",
    )

    class Meta:
        ordering = ["experiment", "-created_at"]
        get_latest_by = "created_at"
        indexes = [models.Index(fields=["experiment", "created_at"], name="snapshot_history")]


class DerivedEstimate(models.Model):
    """ΔRecall and IQ with bootstrap intervals (and, with a gold clustering, their calibration)
    from the verdicts of one moment; computed after the snapshots, so it may lag them."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="derived_estimates")
    created_at = models.DateTimeField(auto_now_add=True)
    judgements = models.PositiveIntegerField()
    seconds = models.FloatField(help_text="How long the computation took.")
    payload = models.JSONField(help_text="metrics_core DerivedMetrics.as_dict(), plus calibration when gold is known.")

    class Meta:
        ordering = ["experiment", "-created_at"]
        indexes = [models.Index(fields=["experiment", "created_at"], name="derived_history")]


class RaterAwareEstimate(models.Model):
    """Estimates from a Dawid–Skene model of the raters (abcde-spec §13), each rater's fitted
    sensitivity and specificity, and the transitivity of the verdicts, from the verdicts of one
    moment; computed by the worker after the snapshots, so it may lag them."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="rater_aware_estimates")
    created_at = models.DateTimeField(auto_now_add=True)
    judgements = models.PositiveIntegerField()
    seconds = models.FloatField(help_text="How long the computation took.")
    payload = models.JSONField(
        null=True, help_text="RaterAwareQuality.as_dict(), raters as user ids; null when not fitted."
    )
    error = models.TextField(blank=True, help_text="Why there are no rater-aware estimates (too few verdicts, …).")
    transitivity = models.JSONField(
        help_text="metrics_core TransitivityReport: counts and inconsistent triangles, items as item ids."
    )

    class Meta:
        ordering = ["experiment", "-created_at"]
        indexes = [models.Index(fields=["experiment", "created_at"], name="rater_aware_history")]


class ImpactGroup(models.Model):
    """Impact metrics of one group of items: a Base or Exp cluster, or a slice value."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="impact_groups")
    dimension = models.CharField(max_length=200, help_text="'base', 'exp' or the slice attribute.")
    label = models.CharField(max_length=255)
    items = models.PositiveIntegerField()
    affected_items = models.PositiveIntegerField()
    weight = models.FloatField()
    metrics = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["experiment", "dimension", "label"], name="impact_group_unique")]
        indexes = [models.Index(fields=["experiment", "dimension"], name="impact_group_dimension")]


class BudgetPool(models.Model):
    """Verdicts shared by several experiments: each verdict of any of them spends one."""

    name = models.CharField(max_length=200, unique=True)
    max_verdicts = models.PositiveIntegerField(help_text="Verdicts the pool pays for in all.")
    spent = models.PositiveIntegerField(default=0, help_text="Verdicts given in its experiments.")
    paused = models.BooleanField(default=False, help_text="No new pairs are leased while paused.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(spent__gte=0), name="budget_pool_spent_not_negative")]

    def __str__(self) -> str:
        return self.name


class ExperimentBudget(models.Model):
    """What an experiment may spend on verdicts. ``max_verdicts`` null: no limit.

    ``spent`` counts the experiment's stored verdicts (gold questions included: raters are
    paid for them too) and moves with them in the same transaction, by conditional updates,
    so no interleaving of raters spends more than ``max_verdicts``. Lowering the maximum
    below ``spent`` keeps every verdict and stops new leases.
    """

    experiment = models.OneToOneField(Experiment, on_delete=models.CASCADE, related_name="budget")
    max_verdicts = models.PositiveIntegerField(null=True, blank=True)
    cost_per_verdict = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    spent = models.PositiveIntegerField(default=0)
    paused = models.BooleanField(default=False)
    pool = models.ForeignKey(BudgetPool, null=True, blank=True, on_delete=models.PROTECT, related_name="budgets")

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(spent__gte=0), name="budget_spent_not_negative")]

    def __str__(self) -> str:
        return f"Budget of {self.experiment}"


class BudgetChange(models.Model):
    """The audit log: every change to a budget or pool, by whom, when, from what to what, why."""

    class Via(models.TextChoices):
        API = "api", "API"
        PAGE = "page", "Page"
        ADMIN = "admin", "Django admin"

    budget = models.ForeignKey(
        ExperimentBudget, null=True, blank=True, on_delete=models.CASCADE, related_name="changes"
    )
    pool = models.ForeignKey(BudgetPool, null=True, blank=True, on_delete=models.CASCADE, related_name="changes")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    field = models.CharField(max_length=40)
    old_value = models.CharField(max_length=100, blank=True)
    new_value = models.CharField(max_length=100, blank=True)
    reason = models.TextField(blank=True)
    via = models.CharField(max_length=10, choices=Via.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(budget__isnull=False) | Q(pool__isnull=False), name="budget_change_has_subject"
            )
        ]


class OutboxMessage(models.Model):
    """A side effect (enqueueing a task, scheduling a refresh) written in the transaction of the
    data that asks for it, so that it commits or rolls back with it (a transactional outbox).

    Dispatched right after the commit when the broker answers, else by the periodic reconciler
    (``services/outbox.py``); a row exists until its effect was handed to the broker.
    """

    class Kind(models.TextChoices):
        EXPERIMENT_PREPARE = "experiment_prepare", "Prepare an experiment"
        SAMPLE_BATCH_DRAW = "sample_batch_draw", "Draw a sample batch"
        ESTIMATES_REFRESH = "estimates_refresh", "Refresh the estimates"
        DERIVED_REFRESH = "derived_refresh", "Refresh ΔRecall and IQ"
        RATER_AUTO_PAUSE = "rater_auto_pause", "Check a rater's quality flags"

    kind = models.CharField(max_length=40, choices=Kind.choices)
    target_id = models.BigIntegerField(help_text="The experiment, batch or rater the effect is about.")
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_by = models.UUIDField(null=True, blank=True, help_text="The dispatcher handing it to the broker now.")
    claimed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Failed dispatches so far.")
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["kind", "target_id"], name="outbox_effect")]

    def __str__(self) -> str:
        return f"{self.kind} {self.target_id}"


class AppendOnly(Exception):
    """A ledger entry is never changed nor deleted: a correction is a new entry."""


class LedgerQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("Ledger entries are never updated.")

    def delete(self):
        raise AppendOnly("Ledger entries are never deleted.")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnly("Ledger entries are never updated.")


class BudgetLedgerEntry(models.Model):
    """Append-only: every unit a verdict spends of a budget (and of the pool charged), and
    every unit given back, written in the transaction that moves ``spent``; the totals are
    the sums of ``amount`` per experiment and per pool. A refund names the pool its spend
    charged, whichever pool the experiment is in now. ``opening`` entries carry the totals
    from before the ledger. References survive the rows they name (no foreign-key constraint),
    so deleting an experiment leaves its history."""

    class Kind(models.TextChoices):
        SPEND = "spend", "Spend"
        REFUND = "refund", "Refund"
        OPENING = "opening", "Opening balance"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    experiment = models.ForeignKey(
        Experiment, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    pool = models.ForeignKey(
        BudgetPool, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    rater = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    verdict = models.UUIDField(null=True, blank=True, help_text="The verdict's client_id.")
    amount = models.IntegerField(help_text="Verdicts: positive spent, negative given back.")
    cost = models.DecimalField(max_digits=14, decimal_places=4, default=0, help_text="At the cost of that moment.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LedgerQuerySet.as_manager()

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="spend", amount__gt=0) | Q(kind="refund", amount__lt=0) | Q(kind="opening"),
                name="ledger_amount_sign_follows_kind",
            ),
            models.UniqueConstraint(fields=["verdict", "kind"], condition=~Q(kind="opening"), name="ledger_once"),
        ]

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly("Ledger entries are never updated.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("Ledger entries are never deleted.")


class ApiToken(models.Model):
    """A key for scripts (``Authorization: Token <key>``). Only the SHA-256 of the key is kept:
    the key itself is shown once, when it is made. It stops working at ``expires_at``, when it
    is revoked (by its owner or an admin), or when its user is deactivated."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for, as its owner named it.")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, hex.")
    prefix = models.CharField(max_length=12, help_text="The key's first characters, to tell tokens apart.")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.prefix}… of {self.user}"


class AuditEntry(models.Model):
    """The audit log of people and access: raters' quotas, pauses and assignments, users'
    roles and activity, API tokens. Budgets keep theirs in ``BudgetChange``. Written by the
    services in the transaction of the change it records."""

    class Action(models.TextChoices):
        QUOTA = "rater.quota", "Quota changed"
        PAUSE = "rater.pause", "Rater paused"
        UNPAUSE = "rater.unpause", "Rater unpaused"
        ASSIGN = "rater.assign", "Assigned to an experiment"
        UNASSIGN = "rater.unassign", "Unassigned from an experiment"
        ROLES = "user.roles", "Roles changed"
        ACTIVE = "user.active", "Activated or deactivated"
        TOKEN_CREATE = "token.create", "API token created"
        TOKEN_REVOKE = "token.revoke", "API token revoked"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who made the change; empty for the app's own (the automatic pause).",
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="audit_entries", help_text="The user changed."
    )
    experiment = models.ForeignKey(Experiment, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=40, blank=True)
    old_value = models.CharField(max_length=200, blank=True)
    new_value = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["subject", "created_at"], name="audit_subject")]

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.subject}"
