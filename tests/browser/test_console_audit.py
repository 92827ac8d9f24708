"""The console's audit log in Chromium (issue 34): an admin narrows it by kind, by who and by
experiment with the filter form, sees a quota change with its reason, and pages through it."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from raterapp.services.accounts.api_tokens import api_token_create
from raterapp.services.accounts.raters import rater_assign, rater_pause, rater_quota_set
from tests.browser.conftest import record_problems, settle, sign_in
from tests.raterapp.factories import ExperimentFactory, UserFactory


def test_an_admin_filters_the_audit_log_by_kind_who_and_experiment(browser, live_server, screenshots_dir):
    ada = UserFactory(username="ada", roles=["admin"])
    ada.set_password("pw-ada")
    ada.save()
    grace = UserFactory(username="grace", roles=["admin"])
    rita = UserFactory(username="rita", roles=["rater"])
    dedup, merge = ExperimentFactory(name="Dedup v2"), ExperimentFactory(name="Merge v3")
    rater_quota_set(actor=ada, rater=rita, daily_quota=40, total_quota=None, reason="Trial week")
    rater_pause(actor=grace, rater=rita, reason="answers too fast")
    rater_assign(actor=ada, experiment=dedup, raters=[rita])
    rater_assign(actor=grace, experiment=merge, raters=[rita])
    api_token_create(actor=ada, name="ci")
    for n in range(60):  # enough for a second page
        rater_quota_set(actor=grace, rater=rita, daily_quota=100 + n, total_quota=None, reason=f"step {n}")

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "ada", "pw-ada", "/console/audit/")
    entries = page.locator("[data-audit-row]")
    expect(page.get_by_role("heading", name="People and access: 65 changes")).to_be_visible()
    expect(entries).to_have_count(50)

    page.get_by_label("Kind").select_option(label="Quota changed")
    page.get_by_label("Who").select_option(label="ada")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"kind=rater.quota"))
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text("Quota changed")
    expect(entries.first).to_contain_text("Trial week")
    expect(page.get_by_label("Kind")).to_have_value("rater.quota")  # the filters stay chosen
    settle(page)
    page.screenshot(path=str(screenshots_dir / "console-audit-quota-by-ada-1280.png"), full_page=True)

    page.get_by_label("Kind").select_option(label="Every kind")
    page.get_by_label("Who").select_option(label="Anyone")
    page.get_by_label("Experiment").select_option(label="Merge v3")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(rf"experiment={merge.pk}"))
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text("Assigned to an experiment")
    expect(entries.first).to_contain_text("grace")

    page.get_by_role("link", name="Show everything").click()
    page.get_by_label("Kind").select_option(label="Quota changed")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("Page 1 of 2")).to_be_visible()
    page.get_by_role("link", name="Older").click()
    page.wait_for_url(re.compile(r"kind=rater.quota&page=2"))
    expect(entries).to_have_count(11)
    expect(entries.last).to_contain_text("Trial week")
    settle(page)
    page.screenshot(path=str(screenshots_dir / "console-audit-page-2-1280.png"), full_page=True)
    context.close()
    assert problems == [], problems
