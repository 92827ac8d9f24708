"""The model-assisted card in real headless Chromium (abcde-spec §15): the estimates corrected from a
score of every drawn pair beside the human-only ones, what the score is worth per class, kept current
without a reload, and the owner's switch. Screenshots at 1280 and 390 px for a person to look at."""

from __future__ import annotations

import re

import pytest

import metrics_core as mc
from raterapp.models import DerivedEstimate
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.scored import IDEAL, judge, scored_experiment
from tests.raterapp.prepared import sample_of

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _owners_experiment(settings, tmp_path):
    """A scored experiment (tests.raterapp.helpers.scored) of the engineer "dana" (password "pw")."""
    settings.MEDIA_ROOT = tmp_path / "media"
    owner = UserFactory(username="dana", roles=["engineer"])
    owner.set_password("pw")
    owner.save()
    return scored_experiment(owner)[0]


def _signed_in(browser, live_server, experiment):
    """A laptop-sized page of ``experiment`` signed in as its owner, with its problems recorded."""
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "dana", "pw", f"/experiments/{experiment.pk}/")
    return context, page, problems


def test_the_card_shows_both_estimates_and_the_saving_and_follows_new_verdicts(
    browser, live_server, screenshots_dir, settings, tmp_path
):
    experiment = _owners_experiment(settings, tmp_path)
    population, _ = sample_of(experiment)
    experiment.ground_truth_metrics = {
        "quality": {k: float(v) for k, v in mc.quality_from_gold(population, IDEAL).items()},
        "truth": mc.truth_from_gold(population, IDEAL),
    }
    experiment.save()
    context, page, problems = _signed_in(browser, live_server, experiment)
    card = page.locator("[data-model-assisted]")
    assert card.locator('[data-model-assisted-state="waiting"]').is_visible()
    assert "built-in card similarity" in card.locator("[data-model-assisted-line]").inner_text()

    plan = page.locator("[data-plan-block]")
    assert plan.is_hidden()  # no estimates yet: nothing to plan

    judge(experiment, 150)
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    card.locator("[data-model-assisted-value]").first.wait_for(state="visible")  # live, no reload
    # The budget card's plan follows the same snapshot, with the model-assisted intervals.
    plan.wait_for(state="visible")
    assert plan.locator("[data-plan-judgements]").inner_text() == str(snapshot.judgements)
    assert plan.locator("[data-plan-assisted]").is_visible()
    # The cards of human-only estimates (quality, its two charts, convergence, slices,
    # ΔRecall and IQ, the calibration against the ground truth) say so beside the model-assisted headline.
    notes = page.locator("[data-human-only-note]")
    assert notes.count() == 7
    for k in range(7):
        assert notes.nth(k).is_visible() and "human-only estimates" in notes.nth(k).inner_text()
    assert page.locator("[data-calibration] [data-human-only-note]").is_visible()
    human = snapshot.estimates["estimates"]["DeltaPrecision"]["value"]
    assert page.locator("[data-calibration-metric='DeltaPrecision'] td").first.inner_text() == f"{human:.4f}"
    assisted = snapshot.estimates["model_assisted"]["estimates"]["DeltaPrecision"]
    row = plan.locator("tr").filter(has=page.locator("th", has_text=re.compile("^DeltaPrecision$")))
    assert row.locator("td").first.inner_text() == f"{(assisted['ci_high'] - assisted['ci_low']) / 2:.4f}"
    merge = card.locator('tr[data-metric="GoodMergeDistance"]')
    cells = merge.locator("td").all_inner_texts()
    human_low, human_high = (float(x) for x in cells[1].strip("[]").split(","))
    low, high = (float(x) for x in cells[3].strip("[]").split(","))
    assert high - low < human_high - human_low
    assert cells[4].endswith("×") and float(cells[4][:-1]) > 1.0
    classes = card.locator("[data-model-assisted-classes] li").all_inner_texts()
    assert any("calibrated score" in text and "worth" in text for text in classes), classes
    derived_refresh(experiment_id=experiment.pk)  # the worker's ΔRecall and IQ join the card, live
    delta_recall = card.locator('tr[data-metric="DeltaRecall"]')
    delta_recall.wait_for()
    assert delta_recall.locator("th").inner_text().startswith("ΔRecall")
    assert card.locator('tr[data-metric="IQ"]').is_visible()
    # The headline's ΔRecall is the card's model-assisted one, not the human-only one beside it.
    headline = page.locator('[data-decision-number="DeltaRecall"]')
    assisted, human = (delta_recall.locator("td").nth(k).inner_text() for k in (2, 0))
    assert assisted != human
    page.wait_for_function(
        "text => document.querySelector('[data-decision-number=\"DeltaRecall\"] td').textContent === text", arg=assisted
    )
    assert headline.locator("[data-basis]").count() == 0
    settle(page)
    page.screenshot(path=str(screenshots_dir / "model-assisted-card-1280.png"), full_page=True)
    card.screenshot(path=str(screenshots_dir / "model-assisted-card-only-1280.png"))
    page.set_viewport_size(PHONE)
    settle(page)
    card.screenshot(path=str(screenshots_dir / "model-assisted-card-390.png"))

    page.set_viewport_size(LAPTOP)
    # A ΔRecall of the worker's pass before the score (the payload without its model-assisted block)
    # beside the model-assisted headline says it is human-only.
    stored = DerivedEstimate.objects.filter(experiment=experiment).latest("pk")
    stored.payload.pop("model_assisted")
    stored.save(update_fields=["payload"])
    page.reload()
    headline.locator('[data-basis="human_only"]').wait_for()
    assert headline.locator("td").first.inner_text() == human
    assert headline.locator("th").inner_text().endswith("human-only")
    page.locator("[data-decision]").screenshot(path=str(screenshots_dir / "decision-human-only-delta-recall-1280.png"))
    form = card.locator("[data-model-assisted-form]")
    form.get_by_label("Use the score in every estimate and the headline").uncheck()
    form.get_by_role("button", name="Save").click()
    form.locator("[data-model-assisted-status]").filter(has_text="Off").wait_for()
    card.locator('[data-model-assisted-state="off"]').wait_for(state="visible")
    experiment.refresh_from_db()
    assert experiment.model_assisted is False
    assert card.locator("[data-model-assisted-block]").is_hidden()
    for k in range(7):  # the headline is human-only now, as those cards are
        notes.nth(k).wait_for(state="hidden")
    assert not problems, problems
    context.close()


def test_the_headline_decides_earlier_with_the_score_on_the_same_verdicts(browser, live_server, settings, tmp_path):
    """Sixty verdicts: the model-assisted sequence of Good−Bad already excludes zero, the human-only
    one does not yet (it does from about 90 verdicts; bench_model_assisted.py --decide measures the
    verdicts saved over seeds). The owner's switch moves the page's headline between the two: off at
    once, on with the next snapshot (the worker's, here called in the test)."""
    experiment = _owners_experiment(settings, tmp_path)
    type(experiment).objects.filter(pk=experiment.pk).update(decision_metric="GoodMinusBadDistance")
    judge(experiment, 60)
    estimates_refresh(experiment_id=experiment.pk)
    context, page, problems = _signed_in(browser, live_server, experiment)
    label, why = page.locator("[data-decision-label]"), page.locator("[data-decision-why]")
    assert label.inner_text() == "Exp is worse"
    assert "Model-assisted" in why.inner_text()

    form = page.locator("[data-model-assisted-form]")
    form.get_by_label("Use the score in every estimate and the headline").uncheck()
    form.get_by_role("button", name="Save").click()
    page.wait_for_function("document.querySelector('[data-decision-label]').textContent === 'Not enough data yet'")
    assert "Model-assisted" not in why.inner_text()

    form.get_by_label("Use the score in every estimate and the headline").check()
    form.get_by_role("button", name="Save").click()
    form.locator("[data-model-assisted-status]").filter(has_text=re.compile("^On:")).wait_for()
    estimates_refresh(experiment_id=experiment.pk)
    page.wait_for_function("document.querySelector('[data-decision-label]').textContent === 'Exp is worse'")
    assert not problems, problems
    context.close()
