"""Engineers' forms and lists in real headless Chromium: a refused upload lists every error at the
top (focused, in view) and keeps the files chosen, so the fixed form uploads them without choosing
them again; a finished experiment is archived and unarchived from its page (hidden from the
default list, shown by the filter, its verdicts kept); wide tables scroll inside their card.
Screenshots at 1280 and 390 pixels."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from raterapp.models import Experiment, Judgement, UploadedFile
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import ExperimentFactory, UserFactory

from .conftest import record_problems, serve_portraits, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
ITEMS = "item_id,base_cluster,exp_cluster\n" + "".join(f"i{k},B{k // 4},E{k // 3}\n" for k in range(24))
CATALOGUE = "item_id,title\n" + "".join(f"i{k},Product {k}\n" for k in range(24))
# Scrolling boxes whose table does not fit them: at laptop width every table shows all its columns.
HIDDEN_COLUMNS = """() => [...document.querySelectorAll(".table-scroll")]
  .filter((box) => box.offsetParent !== null && box.scrollWidth > box.clientWidth + 1)
  .map((box) => `${box.closest("section")?.getAttribute("aria-labelledby")}: ${box.scrollWidth}/${box.clientWidth}`)"""
IN_VIEW = """(selector) => {
  const box = document.querySelector(selector).getBoundingClientRect();
  return box.top >= -1 && box.bottom <= window.innerHeight + 1;
}"""
# Tables wider than their card that no scrolling box inside the card holds: clipped or sticking out.
CLIPPED_TABLES = """() => [...document.querySelectorAll(".card table")].filter((table) => {
  const card = table.closest(".card");
  for (let node = table.parentElement; node && node !== card; node = node.parentElement) {
    if (["auto", "scroll"].includes(getComputedStyle(node).overflowX)) return false;
  }
  return table.getBoundingClientRect().right > card.getBoundingClientRect().right + 1;
}).map((table) => table.closest("section, details, div[id]")?.id || table.className)"""


@pytest.fixture
def engineer(transactional_db):
    user = UserFactory(username="erin", roles=["engineer"])
    user.set_password("pw-erin")
    user.save()
    return user


def _file(name: str, text: str) -> dict:
    return {"name": name, "mimeType": "text/csv", "buffer": text.encode()}


def test_a_refused_upload_lists_its_errors_and_keeps_the_files(browser, live_server, engineer, screenshots_dir):
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    problems: list[str] = []
    record_problems(page, problems, expected=lambda url: url.endswith("/experiments/new/"))  # refused: 400
    sign_in(page, live_server, "erin", "pw-erin", "/experiments/new/")
    # A checkbox stands before its label, on its line (it was alone in the middle of the line below it).
    box, label = page.locator("#id_reuse_verdicts").bounding_box(), page.locator("label[for=id_reuse_verdicts]").bounding_box()
    assert label["x"] <= box["x"] < box["x"] + box["width"] < label["x"] + 60
    assert label["y"] <= box["y"] and box["y"] + box["height"] <= label["y"] + label["height"]
    page.get_by_label("Reuse verdicts").uncheck()  # the label is the checkbox's
    page.get_by_label("Reuse verdicts").check()
    page.evaluate("window.notReloaded = true")
    page.locator("#id_items").set_input_files(_file("items.csv", ITEMS))
    page.locator("#id_question").fill("")
    page.get_by_role("button", name="Upload and prepare").click()

    summary = page.locator("[data-error-summary]")
    expect(summary).to_be_focused()
    assert page.evaluate(IN_VIEW, "[data-error-summary]")
    expect(summary.locator("h2")).to_have_text("The experiment was not created: 2 problems")
    assert summary.locator("li").all_inner_texts() == [
        "Name: This field is required.",
        "Question: This field is required.",
    ]
    expect(summary).to_contain_text("The files you chose are still chosen")
    expect(page.locator("#id_name_errors")).to_have_text("This field is required.")  # beside the field too
    assert page.evaluate("document.getElementById('id_items').files[0].name") == "items.csv"
    settle(page)
    page.screenshot(path=str(screenshots_dir / "upload-refused-1280.png"))
    page.set_viewport_size(PHONE)
    settle(page)
    page.evaluate("document.querySelector('[data-error-summary]').scrollIntoView()")
    page.screenshot(path=str(screenshots_dir / "upload-refused-390.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.set_viewport_size(LAPTOP)

    # The summary's link takes the focus to its field; the service's refusal (no catalogue) comes next.
    summary.get_by_role("link", name="Name: This field is required.").click()
    expect(page.locator("#id_name")).to_be_focused()
    page.locator("#id_name").fill("Shop dedup, looser rules")
    page.locator("#id_question").fill("Same product?")
    page.get_by_role("button", name="Upload and prepare").click()
    expect(page.locator("[data-error-summary] li")).to_have_count(1)
    expect(page.locator("[data-error-summary]")).to_contain_text("Files: ")
    expect(page.locator("[data-error-summary]")).to_be_focused()
    expect(page.locator("#id_name_errors")).to_have_count(0)  # fixed: its error is gone
    assert page.evaluate("document.getElementById('id_items').files.length") == 1
    assert not Experiment.objects.exists()

    # Only the missing file is chosen now: the items file chosen first goes up with it.
    page.locator("#id_catalogue").set_input_files(_file("catalogue.csv", CATALOGUE))
    page.get_by_role("button", name="Upload and prepare").click()
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    experiment = Experiment.objects.get()
    assert experiment.name == "Shop dedup, looser rules"
    assert dict(UploadedFile.objects.values_list("kind", "original_name")) == {
        "items": "items.csv",
        "catalogue": "catalogue.csv",
    }
    assert UploadedFile.objects.get(kind="items").file.read().decode() == ITEMS
    context.close()
    assert problems == [], problems


def test_an_experiment_is_archived_and_unarchived_and_tables_scroll_in_their_card(
    browser, live_server, rating_experiment, screenshots_dir
):
    experiment = rating_experiment
    owner = experiment.owner
    owner.username = "erin"
    owner.set_password("pw-erin")
    owner.save()
    rater = UserFactory(roles=["rater"])
    for verdict in ("equivalent", "not_equivalent", "equivalent"):
        task = assignment_next(experiment=experiment, rater=rater)
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
    estimates_refresh(experiment_id=experiment.pk)
    other = ExperimentFactory(name="Still running", owner=owner, status=Experiment.Status.RATING)

    context = browser.new_context(viewport=LAPTOP)
    serve_portraits(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    record_problems(page, problems, expected=lambda url: url.startswith("https://img.example/5."))
    sign_in(page, live_server, "erin", "pw-erin", "/experiments/")
    expect(page.locator("tr[data-experiment]")).to_have_count(2)

    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    page.wait_for_load_state("networkidle")
    settle(page)
    assert page.evaluate(CLIPPED_TABLES) == []
    assert page.evaluate(HIDDEN_COLUMNS) == []
    page.screenshot(path=str(screenshots_dir / "experiment-tables-1280.png"), full_page=True)
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/pairs/")
    expect(page.locator("#explorer")).to_have_attribute("data-state", "ready")
    assert page.evaluate(CLIPPED_TABLES.replace(".card table", "table")) == []
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    page.wait_for_load_state("networkidle")
    page.set_viewport_size(PHONE)
    settle(page)
    assert page.evaluate(CLIPPED_TABLES) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.set_viewport_size(LAPTOP)

    # In rating: no archive button; closed: archived from its page, verdicts kept.
    expect(page.get_by_role("button", name="Archive")).to_have_count(0)
    page.on("dialog", lambda dialog: dialog.accept())  # "Close rating?"
    page.get_by_role("button", name="Close rating").click()
    expect(page.get_by_role("button", name="Reopen rating")).to_be_visible()
    page.reload()
    page.get_by_role("button", name="Archive").click()
    expect(page.locator("[data-messages]")).to_contain_text("Archived")
    expect(page.locator(".archived-note")).to_be_visible()
    experiment.refresh_from_db()
    assert experiment.archived_at is not None and Judgement.objects.filter(task__experiment=experiment).count() == 3

    page.get_by_role("link", name="Experiments").first.click()
    expect(page.locator("tr[data-experiment]")).to_have_count(1)
    expect(page.locator(f"tr[data-experiment='{other.pk}']")).to_be_visible()
    page.get_by_role("link", name="Archived (1)").click()
    expect(page.locator(f"tr[data-experiment='{experiment.pk}']")).to_be_visible()
    expect(page.locator("tr[data-experiment]")).to_have_count(1)
    settle(page)
    page.screenshot(path=str(screenshots_dir / "experiments-archived-1280.png"))
    page.set_viewport_size(PHONE)
    settle(page)
    page.screenshot(path=str(screenshots_dir / "experiments-archived-390.png"), full_page=True)
    page.set_viewport_size(LAPTOP)

    page.get_by_role("link", name=experiment.name).click()
    page.get_by_role("button", name="Unarchive").click()
    expect(page.locator("[data-messages]")).to_contain_text("Unarchived")
    experiment.refresh_from_db()
    assert experiment.archived_at is None
    page.goto(f"{live_server.url}/experiments/")
    expect(page.locator("tr[data-experiment]")).to_have_count(2)
    context.close()
    assert problems == [], problems
