"""The admins' overview in real headless Chromium: charts drawn, budgets listed; a screenshot
for a person to look at."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from raterapp.models import BudgetPool, ExperimentBudget, Judgement
from raterapp.services.judging import assignment_next, judgement_submit
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def _spend(owner):
    """Three experiments with verdicts spread over ten days by six raters."""
    names = ("Customer dedup v2", "Product matching: brands", "News stories: merge threshold")
    experiments = [experiment_prepared(owner=owner, replication=6, name=name, seed=k) for k, name in enumerate(names)]
    pool = BudgetPool.objects.create(name="Q4 rating", max_verdicts=400)
    for k, experiment in enumerate(experiments):
        ExperimentBudget.objects.filter(experiment=experiment).update(
            max_verdicts=[60, None, 40][k],
            cost_per_verdict=Decimal(["0.40", "0.25", "0.55"][k]),
            pool=pool if k else None,
        )
        experiment.gold_rate = 0.0
    raters = [
        UserFactory(username=f"rater-{name}", roles=["rater"]) for name in ("ana", "ben", "chen", "dara", "eli", "fay")
    ]
    now = timezone.now()
    count = 0
    for day in range(10):
        for k, experiment in enumerate(experiments):
            for rater in raters[: 2 + (day + k) % 4]:
                task = assignment_next(experiment=experiment, rater=rater)
                if task is None:
                    continue
                judgement, _ = judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
                Judgement.objects.filter(pk=judgement.pk).update(created_at=now - timedelta(days=day, hours=count % 20))
                count += 1
    return count


def test_overview_page_draws_spend_and_budgets(browser, live_server, screenshots_dir):
    admin = UserFactory(username="ada", roles=["admin"])
    admin.set_password("pw-ada")
    admin.save()
    verdicts = _spend(UserFactory(roles=["engineer"]))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "ada", "pw-ada", "/overview/")
    assert page.locator("[data-total='verdicts']").inner_text() == str(verdicts)
    for name in ("per-experiment", "cost", "per-rater", "throughput"):
        assert page.evaluate(f"!!Chart.getChart(document.querySelector('[data-chart={name}]'))"), name
    assert page.locator("tr[data-budget]").count() == 3
    settle(page)
    page.screenshot(path=str(screenshots_dir / "overview-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    settle(page)
    page.screenshot(path=str(screenshots_dir / "overview-390.png"), full_page=True)

    # The budget of one experiment, changed on its page by the admin: audited as a page change.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("tr[data-budget] a").first.click()
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    budget = page.locator("#budget")
    budget.get_by_label("Maximum verdicts").fill("150")
    budget.get_by_label("Why").fill("second wave of rating")
    budget.get_by_role("button", name="Save the budget").click()
    page.wait_for_url(re.compile(r"/experiments/\d+/#budget$"))
    assert page.locator("[data-budget='max']").inner_text() == "150 verdicts"
    assert "(Page): second wave of rating" in page.locator("[data-budget-changes]").inner_text()
    page.locator("#budget").screenshot(path=str(screenshots_dir / "budget-card-1280.png"))
    context.close()
    assert problems == [], problems
