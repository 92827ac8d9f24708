"""The fragile note in words (issue 34): it names the end of the confidence sequence that would
cross the margin and what the headline would then say, from metrics_core's ``flip_*``; it never
shows the bare unsure range, whose two ends may both lie on the decided side."""

from __future__ import annotations

import pytest

from metrics_core import Estimate, QualityEstimates
from raterapp.selectors.decision import experiment_decision_get
from tests.raterapp.factories import ExperimentFactory

pytestmark = pytest.mark.django_db


def _decision(value, cs, unsure, margin=0.0):
    experiment = ExperimentFactory(status="rating", scheme="precision", equivalence_margin=margin)
    e = Estimate(
        value=value, stderr=0.01, ci_low=cs[0] + 0.01, ci_high=cs[1] - 0.01, judged_draws=400, drawn_draws=500,
        cs_low=cs[0], cs_high=cs[1], unsure_low=unsure[0], unsure_high=unsure[1],
    )
    quality = QualityEstimates(scheme="precision", confidence=0.95, estimates={"DeltaPrecision": e})
    return experiment_decision_get(experiment=experiment, quality=quality, derived=None)


def test_the_note_names_the_lower_end_that_falls_below_zero_and_the_headline_then():
    decision = _decision(0.126, (0.006, 0.246), (0.1108, 0.1414))
    assert (decision["key"], decision["fragile"]) == ("better", True)
    assert decision["fragile_note"] == (
        "If the unsure verdicts had all gone against Exp, ΔPrecision would be +0.1108 and the lower end of its "
        "confidence sequence −0.0092, below zero: the headline would say “Not enough data yet” instead of "
        "“Exp is better”. Look at the unsure pairs."
    )


def test_the_note_names_the_margin_when_there_is_one():
    decision = _decision(-0.05, (-0.08, -0.03), (-0.05, -0.02), margin=0.01)
    assert decision["key"] == "worse"
    assert decision["fragile_note"] == (
        "If the unsure verdicts had all gone for Exp, ΔPrecision would be −0.0200 and the upper end of its "
        "confidence sequence +0.0000, above the margin −0.0100: the headline would say “Not enough data yet” "
        "instead of “Exp is worse”. Look at the unsure pairs."
    )


def test_a_sturdy_decision_has_no_note():
    assert _decision(0.05, (0.02, 0.08), (0.04, 0.07))["fragile_note"] == ""


# ---- "new pairs": one meaning in the plan, the batch table and the API ---------------------------


def test_a_batch_counts_new_pairs_as_the_plan_does_and_names_sample_rows_apart(users):
    from raterapp.models import SampleBatch
    from raterapp.selectors.batches import sample_batch_as_dict

    experiment = ExperimentFactory(status="rating")
    batch = SampleBatch.objects.create(
        experiment=experiment, index=1, draws=1000, status="done", new_pairs=188, new_tasks=135, repeated_pairs=40
    )
    row = sample_batch_as_dict(batch)
    # The plan's new_pairs is the expected number of new tasks (metrics_core.batch_expectation):
    # the batch's new_pairs is the same quantity once drawn.
    assert (row["new_pairs"], row["new_tasks"], row["new_sample_rows"], row["repeated_pairs"]) == (135, 135, 188, 40)


def test_the_batch_table_and_the_plan_use_the_same_words():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    table = (root / "templates/raterapp/experiments/_batches.html").read_text()
    assert '<th scope="col" class="num">New pairs</th><th scope="col" class="num">New sample rows</th>' in table
    assert "New tasks" not in table
    script = (root / "static/raterapp/js/batches.js").read_text()
    assert "new pairs to judge" in script and "b.new_sample_rows" in script
