"""An admin works in the product, in real headless Chromium: marks a pair gold from the pair
explorer in one click, resolves a broken-pair report, assigns a rater, creates a budget pool and
attaches the experiment, and fixes a refused budget with the errors in view (focused summary at
the top, each linking to its field). Every step is checked in the database; screenshots of each
console page at 1280 and 390 pixels for a person to look at."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from raterapp.models import (
    AuditEntry,
    BudgetChange,
    BudgetPool,
    ExperimentBudget,
    PairReport,
    PairTask,
    RaterProfile,
    SampledPair,
)
from raterapp.services.judging import assignment_next, judgement_submit, pair_report_create
from tests.raterapp.factories import UserFactory

from .conftest import record_problems, serve_portraits, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# Elements that stick out of the page on the right (outside any scrolling box), to name in a failure.
WIDER_THAN_PAGE = """() => [...document.querySelectorAll("body *")]
  .filter((node) => node.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .filter((node) => !node.closest(".table-scroll, .console-tabs"))
  .slice(0, 5).map((node) => `${node.tagName}.${node.className}`)
  .concat([...document.querySelectorAll("body, body *")].filter((n) => n.scrollWidth > n.clientWidth + 1).slice(0, 8)
  .map((n) => `${n.tagName}.${n.className} ${n.scrollWidth}/${n.clientWidth} ${getComputedStyle(n).overflowX}`))"""
IN_VIEW = """(selector) => {
  const box = document.querySelector(selector).getBoundingClientRect();
  return box.top >= -1 && box.bottom <= window.innerHeight + 1;
}"""


def _shoot(page, screenshots_dir, name: str) -> None:
    """The page at 1280 (first screen and full), then at 390 (first screen; nothing wider than the phone)."""
    page.set_viewport_size(LAPTOP)
    settle(page)
    page.screenshot(path=str(screenshots_dir / f"console-{name}-1280.png"), full_page=True)
    page.set_viewport_size(PHONE)
    settle(page)
    page.screenshot(path=str(screenshots_dir / f"console-{name}-390.png"), full_page=True)
    page.evaluate("(document.querySelector('[data-error-summary]') || document.body).scrollIntoView()")
    page.screenshot(path=str(screenshots_dir / f"console-{name}-390-screen.png"))
    wide = page.evaluate(WIDER_THAN_PAGE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], (name, wide)
    page.set_viewport_size(LAPTOP)


def test_admin_works_in_the_console(browser, live_server, rating_experiment, screenshots_dir):
    experiment = rating_experiment
    admin = UserFactory(username="ada", roles=["admin"])  # not staff: the role is enough
    admin.set_password("pw-ada")
    admin.save()
    rita = UserFactory(username="rita", roles=["rater"])
    UserFactory(username="ravi", roles=["rater"])
    reported = assignment_next(experiment=experiment, rater=rita)
    report, _ = pair_report_create(task=reported, rater=rita, reason="unreadable", note="The title is garbled.")

    context = browser.new_context(viewport=LAPTOP)
    serve_portraits(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    record_problems(
        page,
        problems,
        expected=lambda url: url.startswith("https://img.example/5."),  # missing on purpose
        expected_response=lambda response: response.status == 400 and response.request.method == "POST",
    )
    sign_in(page, live_server, "ada", "pw-ada", "/console/gold/")
    expect(page.get_by_role("link", name="Console")).to_have_attribute("aria-current", "page")

    # 1. Gold from the pair explorer, with its answer, in one click.
    pair = SampledPair.objects.filter(experiment=experiment).exclude(pair_class="self").order_by("pk").first()
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/pairs/#pair-{pair.pk}")
    detail = page.locator("[data-detail]")
    expect(detail).to_have_attribute("data-state", "ready")
    detail.get_by_role("button", name="Gold: Not equivalent").click()
    expect(detail.locator(".xp-gold__status")).to_contain_text("added: not equivalent")
    gold = PairTask.objects.exclude(gold_answer="").get(experiment=experiment)
    assert {gold.item_a_id, gold.item_b_id} == {pair.vantage_id, pair.partner_id}
    assert (gold.gold_answer, gold.created_by) == ("not_equivalent", admin)
    settle(page)
    page.screenshot(path=str(screenshots_dir / "console-explorer-gold-1280.png"))
    manage = detail.get_by_role("link", name="Manage gold questions").get_attribute("href")
    assert manage == f"/console/gold/?experiment={experiment.pk}"
    page.reload()  # the same pair again: refused, and said so
    expect(detail).to_have_attribute("data-state", "ready")
    detail.get_by_role("button", name="Gold: Equivalent").click()
    expect(detail.locator(".xp-gold__status")).to_contain_text("already a gold question")
    assert PairTask.objects.exclude(gold_answer="").count() == 1
    page.goto(live_server.url + manage)
    row = page.locator(f"tr[data-gold='{gold.pk}']")
    expect(row.locator("[data-col='state']")).to_have_text("Served")
    assert row.get_by_label(f"Answer of gold question {gold.pk}").input_value() == "not_equivalent"
    _shoot(page, screenshots_dir, "gold")

    # 2. The reported pair: resolved with a note, the pair excluded from rating.
    page.get_by_role("navigation", name="Admin console").get_by_role("link", name=re.compile("Reported pairs")).click()
    card = page.locator(f"[data-report='{report.pk}']")
    expect(card).to_contain_text("The title is garbled.")
    _shoot(page, screenshots_dir, "reports")
    card.get_by_role("button", name=f"Resolve report {report.pk}").click()  # nothing chosen: refused
    expect(page.locator("[data-error-summary]")).to_be_focused()
    assert PairReport.objects.get(pk=report.pk).resolved_at is None
    card = page.locator(f"[data-report='{report.pk}']")
    card.get_by_label("Exclude the pair: no rater gets it any more").check()
    card.get_by_label("Note").fill("Garbled in the catalogue; excluded until it is fixed.")
    card.get_by_role("button", name=f"Resolve report {report.pk}").click()
    expect(page.locator("[data-messages]")).to_contain_text(f"Report {report.pk} resolved")
    report.refresh_from_db()
    assert (report.resolution, report.resolved_by, report.resolution_note) == (
        "excluded",
        admin,
        "Garbled in the catalogue; excluded until it is fixed.",
    )
    assert PairTask.objects.get(pk=reported.pk).retired_at is not None
    expect(page.locator("[data-report]")).to_have_count(0)

    # 3. Assign ravi: from then on only he rates the experiment.
    page.get_by_role("link", name="Assignments").click()
    section = page.locator(f"[data-experiment='{experiment.pk}']")
    expect(section.locator("[data-access='every_rater']")).to_be_visible()
    section.get_by_label("ravi").check()
    section.get_by_role("button", name=re.compile("^Assign the chosen raters")).click()
    section = page.locator(f"[data-experiment='{experiment.pk}']")
    expect(section.locator("[data-assigned='ravi']")).to_be_visible()
    assert list(experiment.assigned_raters.values_list("username", flat=True)) == ["ravi"]
    _shoot(page, screenshots_dir, "assignments")

    # 4. A pool: refused without a reason (summary at the top, focused), then created and attached.
    page.get_by_role("link", name="Budget pools").click()
    page.get_by_label("Name").fill("Q4 rating")
    page.get_by_label("Verdicts it pays for").fill("500")
    page.get_by_role("button", name="Create pool").click()
    summary = page.locator("[data-error-summary]")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("Why: This field is required.")
    assert page.evaluate(IN_VIEW, "[data-error-summary]")
    assert BudgetPool.objects.count() == 0
    page.get_by_label("Why").fill("Shared budget for Q4")
    page.get_by_role("button", name="Create pool").click()
    pool = BudgetPool.objects.get()
    section = page.locator(f"[data-pool='{pool.pk}']")
    expect(section.locator("[data-spend]")).to_contain_text("0 of 500 verdicts spent")
    section.get_by_label("Experiment").select_option(label=experiment.name)
    section.get_by_label(re.compile(r"^Why\W*$")).fill("Dedup v2 spends from Q4")
    section.get_by_role("button", name="Attach to Q4 rating").click()
    expect(page.locator(f"[data-pool='{pool.pk}'] [data-pool-experiment='{experiment.pk}']")).to_be_visible()
    assert ExperimentBudget.objects.get(experiment=experiment).pool == pool
    ravi = experiment.assigned_raters.get()
    for verdict in ("equivalent", "not_equivalent"):  # ravi rates: the pool spends
        task = assignment_next(experiment=experiment, rater=ravi)
        judgement_submit(task=task, rater=ravi, verdict=verdict, client_id=uuid.uuid4())
    page.reload()
    section = page.locator(f"[data-pool='{pool.pk}']")
    expect(section.locator("[data-spend]")).to_contain_text("2 of 500 verdicts spent · 498 left")
    expect(section.locator(f"[data-pool-experiment='{experiment.pk}'] [data-spent]")).to_have_text("2 spent")
    _shoot(page, screenshots_dir, "pools")

    # 5. A refused budget: the errors in view at the top, focused, each a link to its field.
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    budget = page.locator("#budget")
    budget.get_by_label("Maximum verdicts").fill("-5")
    budget.get_by_role("button", name="Save the budget").click()
    summary = page.locator("[data-error-summary]")
    expect(summary).to_be_focused()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "console-budget-refused-screen-1280.png"))
    assert page.evaluate(IN_VIEW, "[data-error-summary]")
    expect(summary).to_contain_text("Maximum verdicts: Ensure this value is greater than or equal to 0.")
    expect(summary).to_contain_text("Why: This field is required.")
    expect(page.locator("#id_max_verdicts_errors")).to_contain_text("greater than or equal to 0")  # beside the field
    _shoot(page, screenshots_dir, "budget-refused")
    summary.get_by_role("link", name=re.compile("^Maximum verdicts")).click()
    expect(page.locator("#id_max_verdicts")).to_be_focused()
    page.locator("#id_max_verdicts").fill("800")
    page.locator("#id_reason").fill("Q4 plan")
    budget.get_by_role("button", name="Save the budget").click()
    page.wait_for_url(re.compile(rf"/experiments/{experiment.pk}/#budget$"))
    assert ExperimentBudget.objects.get(experiment=experiment).max_verdicts == 800
    assert BudgetChange.objects.filter(field="max_verdicts", new_value="800", reason="Q4 plan", via="page").exists()

    # 6. The audit log holds the pool and the budget changes.
    page.goto(f"{live_server.url}/console/audit/")
    expect(page.locator("#budget-changes tbody tr")).to_have_count(BudgetChange.objects.count())
    actions = page.locator("[data-action-row]")  # the report resolved and the pair it excluded
    expect(actions).to_have_count(2)
    expect(actions.first).to_contain_text("ada")
    assert {text.split("\t")[3] for text in actions.all_inner_texts()} == {
        f"Report {report.pk} resolved: pair excluded from rating",
        f"Pair task {reported.pk} excluded",
    }
    _shoot(page, screenshots_dir, "audit")
    context.close()
    assert problems == [], problems


def test_a_rater_gets_a_new_password_through_a_link_shown_once(browser, live_server, screenshots_dir):
    admin = UserFactory(username="ada", roles=["admin"])
    admin.set_password("pw-ada")
    admin.save()
    rita = UserFactory(username="rita", roles=["rater"])
    rita.set_password("forgotten-long-ago")
    rita.save()
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "ada", "pw-ada", "/raters/")
    page.get_by_role("button", name="Password link rita").click()
    link = page.get_by_label("One-time link to choose a password")
    expect(link).to_be_focused()
    url = link.input_value()
    assert re.fullmatch(rf"{live_server.url}/accounts/set-password/[^/]+/[^/]+/", url)
    expect(page.locator(".new-rater-link__title")).to_contain_text("rita can choose a new password at this link")
    settle(page)
    page.screenshot(path=str(screenshots_dir / "raters-password-link-1280.png"))
    page.get_by_role("button", name="Done").click()
    assert link.is_hidden()  # shown once: gone from the page

    # The quota form: a refusal at the top of the dialog, focused, the field marked beside it.
    page.get_by_role("button", name="Quotas rita").click()
    dialog = page.get_by_role("dialog", name="Quotas of rita")
    dialog.get_by_label("Verdicts in all").fill("-3")
    dialog.get_by_label("Why").fill("Trial period")
    dialog.get_by_role("button", name="Save quotas").click()
    errors = dialog.locator(".dialog-errors")
    expect(errors).to_be_focused()
    expect(errors).to_have_text("Verdicts in all: give a whole number of verdicts, 0 or more, or leave the box empty for no limit.")
    expect(dialog.get_by_label("Verdicts in all")).to_have_attribute("aria-invalid", "")
    assert dialog.get_by_label("Verdicts per day").get_attribute("aria-invalid") is None
    assert page.evaluate(IN_VIEW, "#quota-dialog-errors")
    settle(page)
    page.screenshot(path=str(screenshots_dir / "raters-quota-refused-1280.png"))
    dialog.get_by_label("Verdicts in all").fill("300")
    dialog.get_by_role("button", name="Save quotas").click()
    expect(dialog).to_be_hidden()
    assert RaterProfile.objects.get(user=rita).total_quota == 300
    assert AuditEntry.objects.filter(action="rater.quota", subject=rita, new_value="300", reason="Trial period").exists()

    rater_page = browser.new_context(viewport=PHONE).new_page()
    rater_page.goto(url)
    rater_page.wait_for_url(re.compile(r"/set-password/[^/]+/set-password/$"))  # Django hides the token
    rater_page.screenshot(path=str(screenshots_dir / "password-set-390.png"))
    rater_page.locator("#id_new_password1").fill("a brand new passphrase")
    rater_page.locator("#id_new_password2").fill("a brand new passphrase")
    rater_page.get_by_role("button", name="Set password").click()
    rater_page.wait_for_url(re.compile(r"/accounts/set-password/done/$"))
    rita.refresh_from_db()
    assert rita.check_password("a brand new passphrase")
    rater_page.goto(url)  # used: it works no more
    expect(rater_page.get_by_role("alert")).to_contain_text("This link does not work any more")
    context.close()
    assert problems == [], problems
