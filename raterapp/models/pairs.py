"""Sampled pairs and their judgement tasks, with the queue's counters and leases."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from .experiments import Experiment, Item, QuestionVersion, Verdict


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
    positions = models.JSONField(
        null=True,
        blank=True,
        help_text="Draw order (abcde-spec §14): each batch that drew the pair → the ascending positions of "
        "its draws in that batch's permutation. Null in experiments created before draw order.",
    )
    # Experiments prepared on Dask keep no population: what the estimators need of the vantage
    # item's cell (metrics_core.SampleContext) is stored with the pair. Null for in-memory ones.
    vantage_union = models.FloatField(null=True, blank=True, help_text="weight(Base(i) ∪ Exp(i)) (Dask engine).")
    vantage_base = models.FloatField(null=True, blank=True, help_text="weight(Base(i)) (Dask engine).")
    vantage_exp = models.FloatField(null=True, blank=True, help_text="weight(Exp(i)) (Dask engine).")

    class ScoreSource(models.TextChoices):
        BUILT_IN = "built_in", "built-in card similarity"
        UPLOADED = "uploaded", "uploaded by the team"

    # Never shown to raters: it would bias their verdicts.
    score = models.FloatField(
        null=True,
        blank=True,
        help_text="The pair's score (abcde-spec §15), higher meaning more likely equivalent; null until scored.",
    )
    score_source = models.CharField(max_length=10, choices=ScoreSource.choices, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["experiment", "vantage", "partner"], name="sampled_pair_unique"),
            models.CheckConstraint(condition=Q(draws__gte=1), name="sampled_pair_draws_positive"),
        ]


def sampled_q(prefix: str = "") -> Q:
    """Sampled tasks (not gold questions); ``prefix`` reaches them through a relation, e.g.
    ``Judgement.objects.filter(sampled_q("task__"))``."""
    return Q(**{f"{prefix}gold_answer": ""})


class PairTaskQuerySet(models.QuerySet["PairTask"]):
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
    # Not a column: the rater's lease, on a task the rating loop hands out (services/judging/queue.py).
    lease: Lease | None

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
