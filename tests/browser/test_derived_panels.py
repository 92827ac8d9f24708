"""The derived panels in real headless Chromium: ΔRecall and IQ with their meaning, the
Recall_Base curve, the Variant 2 heat map, IQ's picture, the calibration against a
ground-truth clustering, and the absolute quality of one clustering. Screenshots for a person to look at."""

from __future__ import annotations

import re
import uuid

import numpy as np
import pytest
from rest_framework.test import APIClient

import metrics_core as mc
from raterapp.models import Experiment
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared, sample_of

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _population(n=240, seed=3):
    rng = np.random.default_rng(seed)
    gold = np.arange(n) // 4
    base = np.where(rng.random(n) < 0.25, gold + 1000, gold // 2)  # over-merged pairs of clusters, some split off
    exp = np.where(rng.random(n) < 0.5, gold + 5000, base)  # Exp moves about half the items to their true cluster
    return base.tolist(), exp.tolist(), gold


def _judge_all(experiment, gold):
    rater = UserFactory(roles=["rater"])
    k = 0
    while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
        same = gold[task.item_a.position] == gold[task.item_b.position]
        verdict = "unsure" if k % 11 == 10 else "equivalent" if same else "not_equivalent"
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
        k += 1


def _log_in(browser, live_server, user, path):
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, user.username, "pw", path)
    return context, page, problems


def _engineer(name):
    user = UserFactory(username=name, roles=["engineer"])
    user.set_password("pw")
    user.save()
    return user


def test_derived_panels_and_calibration(browser, live_server, screenshots_dir, settings):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 300
    base, exp, gold = _population()
    owner = _engineer("dana")
    experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=800, name="Products: title model v2")
    population, _ = sample_of(experiment)
    experiment.ground_truth_metrics = {
        "quality": {k: float(v) for k, v in mc.quality_from_gold(population, gold).items()},
        "truth": mc.truth_from_gold(population, gold),
    }
    experiment.save()
    _judge_all(experiment, gold)
    estimates_refresh(experiment_id=experiment.pk)
    derived_refresh(experiment_id=experiment.pk)
    api = APIClient()
    api.force_authenticate(owner)
    body = api.get(f"/api/experiments/{experiment.pk}/dashboard/").json()

    context, page, problems = _log_in(browser, live_server, owner, f"/experiments/{experiment.pk}/")
    for name in ("DeltaRecall", "IQ"):
        row = page.locator(f"[data-derived-estimate='{name}']")
        shown = body["derived"]["estimates"][name]
        assert row.locator("[data-cell='value']").inner_text() == f"{shown['value']:.4f}"
        assert row.locator("[data-cell='interval']").inner_text() == f"[{shown['ci_low']:.4f}, {shown['ci_high']:.4f}]"
        assert page.locator(f"[data-derived-meaning='{name}']").inner_text() == body["derived"]["meanings"][name]
        # With a ground truth, ΔRecall and IQ are at its Recall_Base, and say so beside the numbers.
        assumption = row.locator("[data-cell='assumption']").inner_text()
        assert assumption == shown["assumption"] and assumption.startswith("at the ground truth's Recall_Base ")
        assert page.locator(f"[data-calibration-metric='{name}'] [data-assumption]").inner_text().strip() == assumption
    notes = page.locator("[data-derived-notes]").inner_text()
    assert f"Variant {body['derived']['variant']}" in notes and "Plausibility (eq 67)" in notes
    for name, kind in (("recall-curve", "line"), ("heat-map", "matrix"), ("iq-triangle", "scatter")):
        assert page.evaluate(f"Chart.getChart(document.querySelector('[data-chart={name}]')).config.type") == kind
    cells = page.evaluate("Chart.getChart(document.querySelector('[data-chart=heat-map]')).data.datasets[0].data.length")
    heat = body["derived"]["heat_map"]
    assert cells == len(heat["precision_base"]) * len(heat["recall_base"])
    page.locator("[data-heat-metric]").select_option("IQ")
    label = page.evaluate("Chart.getChart(document.querySelector('[data-chart=heat-map]')).data.datasets[0].label")
    assert label == "IQ"

    rows = page.locator("[data-calibration-rows] tr")
    assert rows.count() == len(body["calibration"]["quality"]) + 2
    first = body["calibration"]["quality"][0]
    exact = page.locator(f"[data-calibration-metric='{first['metric']}'] [data-cell='exact']").inner_text()
    assert exact == f"{first['exact']:.4f}"
    parameters = page.locator("[data-calibration-parameters]").inner_text()
    assert "True Recall_Base(AffectedItems)" in parameters and "Variant 2 gives" in parameters
    # A human-only headline: no word on the calibration's kind (test_model_assisted_card has the other case).
    notes = page.locator("[data-human-only-note]")
    assert not body["decision"]["model_assisted"] and notes.count() == 7
    assert all(notes.nth(k).is_hidden() for k in range(7))
    page.locator("#derived-heading").scroll_into_view_if_needed()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "derived-1280.png"), full_page=True)
    page.locator("[data-derived]").screenshot(path=str(screenshots_dir / "derived-card-1280.png"))
    page.locator("[data-calibration]").screenshot(path=str(screenshots_dir / "calibration-card-1280.png"))
    page.set_viewport_size(PHONE)
    settle(page)
    page.locator("[data-derived]").screenshot(path=str(screenshots_dir / "derived-390.png"))
    context.close()
    assert problems == [], problems


def test_absolute_quality_panel(browser, live_server, screenshots_dir, settings):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    base, _, gold = _population(seed=8)
    owner = _engineer("abe")
    experiment = experiment_prepared(owner=owner, base=base, exp=list(range(len(base))), n_draws=600,
                                     name="Absolute quality of the live clustering")
    Experiment.objects.filter(pk=experiment.pk).update(kind=Experiment.Kind.ABSOLUTE)
    _judge_all(experiment, gold)
    estimates_refresh(experiment_id=experiment.pk)
    api = APIClient()
    api.force_authenticate(owner)

    context, page, problems = _log_in(browser, live_server, owner, f"/experiments/{experiment.pk}/")
    absolute = api.get(f"/api/experiments/{experiment.pk}/dashboard/").json()["absolute"]
    precision = page.locator("[data-absolute-value='Precision']").inner_text()
    assert precision == f"{100 * absolute['Precision']['value']:.1f} %"
    assert page.locator("[data-absolute-interval='RecallAboveMinimum']").inner_text() == "follows with ΔRecall"
    assert page.locator("[data-derived-empty]").is_visible()
    derived_refresh(experiment_id=experiment.pk)  # the worker's next result reaches the open page
    absolute = api.get(f"/api/experiments/{experiment.pk}/dashboard/").json()["absolute"]
    expected = f"{100 * absolute['RecallAboveMinimum']['value']:.1f} %"
    page.wait_for_function(
        "(text) => document.querySelector(\"[data-absolute-value='RecallAboveMinimum']\").textContent === text",
        arg=expected,
        timeout=5_000,
    )
    settle(page)
    page.locator("[data-absolute]").screenshot(path=str(screenshots_dir / "absolute-card-1280.png"))
    page.locator("[data-prepared-summary] > summary").click()  # the parameters, folded once prepared
    assert "Absolute quality of one clustering" in page.locator("main").inner_text()
    context.close()
    assert problems == [], problems


def test_delta_recall_and_iq_say_the_recall_base_they_assume(browser, live_server, screenshots_dir, settings):
    """Without a ground truth: the owner's range (40–80% by default) in words beside ΔRecall and IQ in
    the headline and in their card, and in the experiment list; the owner changes it in the card."""
    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    base, exp, gold = _population(seed=5)
    owner = _engineer("rene")
    experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=800, name="Products: title model v3")
    _judge_all(experiment, gold)
    estimates_refresh(experiment_id=experiment.pk)
    derived_refresh(experiment_id=experiment.pk)

    context, page, problems = _log_in(browser, live_server, owner, f"/experiments/{experiment.pk}/")
    words = "assuming Recall_Base 40–80%"
    for name in ("DeltaRecall", "IQ"):
        headline = page.locator(f"[data-decision-number='{name}']")
        assert headline.locator("[data-assumption]").inner_text().strip() == words
        assert "[, ]" not in headline.inner_text()
        row = page.locator(f"[data-derived-estimate='{name}']")
        assert row.locator("[data-cell='assumption']").inner_text() == words
        assert re.fullmatch(r"\[-?\d\.\d{4}, -?\d\.\d{4}\]", row.locator("[data-cell='interval']").inner_text())
    assert "the intervals span every Recall_Base from 40.0 % to 80.0 %" in page.locator("[data-derived-notes]").inner_text()
    page.locator("[data-decision]").scroll_into_view_if_needed()
    settle(page)
    page.locator("[data-decision]").screenshot(path=str(screenshots_dir / "decision-recall-base-1280.png"))
    page.locator("[data-derived]").screenshot(path=str(screenshots_dir / "derived-recall-base-1280.png"))

    page.locator("[data-recall-base-form]").locator("xpath=..").locator("summary").click()
    page.fill("#recall-base-low", "30")
    page.fill("#recall-base-high", "60")
    page.locator("[data-recall-base-form] button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-recall-base-status]').textContent.startsWith('Range saved')"
    )
    experiment.refresh_from_db()
    assert (experiment.recall_base_low, experiment.recall_base_high) == (0.3, 0.6)
    derived_refresh(experiment_id=experiment.pk)  # what the worker does next reaches the open page
    page.wait_for_function(
        "() => document.querySelector(\"[data-derived-estimate='IQ'] [data-cell='assumption']\").textContent"
        " === 'assuming Recall_Base 30–60%'",
        timeout=10_000,
    )
    page.goto(f"{live_server.url}/experiments/")
    cell = page.locator("[data-derived-cell]").inner_text()
    assert cell.startswith("ΔRecall ") and " · IQ " in cell and cell.endswith(", assuming Recall_Base 30–60%")
    assert "[, ]" not in cell
    page.locator("main").screenshot(path=str(screenshots_dir / "experiment-list-recall-base-1280.png"))
    context.close()
    assert problems == [], problems
