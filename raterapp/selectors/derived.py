"""The derived metrics on the experiment page: ΔRecall and IQ, their curve and heat map, the
absolute quality of one clustering, and the calibration against a ground-truth clustering.

Everything comes from what the worker stored (:mod:`raterapp.services.refresh.derived`) and from the
latest snapshot; metrics_core turns ΔPrecision and ΔRecall into absolute quality.
"""

from __future__ import annotations

from typing import cast

from django.db.models import OuterRef, Subquery

from metrics_core import (
    Estimate,
    QualityEstimates,
    absolute_quality,
    interval_reading,
    metric_direction,
    metrics_for_scheme,
)
from metrics_core.gold import estimate_against_truth
from metrics_core.results import json_number
from raterapp.models import DerivedEstimate, Experiment
from raterapp.selectors.experiments import newest_first
from raterapp.vocabulary import METRIC_HELP, metric_label

# What each derived metric means, as the page states it (MQM §3.3, §4).
MEANINGS = {
    "DeltaRecall": (
        "Recall of Exp minus Recall of Base: the change in the weight share of each item's true "
        "cluster that its cluster holds. Read from the diagram of a typical affected item (MQM §3.2); "
        "it depends on Recall_Base of the affected items, shown on the curve."
    ),
    "IQ": (
        "Improvement quotient: of the way Exp moved from Base, the share that brought it closer to the "
        "Ideal clustering minus the share that took it away. 1: every step of the diff is an improvement; "
        "0: neutral; −1: every step makes it worse (MQM §4)."
    ),
}


def derived_latest(*, experiment: Experiment) -> DerivedEstimate | None:
    return newest_first(DerivedEstimate, experiment=experiment).first()


def derived_latest_id(*, experiment: Experiment) -> int | None:
    return newest_first(DerivedEstimate, experiment=experiment).values_list("pk", flat=True).first()


def derived_latest_of(*, experiment_ids: list[int]) -> dict[int, dict]:
    """The latest ΔRecall and IQ of each experiment, in two queries whatever their number:
    ``{"estimates": ..., "model_assisted": those of the model-assisted estimates or None,
    "assumption": the Recall_Base assumed, in words}``."""
    latest = DerivedEstimate.objects.filter(experiment=OuterRef("pk")).order_by("-created_at", "-pk").values("pk")[:1]
    ids = dict(Experiment.objects.filter(pk__in=experiment_ids).annotate(d=Subquery(latest)).values_list("pk", "d"))
    rows = DerivedEstimate.objects.filter(pk__in=[d for d in ids.values() if d]).values_list(
        "experiment",
        "payload__estimates",
        "payload__model_assisted__estimates",
        "payload__recall_base",
        "payload__recall_base_source",
    )
    return {
        experiment: {
            "estimates": estimates,
            "model_assisted": assisted,
            "assumption": recall_base_assumption(
                {"estimates": estimates, "recall_base": recall_base, "recall_base_source": source}
            ),
        }
        for experiment, estimates, assisted, recall_base, source in rows
    }


def recall_base_assumption(payload: dict) -> str:
    """The Recall_Base(AffectedItems) that ΔRecall and IQ rest on, in words (abcde-spec §14):
    "assuming Recall_Base 40–80%", or "at the ground truth's Recall_Base 46.7%". Results stored
    before the range existed were at the diagram's one Recall_Base."""
    estimate = (payload.get("estimates") or {}).get("DeltaRecall") or {}
    low, high = estimate.get("recall_base_low"), estimate.get("recall_base_high")
    if low is None or high is None:
        low = high = payload.get("recall_base")
    if low is None:
        return "assuming an unknown Recall_Base"
    if payload.get("recall_base_source") == "ground_truth":
        return f"at the ground truth's Recall_Base {_percent(low)}%"
    if low == high:
        return f"assuming Recall_Base {_percent(low)}%"
    return f"assuming Recall_Base {_percent(low)}–{_percent(cast(float, high))}%"


def deciding_derived(human: dict | None, assisted: dict | None, *, model_assisted: bool) -> tuple[dict | None, str]:
    """The ΔRecall and IQ that stand beside a headline (its page and the list): the model-assisted ones
    when it decides on model-assisted estimates and the worker has computed them, else the human-only
    ones; and which they are, ``"model_assisted"`` or ``"human_only"`` (said beside them when they are
    not the headline's own kind: the moment between a snapshot with scores and its ΔRecall)."""
    if model_assisted and assisted:
        return assisted, "model_assisted"
    return human, "human_only"


def derived_cell_text(latest: dict | None, *, model_assisted: bool = False) -> str | None:
    """The experiment list's ΔRecall and IQ (of :func:`derived_latest_of`) beside a headline that decides
    on model-assisted estimates or not (:func:`deciding_derived`): each number with its interval when
    there is one, then the assumption; None when neither has a value (never an empty "[, ]")."""
    if not latest:
        return None
    estimates, basis = deciding_derived(
        latest.get("estimates"), latest.get("model_assisted"), model_assisted=model_assisted
    )
    parts = []
    for name, digits in (("DeltaRecall", 3), ("IQ", 2)):
        e = (estimates or {}).get(name) or {}
        if e.get("value") is None:
            continue
        text = f"{metric_label(name)} {_signed(e['value'], digits)}"
        if e.get("ci_low") is not None and e.get("ci_high") is not None:
            text += f" [{_signed(e['ci_low'], digits)}, {_signed(e['ci_high'], digits)}]"
        parts.append(text)
    if not parts:
        return None
    kind = " (human-only)" if model_assisted and basis == "human_only" else ""
    return f"{' · '.join(parts)}{kind}, {latest['assumption']}"


def _percent(share: float) -> str:
    return f"{100 * share:.1f}".removesuffix(".0")


def _signed(value: float, digits: int) -> str:
    return f"{value:.{digits}f}".replace("-", "−")


def derived_panel_get(*, derived: DerivedEstimate | None) -> dict | None:
    """ΔRecall and IQ with intervals and readings, the diagram's variant, clips and checks, the
    plausibility check of eq 67, the Recall_Base curve and the heat map; None until computed."""
    if derived is None:
        return None
    p = derived.payload
    values = p["diagram"]["values"]
    assumption = recall_base_assumption(p)
    return {
        "id": derived.pk,
        "created_at": derived.created_at.isoformat(),
        "judgements": derived.judgements,
        "seconds": derived.seconds,
        "estimates": _readings(p["estimates"], assumption),
        # Those of the model-assisted estimates (abcde-spec §15), when the worker computed them.
        "model_assisted_estimates": _readings(p["model_assisted"]["estimates"], assumption)
        if "model_assisted" in p
        else None,
        "assumption": assumption,
        "recall_base_source": p.get("recall_base_source", "owner"),
        "meanings": MEANINGS,
        "variant": p["variant"],
        "recall_base": p["recall_base"],
        "recall_base_rule": p["recall_base_rule"],
        "precision_base": p["precision_base"],
        "clips": p["diagram"]["clips"],
        "checks": p["diagram"]["checks"],
        "plausibility": {
            "JaccardDistanceDiagram": values.get("JaccardDistanceDiagram"),
            "JaccardDistance": values.get("JaccardDistance"),
        },
        "jaccard_distance_to_ideal": {
            "base": values.get("JaccardDistanceBaseIdeal"),
            "exp": values.get("JaccardDistanceExpIdeal"),
            "change": values.get("JaccardDistance"),
        },
        "bootstrap": p["bootstrap"],
        "curve": p["curve"],
        "heat_map": p["heat_map"],
    }


def absolute_panel_get(
    *, experiment: Experiment, quality: QualityEstimates | None, derived: dict | None
) -> dict | None:
    """For an absolute-quality experiment: Precision of the clustering and its Recall above MinimumRecall."""
    if experiment.kind != Experiment.Kind.ABSOLUTE or quality is None or "DeltaPrecision" not in quality:
        return None
    delta_recall = None
    if derived is not None:
        delta_recall = Estimate.from_dict(derived["estimates"]["DeltaRecall"])
    absolute = absolute_quality(delta_precision=quality["DeltaPrecision"], delta_recall=delta_recall)
    return {name: {**e.as_dict(), "half_width": json_number(e.half_width)} for name, e in absolute.items()}


def calibration_panel_get(*, experiment: Experiment, quality: QualityEstimates | None, derived: DerivedEstimate | None):
    """With a ground-truth clustering: each estimate beside its exact value (and whether the interval
    holds it), the true ΔRecall and IQ beside the derived ones, and the parameters that would have matched."""
    ground_truth = experiment.ground_truth_metrics
    if not ground_truth:
        return None
    rows = []
    for name in metrics_for_scheme(quality.scheme) if quality is not None else ():
        if name in cast(QualityEstimates, quality) and name in ground_truth["quality"]:
            beside = _estimate_beside(cast(QualityEstimates, quality)[name].as_dict(), ground_truth["quality"][name])
            rows.append({"metric": name, **beside})
    calibration = (derived.payload.get("calibration") if derived is not None else None) or None
    derived_rows = []
    if calibration is not None:
        payload = cast(DerivedEstimate, derived).payload  # the calibration's
        assumption = recall_base_assumption(payload)
        for name in ("DeltaRecall", "IQ"):
            estimate = payload["estimates"][name]
            beside = _estimate_beside(estimate, calibration["truth"][name])
            derived_rows.append({"metric": name, **beside, "assumption": assumption})
    return {"quality": rows, "derived": derived_rows, "calibration": calibration, "truth": ground_truth["truth"]}


def estimate_reading(name: str, stored: dict) -> dict:
    """A stored estimate with its display name, one-line meaning, half-width, direction and what
    its interval says."""
    estimate = Estimate.from_dict(stored)
    direction = metric_direction(name)
    return {
        **estimate.as_dict(),
        "label": metric_label(name),
        "help": METRIC_HELP.get(name, ""),
        "half_width": json_number(estimate.half_width),
        "direction": "higher_is_better" if direction > 0 else "lower_is_better",
        "reading": interval_reading(estimate, direction=direction),
    }


def _readings(estimates: dict, assumption: str) -> dict:
    """ΔRecall and IQ with their readings, the Recall_Base range they assumed, and that in words."""
    return {
        name: {**estimate_reading(name, estimates[name]), **_range_of(estimates[name]), "assumption": assumption}
        for name in ("DeltaRecall", "IQ")
    }


def _range_of(stored: dict) -> dict:
    """The Recall_Base range a stored ΔRecall or IQ assumed (None for results stored before ranges)."""
    return {key: stored.get(key) for key in ("recall_base_low", "recall_base_high")}


def _estimate_beside(estimate: dict, exact: float | None) -> dict:
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    compared = estimate_against_truth(value=estimate.get("value"), low=low, high=high, exact=exact)
    return {
        "value": estimate.get("value"),
        "ci_low": low,
        "ci_high": high,
        "exact": exact,
        "error": compared["error"],
        "covered": compared["holds"],
    }
