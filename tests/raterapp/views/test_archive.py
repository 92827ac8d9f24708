"""Archiving from the experiment page: owner and admins only, finished or failed experiments
only; the list hides archived ones and shows them behind its filter."""

from __future__ import annotations

import pytest
from django.urls import reverse

from raterapp.models import Experiment
from tests.raterapp.factories import ExperimentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment(users):
    return ExperimentFactory(name="Finished dedup", owner=users["engineer"], status=Experiment.Status.DONE)


@pytest.mark.parametrize(
    ("who", "status", "archived"),
    [
        ("anonymous", 302, False),
        ("rater", 403, False),
        ("nobody", 403, False),
        ("other_engineer", 404, False),
        ("engineer", 302, True),
        ("admin", 302, True),
    ],
)
def test_role_table_of_archiving(sign_in, experiment, who, status, archived):
    response = sign_in(who).post(reverse("experiment-archive", args=[experiment.pk]), {"archived": "true"})
    assert response.status_code == status
    experiment.refresh_from_db()
    assert (experiment.archived_at is not None) == archived


def test_a_shared_engineer_may_not_archive(sign_in, experiment, other_engineer):
    experiment.shared_with.add(other_engineer)
    response = sign_in("other_engineer").post(reverse("experiment-archive", args=[experiment.pk]), {"archived": "true"})
    assert response.status_code == 403
    assert "Only the experiment&#x27;s owner or an admin may change it." in response.content.decode()
    assert '<link rel="stylesheet"' in response.content.decode()  # the app's 403 page, not a bare one
    experiment.refresh_from_db()
    assert experiment.archived_at is None


def test_an_experiment_in_rating_is_not_archived_and_the_page_says_why(sign_in, experiment):
    Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.RATING)
    client = sign_in("engineer")
    response = client.post(reverse("experiment-archive", args=[experiment.pk]), {"archived": "true"}, follow=True)
    assert "Only a finished (rating closed) or failed experiment can be archived." in response.content.decode()
    experiment.refresh_from_db()
    assert experiment.archived_at is None


def test_the_list_hides_archived_experiments_behind_its_filter(sign_in, experiment, users):
    running = ExperimentFactory(name="Running", owner=users["engineer"], status=Experiment.Status.RATING)
    client = sign_in("engineer")
    client.post(reverse("experiment-archive", args=[experiment.pk]), {"archived": "true"})
    listed = client.get(reverse("experiment-list")).content.decode()
    assert f'data-experiment="{running.pk}"' in listed and f'data-experiment="{experiment.pk}"' not in listed
    assert "Archived (1)" in listed
    archived = client.get(reverse("experiment-list") + "?archived=true").content.decode()
    assert f'data-experiment="{experiment.pk}"' in archived and f'data-experiment="{running.pk}"' not in archived
    page = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert 'name="archived" value="false"' in page  # the Unarchive button
    client.post(reverse("experiment-archive", args=[experiment.pk]), {"archived": "false"})
    assert f'data-experiment="{experiment.pk}"' in client.get(reverse("experiment-list")).content.decode()
