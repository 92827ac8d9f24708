"""The engineer's dashboard in real headless Chromium, live: verdicts submitted through the API
reach the open page, without a reload, within 2 seconds of the API having them.

A real Celery worker recomputes the estimates (as in production); under the WSGI live server the
page has no stream and polls the dashboard API (test_dashboard_stream.py: pushed, under ASGI).
Screenshots of the dashboard and the experiment list are saved for a person to look at.
"""

from __future__ import annotations

import time
import uuid

import numpy as np
import pytest
from rest_framework.test import APIClient

from tests.e2e.conftest import wait_for
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
N_ITEMS = 300
ROW = "[data-estimate='DeltaPrecision']"


def _population():
    rng = np.random.default_rng(5)
    base = np.arange(N_ITEMS) // 6
    exp = np.where(rng.random(N_ITEMS) < 0.3, rng.integers(0, 50, N_ITEMS), base)
    gold = np.where(rng.random(N_ITEMS) < 0.6, base, exp)
    return base.tolist(), exp.tolist(), gold


def _judge(client, experiment, gold, count):
    """A rater leases and answers ``count`` pairs through the API."""
    for k in range(count):
        pair = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json").json()["pair"]
        assert pair is not None
        from raterapp.models import PairTask

        task = PairTask.objects.select_related("item_a", "item_b").get(pk=pair["task"])
        same = gold[task.item_a.position] == gold[task.item_b.position]
        verdict = "unsure" if k % 9 == 8 else "equivalent" if same else "not_equivalent"
        answer = {"task": task.pk, "verdict": verdict, "client_id": str(uuid.uuid4())}
        assert client.post("/api/judgements/", answer, format="json").status_code == 201


def _snapshot_with(engineer, experiment, judgements):
    def ready():
        response = engineer.get(f"/api/experiments/{experiment.pk}/estimates/")
        return response.status_code == 200 and response.json()["judgements"] == judgements and response.json()

    return wait_for(ready, timeout=60, interval=0.05, what=f"a snapshot with {judgements} verdicts")


def _shown(estimate) -> tuple[str, str]:
    return f"{estimate['value']:.4f}", f"[{estimate['ci_low']:.4f}, {estimate['ci_high']:.4f}]"


def test_dashboard_follows_verdicts_live(celery_worker_process, browser, live_server, screenshots_dir):
    base, exp, gold = _population()
    owner = UserFactory(username="erin", roles=["engineer"])
    owner.set_password("pw-erin")
    owner.save()
    experiment = experiment_prepared(
        owner=owner, base=base, exp=exp, n_draws=600, slices=True, name="Customer dedup: blocking on postcode"
    )
    rater, engineer = APIClient(), APIClient()
    rater.force_authenticate(UserFactory(roles=["rater"]))
    engineer.force_authenticate(owner)
    _judge(rater, experiment, gold, 40)
    _snapshot_with(engineer, experiment, 40)

    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "erin", "pw-erin", f"/experiments/{experiment.pk}/")
    page.evaluate("window.__notReloaded = true")
    # Django's live server is WSGI: no stream there (204), so the page polls.
    page.wait_for_function("document.querySelector('[data-dashboard]').dataset.live === 'polling'")

    before = engineer.get(f"/api/experiments/{experiment.pk}/estimates/").json()["estimates"]["DeltaPrecision"]
    value, interval = _shown(before)
    assert page.locator(f"{ROW} [data-cell='value']").inner_text() == value
    assert page.locator(f"{ROW} [data-cell='interval']").inner_text() == interval
    sequence = f"[{before['cs_low']:.4f}, {before['cs_high']:.4f}]"
    assert page.locator(f"{ROW} [data-cell='sequence']").inner_text() == sequence
    assert before["cs_low"] < before["ci_low"] < before["ci_high"] < before["cs_high"]  # wider: it holds at every look
    assert page.locator("[data-progress='verdicts']").inner_text() == "40"

    # More verdicts through the API: the worker recomputes, the open page follows.
    _judge(rater, experiment, gold, 60)
    submitted = time.monotonic()
    after = _snapshot_with(engineer, experiment, 100)
    in_api = time.monotonic()
    expected = engineer.get(f"/api/experiments/{experiment.pk}/dashboard/").json()["estimates"]["DeltaPrecision"]
    value, interval = _shown(expected)
    assert (value, interval) != _shown(before), "the new verdicts should move ΔPrecision"
    page.wait_for_function(
        "([value, interval]) => {"
        f" const row = document.querySelector(\"{ROW}\");"
        " return row && row.querySelector('[data-cell=value]').textContent === value"
        " && row.querySelector('[data-cell=interval]').textContent === interval; }",
        arg=[value, interval],
        timeout=5_000,
    )
    on_page = time.monotonic()
    print(f"API had the estimates {in_api - submitted:.2f} s after the last verdict; the page {on_page - in_api:.2f} s later")
    assert on_page - in_api <= 2.0
    assert after["estimates"]["DeltaPrecision"]["value"] == expected["value"]
    assert page.evaluate("window.__notReloaded") is True
    assert page.locator("[data-progress='verdicts']").inner_text() == "100"
    assert page.locator("[data-budget='spent']").inner_text() == "100"  # the budget card follows too

    # The panels are drawn by Chart.js and the slice table fills in on demand.
    for name in ("intervals", "decomposition", "situation", "convergence"):
        assert page.evaluate(f"!!Chart.getChart(document.querySelector('[data-chart={name}]'))"), name
    page.locator("[data-slice-attribute]").select_option("colour")
    page.locator("[data-slices-rows] [data-slice='blue']").wait_for()
    assert page.locator("[data-slices-rows] tr").count() == 2
    # The slices' estimates come from the derived step after the snapshot; the open page follows it.
    page.wait_for_function(
        "document.querySelector('[data-slices-status]').textContent.includes('from 100 verdicts')", timeout=60_000
    )
    slices = engineer.get(f"/api/experiments/{experiment.pk}/slices/?attribute=colour").json()
    blue = next(row for row in slices["rows"] if row["label"] == "blue")["metric"]["DeltaPrecision"]
    blue_cell = page.locator("[data-slices-rows] [data-slice='blue'] td").nth(3).inner_text()
    assert blue_cell.startswith(f"{blue['value']:.4f}" if blue["value"] is not None else "—"), blue_cell
    settle(page)
    page.screenshot(path=str(screenshots_dir / "dashboard-1280.png"), full_page=True)
    page.set_viewport_size(PHONE)
    settle(page)
    page.screenshot(path=str(screenshots_dir / "dashboard-390.png"), full_page=True)

    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/experiments/")
    headline = page.locator(f"tr[data-experiment='{experiment.pk}'] [data-headline]").inner_text()
    half_width = (expected["ci_high"] - expected["ci_low"]) / 2
    assert headline == f"{expected['value']:.4f} ± {half_width:.4f}"
    page.screenshot(path=str(screenshots_dir / "experiments-with-headlines-1280.png"), full_page=True)
    context.close()
    assert problems == [], problems
