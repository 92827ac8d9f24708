"""An experiment says what it waits for (issue 34): under the production defaults a prepared
experiment waits for raters and budget, on its page, in the list, in the dashboard and list JSON,
with a link to the console, where an admin opens it to every rater and sets its budget; what the
console says about access is what the API says and what the raters see."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from raterapp.models import Experiment
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment(users, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.NEW_EXPERIMENT_OPEN_TO = "assigned"  # the production defaults (tests/settings.py opens all)
    settings.NEW_EXPERIMENT_BUDGET = 0
    experiment = experiment_prepared(owner=users["engineer"], name="Dedup v3")
    Experiment.objects.filter(pk=experiment.pk).update(rating_request="Ana's team, by Friday", requested_verdicts=300)
    experiment.refresh_from_db()
    return experiment


def _text(content: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content)))


def _card(content: str, experiment) -> str:
    start = content.index(f'id="experiment-{experiment.pk}"')
    return _text(content[start : content.index("</section>", start)])


def test_a_new_experiment_waits_for_raters_and_budget_everywhere(sign_in, experiment):
    client = sign_in("engineer")
    fix = f"/console/assignments/#experiment-{experiment.pk}"
    dashboard = client.get(f"/api/experiments/{experiment.pk}/dashboard/").json()
    assert experiment.status == Experiment.Status.RATING  # the stored status stays the preparation's
    assert (dashboard["experiment"]["status"], dashboard["badge"]["key"]) == ("rating", "waiting")
    assert dashboard["badge"]["label"] == "Waiting for raters and budget"
    assert dashboard["badge"]["waiting"]["fix_url"] == fix
    assert dashboard["badge"]["waiting"]["who"] == "an admin"
    (listed,) = client.get("/api/experiments/").json()["results"]
    assert (listed["status"], listed["waiting"]["label"]) == ("rating", "Waiting for raters and budget")
    detail = client.get(f"/api/experiments/{experiment.pk}/").json()
    assert detail["waiting"] == dashboard["badge"]["waiting"]
    assert (detail["rating_request"], detail["requested_verdicts"]) == ("Ana's team, by Friday", 300)

    page = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert '<span class="badge badge--waiting">Waiting for raters and budget</span>' in page
    assert f'href="{fix}" data-waiting-fix' in page
    assert "Waiting for raters and budget</span>" in page.split('data-step="rating"')[1][:600]  # the Rating step
    listing = client.get(reverse("experiment-list")).content.decode()
    assert '<span class="badge badge--waiting">Waiting for raters and budget</span>' in listing
    assert f'<a href="{fix}">raters and budget</a>' in listing
    steps = client.get(reverse("experiment-steps", args=[experiment.pk])).content.decode()
    assert "Waiting for raters and budget" in steps


def test_the_console_opens_it_sets_its_budget_and_says_what_the_api_and_raters_see(sign_in, experiment, users):
    admin = sign_in("admin")
    raters_url = f"/api/experiments/{experiment.pk}/raters/"
    console = admin.get(reverse("console-assignments")).content.decode()
    card = _card(console, experiment)
    assert "engineer asks: a budget of 300 verdicts. Ana's team, by Friday" in card
    assert "No rater may rate it: none is assigned and it is not open to every rater." in card
    assert "Waiting for raters and budget" in card
    assert (admin.get(raters_url).json()["open_to_all"], admin.get(raters_url).json()["who"]) == (False, "nobody")
    assert 'value="300"' in console  # the budget asked for, proposed
    assert "1 experiment waits for raters or budget" in _text(console)

    e = experiment.pk
    assignments = reverse("console-assignments")
    assert admin.post(assignments, {"action": "open_to_all", "experiment": e, "open_to_all": "true"}).status_code == 302
    card = _card(admin.get(assignments).content.decode(), experiment)
    assert "it is open to every rater: every rater may rate it." in card
    assert "Waiting for budget" in card
    assert (admin.get(raters_url).json()["open_to_all"], admin.get(raters_url).json()["who"]) == (True, "every_rater")
    engineer = sign_in("engineer")
    badge = engineer.get(f"/api/experiments/{e}/dashboard/").json()["badge"]
    assert (badge["key"], badge["label"]) == ("waiting", "Waiting for budget")

    admin = sign_in("admin")
    response = admin.post(
        assignments, {"action": "budget", "experiment": e, f"b{e}-max_verdicts": "300", f"b{e}-reason": "asked"}
    )
    assert response.status_code == 302
    console = admin.get(assignments).content.decode()
    card = _card(console, experiment)
    assert "Waiting" not in card and "Budget: 0 of 300 verdicts spent." in card
    assert "data-waiting-count" not in console
    rater = sign_in("rater")
    assert "Dedup v3" in rater.get(reverse("rate-home")).content.decode()
    assert rater.get(reverse("rate-experiment", args=[e])).status_code == 200
    engineer = sign_in("engineer")
    assert engineer.get(f"/api/experiments/{e}/dashboard/").json()["badge"]["key"] == "rating"


def test_closed_to_all_again_the_raters_lose_it_and_the_console_says_so(sign_in, experiment):
    e, assignments = experiment.pk, reverse("console-assignments")
    admin = sign_in("admin")
    admin.post(assignments, {"action": "open_to_all", "experiment": e, "open_to_all": "true"})
    admin.post(assignments, {"action": "budget", "experiment": e, f"b{e}-max_verdicts": "10", f"b{e}-reason": "r"})
    admin.post(assignments, {"action": "open_to_all", "experiment": e, "open_to_all": "false"})
    assert "No rater may rate it" in _card(admin.get(assignments).content.decode(), experiment)
    assert sign_in("rater").get(reverse("rate-experiment", args=[e])).status_code == 404


def test_a_refused_budget_and_pool_edit_show_their_errors_and_change_nothing(sign_in, experiment):
    from raterapp.models import BudgetChange, BudgetPool

    e, admin = experiment.pk, sign_in("admin")
    response = admin.post(
        reverse("console-assignments"),
        {"action": "budget", "experiment": e, f"b{e}-max_verdicts": "-1", f"b{e}-reason": ""},
    )
    assert response.status_code == 400
    assert f'id="id_b{e}-max_verdicts_errors"' in response.content.decode()
    first, second = (
        BudgetPool.objects.create(name="A", max_verdicts=5),
        BudgetPool.objects.create(name="B", max_verdicts=5),
    )
    response = admin.post(
        reverse("console-pools"),
        {"action": "edit", "pool": second.pk, f"edit{second.pk}-name": "a", f"edit{second.pk}-max_verdicts": "9",
         f"edit{second.pk}-reason": "r"},
    )  # fmt: skip
    assert response.status_code == 400
    assert "A pool with this name exists already." in response.content.decode()
    assert sorted(BudgetPool.objects.values_list("name", "max_verdicts")) == [("A", 5), ("B", 5)]
    assert not BudgetChange.objects.exists() and first.pk


def test_the_upload_form_asks_for_raters_and_a_budget(sign_in):
    page = sign_in("engineer").get(reverse("experiment-new")).content.decode()
    assert "<legend>Raters and budget</legend>" in page
    assert 'name="requested_verdicts"' in page and 'name="rating_request"' in page


def test_an_upload_carries_the_owners_request_to_the_experiment(sign_in, settings, tmp_path):
    from tests.raterapp.services.files import tiny_files

    settings.MEDIA_ROOT = tmp_path / "media"
    client = sign_in("engineer")
    fields = {"name": "Asked", "n_draws": "50", "requested_verdicts": "400", "rating_request": "Two raters, please"}
    response = client.post("/api/experiments/", {**fields, **tiny_files()})
    assert response.status_code == 201, response.content
    assert (response.json()["requested_verdicts"], response.json()["rating_request"]) == (400, "Two raters, please")
    experiment = Experiment.objects.get(pk=response.json()["id"])
    assert (experiment.requested_verdicts, experiment.rating_request) == (400, "Two raters, please")
    refused = client.post("/api/experiments/", {**fields, "requested_verdicts": "0", **tiny_files()})
    assert refused.status_code == 400
    assert refused.json()["requested_verdicts"] == ["ask for a whole number of verdicts, 1 or more, or leave it empty"]
    assert Experiment.objects.count() == 1


def test_the_live_version_moves_when_the_wait_ends_and_agrees_with_the_dashboards(sign_in, experiment):
    from raterapp.selectors.dashboard import dashboard_version_get, experiment_dashboard_get

    def versions():
        experiment.refresh_from_db()
        return dashboard_version_get(experiment=experiment), experiment_dashboard_get(experiment=experiment)["version"]

    waiting_both, same = versions()
    assert waiting_both == same and waiting_both.endswith("-w11")
    # open to all through a path that does not move updated_at: the wait alone moves the version
    Experiment.objects.filter(pk=experiment.pk).update(open_to_all_raters=True)
    waiting_budget, same = versions()
    assert waiting_budget == same and waiting_budget.endswith("-w01")
