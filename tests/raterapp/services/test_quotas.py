"""Quotas at submit (judging/quotas.py): a verdict past the rater's daily or total quota is
refused when it is stored, however its lease was got; a refused verdict changes nothing (no
verdict, no budget unit, no ledger entry, no other rater's lease withdrawn); the rater's live
leases on other pairs keep their units; an undo gives the unit back."""

import uuid

import pytest
from django.conf import settings

from raterapp.models import BudgetLedgerEntry, ExperimentBudget, Judgement, Lease, PairTask, RaterProfile
from raterapp.services.judging import JudgementRefused, assignment_next, judgement_submit, judgement_undo
from raterapp.services.judging.quotas import QuotaSpent
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = [pytest.mark.usefixtures("media"), pytest.mark.rating_loop]


@pytest.fixture
def experiment(users):
    experiment = experiment_prepared(owner=users["engineer"])
    experiment.gold_rate = 0.0
    experiment.save()
    return experiment


def with_quota(daily=None, total=None):
    rater = UserFactory(roles=["rater"])
    RaterProfile.objects.create(user=rater, daily_quota=daily, total_quota=total)
    return rater


def submit(task, rater):
    return judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())


def state(experiment):
    return (
        sorted(PairTask.objects.filter(experiment=experiment).values_list("pk", "verdicts")),
        sorted(Judgement.objects.values_list("task", "rater")),
        sorted(Lease.objects.values_list("task", "rater", "expires_at")),
        ExperimentBudget.objects.get(experiment=experiment).spent,
        BudgetLedgerEntry.objects.count(),
    )


def expired_then_passed_on(experiment, rater, clock, n):
    """``n`` (at most two) pairs the rater leased and let expire, each leased to another rater since."""
    tasks = []
    for _ in range(n):
        tasks.append(assignment_next(experiment=experiment, rater=rater, holding=[t.pk for t in tasks]))
    clock.advance(settings.LEASE_SECONDS + 1)
    for task in tasks:
        assert assignment_next(experiment=experiment, rater=UserFactory(roles=["rater"])).pk == task.pk
    return tasks


@pytest.mark.parametrize(("daily", "total", "message"), [(1, None, "daily quota"), (None, 1, "your quota")])
def test_a_late_verdict_past_the_quota_is_refused_and_withdraws_no_lease(experiment, clock, daily, total, message):
    rater = with_quota()
    first, second = expired_then_passed_on(experiment, rater, clock, 2)
    RaterProfile.objects.filter(user=rater).update(daily_quota=daily, total_quota=total)
    assert submit(first, rater)[1]  # the one the quota allows: its pair's other lease goes
    before = state(experiment)
    with pytest.raises(QuotaSpent, match=message):
        submit(second, rater)
    assert state(experiment) == before
    assert Lease.objects.filter(task=second, expires_at__gt=clock.now).count() == 1  # still promised


def test_live_leases_on_other_pairs_keep_their_units_against_a_late_verdict(experiment, clock):
    rater = with_quota(daily=2)
    (late,) = expired_then_passed_on(experiment, rater, clock, 1)
    held = [assignment_next(experiment=experiment, rater=rater)]
    held.append(assignment_next(experiment=experiment, rater=rater, holding=[held[0].pk]))
    with pytest.raises(QuotaSpent):
        submit(late, rater)
    assert all(submit(task, rater)[1] for task in held)  # both promised units were there
    assert Judgement.objects.filter(rater=rater).count() == 2


def test_a_quota_lowered_under_a_held_pair_refuses_its_verdict(experiment, users):
    rater = with_quota(daily=5)
    task = assignment_next(experiment=experiment, rater=rater)
    assert submit(task, rater)[1]
    task = assignment_next(experiment=experiment, rater=rater)
    RaterProfile.objects.filter(user=rater).update(daily_quota=1)
    with pytest.raises(JudgementRefused, match="daily quota"):
        submit(task, rater)
    assert Judgement.objects.filter(rater=rater).count() == 1


def test_an_undo_gives_the_unit_back(experiment):
    rater = with_quota(total=1)
    judgement, _ = submit(assignment_next(experiment=experiment, rater=rater), rater)
    task = judgement_undo(judgement_id=judgement.pk, rater=rater)
    assert submit(task, rater)[1]
    assert Judgement.objects.filter(rater=rater).count() == 1


def test_a_late_verdict_within_the_quota_on_a_pair_with_a_free_slot_withdraws_nothing(users, clock):
    experiment = experiment_prepared(owner=users["engineer"], replication=3)
    rater = with_quota(daily=3)
    task = assignment_next(experiment=experiment, rater=rater)
    clock.advance(settings.LEASE_SECONDS + 1)
    others = UserFactory.create_batch(2, roles=["rater"])
    for other in others:
        assert assignment_next(experiment=experiment, rater=other).pk == task.pk
    assert submit(task, rater)[1]
    assert sorted(Lease.objects.filter(task=task).values_list("rater", flat=True)) == sorted(o.pk for o in others)
