"""The planner's numbers in real headless Chromium (issue 32): large counts carry thousands
separators, and the batch form proposes what the batch API accepts, saying so when it cut the
plan. Screenshots of the decision card and the batch form for a person to look at."""

from __future__ import annotations

import re

import pytest

from raterapp.models import Experiment
from raterapp.selectors import batches
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, sign_in
from .helpers import LAPTOP, _judge, _population

pytestmark = pytest.mark.django_db(transaction=True)

GROUPED = re.compile(r"\d{1,3}(,\d{3})+")


def test_counts_are_grouped_and_the_batch_form_stays_within_the_limit(
    browser, live_server, screenshots_dir, monkeypatch
):
    monkeypatch.setattr(batches, "MAX_BATCH_DRAWS", 100)  # the server runs in this process: one limit for all
    base, exp, gold = _population()
    owner = UserFactory(username="noor", roles=["engineer"])
    owner.set_password("pw")
    owner.save()
    experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=800, name="Planner numbers")
    Experiment.objects.filter(pk=experiment.pk).update(
        decision_metric="DeltaPrecision", equivalence_margin=0.0, target_half_width=0.0005
    )
    _judge(experiment, gold, UserFactory(roles=["rater"]), limit=12)
    estimates_refresh(experiment_id=experiment.pk)

    context = browser.new_context(viewport=LAPTOP, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "noor", "pw", f"/experiments/{experiment.pk}/")

    # "About 2130462 more verdicts" had no separator: the precision target's way is far.
    more = page.locator('[data-progress="more"]')
    page.wait_for_function(
        "/About \\d{1,3}(,\\d{3})+ more verdicts/.test(document.querySelector('[data-progress=\"more\"]').textContent)"
    )
    assert GROUPED.search(more.inner_text())
    assert page.locator("[data-decision-label]").inner_text() == "Not enough data yet"
    settle = page.locator("[data-decision-settle]")
    assert settle.is_visible()
    page.locator("[data-decision]").screenshot(path=str(screenshots_dir / "planner-decision-card.png"))

    # The plan wants more than a batch may hold: the form proposes the limit and says so.
    form = page.locator("[data-batch-form]")
    form.scroll_into_view_if_needed()
    draws = page.locator("#batch-draws")
    assert draws.input_value() == "100" and draws.get_attribute("max") == "100"
    note = page.locator("[data-batch-limit]").inner_text()
    assert note.startswith("Capped:") and "at most 100" in note
    page.locator("[data-batches]").screenshot(path=str(screenshots_dir / "planner-batch-form.png"))
    page.locator("[data-batch-submit]").click()
    status = page.locator("p[data-batch-status]")
    page.wait_for_function("document.querySelector('p[data-batch-status]').textContent !== ''")
    assert status.inner_text().startswith("Batch 1 requested"), status.inner_text()
    assert not problems, problems
    context.close()
