"""Issue 34 in Chromium: an upload whose first rows are bad is refused on the form, every problem
listed and nothing created; one whose bad row lies past the rows the request reads is accepted,
fails in the preparation, and its page's "New experiment from these settings" opens the form
filled in, asking for the files again."""

from __future__ import annotations

import re

import pytest

from metrics_core.io import HEAD_ROWS
from raterapp.models import Experiment, UploadedFile
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.factories import UserFactory

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)
LAPTOP = {"width": 1280, "height": 900}
N = HEAD_ROWS + 500  # the bad row is past the rows the request reads


def _files(tmp_path) -> dict:
    rows = [f"i{k},B{k % 40},E{k % 60},{'heavy' if k == N - 1 else 1}" for k in range(N)]
    files = {
        "items": ("items.csv", "item_id,base_cluster,exp_cluster,weight\n" + "\n".join(rows) + "\n"),
        "catalogue": ("catalogue.csv", "item_id,title\n" + "".join(f"i{k},Item {k}\n" for k in range(N))),
        "bad_items": ("bad_items.csv", "item_id,base_cluster,weight\na,B1,1\nb,B1,heavy\n"),
        "semicolons": ("semicolons.csv", "item_id;title\na;Alpha\nb;Beta\n"),
    }
    paths = {}
    for key, (name, text) in files.items():
        paths[key] = tmp_path / name
        paths[key].write_text(text)
    return {key: str(path) for key, path in paths.items()}


def test_a_failed_upload_leads_to_a_filled_form(browser, live_server, settings, tmp_path, screenshots_dir):
    settings.MEDIA_ROOT = tmp_path / "media"
    engineer = UserFactory(username="eve", roles=["engineer"])
    engineer.set_password("pw-eve")
    engineer.save()
    files = _files(tmp_path)
    page = browser.new_page(viewport=LAPTOP)
    page.set_default_timeout(20_000)
    problems: list[str] = []
    refused = lambda response: response.status == 400 and response.url.endswith("/experiments/new/")  # noqa: E731
    record_problems(page, problems, expected_response=refused)
    sign_in(page, live_server, "eve", "pw-eve", "/experiments/new/")

    def fill_and_upload(items: str, catalogue: str) -> None:
        page.locator("#id_name").fill("Deep bad row")
        page.locator("#id_description").fill("Weights from the new model")
        page.locator("#id_n_draws").fill("300")
        page.locator("#id_diff_share").fill("0.3")
        page.locator("#id_seed").fill("11")
        page.locator("#id_items").set_input_files(items)
        page.locator("#id_catalogue").set_input_files(catalogue)
        page.get_by_role("button", name="Upload and prepare").click()

    # Bad first rows: refused on the form, every problem listed, nothing created.
    fill_and_upload(files["bad_items"], files["semicolons"])
    page.locator("[data-error-summary]").wait_for()
    listed = page.locator("#files_errors li").all_inner_texts()
    assert listed == [
        "catalogue: semicolons.csv: missing column 'item_id', 'title' (columns found: 'item_id;title'); "
        "the header is one column: the file seems separated by semicolons, not commas",
        "items: bad_items.csv: missing column 'exp_cluster' (columns found: 'item_id', 'base_cluster', 'weight')",
    ]
    assert "The experiment was not created: 2 problems" in page.locator("[data-error-summary]").inner_text()
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    settle(page)
    page.screenshot(path=str(screenshots_dir / "upload-refused-first-rows-1280x900.png"), full_page=True)

    # A bad row past the first rows: accepted, then failed by the preparation (run here, in process).
    fill_and_upload(files["items"], files["catalogue"])
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    experiment = Experiment.objects.get()
    experiment_prepare(experiment_id=experiment.pk)
    failure = page.locator("[data-failure]")
    failure.wait_for(state="visible")
    assert page.locator("[data-failure-message]").inner_text() == (
        f"items.csv: line {N + 1}: weight 'heavy' is not a number"
    )
    new_from = failure.locator("[data-new-from-settings]")
    assert new_from.inner_text() == "New experiment from these settings"
    assert "button--primary" in new_from.get_attribute("class")  # a file at fault: a re-run cannot help
    assert "button--primary" not in failure.get_by_role("button", name="Re-run the preparation").get_attribute("class")
    settle(page)
    page.screenshot(path=str(screenshots_dir / "failed-new-from-settings-1280x900.png"), full_page=True)

    new_from.click()
    page.wait_for_url(re.compile(rf"/experiments/new/\?from={experiment.pk}$"))
    values = {
        name: page.locator(f"#id_{name}").input_value()
        for name in ("name", "description", "n_draws", "diff_share", "seed")
    }
    assert values == {
        "name": "Deep bad row",
        "description": "Weights from the new model",
        "n_draws": "300",
        "diff_share": "0.3",
        "seed": "11",
    }
    assert page.locator("#id_workspace").input_value() == ""  # not the failed one's workspace of its own
    assert page.locator("#id_items").input_value() == ""
    assert "Files are not copied: choose them again" in page.locator("[data-from-experiment]").inner_text()
    settle(page)
    page.screenshot(path=str(screenshots_dir / "new-from-settings-1280x900.png"), full_page=True)
    assert problems == []
