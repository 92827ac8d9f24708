import pytest
from django.http import Http404

from raterapp.access import access_experiment_for_engineer, access_experiment_for_rater, user_roles
from raterapp.models import Experiment
from tests.raterapp.factories import ExperimentFactory


@pytest.fixture
def experiment(users):
    return ExperimentFactory(name="e", owner=users["engineer"], status=Experiment.Status.RATING)


def test_roles_come_from_groups(users):
    assert user_roles(users["rater"]) == {"rater"}
    assert user_roles(users["nobody"]) == set()


def test_owner_sees_the_experiment_and_another_engineer_gets_404(users, experiment, django_user_model):
    assert access_experiment_for_engineer(users["engineer"], experiment.pk) == experiment
    other = django_user_model.objects.create_user("other")
    other.groups.add(*users["engineer"].groups.all())
    with pytest.raises(Http404):
        access_experiment_for_engineer(other, experiment.pk)
    experiment.shared_with.add(other)
    assert access_experiment_for_engineer(other, experiment.pk) == experiment


def test_missing_and_foreign_experiments_look_the_same(users, experiment):
    with pytest.raises(Http404) as missing:
        access_experiment_for_engineer(users["engineer"], experiment.pk + 1000)
    with pytest.raises(Http404) as foreign:
        access_experiment_for_engineer(users["rater"], experiment.pk)
    assert str(missing.value) == str(foreign.value)


def test_raters_reach_only_experiments_open_for_rating(users, experiment):
    assert access_experiment_for_rater(users["rater"], experiment.pk) == experiment
    with pytest.raises(Http404):
        access_experiment_for_rater(users["engineer"], experiment.pk)
    Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.SAMPLING)
    with pytest.raises(Http404):
        access_experiment_for_rater(users["rater"], experiment.pk)
