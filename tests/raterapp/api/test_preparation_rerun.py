"""POST /api/experiments/<id>/prepare/: the owner or an admin re-runs a failed or stalled
preparation (202); a running healthy one, or a prepared one, is refused with 409 and a message."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from raterapp.models import Experiment, ImpactGroup, Item, PairTask
from raterapp.services.preparation.pipeline import experiment_prepare
from raterapp.tasks import experiment_prepare_task
from tests.raterapp.api.conftest import ROLES
from tests.raterapp.services.files import tiny_files, upload

Status = Experiment.Status
URL = "/api/experiments/{}/prepare/"


@pytest.fixture
def delay():
    with mock.patch.object(experiment_prepare_task, "delay") as patched:
        yield patched


@pytest.fixture
def failed(people, delay):
    from tests.raterapp.services.files import experiment_made

    experiment = experiment_made(
        owner=people["owner"], name="broken", files=tiny_files(items=upload("items.csv", b"")), seed=7, n_draws=50,
        checked=False,  # as if the problem lay past the first rows, which the request reads
    )
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error) == (Status.FAILED, "items.csv: empty file")
    delay.reset_mock()
    return experiment


def state(experiment):
    return Experiment.objects.values_list("status", "error", "error_step", "preparation_attempts").get(pk=experiment.pk)


@pytest.mark.parametrize("role, expected", list(zip(ROLES, (401, 403, 202, 404, 202))))
def test_role_table_on_a_failed_experiment(client_of, failed, delay, django_capture_on_commit_callbacks, role, expected):
    before = state(failed)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_of(role).post(URL.format(failed.pk))
    assert response.status_code == expected, response.content
    if expected == 202:
        assert (response.json()["status"], response.json()["error"]) == ("queued", "")
        assert state(failed) == (Status.QUEUED, "", "", 0)
        delay.assert_called_once_with(failed.pk)
    else:
        assert state(failed) == before
        delay.assert_not_called()


def test_an_engineer_it_is_only_shared_with_may_not_rerun_it(client_of, people, failed, delay):
    failed.shared_with.add(people["other"])
    response = client_of("other").post(URL.format(failed.pk))
    assert response.status_code == 403
    assert response.json() == {"detail": "Only the experiment's owner or an admin may change it."}
    assert state(failed)[0] == Status.FAILED
    delay.assert_not_called()


def test_a_running_healthy_preparation_is_refused_with_409_and_why(client_of, experiment, delay, settings):
    settings.PREPARATION_STALL_SECONDS = 60
    Experiment.objects.filter(pk=experiment.pk).update(
        status=Status.COMPUTING_IMPACT, heartbeat_at=timezone.now() - timedelta(seconds=3)
    )
    counts = (Item.objects.count(), PairTask.objects.count(), ImpactGroup.objects.count())
    response = client_of("admin").post(URL.format(experiment.pk))
    assert response.status_code == 409
    assert response.json() == {
        "detail": "The preparation is running (computing impact metrics, last sign of life 3 s ago); "
        "it can be re-run once it fails or stalls."
    }
    assert Experiment.objects.get(pk=experiment.pk).status == Status.COMPUTING_IMPACT
    assert (Item.objects.count(), PairTask.objects.count(), ImpactGroup.objects.count()) == counts
    delay.assert_not_called()


def test_a_stalled_preparation_is_rerun_and_reported_stalled_before(client_of, experiment, delay, settings):
    settings.PREPARATION_STALL_SECONDS = 60
    Experiment.objects.filter(pk=experiment.pk).update(
        status=Status.SAMPLING, heartbeat_at=timezone.now() - timedelta(seconds=61)
    )
    detail = client_of("owner").get(f"/api/experiments/{experiment.pk}/").json()
    assert (detail["status"], detail["stalled"]) == ("sampling", True)
    response = client_of("owner").post(URL.format(experiment.pk))
    assert response.status_code == 202
    assert Experiment.objects.get(pk=experiment.pk).status == Status.QUEUED
    assert PairTask.objects.filter(experiment=experiment).count() == 0


def test_the_detail_shows_the_failed_step_and_error_id(client_of, people, delay, monkeypatch):
    from raterapp.services.preparation import pipeline as preparation
    from tests.raterapp.services.files import experiment_made

    def broken(**kwargs):
        raise ValueError("Take operation overflowed")

    monkeypatch.setattr(preparation, "impact_groups_build", broken)
    experiment = experiment_made(owner=people["owner"], name="x", files=tiny_files(), seed=7, n_draws=50)
    experiment_prepare(experiment_id=experiment.pk)
    body = client_of("owner").get(f"/api/experiments/{experiment.pk}/").json()
    assert (body["status"], body["error_step"], body["stalled"]) == ("failed", "computing_impact", False)
    assert len(body["error_id"]) == 12
    assert body["error"].endswith(f"(error id {body['error_id']})")
