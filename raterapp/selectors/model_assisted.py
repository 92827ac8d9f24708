"""The model-assisted estimates of the experiment page (abcde-spec §15), beside the human-only ones.

Read from the latest snapshot's ``model_assisted`` block (``estimate --scores``'s), with what they
assume in words: where the score comes from, which classes it helps and how much, and where the
human-only estimate stands instead.
"""

from __future__ import annotations

from typing import Any

from metrics_core import metrics_for_scheme
from raterapp.models import Experiment, SampledPair
from raterapp.selectors.derived import estimate_reading

RULE_TEXT = {
    "none": "not used (fewer than 20 judged pairs, or nothing to correct)",
    "raw": "raw score (20–49 judged pairs)",
    "calibrated": "calibrated score (50 or more judged pairs)",
}
MODEL_ASSISTED_HELP = (
    "A cheap score of every drawn pair (how alike the two cards are, or your own model's) predicts the "
    "verdict; the human verdicts correct its bias. The interval stays valid whatever the score: with a "
    "useless score it is as wide as the human-only one, with a good one narrower. Raters never see the score."
)


def model_assisted_panel_get(*, experiment: Experiment, stored: dict | None, derived: dict | None = None) -> dict:
    """The panel: ``state`` "on" with the estimates and classes, or why there are none ("off",
    "no_scores", "waiting"). ``derived``: the latest derived payload, whose model-assisted ΔRecall
    and IQ (the worker's, a moment after the snapshot) join the rows."""
    source = _score_source(experiment)
    panel: dict[str, Any] = {
        "state": "off",
        "help": MODEL_ASSISTED_HELP,
        "source": source,
        "estimates": [],
        "classes": [],
    }
    if not experiment.model_assisted:
        return panel
    block = (stored or {}).get("model_assisted")
    if stored is None or block is None:
        panel["state"] = "waiting" if source else "no_scores"
        return panel
    panel["state"] = "on"
    panel["estimates"] = _rows(block["estimates"], stored["estimates"], metrics_for_scheme(experiment.scheme))
    derived = derived or {}
    assisted_derived = (derived.get("model_assisted") or {}).get("estimates")
    if assisted_derived:
        panel["estimates"] += _rows(assisted_derived, derived["estimates"], ("DeltaRecall", "IQ"))
    panel["classes"] = [{**c, "rule_text": RULE_TEXT.get(c["rule"], c["rule"])} for c in block["classes"]]
    return panel


def _rows(assisted: dict, human: dict, names) -> list[dict]:
    """Each metric's model-assisted reading beside its human-only one."""
    return [
        {
            **estimate_reading(name, assisted[name]),
            "metric": name,
            "lambda": assisted[name].get("lambda"),
            "verdicts_saved": assisted[name].get("verdicts_saved"),
            "human": estimate_reading(name, human[name]),
        }
        for name in names
        if name in assisted and name in human
    ]


def _score_source(experiment: Experiment) -> str:
    """Where the pairs' scores come from, in words ("" when no pair has one)."""
    sources = set(
        SampledPair.objects.filter(experiment=experiment, score__isnull=False)
        .values_list("score_source", flat=True)
        .distinct()
    )
    if not sources:
        return ""
    if sources == {SampledPair.ScoreSource.BUILT_IN}:
        return "the built-in card similarity"
    if sources == {SampledPair.ScoreSource.UPLOADED}:
        return "your uploaded scores"
    return "your uploaded scores, and the built-in card similarity for the pairs they leave out"
