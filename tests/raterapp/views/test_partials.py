"""The fragments the pages' scripts swap in: the preparation steps (experiments/<id>/steps/)
and a rater's row (raters/<id>/row/). Role tables, the same markup as the page's own, and
GET only."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from raterapp.models import Experiment
from raterapp.services.accounts.raters import rater_pause
from tests.raterapp.factories import ExperimentFactory, UserFactory

pytestmark = pytest.mark.django_db

Status = Experiment.Status


@pytest.fixture
def experiment(users):
    return ExperimentFactory(owner=users["engineer"], name="Owned <b>by</b> engineer")


def _steps_of(content: str) -> str:
    match = re.search(r"<div data-steps>(.*?)</div>\n", content, re.S)
    assert match, "no steps on the page"
    return match.group(1)


def _states(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<li class="step step--(\w+)" data-step="(\w+)"', html)


@pytest.mark.parametrize(
    ("who", "expected"),
    [("anonymous", 302), ("nobody", 403), ("rater", 403), ("engineer", 200), ("other_engineer", 404), ("admin", 200)],
)
def test_steps_role_table(sign_in, experiment, who, expected):
    url = reverse("experiment-steps", args=[experiment.pk])
    assert url == f"/experiments/{experiment.pk}/steps/"
    response = sign_in(who).get(url)
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"] == f"/login/?next={url}"
    if expected == 403:
        assert b"This page is for engineers" in response.content


@pytest.mark.parametrize(
    ("status", "progress", "states", "shown"),
    [
        (Status.QUEUED, 0.0, ["current", "pending", "pending", "pending"], "Waiting"),
        (Status.COMPUTING_IMPACT, 0.456, ["done", "current", "pending", "pending"], "In progress"),
        (Status.RATING, 1.0, ["done", "done", "done", "done"], "Done"),
        (Status.FAILED, 0.3, ["stopped", "stopped", "stopped", "stopped"], "Not completed"),
    ],
)
def test_steps_are_the_pages_own(sign_in, experiment, status, progress, states, shown):
    Experiment.objects.filter(pk=experiment.pk).update(status=status, progress=progress)
    client = sign_in("engineer")
    fragment = client.get(reverse("experiment-steps", args=[experiment.pk])).content.decode()
    page = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert fragment.split("\n", 1)[1].strip() == _steps_of(page).strip()
    assert "<html" not in fragment and "<nav" not in fragment
    assert _states(fragment) == list(zip(states, ["validating", "computing_impact", "sampling", "rating"], strict=True))
    assert f"data-step-state>{shown}</span>" in fragment
    assert ("data-queued hidden" in fragment) is (status != Status.QUEUED)
    if status == Status.COMPUTING_IMPACT:
        assert 'value="46"' in fragment  # the current step's progress, in whole percent


def test_steps_answer_get_only(sign_in, experiment):
    client = sign_in("engineer")
    assert client.post(reverse("experiment-steps", args=[experiment.pk])).status_code == 405


@pytest.mark.parametrize(
    ("who", "expected"),
    [("anonymous", 302), ("nobody", 403), ("rater", 403), ("engineer", 403), ("admin", 200), ("superuser", 200)],
)
def test_rater_row_role_table(sign_in, users, who, expected):
    url = reverse("rater-row", args=[users["rater"].pk])
    assert url == f"/raters/{users['rater'].pk}/row/"
    response = sign_in(who).get(url)
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"] == f"/login/?next={url}"
    if expected == 403:
        assert "This page is for admins" in response.content.decode()


def test_rater_row_of_someone_not_a_rater_is_404(sign_in, users):
    client = sign_in("admin")
    assert client.get(reverse("rater-row", args=[users["engineer"].pk])).status_code == 404
    assert client.get(reverse("rater-row", args=[users["rater"].pk + 1000])).status_code == 404


def test_rater_row_is_the_pages_own(sign_in, users):
    quiet = UserFactory(username="quiet-<q>", email="q@example.org", roles=["rater"])
    rater_pause(actor=users["admin"], rater=quiet, reason="Checking <gold>")
    client = sign_in("admin")
    row = client.get(reverse("rater-row", args=[quiet.pk])).content.decode()
    page = client.get(reverse("raters")).content.decode()
    fragment = row.split("\n", 1)[1].strip()
    assert fragment.startswith(f'<tr data-rater="{quiet.pk}">') and fragment.endswith("</tr>")
    assert fragment in page
    assert "quiet-&lt;q&gt;" in fragment and "Checking &lt;gold&gt;" in fragment
    assert '<span class="badge badge--paused">Paused</span>' in fragment
    assert client.post(reverse("rater-row", args=[quiet.pk])).status_code == 405
