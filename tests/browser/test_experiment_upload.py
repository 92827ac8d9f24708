"""An engineer signs in, uploads an experiment in the browser and watches it being prepared.

The worker starts only once the experiment page shows the upload queued, so the page has to
follow every step itself (polling the API) to reach "Rating" without a reload.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User

from metrics_core.io import HEAD_ROWS
from raterapp.models import Experiment
from tests.browser.helpers import READY_TIMEOUT_MS, _files

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# Records every status the step list shows, and proves the document was never reloaded.
WATCH = """() => {
  window.__notReloaded = true;
  const section = document.getElementById("preparation");
  window.__statuses = [section.dataset.status];
  new MutationObserver(() => {
    const last = window.__statuses[window.__statuses.length - 1];
    if (section.dataset.status !== last) window.__statuses.push(section.dataset.status);
  }).observe(section, { attributes: true, attributeFilter: ["data-status"] });
}"""


def _shoot(page, path, size):
    page.set_viewport_size(size)
    page.screenshot(path=str(path), full_page=True)


def test_engineer_uploads_and_watches_the_preparation(request, browser, live_server, tmp_path, screenshots_dir):
    engineer = User.objects.create_user("eve", password="pw-eve")
    engineer.groups.add(Group.objects.get_or_create(name="engineer")[0])
    # A rater to offer the pairs to: with none, the experiment (open to every rater) waits for raters.
    User.objects.create_user("rita", password="pw-rita").groups.add(Group.objects.get_or_create(name="rater")[0])
    items, catalogue = _files(tmp_path)

    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: message.type == "error"
        and not message.text.startswith("Failed to load resource")  # reported with its URL below
        and problems.append(f"console: {message.text}"),
    )
    # The login page (not ours) has no icon link, so Chromium asks for /favicon.ico.
    page.on(
        "response",
        lambda response: response.status >= 400
        and not response.url.endswith("/favicon.ico")
        and not (response.status == 400 and response.url.endswith("/experiments/new/"))  # a refused upload
        and problems.append(f"HTTP {response.status}: {response.url}"),
    )

    # Signing in through the login page lands on the page asked for.
    page.goto(f"{live_server.url}/experiments/new/")
    assert "/login/" in page.url
    page.get_by_label("User name", exact=True).fill("eve")
    page.get_by_label("Password", exact=True).fill("pw-eve")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/experiments/new/$"))
    assert page.get_by_role("heading", name="New experiment").is_visible()
    _shoot(page, screenshots_dir / "new-experiment-1280x800.png", LAPTOP)
    _shoot(page, screenshots_dir / "new-experiment-390x844.png", PHONE)
    page.screenshot(path=str(screenshots_dir / "new-experiment-390x844-first-screen.png"))
    page.set_viewport_size(LAPTOP)

    page.locator("#id_name").fill("Browser upload")
    page.locator("#id_n_draws").fill("200")
    page.locator("#id_seed").fill("3")
    page.locator("#id_items").set_input_files(items)
    page.locator("#id_catalogue").set_input_files(catalogue)
    page.get_by_role("button", name="Upload and prepare").click()
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))

    experiment = Experiment.objects.get(name="Browser upload")
    assert experiment.status == Experiment.Status.QUEUED
    assert page.locator("#preparation").get_attribute("data-status") == "queued"
    assert page.locator("[data-step='validating']").get_attribute("aria-current") == "step"
    page.evaluate(WATCH)
    _shoot(page, screenshots_dir / "experiment-queued-390x844.png", PHONE)
    page.set_viewport_size(LAPTOP)

    request.getfixturevalue("celery_worker_process")

    page.locator("[data-step='rating'].step--done").wait_for(timeout=READY_TIMEOUT_MS)
    page.locator("[data-results]").wait_for(state="visible")
    assert page.evaluate("window.__notReloaded") is True
    statuses = page.evaluate("window.__statuses")
    assert statuses[0] == "queued" and statuses[-1] == "rating", statuses
    page.locator("[data-status-badge] .badge--rating").wait_for()  # the dashboard's badge, polled each second
    assert page.locator("[data-status-badge]").inner_text() == "Rating"
    assert page.locator(".step--done").count() == 4
    assert page.locator("[data-failure]").is_hidden()

    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.RATING
    metrics = experiment.impact["metrics"]
    for name in ("JaccardDistance", "SplitDistance", "MergeDistance", "JaccardIndex", "AffectedWeightFraction"):
        shown = page.locator(f"[data-metric='{name}'] [data-metric-value]").inner_text()
        assert shown == f"{metrics[name]:.4f}", name
    tasks = experiment.tasks.count()
    assert tasks > 0
    assert page.locator("[data-judging-tasks]").inner_text() == str(tasks)
    assert page.locator("[data-judging-verdicts]").inner_text() == "0"

    _shoot(page, screenshots_dir / "experiment-1280x800.png", LAPTOP)
    _shoot(page, screenshots_dir / "experiment-390x844.png", PHONE)
    page.set_viewport_size(LAPTOP)

    # Without a reload: the pair explorer link and the headline appear once the sample exists.
    assert page.locator("[data-explorer-link]").is_visible()
    page.locator("[data-decision-label]").filter(has_text="Not enough data yet").wait_for()

    # More draws from the page: the plan before drawing, then the worker appends the batch.
    page.locator("#batch-draws").fill("300")
    page.locator("[data-batch-plan]").filter(has_text="Expected: about").wait_for()
    assert "The budget has no limit." in page.locator("[data-batch-plan]").inner_text()
    page.get_by_role("button", name="Draw the batch").click()
    page.locator("[data-batch-status]").filter(has_text="Batch 1 requested").wait_for()
    page.locator('[data-batch="1"][data-batch-status="done"]').wait_for(timeout=READY_TIMEOUT_MS)
    experiment.refresh_from_db()
    assert experiment.sample_version == 1
    assert experiment.tasks.count() >= tasks
    page.wait_for_function(
        f"document.querySelector('[data-judging-tasks]').textContent === '{experiment.tasks.count()}'"
    )
    _shoot(page, screenshots_dir / "experiment-batches-1280x800.png", LAPTOP)
    assert page.evaluate("window.__notReloaded") is True

    # A file broken in its first rows is refused on the form (issue 34), creating nothing.
    broken = tmp_path / "broken.csv"
    broken.write_text("item_id,base_cluster,exp_cluster\na,B1,E1\na,B1,E2\n")
    page.goto(f"{live_server.url}/experiments/new/")
    page.locator("#id_name").fill("Broken upload")
    page.locator("#id_items").set_input_files(str(broken))
    page.locator("#id_catalogue").set_input_files(catalogue)
    page.get_by_role("button", name="Upload and prepare").click()
    page.locator("[data-error-summary]").wait_for()
    assert page.locator("#files_errors li").all_inner_texts() == [
        "items: broken.csv: line 3: duplicate item_id 'a' (first on line 2)"
    ]
    assert not Experiment.objects.filter(name="Broken upload").exists()

    # Broken past the rows the request reads: the failure (file, line, problem) appears on the page,
    # again without a reload.
    n = HEAD_ROWS + 10
    rows = "".join(f"x{k},B{k % 9},E{k % 7}\n" for k in range(n))
    broken.write_text("item_id,base_cluster,exp_cluster\n" + rows + "x0,B1,E1\n")
    deep_catalogue = tmp_path / "deep_catalogue.csv"
    deep_catalogue.write_text("item_id,title\n" + "".join(f"x{k},Item {k}\n" for k in range(n)))
    page.locator("#id_items").set_input_files(str(broken))
    page.locator("#id_catalogue").set_input_files(str(deep_catalogue))
    page.get_by_role("button", name="Upload and prepare").click()
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    page.locator("[data-failure]").wait_for(state="visible", timeout=READY_TIMEOUT_MS)
    failed = Experiment.objects.get(name="Broken upload")
    assert failed.status == Experiment.Status.FAILED and failed.error
    assert page.locator("[data-failure-message]").inner_text() == failed.error
    page.locator("[data-status-badge] .badge--failed").wait_for()
    assert page.locator("[data-status-badge]").inner_text() == "Failed"
    assert page.locator(".step--stopped").count() == 4
    assert page.locator("[data-results]").is_hidden()
    _shoot(page, screenshots_dir / "experiment-failed-390x844.png", PHONE)
    page.set_viewport_size(LAPTOP)

    page.goto(f"{live_server.url}/experiments/")
    assert page.locator("tbody tr").count() == 2
    _shoot(page, screenshots_dir / "experiments-1280x800.png", LAPTOP)
    _shoot(page, screenshots_dir / "experiments-390x844.png", PHONE)
    assert problems == []
    context.close()
