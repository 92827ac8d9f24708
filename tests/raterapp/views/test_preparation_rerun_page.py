"""The experiment page's failed and stalled preparations: the step, the error id and the
"Re-run the preparation" button (owner, admin), and what the button's POST does for each role."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from raterapp.models import Experiment
from raterapp.tasks import experiment_prepare_task
from tests.raterapp.factories import ExperimentFactory

pytestmark = pytest.mark.django_db
Status = Experiment.Status
BUTTON = "Re-run the preparation"


@pytest.fixture
def delay():
    with mock.patch.object(experiment_prepare_task, "delay") as patched:
        yield patched


@pytest.fixture
def failed(users):
    return ExperimentFactory(
        owner=users["engineer"],
        status=Status.FAILED,
        error="Unexpected error while sampling pairs: ValueError: boom (error id 0123456789ab)",
        error_id="0123456789ab",
        error_step=Status.SAMPLING,
    )


def page_of(client, experiment) -> str:
    return client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()


@pytest.mark.parametrize("who, shown", [("engineer", True), ("admin", True), ("other_engineer", False)])
def test_a_failed_preparation_shows_its_step_error_id_and_the_button_to_owners_and_admins(
    sign_in, failed, other_engineer, who, shown
):
    failed.shared_with.add(other_engineer)
    content = page_of(sign_in(who), failed)
    assert "The preparation failed<span data-failure-step>: sampling pairs</span>" in content
    assert "Error id <code data-failure-id-value>0123456789ab</code>" in content
    assert (BUTTON in content) is shown


def test_a_stalled_preparation_says_so_with_the_button(sign_in, users, settings):
    settings.PREPARATION_STALL_SECONDS = 60
    stalled = ExperimentFactory(owner=users["engineer"], status=Status.SAMPLING)
    Experiment.objects.filter(pk=stalled.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    content = page_of(sign_in("engineer"), stalled)
    assert '<div class="alert alert--stalled" role="status" data-stalled>' in content
    assert "No sign of life from its worker since" in content
    assert BUTTON in content

    Experiment.objects.filter(pk=stalled.pk).update(heartbeat_at=timezone.now())
    assert '<div class="alert alert--stalled" role="status" data-stalled hidden>' in page_of(sign_in("engineer"), stalled)


@pytest.mark.parametrize(
    "who, expected",
    [("anonymous", 302), ("rater", 403), ("engineer", 302), ("shared_engineer", 403), ("other_engineer", 404),
     ("admin", 302)],
)  # fmt: skip
def test_the_rerun_button_role_table(sign_in, failed, other_engineer, delay, django_capture_on_commit_callbacks, who, expected):
    if who == "shared_engineer":
        failed.shared_with.add(other_engineer)
        who = "other_engineer"
    url = reverse("experiment-prepare", args=[failed.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = sign_in(who).post(url)
    assert response.status_code == expected
    status = Experiment.objects.values_list("status", flat=True).get(pk=failed.pk)
    if expected == 302 and who != "anonymous":
        assert response["Location"] == reverse("experiment-detail", args=[failed.pk]) + "#preparation"
        assert status == Status.QUEUED
        delay.assert_called_once_with(failed.pk)
    else:
        assert status == Status.FAILED
        delay.assert_not_called()
        if who == "anonymous":
            assert response["Location"] == f"/login/?next={url}"


def test_a_rerun_of_a_healthy_preparation_is_refused_on_the_page(sign_in, users, delay, settings):
    settings.PREPARATION_STALL_SECONDS = 60
    running = ExperimentFactory(owner=users["engineer"], status=Status.VALIDATING)
    Experiment.objects.filter(pk=running.pk).update(heartbeat_at=timezone.now())
    response = sign_in("engineer").post(reverse("experiment-prepare", args=[running.pk]))
    assert response.status_code == 409
    assert "The preparation is running (validating the upload, last sign of life 0 s ago)" in response.content.decode()
    assert Experiment.objects.get(pk=running.pk).status == Status.VALIDATING
    delay.assert_not_called()
