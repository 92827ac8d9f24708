"""Verdicts put right, in headless Chromium: a rater reloads the judging page, finds their latest
answers in the history strip (read from the server) and changes one; an admin then voids the
rater's verdicts of the last ten minutes in the console's Verdicts page. Afterwards the estimates,
the budget, the pool, the ledger, the tasks' counts and the progress row equal a recompute, and
the console shows both the change and the void from the audit log."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Sum
from django.utils import timezone
from playwright.sync_api import expect

from raterapp.models import BudgetPool, ExperimentBudget, ExperimentProgress, Judgement, PairTask, RetractedJudgement
from raterapp.selectors.budgets import budget_ledger_mismatches_get
from raterapp.services.experiments.budgets import budget_update, pool_create
from raterapp.services.judging.progress import experiment_progress_recount
from raterapp.services.refresh.estimates import estimates_refresh
from tests.e2e.conftest import wait_for
from tests.raterapp.factories import UserFactory

from .conftest import record_problems, serve_portraits, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 800}
JUDGE = "document.getElementById('judge')"
LOCAL = "%Y-%m-%dT%H:%M"
ANSWERED = 7  # more than the page once kept (five)


def _task_on_screen(page) -> int:
    page.wait_for_function(f"{JUDGE}.dataset.state === 'pair' && !{JUDGE}.querySelector('.answer').disabled")
    return int(page.evaluate(f"{JUDGE}.dataset.task"))


def _wait_for_other_task(page, task: int) -> int:
    page.wait_for_function(f"{JUDGE}.dataset.state !== 'pair' || {JUDGE}.dataset.task !== '{task}'")
    return _task_on_screen(page)


def test_a_rater_changes_a_verdict_after_a_reload_and_an_admin_voids_ten_minutes(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    admin = UserFactory(username="ada", roles=["admin"])
    admin.set_password("pw-ada")
    admin.save()
    pool = pool_create(actor=admin, name="Team pool", max_verdicts=100, reason="test", via="api")
    budget = ExperimentBudget.objects.get(experiment=rating_experiment)
    budget_update(budget=budget, actor=admin, changes={"pool": pool}, reason="test", via="api")
    experiment_progress_recount(experiment_id=rating_experiment.pk)
    left_before = ExperimentProgress.objects.get(experiment=rating_experiment).verdicts_left
    problems: list[str] = []
    context = browser.new_context(viewport=LAPTOP)
    serve_portraits(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    record_problems(page, problems, expected=lambda url: url.startswith("https://img.example/5."))

    # The rater answers seven pairs, then reloads the page: the strip lists every verdict of the
    # last UNDO_SECONDS, not only the latest few.
    path = f"/rate/{rating_experiment.pk}/"
    sign_in(page, live_server, "rita", "pw-rita", path)
    answered = []
    task = _task_on_screen(page)
    for _ in range(ANSWERED):
        answered.append(task)
        page.keyboard.press("1")
        task = _wait_for_other_task(page, task)
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == ANSWERED, timeout=15, what="verdicts saved")
    page.reload()
    _task_on_screen(page)
    strip = page.locator("[data-history] button")
    expect(strip).to_have_count(ANSWERED)
    assert [strip.nth(i).get_attribute("data-history-task") for i in range(ANSWERED)] == [
        str(t) for t in answered[::-1]
    ]
    assert page.locator("[data-undo]").is_enabled()  # Backspace has something to take back again
    settle(page)
    page.screenshot(path=str(screenshots_dir / "verdicts-history-after-reload-1280x800.png"), full_page=True)

    # The oldest answer (the seventh latest), changed from the strip: its pair comes back, answered
    # "Not equivalent".
    strip.filter(has=page.locator(f"xpath=self::*[@data-history-task='{answered[0]}']")).click()
    page.wait_for_function(f"{JUDGE}.dataset.task === '{answered[0]}' && !{JUDGE}.querySelector('.answer').disabled")
    assert page.locator("[data-previous]").inner_text() == "You had answered “Equivalent”. Answer again."
    settle(page)
    page.screenshot(path=str(screenshots_dir / "verdicts-change-from-history-1280x800.png"))
    page.keyboard.press("2")
    _wait_for_other_task(page, answered[0])
    wait_for(
        lambda: Judgement.objects.filter(rater=rater, task_id=answered[0], verdict="not_equivalent").exists(),
        timeout=10,
        what="the changed verdict saved",
    )
    assert dict(Judgement.objects.filter(rater=rater).values_list("task", "verdict")) == {
        task: "not_equivalent" if task == answered[0] else "equivalent" for task in answered
    }
    assert problems == []

    # The admin voids the rater's verdicts of the last ten minutes in the console.
    admin_page = context.new_page()
    admin_page.set_default_timeout(15_000)
    admin_problems: list[str] = []
    record_problems(admin_page, admin_problems)
    context.clear_cookies()
    sign_in(admin_page, live_server, "ada", "pw-ada", "/console/verdicts/")
    now = timezone.localtime()
    admin_page.locator("#id_rater").select_option(label="rita")
    admin_page.locator("#id_since").fill((now - timedelta(minutes=10)).strftime(LOCAL))
    admin_page.locator("#id_until").fill((now + timedelta(minutes=1)).strftime(LOCAL))
    admin_page.get_by_role("button", name="Show verdicts").click()
    admin_page.get_by_role("heading", name=f"{ANSWERED} verdicts of rita").wait_for()
    admin_page.get_by_role("textbox", name="Reason").fill("A fast key burst: five mistaken verdicts.")
    settle(admin_page)
    admin_page.screenshot(path=str(screenshots_dir / "console-verdicts-found-1280x800.png"), full_page=True)
    admin_page.get_by_role("button", name=f"Void all {ANSWERED} verdicts").click()
    admin_page.get_by_text(f"{ANSWERED} verdicts of rita voided.").wait_for()
    audit = admin_page.locator("[data-verdict-audit]")
    expect(admin_page.locator("[data-verdict-audit='verdict.void']")).to_have_count(1)
    expect(admin_page.locator("[data-verdict-audit='verdict.change']")).to_have_count(1)
    assert "A fast key burst" in audit.first.inner_text()
    settle(admin_page)
    admin_page.screenshot(path=str(screenshots_dir / "console-verdicts-voided-1280x800.png"), full_page=True)
    assert admin_problems == []

    # Everything equals a recompute: no verdict of the rater counts anywhere any more.
    assert not Judgement.objects.filter(rater=rater).exists()
    voided = RetractedJudgement.objects.filter(rater=rater, voided_by=admin)
    assert sorted(voided.values_list("task", flat=True)) == sorted(answered)
    assert budget_ledger_mismatches_get() == []
    budget.refresh_from_db()
    assert (budget.spent, BudgetPool.objects.get(pk=pool.pk).spent) == (0, 0)
    assert PairTask.objects.filter(experiment=rating_experiment).aggregate(n=Sum("verdicts"))["n"] == 0
    stored_left = ExperimentProgress.objects.get(experiment=rating_experiment).verdicts_left
    assert stored_left == experiment_progress_recount(experiment_id=rating_experiment.pk) == left_before
    assert estimates_refresh(experiment_id=rating_experiment.pk).judgements == 0
    context.close()
