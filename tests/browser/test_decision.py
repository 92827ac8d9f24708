"""The headline decision in real headless Chromium, on an experiment whose truth is known (a
ground-truth clustering): *not enough data yet* while the confidence sequence straddles zero, then the right
decision, live, once it clears; the list says the same. Screenshots for a person to look at."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

import metrics_core as mc
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared, sample_of

from .conftest import record_problems, sign_in
from .helpers import _judge, _population

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def test_the_headline_reads_the_right_decision_once_the_sequence_clears(browser, live_server, screenshots_dir):
    base, exp, gold = _population()
    owner = UserFactory(username="dana", roles=["engineer"])
    owner.set_password("pw")
    owner.save()
    experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=800, name="Products: title model v2")
    population, _ = sample_of(experiment)
    truth = mc.quality_from_gold(population, gold)
    assert truth["GoodDistance"] - truth["BadDistance"] > 0.05  # Exp is truly better
    assert truth["DeltaPrecision"] > 0
    experiment.ground_truth_metrics = {"quality": {k: float(v) for k, v in truth.items()}, "truth": mc.truth_from_gold(population, gold)}
    experiment.save()
    rater = UserFactory(roles=["rater"])
    _judge(experiment, gold, rater, limit=12)
    estimates_refresh(experiment_id=experiment.pk)
    api = APIClient()
    api.force_authenticate(owner)
    assert api.get(f"/api/experiments/{experiment.pk}/decision/").json()["key"] == "not_enough_data"

    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "dana", "pw", "/experiments/")
    cell = page.locator(f'tr[data-experiment="{experiment.pk}"] [data-decision-key]')
    assert cell.inner_text() == "Not enough data yet"

    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    label = page.locator("[data-decision-label]")
    assert label.inner_text() == "Not enough data yet"
    assert "still reaches across zero" in page.locator("[data-decision-why]").inner_text()
    assert page.locator("[data-decision-settle]").is_visible()  # what should settle it
    box = label.bounding_box()
    assert box is not None and box["y"] + box["height"] <= LAPTOP["height"]  # visible without scrolling
    page.screenshot(path=str(screenshots_dir / "decision-undecided-1280.png"))

    # The rest of the verdicts arrive while the page is open: the headline follows without a reload.
    _judge(experiment, gold, rater)
    estimates_refresh(experiment_id=experiment.pk)
    page.wait_for_function("document.querySelector('[data-decision-label]').textContent === 'Exp is better'")
    decision = api.get(f"/api/experiments/{experiment.pk}/decision/").json()
    assert decision["key"] == "better" and decision["cs_low"] > 0
    assert page.locator("[data-decision-why]").inner_text() == decision["sentence"]
    rows = page.locator("[data-decision-numbers] tr")
    assert rows.first.locator("th").inner_text() == "ΔPrecision"
    assert page.locator("details[data-prepared-summary]").get_attribute("open") is None  # folded once prepared
    box = label.bounding_box()
    assert box is not None and box["y"] + box["height"] <= LAPTOP["height"]
    page.screenshot(path=str(screenshots_dir / "decision-1280.png"))

    # The precision target takes any half-width in (0, 1).
    page.locator("#target-input").fill("0.05")
    page.locator("[data-target-form] button[type=submit]").click()
    page.wait_for_function("document.querySelector('[data-target-status]').textContent === 'Target saved.'")
    experiment.refresh_from_db()
    assert experiment.target_half_width == 0.05

    page.goto(f"{live_server.url}/experiments/")
    assert cell.inner_text() == "Exp is better"
    page.screenshot(path=str(screenshots_dir / "experiments-decision-1280.png"), full_page=True)

    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    assert page.locator("[data-decision-label]").inner_text() == "Exp is better"
    page.screenshot(path=str(screenshots_dir / "decision-390.png"))
    assert problems == []
    context.close()


def test_an_engineer_granted_the_experiment_sees_the_decision_but_not_the_rule_or_the_batch_form(browser, live_server):
    base, exp, _ = _population()
    owner = UserFactory(roles=["engineer"])
    other = UserFactory(username="erin", roles=["engineer"])
    other.set_password("pw")
    other.save()
    experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=300)
    experiment.shared_with.add(other)
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    sign_in(page, live_server, "erin", "pw", f"/experiments/{experiment.pk}/")
    assert page.locator("[data-decision-label]").inner_text() == "Not enough data yet"
    assert page.locator("[data-decision-form]").count() == 0
    assert page.locator("[data-batch-form]").count() == 0
    context.close()
