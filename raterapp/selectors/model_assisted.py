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


def model_assisted_panel_get(*, experiment: Experiment, stored: dict | None) -> dict:
    """The panel: ``state`` "on" with the estimates and classes, or why there are none ("off",
    "no_scores", "waiting")."""
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
    human = stored["estimates"]
    panel["state"] = "on"
    panel["estimates"] = [
        {
            **estimate_reading(name, block["estimates"][name]),
            "metric": name,
            "lambda": block["estimates"][name].get("lambda"),
            "verdicts_saved": block["estimates"][name].get("verdicts_saved"),
            "human": estimate_reading(name, human[name]),
        }
        for name in metrics_for_scheme(experiment.scheme)
        if name in block["estimates"] and name in human
    ]
    panel["classes"] = [{**c, "rule_text": RULE_TEXT.get(c["rule"], c["rule"])} for c in block["classes"]]
    return panel


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
