"""The headline of an experiment: is Exp better, worse, no different, or is it too early to say.

The decision is metrics_core's (``decide``, abcde-spec §9): it reads the deciding metric's
confidence sequence, which stays valid however often the live page is looked at, against the
owner's equivalence margin, and says whether unsure verdicts could flip it (§12). While it is
undecided, the plan (§10) says how many more verdicts, and what they cost, should settle it.
"""

from __future__ import annotations

import math
from typing import cast

from metrics_core import QualityEstimates, decide, deciding_metric, settle_plan
from metrics_core.results import json_number
from raterapp.models import Experiment
from raterapp.selectors.batches import sample_batch_proposal
from raterapp.selectors.derived import deciding_derived
from raterapp.vocabulary import DECISION_LABELS, METRIC_HELP, metric_label

# The numbers behind the decision, in the order the headline shows them.
HEADLINE_METRICS = ("DeltaPrecision", "DeltaRecall", "IQ", "GoodDistance", "BadDistance")


def experiment_decision_metric(experiment: Experiment) -> str:
    """The metric that decides: the owner's choice, or the scheme's default."""
    return experiment.decision_metric or deciding_metric(experiment.scheme)


def experiment_decision_get(
    *,
    experiment: Experiment,
    quality: QualityEstimates | None,
    derived: dict | None,
    progress: dict | None = None,
    sample: dict | None = None,
    model_assisted: bool = False,
) -> dict | None:
    """The headline decision with the numbers behind it, its fragility and, while undecided, the
    verdicts and cost expected to settle it. None for an absolute-quality experiment (nothing to
    compare) and before the sample exists. ``sample``: the snapshot's ``new_pair_share`` and
    ``sample_draws``, for the plan. ``model_assisted``: ``quality`` is :func:`deciding_quality`'s
    model-assisted estimates (the page says so; the plan then counts the score's saving)."""
    if experiment.kind == Experiment.Kind.ABSOLUTE or experiment.status not in ("rating", "done"):
        return None
    metric = experiment_decision_metric(experiment)
    numbers = _numbers(quality, derived, model_assisted)
    if quality is None or metric not in quality:
        return {
            **_outcome("not_enough_data"),
            "metric": metric,
            "metric_label": metric_label(metric),
            "metric_help": METRIC_HELP.get(metric, ""),
            "margin": experiment.equivalence_margin,
            "value": None,
            "cs_low": None,
            "cs_high": None,
            "fragile": False,
            "fragile_note": "",
            "unsure_low": None,
            "unsure_high": None,
            "numbers": numbers,
            "settle": None,
            "sentence": "No judged draws yet: the decision appears once verdicts come in.",
            "model_assisted": model_assisted,
        }
    decision = decide(quality, metric=metric, margin=experiment.equivalence_margin)
    estimate = quality[metric]
    return {
        **_outcome(decision.outcome),
        "metric": metric,
        "metric_label": metric_label(metric),
        "metric_help": METRIC_HELP.get(metric, ""),
        "margin": experiment.equivalence_margin,
        "value": json_number(decision.value),
        "cs_low": json_number(decision.cs_low),
        "cs_high": json_number(decision.cs_high),
        "fragile": bool(decision.fragile),
        "fragile_note": _fragile_note(decision, metric_label(metric), estimate),
        "unsure_low": json_number(estimate.unsure_low),
        "unsure_high": json_number(estimate.unsure_high),
        "numbers": numbers,
        "settle": (
            _settle(experiment, quality[metric], decision, progress or {}, sample or {})
            if decision.outcome == "not_enough_data"
            else None
        ),
        "sentence": _sentence(decision, metric_label(metric), experiment.confidence)
        + (" Model-assisted: a score of every drawn pair, corrected by the verdicts." if model_assisted else ""),
        "model_assisted": model_assisted,
    }


def decides_model_assisted(experiment: Experiment, stored: dict | None) -> bool:
    """Whether the headline and the planners use the snapshot's model-assisted estimates: the snapshot
    has them and the owner has not turned them off since (the switch acts at once; turned on, the
    next snapshot brings them)."""
    return bool(experiment.model_assisted and stored and stored.get("model_assisted"))


def deciding_estimates(experiment: Experiment, stored: dict | None) -> dict[str, dict]:
    """The estimates of a snapshot (name -> stored estimate) that the headline decides on and the
    planners plan with: the model-assisted ones when :func:`decides_model_assisted` (abcde-spec §15:
    their intervals and sequences hold as the human-only ones do, and are tighter, so the verdicts
    still needed count the score's saving), else the human-only ones."""
    if not stored:
        return {}
    return stored["model_assisted"]["estimates"] if decides_model_assisted(experiment, stored) else stored["estimates"]


def deciding_quality(experiment: Experiment, stored: dict | None) -> QualityEstimates | None:
    """:func:`deciding_estimates` as metrics_core's estimates."""
    if not stored:
        return None
    return QualityEstimates.from_dict({**stored, "estimates": deciding_estimates(experiment, stored)})


def experiment_list_decision(*, experiment: Experiment, stored: dict | None) -> dict | None:
    """The decision of one experiment of the list, from its latest stored snapshot."""
    decision = experiment_decision_get(
        experiment=experiment,
        quality=deciding_quality(experiment, stored),
        derived=None,
        model_assisted=decides_model_assisted(experiment, stored),
    )
    if decision is None:
        return None
    keys = ("key", "label", "metric_label", "value", "cs_low", "cs_high", "fragile", "model_assisted")
    return {key: decision[key] for key in keys}


def _sentence(decision, label: str, confidence: float) -> str:
    """The decision in words, with the numbers it rests on."""
    if not (math.isfinite(decision.value) and math.isfinite(decision.cs_low) and math.isfinite(decision.cs_high)):
        return f"{label} has no estimate yet: too few judged draws."
    margin = decision.margin
    where = {
        "better": f"lies above {_number(margin) if margin else 'zero'}",
        "worse": f"lies below {_number(-margin) if margin else 'zero'}",
        "no_meaningful_difference": f"lies inside ±{_number(margin)}",
        "not_enough_data": f"still reaches across {'±' + _number(margin) if margin else 'zero'}",
    }[decision.outcome]
    return (
        f"{label} is {_number(decision.value, sign=True)}; its {confidence:.0%} confidence sequence "
        f"[{_number(decision.cs_low, sign=True)}, {_number(decision.cs_high, sign=True)}] {where}."
    )


def _fragile_note(decision, label: str, estimate) -> str:
    """What deciding the unsure verdicts could do, in words, from metrics_core's ``flip_*``: which
    way they would go, the end of the moved sequence that crosses the margin, and the headline
    then. Empty when the decision is not fragile."""
    if not decision.fragile:
        return ""
    way = "against Exp" if decision.flip_centre == estimate.unsure_low else "for Exp"
    end = "lower" if decision.flip_bound == "cs_low" else "upper"
    bound, threshold = decision.flip_bound_value, decision.flip_threshold
    side = "above" if bound > threshold else "below" if bound < threshold else "on"
    threshold_text = "zero" if threshold == 0 else f"the margin {_number(threshold, sign=True)}"
    return (
        f"If the unsure verdicts had all gone {way}, {label} would be {_number(decision.flip_centre, sign=True)} "
        f"and the {end} end of its confidence sequence {_number(bound, sign=True)}, {side} {threshold_text}: "
        f"the headline would say “{DECISION_LABELS[decision.flip_outcome]}” instead of "
        f"“{DECISION_LABELS[decision.outcome]}”. Look at the unsure pairs."
    )


def _number(value: float, *, sign: bool = False) -> str:
    text = f"{value:+.4f}" if sign else f"{value:.4f}"
    return text.replace("-", "−")


def _outcome(key: str) -> dict:
    return {"key": key, "label": DECISION_LABELS[key]}


def _numbers(quality: QualityEstimates | None, derived: dict | None, model_assisted: bool) -> list[dict]:
    basis = "model_assisted" if model_assisted else "human_only"
    derived_estimates, derived_basis = deciding_derived(
        (derived or {}).get("estimates"), (derived or {}).get("model_assisted_estimates"), model_assisted=model_assisted
    )
    rows = []
    for name in HEADLINE_METRICS:
        source, source_basis = None, basis
        if quality is not None and name in quality:
            source = quality[name].as_dict()
        elif name in (derived_estimates or {}):
            source, source_basis = cast(dict, derived_estimates)[name], derived_basis
        if source is None:
            continue
        rows.append(
            {
                "metric": name,
                "label": metric_label(name),
                "help": METRIC_HELP.get(name, ""),
                **{key: source.get(key) for key in ("value", "ci_low", "ci_high", "cs_low", "cs_high")},
                # ΔRecall and IQ: the Recall_Base they assume, in words (abcde-spec §14).
                "assumption": source.get("assumption"),
                "basis": source_basis,
            }
        )
    return rows


def _settle(experiment: Experiment, estimate, decision, progress: dict, sample: dict) -> dict | None:
    """The verdicts and cost expected to settle the decision (metrics_core's ``settle_plan``), and
    the draws of a batch that would hold them, as the batch API accepts it.

    The sequence's horizon is the metric's planned draws: its share of the draws planned when the
    experiment was created (later batches add draws, not plan). New draws bring new pairs at the
    Good–Turing rate, so a verdict buys ``1 / new_pair_share`` draws; only the metric's share of
    them moves it. Before any new batch, the pairs already drawn and waiting for a verdict are
    judged, each bringing the metric's judged draws per judged pair so far."""
    if not math.isfinite(decision.value):
        return None
    sample_draws = sample.get("sample_draws") or experiment.n_draws
    class_share = min(estimate.drawn_draws / sample_draws, 1.0) if estimate.drawn_draws > 0 else 1.0
    horizon = max(round(class_share * experiment.n_draws), 1)
    # Pairs drawn and waiting for a verdict come first, each bringing the metric's judged draws
    # per judged pair so far (in the sample's draws); then pairs of new batches, at the
    # Good–Turing rate.
    tasks, judged_pairs = progress.get("tasks") or 0, progress.get("judged_pairs") or 0
    per_pair = estimate.judged_draws / class_share / judged_pairs if judged_pairs else 1.0
    share = sample.get("new_pair_share")
    draws_per_pair = 1.0 / share if share else per_pair
    pending_pairs = max(tasks - judged_pairs, 0)
    plan = settle_plan(
        estimate=estimate,
        margin=decision.margin,
        horizon=horizon,
        class_share=class_share,
        pending_pairs=pending_pairs,
        pending_draws_per_pair=max(per_pair, 1.0),
        draws_per_pair=max(draws_per_pair, 1.0),
        replication=experiment.replication,
        cost_per_verdict=float(progress.get("cost_per_verdict") or 0.0),
        confidence=experiment.confidence,
    )
    pending = pending_pairs * max(per_pair, 1.0)
    more_draws = plan.judged_draws - pending
    needed = _round_up(max(more_draws, 0.0)) if math.isfinite(more_draws) else None
    proposal = sample_batch_proposal(experiment=experiment, wanted=needed) if needed else None
    return {
        "half_width": json_number(decision.settle_half_width),
        "judged_draws": json_number(plan.judged_draws),
        "verdicts": json_number(plan.verdicts),
        "cost": json_number(plan.cost),
        "beyond_reach": math.isinf(plan.verdicts),
        "needed_draws": needed,
        "suggested_draws": proposal["draws"] if proposal else needed,
        "suggested_clamped": bool(proposal and proposal["clamped"]),
    }


def _round_up(draws: float) -> int:
    """To the next hundred, so that the form offers a round number."""
    return int(math.ceil(draws / 100.0) * 100) if draws > 0 else 0
