"""From a new experiment to its first verdict, in real headless Chromium (issue 34), under the
production defaults (a new experiment is open to assigned raters only, with a budget of 0):

- an engineer uploads an experiment, asking for a budget and raters; once prepared, its page and
  the list say "Waiting for raters and budget" (not "Rating"), say that an admin acts, and link to
  the console's card of the experiment;
- an admin follows that link, sees the request, opens the experiment to every rater and sets its
  budget there;
- a rater then finds it on /rate/ and judges a pair;
- the engineer's page, open all along, turns to "Rating" without a reload.

Screenshots: waiting-page, waiting-list, waiting-console (before and after), waiting-rater-home,
waiting-rating (the engineer's page at the end).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User

from raterapp.models import Experiment, Judgement

from .conftest import record_problems, settle, sign_in
from .helpers import READY_TIMEOUT_MS, _files

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 900}


def _user(name: str, role: str) -> User:
    user = User.objects.create_user(name, password=f"pw-{name}")
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def _page(browser, problems):
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    record_problems(page, problems)
    return page


def test_a_new_experiment_waits_for_raters_and_budget_until_an_admin_acts(
    request, browser, live_server, settings, tmp_path, screenshots_dir
):
    settings.NEW_EXPERIMENT_OPEN_TO = "assigned"  # the production defaults (tests/settings.py opens all)
    settings.NEW_EXPERIMENT_BUDGET = 0
    _user("eve", "engineer"), _user("ada", "admin"), _user("rita", "rater")
    items, catalogue = _files(tmp_path)
    problems: list[str] = []

    # 1. The engineer uploads, asking for a budget and raters.
    engineer = _page(browser, problems)
    sign_in(engineer, live_server, "eve", "pw-eve", "/experiments/new/")
    engineer.locator("#id_name").fill("Waiting upload")
    engineer.locator("#id_n_draws").fill("200")
    engineer.locator("#id_seed").fill("3")
    engineer.locator("#id_items").set_input_files(items)
    engineer.locator("#id_catalogue").set_input_files(catalogue)
    engineer.get_by_label("Budget to ask for (verdicts)").fill("250")
    engineer.get_by_label("Note to the admins").fill("Any rater will do; needed by Friday.")
    engineer.get_by_role("button", name="Upload and prepare").click()
    engineer.wait_for_url(re.compile(r"/experiments/\d+/$"))
    experiment = Experiment.objects.get(name="Waiting upload")
    engineer.evaluate("window.__notReloaded = true")
    request.getfixturevalue("celery_worker_process")

    # Prepared, it waits for raters and budget, and says who acts and where.
    badge = engineer.locator("[data-status-badge] .badge")
    badge.and_(engineer.locator(".badge--waiting")).wait_for(timeout=READY_TIMEOUT_MS)
    assert badge.inner_text() == "Waiting for raters and budget"
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.RATING  # stored as the preparation left it
    waiting = engineer.locator("[data-waiting]")
    assert waiting.is_visible()
    assert engineer.locator("[data-badge-reasons]").is_hidden()  # the alert says them
    assert "No rater may rate it: none is assigned and it is not open to every rater." in waiting.inner_text()
    assert "It has no budget yet: its budget allows 0 verdicts." in waiting.inner_text()
    assert "until an admin acts" in waiting.inner_text()
    fix = waiting.get_by_role("link", name="raters and budget in the admin console")
    assert fix.get_attribute("href") == f"/console/assignments/#experiment-{experiment.pk}"
    step = engineer.locator("[data-step='rating'].step--done [data-step-state]")
    step.wait_for()  # the steps' own poller follows the preparation
    assert step.inner_text() == "Waiting for raters and budget"
    settle(engineer)
    engineer.screenshot(path=str(screenshots_dir / "waiting-page-1280x900.png"), full_page=True)

    listing = engineer.context.new_page()
    record_problems(listing, problems)
    listing.goto(f"{live_server.url}/experiments/")
    row = listing.locator(f"tr[data-experiment='{experiment.pk}']")
    assert row.locator(".badge").inner_text() == "Waiting for raters and budget"
    link = row.get_by_role("link", name="raters and budget")
    assert link.get_attribute("href") == f"/console/assignments/#experiment-{experiment.pk}"
    listing.screenshot(path=str(screenshots_dir / "waiting-list-1280x900.png"), full_page=True)
    listing.close()

    # 2. The admin follows the link from the experiment's page, opens it to all, sets its budget.
    admin = _page(browser, problems)
    sign_in(admin, live_server, "ada", "pw-ada", f"/experiments/{experiment.pk}/")
    admin.locator("[data-waiting]").get_by_role("link", name="raters and budget in the admin console").click()
    admin.wait_for_url(re.compile(rf"/console/assignments/#experiment-{experiment.pk}$"))
    card = admin.locator(f"section[data-experiment='{experiment.pk}']")
    assert "eve asks: a budget of 250 verdicts. Any rater will do; needed by Friday." in card.inner_text()
    assert card.locator("[data-waiting]").inner_text() == "Waiting for raters and budget"
    assert card.locator("[data-access]").inner_text() == (
        "No rater may rate it: none is assigned and it is not open to every rater."
    )
    card.scroll_into_view_if_needed()
    admin.screenshot(path=str(screenshots_dir / "waiting-console-before-1280x900.png"))
    card.get_by_role("button", name=re.compile("^Open to every rater")).click()
    card = admin.locator(f"section[data-experiment='{experiment.pk}']")
    card.locator("[data-access='every_rater']").wait_for()
    assert card.locator("[data-waiting]").inner_text() == "Waiting for budget"
    assert card.get_by_label("Verdicts it may spend").input_value() == "250"  # what the owner asked for
    card.get_by_label(re.compile(r"^Why\W*$")).fill("Asked for at upload")
    card.get_by_role("button", name=re.compile("^Set the budget")).click()
    card = admin.locator(f"section[data-experiment='{experiment.pk}']")
    card.locator("[data-budget-now]").filter(has_text="0 of 250 verdicts spent").wait_for()
    assert card.locator("[data-waiting]").count() == 0
    assert admin.locator("[data-waiting-count]").count() == 0
    card.scroll_into_view_if_needed()
    admin.screenshot(path=str(screenshots_dir / "waiting-console-after-1280x900.png"))

    # 3. A rater finds it on /rate/ and judges a pair.
    rater = _page(browser, problems)
    sign_in(rater, live_server, "rita", "pw-rita", "/rate/")
    row = rater.locator(f"[data-experiment='{experiment.pk}']")
    row.wait_for()
    rater.screenshot(path=str(screenshots_dir / "waiting-rater-home-1280x900.png"), full_page=True)
    row.get_by_role("link", name=re.compile(r"^Start rating")).click()
    rater.wait_for_url(re.compile(rf"/rate/{experiment.pk}/$"))
    rater.get_by_role("button", name="Equivalent", exact=True).click()
    for _ in range(100):
        if Judgement.objects.filter(task__experiment=experiment).exists():
            break
        rater.wait_for_timeout(100)
    assert Judgement.objects.filter(task__experiment=experiment, rater__username="rita").count() == 1

    # 4. The engineer's page, never reloaded, says "Rating".
    engineer.locator("[data-status-badge] .badge--rating").wait_for(timeout=30_000)
    assert badge.inner_text() == "Rating"
    assert waiting.is_hidden()
    assert step.inner_text() == "Done"
    assert engineer.evaluate("window.__notReloaded") is True
    settle(engineer)
    engineer.screenshot(path=str(screenshots_dir / "waiting-rating-1280x900.png"), full_page=True)
    assert problems == []
