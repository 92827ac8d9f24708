"""Experiment pages: role table, upload form errors, a successful upload and the experiment page."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from raterapp.models import Experiment, UploadedFile
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.factories import ExperimentFactory
from tests.raterapp.helpers.experiment_form import _post
from tests.raterapp.services.files import CATALOGUE_CSV, ITEMS_CSV, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment(users):
    return ExperimentFactory(owner=users["engineer"], name="Owned <b>by</b> engineer")


ROLE_TABLE = [
    ("anonymous", 302),
    ("nobody", 403),
    ("rater", 403),
    ("engineer", 200),
    ("other_engineer", 200),
    ("admin", 200),
]


@pytest.mark.parametrize("who, expected", ROLE_TABLE)
@pytest.mark.parametrize("page", ["experiment-list", "experiment-new", "glossary"])
def test_list_and_new_pages_role_table(sign_in, page, who, expected):
    response = sign_in(who).get(reverse(page))
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"] == f"/login/?next={reverse(page)}"
    if expected == 403:
        assert b"This page is for engineers" in response.content


@pytest.mark.parametrize(
    "who, expected",
    [("anonymous", 302), ("nobody", 403), ("rater", 403), ("engineer", 200), ("other_engineer", 404), ("admin", 200)],
)
def test_experiment_page_role_table(sign_in, experiment, who, expected):
    url = reverse("experiment-detail", args=[experiment.pk])
    response = sign_in(who).get(url)
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"] == f"/login/?next={url}"


def test_experiment_page_for_an_engineer_it_was_shared_with(client, other_engineer, experiment):
    experiment.shared_with.add(other_engineer)
    client.force_login(other_engineer)
    assert client.get(reverse("experiment-detail", args=[experiment.pk])).status_code == 200


def test_experiment_page_of_a_missing_experiment_is_404(client, users):
    client.force_login(users["admin"])
    assert client.get(reverse("experiment-detail", args=[999_999])).status_code == 404


def test_home_goes_to_the_experiment_list(client, users):
    client.force_login(users["engineer"])
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == reverse("experiment-list")


def test_list_shows_own_and_granted_experiments_only(client, users, other_engineer, experiment):
    granted = ExperimentFactory(owner=other_engineer, name="granted one")
    granted.shared_with.add(users["engineer"])
    ExperimentFactory(owner=other_engineer, name="not shared")
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-list")).content.decode()
    assert "Owned &lt;b&gt;by&lt;/b&gt; engineer" in content
    assert "granted one" in content
    assert "not shared" not in content
    assert reverse("experiment-new") in content
    assert reverse("experiment-detail", args=[experiment.pk]) in content

    client.force_login(users["admin"])
    content = client.get(reverse("experiment-list")).content.decode()
    assert "not shared" in content and "granted one" in content


def test_nav_shows_admin_link_to_admins_only(client, users):
    client.force_login(users["engineer"])
    assert reverse("admin:index") not in client.get(reverse("experiment-list")).content.decode()
    client.force_login(users["admin"])
    assert reverse("admin:index") in client.get(reverse("experiment-list")).content.decode()


def test_upload_without_files_shows_the_problem_and_creates_nothing(client, users):
    client.force_login(users["engineer"])
    response = _post(client, {})
    assert response.status_code == 400
    content = response.content.decode()
    assert "The experiment was not created" in content
    assert "a catalogue file is required" in content
    assert "give either an items file, or a base and an exp file" in content
    assert Experiment.objects.count() == 0
    assert UploadedFile.objects.count() == 0


def test_upload_with_bad_parameters_shows_errors_next_to_fields_and_creates_nothing(client, users):
    client.force_login(users["engineer"])
    files = {"items": upload("items.csv", ITEMS_CSV), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    response = _post(client, files, n_draws="0", confidence="1.5")
    assert response.status_code == 400
    form = response.context["form"]
    assert form.errors == {
        "n_draws": ["must be an integer from 1 to 100000"],
        "confidence": ["must be a number strictly between 0 and 1"],
    }
    assert 'id="id_n_draws_errors"' in response.content.decode()
    assert Experiment.objects.count() == 0
    assert UploadedFile.objects.count() == 0


def test_a_refused_upload_lists_every_error_at_the_top_linked_to_its_field(client, users):
    client.force_login(users["engineer"])
    response = _post(client, {}, n_draws="0")
    content = response.content.decode()
    summary = re.search(r'<div class="alert alert--error error-summary"[^>]*data-error-summary.*?</div>', content, re.S)
    assert summary and content.index("data-error-summary") < content.index("<fieldset")
    links = re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', summary.group(0))
    assert links == [  # the fields' errors, then the files'
        ("#id_n_draws", "Number of draws: must be an integer from 1 to 100000"),
        ("#files_errors", "Files: a catalogue file is required"),
        (
            "#files_errors",
            "Files: give either an items file, or a base and an exp file (and optionally a weights file)",
        ),
    ]
    assert "The experiment was not created: 3 problems" in summary.group(0)
    assert "error_summary.js" in content and "upload_form.js" in content


def test_upload_with_a_non_number_is_refused_by_the_form(client, users):
    client.force_login(users["engineer"])
    files = {"items": upload("items.csv", ITEMS_CSV), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    response = _post(client, files, n_draws="many", name="")
    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"n_draws", "name"}
    assert Experiment.objects.count() == 0


def test_upload_with_an_unsupported_file_type_creates_nothing(client, users):
    client.force_login(users["engineer"])
    files = {"items": upload("items.xlsx", ITEMS_CSV), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    response = _post(client, files)
    assert response.status_code == 400
    assert "unsupported file type" in response.content.decode()
    assert Experiment.objects.count() == 0


def test_a_rater_cannot_upload(client, users):
    client.force_login(users["rater"])
    files = {"items": upload("items.csv", ITEMS_CSV), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    assert _post(client, files).status_code == 403
    assert Experiment.objects.count() == 0


def test_successful_upload_redirects_and_the_prepared_page_shows_ready_and_metrics(client, users):
    client.force_login(users["engineer"])
    files = {"items": upload("items.csv", ITEMS_CSV), "catalogue": upload("catalogue.csv", CATALOGUE_CSV)}
    response = _post(client, files)
    experiment = Experiment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("experiment-detail", args=[experiment.pk])
    assert (experiment.owner, experiment.name, experiment.n_draws, experiment.seed) == (
        users["engineer"], "Checkout dedup v2", 50, 7
    )
    assert sorted(experiment.files.values_list("kind", flat=True)) == ["catalogue", "items"]

    queued = client.get(response["Location"]).content.decode()
    assert 'data-step="validating"' in queued and "data-poll" in queued

    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.RATING

    page = client.get(response["Location"])
    content = page.content.decode()
    assert page.status_code == 200
    assert '<span class="step__label">Rating</span>' in content
    assert "data-poll" not in content
    assert content.count("step step--done") == 4
    metrics = experiment.impact["metrics"]
    for name in ("JaccardDistance", "SplitDistance", "MergeDistance", "SplitRate", "MergeRate", "AffectedWeightFraction"):
        assert f'data-metric="{name}"' in content
        assert f"{metrics[name]:.4f}" in content
    # JDD's example: SplitDistance 7/24, MergeDistance 3/16.
    assert f"{7 / 24:.4f}" in content and f"{3 / 16:.4f}" in content
    judging = page.context["judging"]
    assert f"{judging['verdicts']}</span> of <span data-judging-wanted>{judging['wanted']}" in content
    assert judging["tasks"] > 0


def test_failed_experiment_shows_the_escaped_error(client, users):
    experiment = ExperimentFactory(
        owner=users["engineer"], status=Experiment.Status.FAILED, error="items.csv: line 3: <script>alert(1)</script>"
    )
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert "The preparation failed" in content
    assert "items.csv: line 3: &lt;script&gt;alert(1)&lt;/script&gt;" in content
    assert "<script>alert(1)" not in content
    assert content.count("step step--stopped") == 4


@pytest.mark.parametrize(
    "status, states",
    [
        ("queued", ["current", "pending", "pending", "pending"]),
        ("validating", ["current", "pending", "pending", "pending"]),
        ("computing_impact", ["done", "current", "pending", "pending"]),
        ("sampling", ["done", "done", "current", "pending"]),
        ("rating", ["done", "done", "done", "done"]),
        ("done", ["done", "done", "done", "done"]),
        ("failed", ["stopped", "stopped", "stopped", "stopped"]),
    ],
)
def test_preparation_steps(status, states):
    from raterapp.views.experiments import preparation_steps

    assert [step["state"] for step in preparation_steps(Experiment(status=status))] == states


def test_current_step_shows_its_progress(client, users):
    experiment = ExperimentFactory(owner=users["engineer"], status=Experiment.Status.SAMPLING, progress=0.4)
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert 'aria-current="step"' in content
    assert 'value="40"' in content
    assert "data-poll" in content


@pytest.mark.parametrize("model", ["pairreport", "retractedjudgement", "raterprofile", "pairtask"])
def test_admins_list_the_judging_records_in_the_django_admin(client, superuser, model):
    client.force_login(superuser)
    assert client.get(f"/admin/raterapp/{model}/").status_code == 200


@pytest.mark.parametrize(
    "who, expected",
    [("anonymous", 302), ("nobody", 403), ("rater", 403), ("engineer", 200), ("other_engineer", 404), ("admin", 200)],
)
def test_pair_explorer_page_role_table(sign_in, experiment, who, expected):
    url = reverse("experiment-pairs", args=[experiment.pk])
    assert url == f"/experiments/{experiment.pk}/pairs/"
    response = sign_in(who).get(url)
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"] == f"/login/?next={url}"
    if expected == 403:
        assert b"This page is for engineers" in response.content
    if expected == 200:
        content = response.content.decode()
        assert "<h1>Pair explorer</h1>" in content
        assert "Owned &lt;b&gt;by&lt;/b&gt; engineer" in content
        assert "No sampled pairs yet" in content  # the factory's experiment has no sample
        assert "pair_explorer.js" not in content


def test_locations_are_offered_only_where_the_server_reads_them(client, users, settings, tmp_path):
    client.force_login(users["engineer"])
    settings.DATA_LOCATIONS = []
    assert "Or items at a location" not in client.get(reverse("experiment-new")).content.decode()
    settings.DATA_LOCATIONS = [f"{tmp_path}/"]
    page = client.get(reverse("experiment-new")).content.decode()
    assert "Or items at a location" in page and "Or the catalogue at a location" in page
    refused = _post(client, {"catalogue": upload("catalogue.csv", CATALOGUE_CSV)}, items_location="/etc/items")
    assert refused.status_code == 400
    assert f"must be under one of: {tmp_path}/" in refused.content.decode()
    created = _post(client, {"catalogue": upload("catalogue.csv", CATALOGUE_CSV)}, items_location=f"{tmp_path}/items")
    assert created.status_code == 302
    experiment = Experiment.objects.get()
    assert (experiment.engine, experiment.items_location) == ("dask", f"{tmp_path}/items")


def test_the_glossary_defines_the_words_and_every_metric_once(sign_in):
    from raterapp.vocabulary import METRIC_HELP, TERMS

    content = sign_in("engineer").get(reverse("glossary")).content.decode()
    for term, text in TERMS:
        assert content.count(f">{term}</dt>") == 1, term
        assert text.replace("'", "&#x27;") in content
    for name in METRIC_HELP:
        assert content.count(f'id="metric-{name}"') == 1, name
    for anchor in ("decision", "confidence-sequence", "batch", "model-assisted-estimate"):  # the pages link these
        assert f'id="{anchor}"' in content
