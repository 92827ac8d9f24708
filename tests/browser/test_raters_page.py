"""The admins' rater page in real headless Chromium: create a rater and get their one-time
link, pause one, change quotas and deactivate one, each without a reload and checked in the
database; screenshots at 1280 and 390 pixels for a person to look at."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from raterapp.models import AuditEntry, Judgement, PairTask, RaterProfile, Verdict
from raterapp.services.accounts.raters import rater_pause
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.rater_agreement import rater_agreement_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

# Seconds between two verdicts of each rater: ben answers too fast.
PACE = {"ana": 7, "ben": 1, "chen": 9, "dara": 12}


def _raters(admin, settings):
    """Four raters with verdicts (ben too fast, chen wrong on gold), one paused, one new."""
    settings.RATER_MIN_TIMED_VERDICTS = 5
    settings.RATER_MIN_GOLD_ANSWERS = 4
    experiment = experiment_prepared(owner=UserFactory(roles=["engineer"]), replication=4, name="Customer dedup v2")
    start = timezone.now() - timedelta(hours=3)
    raters = {}
    for name, pace in PACE.items():
        rater = UserFactory(username=name, email=f"{name}@raters.example", roles=["rater"])
        raters[name] = rater
        for k in range(14):
            task = assignment_next(experiment=experiment, rater=rater)
            verdict = Verdict.UNSURE if k % 6 == 5 else Verdict.EQUIVALENT
            judgement, _ = judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
            Judgement.objects.filter(pk=judgement.pk).update(created_at=start + timedelta(seconds=pace * k))
    # Gold questions among the pairs everyone judged: chen answered them all wrongly.
    gold = list(
        Judgement.objects.filter(rater=raters["chen"], verdict=Verdict.EQUIVALENT).values_list("task", flat=True)[:5]
    )
    PairTask.objects.filter(pk__in=gold).update(gold_answer=Verdict.NOT_EQUIVALENT)
    Judgement.objects.filter(task__in=gold).exclude(rater=raters["chen"]).update(verdict=Verdict.NOT_EQUIVALENT)
    rater_pause(actor=admin, rater=raters["dara"], reason="Asked for a week off")
    RaterProfile.objects.update_or_create(user=raters["ana"], defaults={"daily_quota": 200})
    UserFactory(username="eli", email="eli@raters.example", roles=["rater"])
    rater_agreement_refresh(experiment_id=None)  # the worker's step after a snapshot: the page's agreement
    return raters


def _cells(page, name):
    row = page.locator("tr[data-rater]").filter(has=page.locator(".rater-name", has_text=re.compile(f"^{name}$")))
    cols = ("name", "state", "verdicts", "median", "gold", "agreement", "quota")
    return row, {col: row.locator(f"[data-col='{col}']") for col in cols}


def test_admin_manages_raters_without_a_reload(browser, live_server, screenshots_dir, settings):
    admin = UserFactory(username="ada", roles=["admin"])
    admin.set_password("pw-ada")
    admin.save()
    raters = _raters(admin, settings)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    problems: list[str] = []
    # The refused create below answers 400 on purpose.
    record_problems(page, problems, expected=lambda url: url.endswith("/api/raters/"))
    sign_in(page, live_server, "ada", "pw-ada", "/raters/")
    page.evaluate("window.notReloaded = true")
    status = page.locator("#raters-status")

    assert page.get_by_role("link", name="Raters").get_attribute("aria-current") == "page"
    assert page.locator("tr[data-rater]").count() == 5
    _, ben = _cells(page, "ben")
    assert ben["name"].inner_text().split("\n") == ["ben", "ben@raters.example", "Too fast"]
    assert ben["median"].inner_text() == "1.0"
    _, chen = _cells(page, "chen")
    assert chen["name"].inner_text().split("\n") == ["chen", "chen@raters.example", "Low gold accuracy"]
    assert chen["gold"].inner_text().startswith("0.00")
    _, dara = _cells(page, "dara")
    assert dara["state"].inner_text().split() == ["Paused", "Asked", "for", "a", "week", "off"]

    # A new rater: the API's refusal next to the field, then the one-time link, once.
    page.get_by_label("User name").fill("ana")
    page.get_by_label("E-mail").fill("ana2@raters.example")
    page.get_by_role("button", name="Create rater").click()
    expect(page.locator("#new-rater-username-errors")).to_have_text("A user with this name exists already.")
    expect(page.get_by_label("User name")).to_have_attribute("aria-invalid", "true")
    expect(status).to_have_text("The rater was not created: see the form.")
    page.get_by_label("User name").fill("nia <b>")  # markup is no user name: the validator says so
    page.get_by_role("button", name="Create rater").click()
    expect(page.locator("#new-rater-username-errors")).to_have_text("Letters, digits and @ . + - _ only.")
    page.get_by_label("User name").fill("nia.b")
    page.get_by_role("button", name="Create rater").click()
    link = page.get_by_label("One-time link to choose a password")
    link.wait_for()
    assert re.fullmatch(rf"{live_server.url}/accounts/set-password/[^/]+/[^/]+/", link.input_value())
    assert page.locator("#new-rater-username-errors").is_hidden()
    assert page.locator("[data-link-username]").inner_text() == "nia.b"
    nia = User.objects.get(username="nia.b")
    assert nia.email == "ana2@raters.example"
    assert nia.groups.filter(name="rater").exists() and not nia.has_usable_password()
    _, nia_cells = _cells(page, "nia.b")
    assert nia_cells["verdicts"].inner_text() == "0"
    assert ben["verdicts"].inner_text().split("\n") == ["14", "14 % unsure"]
    assert nia_cells["state"].inner_text() == "Active"
    assert page.locator(".rater-name").all_inner_texts() == ["ana", "ben", "chen", "dara", "eli", "nia.b"]
    assert page.locator("[data-rater-count]").inner_text() == "(6)"
    assert "nia.b is created" in status.inner_text()
    page.get_by_role("button", name="Copy link").click()
    page.wait_for_function("document.querySelector('#raters-status').textContent === 'The link is copied.'")
    assert page.evaluate("navigator.clipboard.readText()") == link.input_value()

    # Pause ben: a reason is required; the row changes in place, his numbers stay as drawn.
    before = {col: cell.inner_text() for col, cell in ben.items() if col not in ("state",)}
    page.get_by_role("button", name="Pause ben").click()
    dialog = page.get_by_role("dialog", name="Pause ben")
    dialog.get_by_role("button", name="Pause rater").click()
    expect(dialog.locator(".errors")).to_have_text("Say why the rater is paused.")
    assert not RaterProfile.objects.filter(user=raters["ben"], paused=True).exists()
    dialog.get_by_label("Why").fill("Answers in one second: talk to him first")
    dialog.get_by_role("button", name="Pause rater").click()
    page.wait_for_function("document.querySelector('#raters-status').textContent.startsWith('ben is paused')")
    assert dialog.is_hidden()
    _, ben = _cells(page, "ben")
    assert ben["state"].inner_text().split()[:2] == ["Paused", "Answers"]
    assert {col: cell.inner_text() for col, cell in ben.items() if col != "state"} == before
    assert page.evaluate("document.activeElement.textContent") == "Unpause ben"
    profile = RaterProfile.objects.get(user=raters["ben"])
    assert (profile.paused, profile.paused_reason) == (True, "Answers in one second: talk to him first")

    # Quotas of ana: Escape closes the dialog and gives the focus back; then 40 a day, no total.
    page.get_by_role("button", name="Quotas ana").click()
    dialog = page.get_by_role("dialog", name="Quotas of ana")
    assert dialog.get_by_label("Verdicts per day").input_value() == "200"
    page.keyboard.press("Escape")
    assert dialog.is_hidden()
    assert page.evaluate("document.activeElement.textContent") == "Quotas ana"
    page.keyboard.press("Enter")
    dialog.get_by_label("Verdicts per day").fill("40")
    dialog.get_by_label("Verdicts in all").fill("-3")
    dialog.get_by_role("button", name="Save quotas").click()
    expect(dialog.locator(".errors")).to_contain_text("whole number")
    expect(dialog.locator(".errors")).to_contain_text("Say why the quotas change.")  # a reason, as for budgets
    expect(dialog.get_by_label("Why")).to_have_attribute("aria-invalid", "")
    dialog.get_by_label("Verdicts in all").fill("")
    dialog.get_by_label("Why").fill("Back from leave")
    dialog.get_by_role("button", name="Save quotas").click()
    page.wait_for_function("document.querySelector('#raters-status').textContent.startsWith('Quotas of ana saved')")
    _, ana = _cells(page, "ana")
    assert ana["quota"].inner_text().split("\n") == ["40 a day", "no total limit"]
    profile = RaterProfile.objects.get(user=raters["ana"])
    assert (profile.daily_quota, profile.total_quota) == (40, None)
    assert AuditEntry.objects.get(action="rater.quota", subject=raters["ana"]).reason == "Back from leave"

    # Deactivate eli after a confirmation; cancelling first changes nothing.
    page.get_by_role("button", name="Deactivate eli").click()
    page.get_by_role("dialog", name="Deactivate eli?").get_by_role("button", name="Cancel").click()
    assert User.objects.get(username="eli").is_active
    page.get_by_role("button", name="Deactivate eli").click()
    page.get_by_role("dialog", name="Deactivate eli?").get_by_role("button", name="Deactivate").click()
    page.wait_for_function("document.querySelector('#raters-status').textContent.startsWith('eli is deactivated')")
    _, eli = _cells(page, "eli")
    assert eli["state"].inner_text() == "Deactivated"
    assert not User.objects.get(username="eli").is_active
    assert page.get_by_role("button", name="Reactivate eli").is_visible()

    assert page.evaluate("window.notReloaded") is True
    settle(page)
    page.screenshot(path=str(screenshots_dir / "raters-1280.png"), full_page=True)
    # At a laptop's width every action button is inside the table's card, none scrolled away.
    scroll = page.locator(".raters-scroll")
    assert scroll.evaluate("s => s.scrollWidth <= s.clientWidth")
    right = scroll.evaluate("s => s.getBoundingClientRect().right")
    assert all(b["x"] + b["width"] <= right for b in (x.bounding_box() for x in page.locator(".rater-actions .button").all()))
    page.set_viewport_size({"width": 390, "height": 844})
    settle(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(screenshots_dir / "raters-390.png"), full_page=True)
    # Full-page shots at 390 are too tall to read at a glance: the first screen and two cards too.
    page.screenshot(path=str(screenshots_dir / "raters-390-top.png"))
    page.locator("tr[data-rater]").nth(1).scroll_into_view_if_needed()
    top = page.evaluate("document.querySelector('tr[data-rater]:nth-child(2)').getBoundingClientRect().top + scrollY")
    page.screenshot(
        path=str(screenshots_dir / "raters-390-cards.png"),
        full_page=True,
        clip={"x": 0, "y": top - 20, "width": 390, "height": 720},
    )
    page.get_by_role("button", name="Pause chen").click()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "raters-pause-dialog-390.png"))
    page.keyboard.press("Escape")
    context.close()
    assert problems == [], problems
