"""The open dashboard says "Stale since …" when the estimates lag the verdicts (their refresh was
lost), and stops saying it once the reconciler has recomputed them, without a reload."""

from __future__ import annotations

import uuid

import pytest

from raterapp.models import Judgement, OutboxMessage
from raterapp.services import outbox
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.reconcile import reconcile
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def _judge(experiment, rater, count):
    for _ in range(count):
        task = assignment_next(experiment=experiment, rater=rater)
        judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())


def test_the_dashboard_says_stale_since_until_the_reconciler_catches_up(
    browser, live_server, screenshots_dir, settings, monkeypatch
):
    for kind in OutboxMessage.Kind.values:  # the broker is "away": no refresh is dispatched
        monkeypatch.setitem(outbox.EFFECTS, kind, lambda target_id: (_ for _ in ()).throw(ConnectionError("away")))
    settings.ESTIMATES_STALE_SECONDS = 0
    owner = UserFactory(username="stella", roles=["engineer"])
    owner.set_password("pw-stella")
    owner.save()
    experiment = experiment_prepared(owner=owner, name="Stale estimates")
    rater = UserFactory(roles=["rater"])
    _judge(experiment, rater, 5)
    estimates_refresh(experiment_id=experiment.pk)

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "stella", "pw-stella", f"/experiments/{experiment.pk}/")
    line = page.locator("[data-stale-line]")
    page.locator("[data-snapshot-line]").filter(has_text="5 verdicts").wait_for()
    assert line.is_hidden()

    _judge(experiment, rater, 1)
    given = Judgement.objects.filter(task__experiment=experiment).latest("created_at").created_at
    expected = f"Stale since {given:%H:%M:%S} UTC: 5 of 6 verdicts counted."
    page.wait_for_function(
        "text => { const n = document.querySelector('[data-stale-line]'); return !n.hidden && n.textContent === text; }",
        arg=expected, timeout=5_000,
    )
    assert line.get_attribute("title").startswith("Estimates that lag the verdicts")
    assert line.get_attribute("role") == "status"
    line.scroll_into_view_if_needed()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "dashboard-stale-1280.png"))

    assert reconcile()["recomputed"] == [experiment.pk]
    page.locator("[data-snapshot-line]").filter(has_text="6 verdicts").wait_for(timeout=5_000)
    assert line.is_hidden()
    assert problems == [], problems
