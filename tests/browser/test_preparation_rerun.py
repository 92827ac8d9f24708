"""A stalled preparation, then a failed one, re-run from the experiment page: the page follows the
new run, shows the failure's step and error id without a reload, and reaches rating."""

from __future__ import annotations

import time
from datetime import timedelta
from unittest import mock
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from raterapp.models import Experiment
from raterapp.services.preparation import pipeline as preparation
from raterapp.services.preparation.pipeline import experiment_prepare
from raterapp.tasks import experiment_prepare_task
from tests.raterapp.factories import UserFactory
from tests.raterapp.services.files import experiment_made, tiny_files

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)
Status = Experiment.Status
LAPTOP = {"width": 1280, "height": 800}
LIVE = "document.querySelector('[data-dashboard]').dataset.live"


def test_a_stalled_then_failed_preparation_is_rerun_from_the_page(
    browser, live_server, settings, monkeypatch, screenshots_dir
):
    settings.PREPARATION_STALL_SECONDS = 60
    engineer = UserFactory(username="eve", roles=["engineer"])
    engineer.set_password("pw-eve")
    engineer.save()
    experiment = experiment_made(owner=engineer, name="Stalls then fails", files=tiny_files(), seed=7, n_draws=50)
    Experiment.objects.filter(pk=experiment.pk).update(
        status=Status.SAMPLING, preparation_attempts=1, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    delay = mock.MagicMock()
    monkeypatch.setattr(experiment_prepare_task, "delay", delay)
    page = browser.new_page(viewport=LAPTOP)
    problems: list[str] = []
    record_problems(page, problems)
    path = f"/experiments/{experiment.pk}/"
    sign_in(page, live_server, "eve", "pw-eve", path)

    stalled = page.locator("[data-stalled]")
    assert stalled.is_visible()
    assert "No sign of life from its worker since" in stalled.inner_text()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "preparation-stalled-1280x800.png"), full_page=True)
    stalled.get_by_role("button", name="Re-run the preparation").click()
    page.wait_for_url(f"{live_server.url}{path}#preparation")
    assert page.locator("[data-queued]").is_visible()
    assert stalled.is_hidden()
    delay.assert_called_once_with(experiment.pk)

    # The worker's run breaks in the impact step: the page shows it without a reload.
    page.evaluate("window.__notReloaded = true")
    with mock.patch.object(preparation, "impact_groups_build", side_effect=ValueError("Take operation overflowed")):
        experiment_prepare(experiment_id=experiment.pk)
    failure = page.locator("[data-failure]")
    failure.wait_for(state="visible", timeout=20_000)
    experiment.refresh_from_db()
    assert page.locator("[data-failure-step]").inner_text() == ": computing impact metrics"
    assert page.locator("[data-failure-message]").inner_text() == experiment.error
    assert page.locator("[data-failure-id-value]").inner_text() == experiment.error_id
    assert page.evaluate("window.__notReloaded") is True
    settle(page)
    page.screenshot(path=str(screenshots_dir / "preparation-failed-1280x800.png"), full_page=True)

    failure.get_by_role("button", name="Re-run the preparation").click()
    page.wait_for_url(f"{live_server.url}{path}#preparation")
    assert failure.is_hidden()
    experiment_prepare(experiment_id=experiment.pk)
    page.locator("[data-results]").wait_for(state="visible", timeout=20_000)
    assert Experiment.objects.get(pk=experiment.pk).status == Status.RATING
    assert problems == []


def test_a_failed_experiment_is_deleted_from_its_page(browser, live_server, settings, tmp_path, screenshots_dir):
    settings.MEDIA_ROOT = tmp_path / "media"
    engineer = UserFactory(username="dee", roles=["engineer"])
    engineer.set_password("pw-dee")
    engineer.save()
    experiment = experiment_made(owner=engineer, name="Broken upload", files=tiny_files(), seed=7, n_draws=50)
    with mock.patch.object(preparation, "impact_groups_build", side_effect=ValueError("Take operation overflowed")):
        experiment_prepare(experiment_id=experiment.pk)
    page = browser.new_page(viewport=LAPTOP)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "dee", "pw-dee", f"/experiments/{experiment.pk}/")
    page.wait_for_function(f"{LIVE} === 'polling'", timeout=30_000)  # no stream from the test's server
    failure = page.locator("[data-failure]")
    failure.get_by_text("Delete this experiment").click()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "experiment-delete-1280x800.png"), full_page=True)

    # The delete takes 2.5 s on its way: the page, polling every second, sends no read once the
    # form is submitted (a poll answered after the delete would be a 404).
    sent: list[str] = []
    page.on("request", lambda request: sent.append(f"{request.method} {urlsplit(request.url).path}"))
    delete_path = f"/experiments/{experiment.pk}/delete/"
    page.route(f"**{delete_path}", lambda route: (time.sleep(2.5), route.continue_()))
    failure.get_by_role("button", name="Delete “Broken upload”").click()
    page.wait_for_url(f"{live_server.url}/experiments/")
    after_submit = sent[sent.index(f"POST {delete_path}") + 1 :]
    assert not [request for request in after_submit if request.startswith("GET /api/")], sent
    assert "Deleted “Broken upload” with its uploaded files." in page.locator("main").inner_text()
    assert not Experiment.objects.filter(pk=experiment.pk).exists()
    assert not (tmp_path / "media" / "experiments" / str(experiment.pk)).exists()
    assert problems == []
