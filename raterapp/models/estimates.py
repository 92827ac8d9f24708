"""Estimate snapshots, derived and rater-aware estimates, the raters' agreement, impact groups."""

from __future__ import annotations

from django.db import models
from django.db.models import Value
from django.db.models.functions import Coalesce

from .experiments import Experiment


class EstimateSnapshot(models.Model):
    """Every estimate of an experiment at one moment, as published to live pages."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="snapshots")
    created_at = models.DateTimeField(auto_now_add=True)
    judgements = models.PositiveIntegerField()
    judged_pairs = models.PositiveIntegerField()
    estimates = models.JSONField(help_text="metrics_core QualityEstimates.as_dict().")

    class Meta:
        ordering = ["experiment", "-created_at"]
        get_latest_by = "created_at"
        indexes = [models.Index(fields=["experiment", "created_at"], name="snapshot_history")]


class DerivedEstimate(models.Model):
    """ΔRecall and IQ with bootstrap intervals (and, with a ground-truth clustering, their calibration)
    from the verdicts of one moment; computed after the snapshots, so it may lag them."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="derived_estimates")
    created_at = models.DateTimeField(auto_now_add=True)
    judgements = models.PositiveIntegerField()
    seconds = models.FloatField(help_text="How long the computation took.")
    payload = models.JSONField(
        help_text="metrics_core DerivedMetrics.as_dict(), plus calibration when the ground truth is known."
    )
    slices = models.JSONField(
        null=True,
        blank=True,
        help_text="Quality estimates per slice value (attribute → value → metric, contribution); "
        "null on rows from before they were computed here.",
    )

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


class RaterAgreement(models.Model):
    """Each rater's agreement with the other raters on the replicated (non-gold) pairs of one
    experiment, or of all experiments (``experiment`` null), as the worker last computed it after
    a snapshot (``services/refresh/rater_agreement.py``): the raters' lists read it, not every verdict.
    One row per scope, replaced by each computation."""

    experiment = models.ForeignKey(
        Experiment, null=True, blank=True, on_delete=models.CASCADE, related_name="+", help_text="Null: all."
    )
    computed_at = models.DateTimeField(help_text="When the worker read the verdicts it was computed from.")
    judgements = models.PositiveIntegerField(help_text="The replicated non-gold verdicts it was computed from.")
    seconds = models.FloatField(help_text="How long the computation took.")
    raters = models.JSONField(
        help_text="Rater id → replicated_verdicts, mean_kappa, kappa_raters, majority_verdicts, majority_share "
        "(metrics_core.rater_agreement); raters without replicated verdicts are left out."
    )

    class Meta:
        constraints = [models.UniqueConstraint(Coalesce("experiment", Value(0)), name="rater_agreement_one_per_scope")]


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
