"""The engineer's dashboard of one experiment, and the headline of each experiment in the list.

Everything is read from what the backbone stored: the experiment (exact impact), the latest
estimate snapshot (estimates and rater agreement, recomputed by the worker as verdicts
arrive) and the static totals of the sample. No estimate is recomputed per page view; the
numbers come from metrics_core, this module only arranges them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from metrics_core import (
    Estimate,
    QualityEstimates,
    affected_item_situation,
    interval_reading,
    judgements_to_target,
    metric_direction,
    metrics_for_scheme,
)
from metrics_core.results import json_number
from raterapp.models import PREPARING, EstimateSnapshot, Experiment, ExperimentBudget, PairTask, SampleBatch
from raterapp.selectors.batches import sample_batches_list
from raterapp.selectors.budgets import budget_plan_of
from raterapp.selectors.decision import (
    decides_model_assisted,
    deciding_estimates,
    deciding_quality,
    experiment_decision_get,
    experiment_decision_metric,
    experiment_list_decision,
)
from raterapp.selectors.derived import (
    absolute_panel_get,
    calibration_panel_get,
    derived_cell_text,
    derived_latest,
    derived_latest_id,
    derived_latest_of,
    derived_panel_get,
    estimate_reading,
)
from raterapp.selectors.experiments import estimate_snapshot_latest
from raterapp.selectors.model_assisted import model_assisted_panel_get
from raterapp.selectors.rater_aware import rater_aware_latest_id, rater_aware_panel_get
from raterapp.selectors.rating_access import experiment_waiting_get, experiments_waiting_of
from raterapp.selectors.reuse import experiment_reuse_get
from raterapp.selectors.staleness import estimates_staleness_get

Status = Experiment.Status

HEADLINE = "DeltaPrecision"
# The minimum-data guard (Statsig, Optimizely): no "enough data" before this many judged draws.
MIN_JUDGED_DRAWS = 100
RATE_WINDOW = timedelta(hours=1)

BADGES = {
    "preparing": "Preparing",
    "rating": "Rating",
    "enough_data": "Enough data",
    "done": "Done",
    "failed": "Failed",
}


def experiment_badge_get(
    *, experiment: Experiment, estimate: dict | None, progress: dict, waiting: dict | None = None
) -> dict:
    """The status badge and the rules behind it (GrowthBook's and Eppo's status with reasons);
    "Waiting for raters/budget" (``waiting``, from :mod:`raterapp.selectors.rating_access`)
    instead of "Rating" while no rater can be offered a pair. ``estimate``: ΔPrecision as the
    headline decides on it (:func:`deciding_estimates`; a model-assisted one carries its
    ``verdicts_saved``, and the reasons say so)."""
    if experiment.status in PREPARING:
        return _badge("preparing", [f"{experiment.get_status_display()}."])
    if experiment.status == Status.FAILED:
        return _badge("failed", ["The preparation failed; nothing of the upload was kept."])
    if experiment.status == Status.DONE:
        return _badge("done", ["Rating was closed by the experiment's owner or an admin."])
    reasons = []
    label = "ΔPrecision (model-assisted)" if "verdicts_saved" in (estimate or {}) else "ΔPrecision"
    judged = (estimate or {}).get("judged_draws") or 0
    half_width = _half_width(estimate)
    target = experiment.target_half_width
    if progress["wanted"] and progress["verdicts"] >= progress["wanted"]:
        return _badge("enough_data", ["Every sampled pair has all the verdicts it wants."])
    if judged < MIN_JUDGED_DRAWS:
        reasons.append(f"{judged} of at least {MIN_JUDGED_DRAWS} judged draws.")
    if half_width is None:
        reasons.append("No ΔPrecision interval yet.")
    elif half_width > target:
        reasons.append(f"{label} is ±{half_width:.4f}; the target is ±{target:.4f}.")
    if not reasons:
        return _badge("enough_data", [f"{label} is ±{half_width:.4f}, within the target ±{target:.4f}."])
    if waiting:
        return {"key": "waiting", "label": waiting["label"], "reasons": waiting["reasons"], "waiting": waiting}
    return _badge("rating", reasons)


def experiment_badge_for(*, experiment: Experiment) -> dict:
    """The experiment's badge as its page shows it, for pages that show only the badge."""
    snapshot = estimate_snapshot_latest(experiment=experiment)
    headline = deciding_estimates(experiment, snapshot.estimates if snapshot is not None else None).get(HEADLINE)
    waiting = experiment_waiting_get(experiment=experiment)
    return experiment_badge_get(
        experiment=experiment, estimate=headline, progress=_sample_totals(experiment), waiting=waiting
    )


def experiment_dashboard_get(*, experiment: Experiment) -> dict:
    """Every number the experiment page shows, as JSON-ready data (the page and the API share it)."""
    snapshot = estimate_snapshot_latest(experiment=experiment)
    stored = snapshot.estimates if snapshot is not None else None
    totals = _sample_totals(experiment)
    quality = QualityEstimates.from_dict(stored) if stored else None
    exact = (experiment.impact or {}).get("metrics")
    headline = deciding_estimates(experiment, stored).get(HEADLINE)  # the target and the badge: with the saving
    progress = _progress(experiment, snapshot, totals, headline)
    situation = affected_item_situation(quality, exact=exact) if quality is not None and exact else None
    derived = derived_latest(experiment=experiment)
    derived_panel = derived_panel_get(derived=derived)
    stale = estimates_staleness_get(experiment=experiment, snapshot=snapshot)
    rater_aware = rater_aware_panel_get(experiment=experiment, raw=stored["estimates"] if stored else None)
    decision = experiment_decision_get(
        experiment=experiment,
        quality=deciding_quality(experiment, stored),
        derived=derived_panel,
        progress=progress,
        sample=stored,
        model_assisted=decides_model_assisted(experiment, stored),
    )
    waiting = experiment_waiting_get(experiment=experiment)
    return {
        "experiment": {
            "id": experiment.pk,
            "name": experiment.name,
            "status": experiment.status,
            "status_label": experiment.get_status_display(),
            "kind": experiment.kind,
            "scheme": experiment.scheme,
            "confidence": experiment.confidence,
            "target_half_width": experiment.target_half_width,
            "equivalence_margin": experiment.equivalence_margin,
            "recall_base_low": experiment.recall_base_low,
            "recall_base_high": experiment.recall_base_high,
            "decision_metric": experiment_decision_metric(experiment),
            "n_draws": experiment.n_draws,
            "replication": experiment.replication,
        },
        "badge": experiment_badge_get(experiment=experiment, estimate=headline, progress=progress, waiting=waiting),
        "decision": decision,
        "batches": sample_batches_list(experiment=experiment),
        "version": dashboard_version(
            experiment=experiment,
            snapshot_id=snapshot.pk if snapshot else None,
            derived_id=derived.pk if derived else None,
            batch=_latest_batch(experiment),
            stale=stale["since"] if stale else "",
            rater_aware_id=rater_aware["id"] if rater_aware else None,
            waiting=waiting,
        ),
        "impact": experiment.impact,
        "snapshot": _snapshot_summary(snapshot),
        "stale": stale,
        "estimates": metric_readings(quality) if quality is not None else None,
        "situation": situation.as_dict() if situation is not None else None,
        "progress": progress,
        "budget_plan": budget_plan_of(
            experiment=experiment,
            stored=stored,
            judgements=snapshot.judgements if snapshot is not None else 0,
            cost_per_verdict=progress["cost_per_verdict"],
        ),
        "agreement": stored.get("agreement") if stored else None,
        "derived": derived_panel,
        "absolute": absolute_panel_get(experiment=experiment, quality=quality, derived=derived_panel),
        "calibration": calibration_panel_get(experiment=experiment, quality=quality, derived=derived),
        "rater_aware": rater_aware,
        "model_assisted": model_assisted_panel_get(
            experiment=experiment, stored=stored, derived=derived.payload if derived else None
        ),
        "reuse": experiment_reuse_get(experiment=experiment),
    }


def dashboard_version(
    *,
    experiment: Experiment,
    snapshot_id: int | None,
    derived_id: int | None,
    batch: tuple | None = None,
    stale: str = "",
    rater_aware_id: int | None = None,
    waiting: dict | None = None,
) -> str:
    """Changes whenever anything on the dashboard may change: a new snapshot, new derived
    metrics, a batch requested or finished, an experiment edit, or the estimates going stale
    (``stale``: since when, empty while current), or what it waits for (raters, budget)."""
    batch_part = f"{batch[0]}{batch[1][:1]}" if batch else "0"
    version = f"{snapshot_id or 0}-{derived_id or 0}-{batch_part}-{experiment.updated_at.timestamp():.6f}"
    if rater_aware_id:
        version = f"{version}-ra{rater_aware_id}"
    if waiting:
        version = f"{version}-w{waiting['raters']:d}{waiting['budget']:d}"
    return f"{version}-stale{stale}" if stale else version


def _latest_batch(experiment: Experiment) -> tuple | None:
    return SampleBatch.objects.filter(experiment=experiment).order_by("-index").values_list("pk", "status").first()


def dashboard_version_get(*, experiment: Experiment) -> str:
    """The version of the dashboard without building it: a few indexed queries."""
    latest = (
        EstimateSnapshot.objects.filter(experiment=experiment)
        .order_by("-created_at", "-pk")
        .only("pk", "created_at", "judgements")
        .first()
    )
    stale = estimates_staleness_get(experiment=experiment, snapshot=latest)
    return dashboard_version(
        experiment=experiment,
        snapshot_id=latest.pk if latest else None,
        derived_id=derived_latest_id(experiment=experiment),
        batch=_latest_batch(experiment),
        stale=stale["since"] if stale else "",
        rater_aware_id=rater_aware_latest_id(experiment=experiment),
        waiting=experiment_waiting_get(experiment=experiment),
    )


def experiment_list_rows(*, experiments) -> list[dict]:
    """For the experiment list: each experiment's badge, judging progress and headline numbers,
    in a fixed number of queries whatever the number of experiments."""
    experiments = list(experiments)
    ids = [e.pk for e in experiments]
    latest = EstimateSnapshot.objects.filter(experiment=OuterRef("pk")).order_by("-created_at", "-pk").values("pk")[:1]
    snapshot_of = dict(Experiment.objects.filter(pk__in=ids).annotate(s=Subquery(latest)).values_list("pk", "s"))
    snapshots = EstimateSnapshot.objects.in_bulk([s for s in snapshot_of.values() if s])
    derived = derived_latest_of(experiment_ids=ids)
    waiting = experiments_waiting_of(experiments=experiments)
    totals = {
        row["experiment"]: row
        for row in PairTask.objects.sampled()
        .filter(experiment__in=ids)
        .values("experiment")
        .annotate(tasks=Count("pk"), wanted=Coalesce(Sum("wanted"), 0), verdicts=Coalesce(Sum("verdicts"), 0))
    }
    rows = []
    for experiment in experiments:
        snapshot = snapshots.get(snapshot_of.get(experiment.pk))
        stored = snapshot.estimates if snapshot is not None else None
        # Every number of the row rests on the estimates its headline decides on.
        assisted = decides_model_assisted(experiment, stored)
        headline = deciding_estimates(experiment, stored).get(HEADLINE)
        total = totals.get(experiment.pk, {"tasks": 0, "wanted": 0, "verdicts": 0})
        progress = {"wanted": total["wanted"], "verdicts": total["verdicts"], "tasks": total["tasks"]}
        rows.append(
            {
                "experiment": experiment,
                "badge": experiment_badge_get(
                    experiment=experiment, estimate=headline, progress=progress, waiting=waiting.get(experiment.pk)
                ),
                "progress": progress,
                "progress_percent": round(100 * total["verdicts"] / total["wanted"]) if total["wanted"] else 0,
                "jaccard_distance": ((experiment.impact or {}).get("metrics") or {}).get("JaccardDistance"),
                "delta_precision": headline,
                "delta_precision_half_width": _half_width(headline),
                "reading": _reading(HEADLINE, headline),
                "decision": experiment_list_decision(experiment=experiment, stored=stored),
                "model_assisted": assisted,
                "derived_text": derived_cell_text(derived.get(experiment.pk), model_assisted=assisted),
            }
        )
    return rows


def _badge(key: str, reasons: list[str]) -> dict:
    return {"key": key, "label": BADGES[key], "reasons": reasons}


def _half_width(estimate: dict | None) -> float | None:
    if not estimate or estimate.get("ci_low") is None or estimate.get("ci_high") is None:
        return None
    return (estimate["ci_high"] - estimate["ci_low"]) / 2


def _reading(name: str, estimate: dict | None) -> str:
    if not estimate:
        return "no_data"
    return interval_reading(Estimate.from_dict(estimate), direction=metric_direction(name))


def metric_readings(quality: QualityEstimates) -> dict:
    """Each metric of the scheme, in report order, with its direction and what its interval says."""
    return {
        name: estimate_reading(name, quality[name].as_dict())
        for name in metrics_for_scheme(quality.scheme)
        if name in quality
    }


def _sample_totals(experiment: Experiment) -> dict:
    """Distinct sampled pairs that need verdicts, and the verdicts they want (gold aside)."""
    return (
        PairTask.objects.sampled()
        .filter(experiment=experiment)
        .aggregate(tasks=Count("pk"), wanted=Coalesce(Sum("wanted"), 0), verdicts=Coalesce(Sum("verdicts"), 0))
    )


def _snapshot_summary(snapshot: EstimateSnapshot | None) -> dict | None:
    if snapshot is None:
        return None
    return {
        "id": snapshot.pk,
        "created_at": snapshot.created_at.isoformat(),
        "judgements": snapshot.judgements,
        "judged_pairs": snapshot.judged_pairs,
    }


def _progress(experiment: Experiment, snapshot: EstimateSnapshot | None, totals: dict, headline: dict | None) -> dict:
    """Judged and drawn pairs, verdicts left in the sample, the current rate and the way to the target."""
    verdicts = totals["verdicts"]
    remaining = max(totals["wanted"] - verdicts, 0)
    half_width = _half_width(headline)
    judgements = snapshot.judgements if snapshot is not None else 0
    more = (
        judgements_to_target(
            half_width=half_width, judgements=judgements, target_half_width=experiment.target_half_width
        )
        if half_width is not None
        else math.nan
    )
    rate = _rate_per_hour(experiment, snapshot)
    hours = more / rate if rate and math.isfinite(more) else None
    return {
        "tasks": totals["tasks"],
        "wanted": totals["wanted"],
        "verdicts": verdicts,
        "remaining": remaining,
        "judged_pairs": snapshot.judged_pairs if snapshot is not None else 0,
        "judged_draws": (headline or {}).get("judged_draws", 0),
        "drawn_draws": (headline or {}).get("drawn_draws", experiment.n_draws),
        "pending_draws": max(
            ((headline or {}).get("drawn_draws") or 0) - ((headline or {}).get("judged_draws") or 0), 0
        ),
        "rate_per_hour": rate,
        "target_half_width": experiment.target_half_width,
        "half_width": half_width,
        "more_judgements": json_number(more),
        "hours_to_target": json_number(hours) if hours is not None else None,
        "sample_suffices": None if not math.isfinite(more) else bool(more <= remaining),
        **_budget_left(experiment),
    }


def _budget_left(experiment: Experiment) -> dict:
    """The judgement budget: its limit (None: none) and the verdicts it still pays for."""
    budget: Mapping[str, Any] = (
        ExperimentBudget.objects.filter(experiment=experiment)
        .values("max_verdicts", "spent", "cost_per_verdict")
        .first()
    ) or {"max_verdicts": None, "spent": 0, "cost_per_verdict": 0}
    limit = budget["max_verdicts"]
    return {
        "budget_max_verdicts": limit,
        "budget_spent": budget["spent"],
        "budget_spent_cost": float(budget["spent"] * budget["cost_per_verdict"]),
        "budget_left": None if limit is None else max(limit - budget["spent"], 0),
        "cost_per_verdict": float(budget["cost_per_verdict"]),
    }


def _rate_per_hour(experiment: Experiment, snapshot: EstimateSnapshot | None) -> float | None:
    """Verdicts per hour over the last hour of snapshots (from the first one when younger)."""
    if snapshot is None:
        return None
    history = EstimateSnapshot.objects.filter(experiment=experiment).values_list("created_at", "judgements")
    since = snapshot.created_at - RATE_WINDOW
    earlier = (
        history.filter(created_at__lte=since).order_by("-created_at", "-pk").first()
        or history.order_by("created_at", "pk").first()
    )
    if earlier is None:
        return None
    hours = (snapshot.created_at - earlier[0]).total_seconds() / 3600
    if hours <= 0:
        return None
    return (snapshot.judgements - earlier[1]) / hours
