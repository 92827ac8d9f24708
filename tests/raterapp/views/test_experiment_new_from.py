"""Issue 34: the upload page refuses files whose first rows are bad, listing every problem, and a
failed experiment's page offers "New experiment from these settings": the form filled in."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from raterapp.models import Experiment, UploadedFile, Workspace
from tests.raterapp.factories import ExperimentFactory
from tests.raterapp.helpers.experiment_form import FORM
from tests.raterapp.services.files import CATALOGUE_CSV, upload

pytestmark = pytest.mark.django_db


def test_the_page_lists_every_problem_of_the_files_first_rows_and_creates_nothing(client, users, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    client.force_login(users["engineer"])
    items = "item_id,base_cluster,exp_cluster,weight\na,B1,E1,1\nb,B1,E1,heavy\nzz,B2,E2,1\n"
    files = {"items": upload("items.csv", items), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    response = client.post(reverse("experiment-new"), {**FORM, **files})
    assert response.status_code == 400
    content = unescape(response.content.decode())
    summary = re.search(r"data-error-summary.*?</div>", content, re.S).group(0)
    assert re.findall(r'<li><a href="#files_errors">([^<]+)</a></li>', summary) == [
        "Files: items: items.csv: line 3: weight 'heavy' is not a number",
    ]
    assert "The experiment was not created: 1 problem" in summary
    ids = "item_id,base_cluster,exp_cluster\na,B1,E1\nzz,B2,E2\n"
    files = {"items": upload("items.csv", ids), "catalogue": upload("catalogue.csv", "item_id;title\na;A\n")}
    content = unescape(client.post(reverse("experiment-new"), {**FORM, **files}).content.decode())
    listed = re.search(r'<ul class="errors" id="files_errors">(.*?)</ul>', content, re.S).group(1)
    assert re.findall(r"<li>([^<]+)</li>", listed) == [
        "catalogue: catalogue.csv: missing column 'item_id', 'title' (columns found: 'item_id;title'); "
        "the header is one column: the file seems separated by semicolons, not commas",
    ]
    files = {"items": upload("items.csv", ids), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    content = unescape(client.post(reverse("experiment-new"), {**FORM, **files}).content.decode())
    assert "catalogue: catalogue.csv: no row for item_id 'zz' of items.csv" in content
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    assert not any(settings.MEDIA_ROOT.rglob("*.*")) if settings.MEDIA_ROOT.exists() else True


def _failed(owner, **fields):
    return ExperimentFactory(
        owner=owner,
        status=Experiment.Status.FAILED,
        error="items.csv: line 70001: weight 'heavy' is not a number",
        error_step="validating",
        **fields,
    )


def test_a_failed_page_offers_a_new_experiment_from_its_settings_first(client, users):
    experiment = _failed(users["engineer"])
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    link = re.search(r'<a class="([^"]+)" href="([^"]+)" data-new-from-settings>([^<]+)</a>', content)
    assert link.groups() == ("button button--primary", f"/experiments/new/?from={experiment.pk}",
                             "New experiment from these settings")  # fmt: skip
    rerun = re.search(r'<form [^>]*data-rerun-form>.*?<button type="submit" class="([^"]+)"', content, re.S)
    assert rerun.group(1) == "button"  # a re-run of the same files cannot help
    assert content.index("data-new-from-settings") < content.index("data-rerun-form")
    Experiment.objects.filter(pk=experiment.pk).update(error_id="abc123")  # the worker at fault: re-run first
    content = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert 'class="button" href="/experiments/new/?from=' in content
    assert 'class="button button--primary" title="Start the preparation again' in content


def test_new_from_an_experiment_fills_in_its_settings_but_not_its_files(client, users):
    experiment = _failed(
        users["engineer"],
        name="Checkout dedup v3",
        description="Merge offers",
        kind="change",
        question="Same offer?",
        guidelines="Titles first.",
        workspace=Workspace.objects.create(name="shop"),
        reuse_verdicts=False,
        scheme="split",
        n_draws=300,
        diff_share=0.25,
        replication=2,
        seed=11,
        confidence=0.9,
        rating_request="Two raters by Friday",
        requested_verdicts=600,
    )
    client.force_login(users["engineer"])
    response = client.get(reverse("experiment-new") + f"?from={experiment.pk}")
    assert response.status_code == 200
    form = response.context["form"]
    assert {name: form[name].value() for name in form.initial} == {
        "name": "Checkout dedup v3",
        "kind": "change",
        "description": "Merge offers",
        "question": "Same offer?",
        "guidelines": "Titles first.",
        "workspace": "shop",
        "reuse_verdicts": False,
        "n_draws": 300,
        "diff_share": 0.25,
        "replication": 2,
        "confidence": 0.9,
        "seed": 11,
        "scheme": "split",
        "requested_verdicts": 600,
        "rating_request": "Two raters by Friday",
    }
    content = unescape(response.content.decode())
    assert 'value="Checkout dedup v3"' in content and 'value="300"' in content
    assert "Files are not copied: choose them again" in content
    assert "Choose the files again:" in content
    assert 'type="file"' in content and "data-from-experiment" in content


def test_new_from_an_experiment_leaves_out_the_workspace_it_was_given_of_its_own(client, users):
    experiment = _failed(users["engineer"], name="Alone")
    assert re.fullmatch(r"Alone \([0-9a-f]{12}\)", experiment.workspace.name)
    client.force_login(users["engineer"])
    form = client.get(reverse("experiment-new") + f"?from={experiment.pk}").context["form"]
    assert (form["name"].value(), form["workspace"].value()) == ("Alone", "")


@pytest.mark.parametrize(
    "who, expected", [("anonymous", 302), ("rater", 403), ("engineer", 200), ("other_engineer", 404), ("admin", 200)]
)
def test_new_from_an_experiment_role_table(sign_in, users, who, expected):
    experiment = _failed(users["engineer"])
    assert sign_in(who).get(reverse("experiment-new") + f"?from={experiment.pk}").status_code == expected


def test_new_from_a_missing_or_malformed_id_is_404(client, users):
    client.force_login(users["engineer"])
    for value in ("999999", "abc", ""):
        assert client.get(reverse("experiment-new") + f"?from={value}").status_code == 404
