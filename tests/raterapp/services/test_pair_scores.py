"""Scores of drawn pairs and the model-assisted estimates in the app (abcde-spec §15): every drawn
pair is scored with the built-in card similarity when it is stored, and each snapshot carries the
model-assisted estimates that metrics_core gives for those scores, when the owner's switch is on."""

import numpy as np
import pytest

from metrics_core import card_similarity, estimate_quality_assisted
from raterapp.models import Experiment, Item, SampledPair
from raterapp.selectors.draw_order import labelled_prefix_get
from raterapp.selectors.samples import judged_sample_get
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.helpers.scored import IDEAL, judge, scored_experiment

pytestmark = pytest.mark.usefixtures("media")


def _inputs(experiment):
    """The population, sample, verdicts and scores the worker estimates from, and the labelled draws."""
    judged = judged_sample_get(experiment=experiment)
    labelled = labelled_prefix_get(experiment=experiment, judged=judged)
    return (judged.source, judged.sample, judged.verdicts, judged.scores), labelled.counts


def test_every_stored_pair_is_scored_with_the_card_similarity_of_its_items(users):
    experiment, _, _ = scored_experiment(users["engineer"])
    items = list(Item.objects.filter(experiment=experiment).order_by("pk"))
    index = {item.pk: k for k, item in enumerate(items)}
    pairs = list(SampledPair.objects.filter(experiment=experiment).order_by("pk"))
    expected = card_similarity(
        cards={"title": [item.title for item in items], "description": [item.description for item in items]},
        i=[index[p.vantage_id] for p in pairs],
        j=[index[p.partner_id] for p in pairs],
    )
    assert [p.score for p in pairs] == pytest.approx(expected.tolist(), abs=1e-12)
    assert {p.score_source for p in pairs} == {SampledPair.ScoreSource.BUILT_IN}
    same = np.array([IDEAL[p.vantage.position] == IDEAL[p.partner.position] for p in pairs])
    scores = np.array([p.score for p in pairs])
    assert scores[same].mean() > scores[~same].mean() + 0.3  # the cards tell people apart


def test_a_snapshot_carries_the_model_assisted_estimates_metrics_core_gives(users):
    experiment, _, _ = scored_experiment(users["engineer"])
    judge(experiment, 150)
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    judged, counts = _inputs(experiment)
    expected = estimate_quality_assisted(
        *judged,
        confidence=experiment.confidence,
        horizon=experiment.n_draws,
        labelled_draws=counts,
    ).as_dict()
    block = snapshot.estimates["model_assisted"]
    assert block["classes"] == expected["classes"]
    for name, estimate in expected["estimates"].items():
        stored = block["estimates"][name]
        assert {key: stored[key] for key in estimate} == estimate
        assert stored["labelled_draws"] == snapshot.estimates["estimates"][name]["labelled_draws"]
    assert any(c["rule"] != "none" and c["lambda"] > 0 for c in block["classes"])
    human = snapshot.estimates["estimates"]["GoodMergeDistance"]
    assisted = block["estimates"]["GoodMergeDistance"]
    assert assisted["ci_high"] - assisted["ci_low"] < human["ci_high"] - human["ci_low"]


def test_the_worker_adds_the_model_assisted_delta_recall_and_iq_and_the_card_shows_them(users, settings):
    from metrics_core.derived.assisted import derived_metrics_assisted
    from raterapp.selectors.dashboard import experiment_dashboard_get
    from raterapp.services.refresh.derived import derived_refresh

    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    experiment, _, _ = scored_experiment(users["engineer"])
    judge(experiment, 150)
    estimates_refresh(experiment_id=experiment.pk)
    payload = derived_refresh(experiment_id=experiment.pk).payload
    judged, counts = _inputs(experiment)
    expected = derived_metrics_assisted(
        *judged,
        rng=np.random.default_rng(experiment.seed),
        confidence=experiment.confidence,
        n_boot=200,
        recall_base_range=(experiment.recall_base_low, experiment.recall_base_high),
        labelled_draws=counts,
    ).estimates_dict()
    stored = payload["model_assisted"]["estimates"]
    assert set(stored) == {"DeltaRecall", "IQ"}
    for name, estimate in expected.items():
        assert {key: stored[name][key] for key in estimate} == estimate
        assert stored[name]["labelled_draws"] == payload["estimates"][name]["labelled_draws"]
    assert stored["DeltaRecall"]["value"] != payload["estimates"]["DeltaRecall"]["value"]  # the score moved it
    rows = {row["metric"]: row for row in experiment_dashboard_get(experiment=experiment)["model_assisted"]["estimates"]}
    assert rows["DeltaRecall"]["value"] == stored["DeltaRecall"]["value"]
    assert rows["DeltaRecall"]["human"]["value"] == payload["estimates"]["DeltaRecall"]["value"]

    Experiment.objects.filter(pk=experiment.pk).update(model_assisted=False)
    assert "model_assisted" not in derived_refresh(experiment_id=experiment.pk).payload


def test_no_model_assisted_estimates_when_the_owner_turns_them_off_or_a_pair_has_no_score(users):
    experiment, _, _ = scored_experiment(users["engineer"])
    judge(experiment, 60)
    Experiment.objects.filter(pk=experiment.pk).update(model_assisted=False)
    assert "model_assisted" not in estimates_refresh(experiment_id=experiment.pk).estimates
    Experiment.objects.filter(pk=experiment.pk).update(model_assisted=True)
    assert "model_assisted" in estimates_refresh(experiment_id=experiment.pk).estimates
    pair = SampledPair.objects.filter(experiment=experiment).exclude(pair_class="self").first()
    SampledPair.objects.filter(pk=pair.pk).update(score=None)
    Experiment.objects.filter(pk=experiment.pk).update(sample_version=experiment.sample_version + 1)  # read again
    assert "model_assisted" not in estimates_refresh(experiment_id=experiment.pk).estimates


def test_the_headline_decides_on_the_model_assisted_sequence_and_says_so(users):
    from raterapp.selectors.dashboard import experiment_dashboard_get

    experiment, _, _ = scored_experiment(users["engineer"])
    Experiment.objects.filter(pk=experiment.pk).update(decision_metric="GoodMinusBadDistance")
    experiment.refresh_from_db()
    judge(experiment, 150)
    stored = estimates_refresh(experiment_id=experiment.pk).estimates
    decision = experiment_dashboard_get(experiment=experiment)["decision"]
    assisted = stored["model_assisted"]["estimates"]["GoodMinusBadDistance"]
    assert (decision["cs_low"], decision["cs_high"]) == (assisted["cs_low"], assisted["cs_high"])
    assert decision["model_assisted"] and "Model-assisted" in decision["sentence"]
    human = stored["estimates"]["GoodMinusBadDistance"]
    assert assisted["cs_high"] - assisted["cs_low"] < human["cs_high"] - human["cs_low"]
    Experiment.objects.filter(pk=experiment.pk).update(model_assisted=False)
    experiment.refresh_from_db()
    decision = experiment_dashboard_get(experiment=experiment)["decision"]  # the switch acts before a snapshot
    assert (decision["cs_low"], decision["cs_high"]) == (human["cs_low"], human["cs_high"])
    assert not decision["model_assisted"]
    stored = estimates_refresh(experiment_id=experiment.pk).estimates
    decision = experiment_dashboard_get(experiment=experiment)["decision"]
    assert (decision["cs_low"], decision["cs_high"]) == (human["cs_low"], human["cs_high"])
    assert not decision["model_assisted"] and "Model-assisted" not in decision["sentence"]


def test_the_planners_count_the_scores_saving(users):
    """The verdicts still needed to the target (the budget's plan, the progress line) and the badge's
    target check use the estimates the headline decides on: with a score, the model-assisted ones."""
    from raterapp.selectors.budgets import budget_plan_get
    from raterapp.selectors.dashboard import experiment_dashboard_get

    experiment, _, _ = scored_experiment(users["engineer"])
    judge(experiment, 150)
    stored = estimates_refresh(experiment_id=experiment.pk).estimates
    assisted, human = stored["model_assisted"]["estimates"], stored["estimates"]
    target = (human["DeltaPrecision"]["ci_high"] - human["DeltaPrecision"]["ci_low"]) / 4  # out of reach yet
    Experiment.objects.filter(pk=experiment.pk).update(target_half_width=target)
    experiment.refresh_from_db()

    def half(estimate):
        return (estimate["ci_high"] - estimate["ci_low"]) / 2

    plan = budget_plan_get(experiment=experiment, cost_per_verdict=1.0)
    assert plan["model_assisted"]
    with_score = {row["metric"]: row for row in plan["metrics"]}
    assert with_score["GoodMergeDistance"]["half_width"] == pytest.approx(half(assisted["GoodMergeDistance"]))
    assert half(assisted["GoodMergeDistance"]) < half(human["GoodMergeDistance"])
    dashboard = experiment_dashboard_get(experiment=experiment)
    assert "ΔPrecision (model-assisted) is ±" in dashboard["badge"]["reasons"][0]

    Experiment.objects.filter(pk=experiment.pk).update(model_assisted=False)
    experiment.refresh_from_db()
    estimates_refresh(experiment_id=experiment.pk)
    plan = budget_plan_get(experiment=experiment, cost_per_verdict=1.0)
    without = {row["metric"]: row for row in plan["metrics"]}
    assert not plan["model_assisted"]
    assert without["GoodMergeDistance"]["half_width"] == pytest.approx(half(human["GoodMergeDistance"]))
    assert with_score["GoodMergeDistance"]["more_verdicts"] < without["GoodMergeDistance"]["more_verdicts"]
    assert with_score["DeltaPrecision"]["more_verdicts"] < without["DeltaPrecision"]["more_verdicts"]
    assert experiment_dashboard_get(experiment=experiment)["badge"]["reasons"][0].startswith("ΔPrecision is ±")


def test_every_number_beside_a_model_assisted_headline_is_model_assisted_or_says_it_is_not(users, settings):
    """The headline's numbers and the experiment list's row rest on the estimates the headline decides
    on: with a score, ΔPrecision, Good and Bad distance, ΔRecall and IQ are all model-assisted (they were
    human-only ΔRecall and IQ, and a human-only ΔPrecision in the list, beside a model-assisted
    decision); a human-only ΔRecall still there (the worker's pass after the snapshot) says so."""
    from raterapp.models import DerivedEstimate
    from raterapp.selectors.dashboard import experiment_dashboard_get, experiment_list_rows
    from raterapp.services.refresh.derived import derived_refresh

    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    experiment, _, _ = scored_experiment(users["engineer"])
    judge(experiment, 150)
    stored = estimates_refresh(experiment_id=experiment.pk).estimates
    derived = derived_refresh(experiment_id=experiment.pk)
    assisted = {**stored["model_assisted"]["estimates"], **derived.payload["model_assisted"]["estimates"]}
    human = {**stored["estimates"], **derived.payload["estimates"]}

    def headline():
        rows = experiment_dashboard_get(experiment=experiment)["decision"]["numbers"]
        return {row["metric"]: (row["value"], row["ci_low"], row["ci_high"], row["basis"]) for row in rows}

    def expected(estimates, basis):
        return {name: (*(estimates[name][key] for key in ("value", "ci_low", "ci_high")), basis) for name in names}

    def listed():
        return experiment_list_rows(experiments=[experiment])[0]

    names = ("DeltaPrecision", "DeltaRecall", "IQ", "GoodDistance", "BadDistance")
    assert assisted["DeltaRecall"]["value"] != human["DeltaRecall"]["value"]
    assert headline() == expected(assisted, "model_assisted")
    row = listed()
    assert row["delta_precision"]["value"] == assisted["DeltaPrecision"]["value"]
    assert row["decision"]["model_assisted"]
    assert f"ΔRecall {assisted['DeltaRecall']['value']:.3f}".replace("-", "−") in row["derived_text"]
    assert "human-only" not in row["derived_text"]

    DerivedEstimate.objects.filter(pk=derived.pk).update(
        payload={key: value for key, value in derived.payload.items() if key != "model_assisted"}
    )
    assert headline()["DeltaRecall"] == expected(human, "human_only")["DeltaRecall"]
    assert headline()["DeltaPrecision"] == expected(assisted, "model_assisted")["DeltaPrecision"]
    assert "(human-only)" in listed()["derived_text"]

    Experiment.objects.filter(pk=experiment.pk).update(model_assisted=False)
    experiment.refresh_from_db()
    assert headline() == expected(human, "human_only")
    row = listed()
    assert row["delta_precision"]["value"] == human["DeltaPrecision"]["value"]
    assert not row["decision"]["model_assisted"] and "human-only" not in row["derived_text"]
