"""The Recall_Base ΔRecall and IQ assume, in the app (abcde-spec §14): the owner's range (40-80% unless
set) or a ground truth's own value reaches metrics_core, and every place that shows them says it in words."""

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from metrics_core import derived_metrics, truth_from_gold, verdicts_from_judgements
from raterapp.selectors.dashboard import experiment_dashboard_get, experiment_list_rows
from raterapp.selectors.derived import derived_cell_text, recall_base_assumption
from raterapp.services.experiments.control import experiment_recall_base_set
from raterapp.services.refresh.derived import derived_refresh
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import GOLD, judge_everything
from tests.raterapp.prepared import experiment_prepared, sample_of

pytestmark = pytest.mark.usefixtures("media")


def test_the_owners_range_reaches_metrics_core_and_the_words_follow_it(users, settings, django_capture_on_commit_callbacks):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 100
    experiment = experiment_prepared(owner=users["engineer"])
    submitted = judge_everything(experiment, make_raters(1))
    first = derived_refresh(experiment_id=experiment.pk)
    estimate = first.payload["estimates"]["DeltaRecall"]
    assert (estimate["recall_base_low"], estimate["recall_base_high"]) == (0.4, 0.8)
    assert recall_base_assumption(first.payload) == "assuming Recall_Base 40–80%"
    for key in ("cs_low", "cs_high", "unsure_low", "unsure_high"):
        assert estimate[key] is not None, key

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        experiment_recall_base_set(experiment=experiment, recall_base_low=0.3, recall_base_high=0.55)
    assert len(callbacks) == 1  # the derived metrics are recomputed
    second = derived_refresh(experiment_id=experiment.pk)
    population, sample = sample_of(experiment)
    a, b, verdict = zip(*submitted)
    expected = derived_metrics(
        population, sample, verdicts_from_judgements(list(a), list(b), list(verdict)),
        rng=np.random.default_rng(experiment.seed), confidence=experiment.confidence, n_boot=100,
        recall_base_range=(0.3, 0.55),
    )  # fmt: skip
    assert second.payload["estimates"] == expected.as_dict()["estimates"]
    assert recall_base_assumption(second.payload) == "assuming Recall_Base 30–55%"
    for bad in ((0.6, 0.5), (0.0, 0.5), (0.5, 1.2)):
        with pytest.raises(ValidationError):
            experiment_recall_base_set(experiment=experiment, recall_base_low=bad[0], recall_base_high=bad[1])

    dashboard = experiment_dashboard_get(experiment=experiment)
    for name in ("DeltaRecall", "IQ"):
        assert dashboard["derived"]["estimates"][name]["assumption"] == "assuming Recall_Base 30–55%"
    numbers = {row["metric"]: row for row in dashboard["decision"]["numbers"]}
    assert numbers["DeltaRecall"]["assumption"] == numbers["IQ"]["assumption"] == "assuming Recall_Base 30–55%"
    assert all(row["assumption"] is None for name, row in numbers.items() if name not in ("DeltaRecall", "IQ"))
    (row,) = experiment_list_rows(experiments=[experiment])
    assert row["derived_text"].startswith("ΔRecall ") and row["derived_text"].endswith(", assuming Recall_Base 30–55%")
    assert "[, ]" not in row["derived_text"] and " · IQ " in row["derived_text"]


def test_with_a_ground_truth_its_own_recall_base_is_used_and_said(users, settings):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 50
    experiment = experiment_prepared(owner=users["engineer"])
    population, _ = sample_of(experiment)
    truth = truth_from_gold(population, GOLD)
    experiment.ground_truth_metrics = {"quality": {}, "truth": truth}
    experiment.save()
    judge_everything(experiment, make_raters(1))
    stored = derived_refresh(experiment_id=experiment.pk)
    estimate = stored.payload["estimates"]["DeltaRecall"]
    assert estimate["recall_base_low"] == estimate["recall_base_high"] == pytest.approx(truth["RecallBase"])
    assert stored.payload["recall_base"] == pytest.approx(truth["RecallBase"])
    percent = f"{100 * truth['RecallBase']:.1f}".removesuffix(".0")
    assert recall_base_assumption(stored.payload) == f"at the ground truth's Recall_Base {percent}%"
    calibration = experiment_dashboard_get(experiment=experiment)["calibration"]
    assert {row["metric"]: row["assumption"] for row in calibration["derived"]} == {
        "DeltaRecall": recall_base_assumption(stored.payload), "IQ": recall_base_assumption(stored.payload),
    }  # fmt: skip


def test_the_list_cell_never_shows_empty_brackets():
    words = "assuming Recall_Base 40–80%"
    full = {"value": -0.0123, "ci_low": -0.02, "ci_high": 0.001}
    assert derived_cell_text({"estimates": {"DeltaRecall": full, "IQ": {"value": 0.5}}, "assumption": words}) == (
        "ΔRecall −0.012 [−0.020, 0.001] · IQ 0.50, assuming Recall_Base 40–80%"
    )
    undefined = {"value": None, "ci_low": None, "ci_high": None}
    assert derived_cell_text({"estimates": {"DeltaRecall": undefined, "IQ": undefined}, "assumption": words}) is None
    assert derived_cell_text(None) is None
    # Stored before the range existed: at the diagram's one Recall_Base.
    assert recall_base_assumption({"estimates": {"DeltaRecall": full}, "recall_base": 0.6}) == "assuming Recall_Base 60%"
