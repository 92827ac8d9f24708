"""A failed experiment is deleted with its files by its owner or an admin, audited (issue 33:
failed experiments kept their uploads forever, with no delete). One that did not fail is archived,
never deleted: it may hold verdicts."""

import pytest
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from raterapp.models import AuditEntry, Experiment, UploadedFile
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared
from tests.raterapp.services.files import experiment_made, tiny_files, upload

pytestmark = pytest.mark.usefixtures("media")


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def failed(owner) -> Experiment:
    files = {**tiny_files(), "items": upload("items.csv", "item_id,base_cluster,exp_cluster\na,1\n")}
    experiment = experiment_made(owner=owner, name="broken", files=files, seed=7, n_draws=50, checked=False)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.FAILED, experiment.error
    return experiment


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_a_failed_experiment_is_deleted_with_its_files_and_the_audit_log_says_so(
    db, who, django_capture_on_commit_callbacks
):
    owner = UserFactory(roles=["engineer"])
    actor = owner if who == "owner" else UserFactory(roles=["admin"])
    experiment = failed(owner)
    names = [f.file.name for f in UploadedFile.objects.filter(experiment=experiment)]
    assert names and all(default_storage.exists(name) for name in names)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_of(actor).delete(f"/api/experiments/{experiment.pk}/")
    assert response.status_code == 204, response.content
    assert not Experiment.objects.filter(pk=experiment.pk).exists()
    assert not any(default_storage.exists(name) for name in names)
    assert not default_storage.exists(f"experiments/{experiment.pk}")
    entry = AuditEntry.objects.get(action=AuditEntry.Action.EXPERIMENT_DELETE)
    assert (entry.actor, entry.subject, entry.old_value) == (actor, owner, f"{experiment.pk}: broken")


def test_only_a_failed_experiment_and_only_by_its_owner_or_an_admin(db):
    owner, other = UserFactory(roles=["engineer"]), UserFactory(roles=["engineer"])
    rated = experiment_prepared(owner=owner)
    response = client_of(owner).delete(f"/api/experiments/{rated.pk}/")
    assert response.status_code == 409 and "Only a failed experiment" in response.json()["detail"]
    broken = failed(owner)
    assert client_of(other).delete(f"/api/experiments/{broken.pk}/").status_code in (403, 404)
    assert client_of(UserFactory(roles=["rater"])).delete(f"/api/experiments/{broken.pk}/").status_code == 403
    assert Experiment.objects.filter(pk__in=[rated.pk, broken.pk]).count() == 2
    assert not AuditEntry.objects.filter(action=AuditEntry.Action.EXPERIMENT_DELETE).exists()
