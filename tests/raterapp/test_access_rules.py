"""The rating loop's lookups are written in SQL (``raterapp.db.rows``); the ORM keeps the
same rules for lists and pages. Here both give one answer over every case, and the SQL reads the
same instances (and roles) as the ORM."""

import itertools

import pytest
from django.contrib.auth import get_user_model
from django.http import Http404
from django.utils import timezone

from raterapp.access import (
    access_experiment_for_rater,
    access_task_for_rater,
    experiments_open_to_rater,
    open_to_rater,
    user_roles,
)
from raterapp.models import Experiment, Item, PairTask
from raterapp.services.accounts.api_tokens import api_token_authenticate, api_token_create
from raterapp.services.accounts.login_limits import LockoutModelBackend
from raterapp.services.judging import queue
from raterapp.services.judging.store import rater_state
from tests.raterapp.factories import ExperimentFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.rating_loop]

STATUSES = [Experiment.Status.RATING, Experiment.Status.SAMPLING, Experiment.Status.DONE]
ASSIGNED = ["nobody", "me", "another", "both"]


def _task_of(experiment):
    a, b = (
        Item.objects.create(
            experiment=experiment, item_id=name, position=k, base_cluster="b", exp_cluster="e", weight=1.0
        )
        for k, name in enumerate("ab")
    )
    return PairTask.objects.create(experiment=experiment, item_a=a, item_b=b, rank=0, wanted=1)


def _found(access, user, key) -> bool:
    try:
        access(user, key)
    except Http404:
        return False
    return True


def test_the_written_out_lookups_open_exactly_what_experiments_open_to_rater_opens():
    me, another = UserFactory(roles=["rater"]), UserFactory(roles=["rater"])
    engineer = UserFactory(roles=["engineer"])
    cases = {}
    for status, open_to_all, assigned in itertools.product(STATUSES, [True, False], ASSIGNED):
        experiment = ExperimentFactory(status=status, open_to_all_raters=open_to_all)
        experiment.assigned_raters.add(
            *{"nobody": [], "me": [me], "another": [another], "both": [me, another]}[assigned]
        )
        cases[(status, open_to_all, assigned)] = (experiment, _task_of(experiment))
    for user in (me, another, engineer):
        open_ids = set(experiments_open_to_rater(user).values_list("pk", flat=True))
        for case, (experiment, task) in cases.items():
            expected = experiment.pk in open_ids
            assert _found(access_experiment_for_rater, user, experiment.pk) == expected, (user, case)
            assert _found(access_task_for_rater, user, task.pk) == expected, (user, case)
    # the ORM's rule opens some and closes others here, so the comparison above means something
    assert 0 < experiments_open_to_rater(me).count() < len(cases)
    assert not experiments_open_to_rater(engineer).exists()


def test_the_rule_is_stated_once_and_the_rating_loop_reads_it_from_there():
    """``open_to_rater`` is the rule; the ORM filter, the SQL lookups, the loop's state row (read
    under the rater's lock at each lease) and the lease renewal's check give its answer."""
    me, another = UserFactory(roles=["rater"]), UserFactory(roles=["rater"])
    now = timezone.now()
    for open_to_all, assigned in itertools.product([True, False], ASSIGNED):
        experiment = ExperimentFactory(status=Experiment.Status.RATING, open_to_all_raters=open_to_all)
        raters = {"nobody": [], "me": [me], "another": [another], "both": [me, another]}[assigned]
        experiment.assigned_raters.add(*raters)
        for rater in (me, another):
            expected = open_to_rater(
                open_to_all=open_to_all, any_assigned=bool(raters), assigned_to_rater=rater in raters
            )
            case = (open_to_all, assigned, rater.username)
            assert experiments_open_to_rater(rater).filter(pk=experiment.pk).exists() == expected, case
            assert _found(access_experiment_for_rater, rater, experiment.pk) == expected, case
            state = rater_state(experiment_id=experiment.pk, rater=rater, now=now)
            from_state = open_to_rater(
                open_to_all=state["open_to_all"], any_assigned=state["any_assigned"], assigned_to_rater=state["mine"]
            )
            assert from_state == expected, case
            assert queue._assigned_to_others(experiment_id=experiment.pk, rater=rater) == (not expected), case


@pytest.mark.parametrize("key", [None, "", "abc", "1.5", 10**30, -1])
def test_ids_that_name_nothing_answer_404(key):
    rater = UserFactory(roles=["rater"])
    with pytest.raises(Http404):
        access_experiment_for_rater(rater, key)
    with pytest.raises(Http404):
        access_task_for_rater(rater, key)


def test_the_lookups_read_what_the_orm_reads_and_defer_the_large_columns():
    rater = UserFactory(roles=["rater"])
    experiment = ExperimentFactory(
        status=Experiment.Status.RATING, question="Same <b>thing</b>?", impact={"n": 1}, ground_truth_metrics={"f": 2}
    )
    task = _task_of(experiment)
    read = access_task_for_rater(rater, task.pk)
    assert read == task and read.experiment == experiment
    stored = PairTask.objects.select_related("experiment").get(pk=task.pk)
    for field in PairTask._meta.concrete_fields:
        assert getattr(read, field.attname) == getattr(stored, field.attname), field.name
    assert read.experiment.get_deferred_fields() == {"impact", "ground_truth_metrics"}
    for field in Experiment._meta.concrete_fields:
        assert getattr(read.experiment, field.attname) == getattr(stored.experiment, field.attname), field.name
    alone = access_experiment_for_rater(rater, experiment.pk)
    assert (alone.question, alone.created_at, alone.impact) == (experiment.question, experiment.created_at, {"n": 1})


@pytest.mark.parametrize("roles", [[], ["rater"], ["engineer", "admin"], ["rater", "engineer", "admin"]])
def test_token_and_session_users_come_with_the_roles_their_groups_give(roles):
    user = UserFactory(roles=roles, email="u@example.org")
    _, key = api_token_create(actor=user)
    by_token = api_token_authenticate(key=key).user
    by_session = LockoutModelBackend().get_user(str(user.pk))
    fresh = get_user_model().objects.get(pk=user.pk)
    for read in (by_token, by_session):
        assert read == user and read.email == "u@example.org" and read.date_joined == fresh.date_joined
        assert user_roles(read) == user_roles(fresh) == set(roles)


def test_a_session_naming_no_user_has_none():
    backend = LockoutModelBackend()
    assert backend.get_user("not a number") is None
    assert backend.get_user("987654321") is None
    assert api_token_authenticate(key="rt_nothing") is None
