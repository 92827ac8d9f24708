"""Putting verdicts right: a rater changes a recent verdict; an admin voids one verdict or a
rater's verdicts in a time range. After a void the estimates, budgets, pools, the ledger, the
tasks' counts and the progress row equal a recompute, and the audit log has the change and the void."""

import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count

from raterapp.models import (
    AuditEntry,
    BudgetLedgerEntry,
    BudgetPool,
    ExperimentBudget,
    ExperimentProgress,
    Judgement,
    OutboxMessage,
    PairTask,
    RetractedJudgement,
)
from raterapp.selectors.budgets import budget_ledger_mismatches_get
from raterapp.services.experiments.budgets import budget_update, pool_create
from raterapp.services.judging import (
    JudgementRefused,
    assignment_next,
    judgement_change,
    judgement_submit,
    judgements_void,
)
from raterapp.services.judging.progress import experiment_progress_recount
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = [pytest.mark.usefixtures("media"), pytest.mark.rating_loop]


@pytest.fixture
def experiment(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=2)
    experiment.gold_rate = 0.0
    experiment.save()
    experiment_progress_recount(experiment_id=experiment.pk)
    return experiment


def judge(experiment, rater, verdict="equivalent"):
    task = assignment_next(experiment=experiment, rater=rater)
    return judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())[0]


def state(experiment):
    """What a void must leave as a recompute finds it (each pair: stored, recomputed)."""
    budget = ExperimentBudget.objects.get(experiment=experiment)
    stored_left = ExperimentProgress.objects.get(experiment=experiment).verdicts_left
    per_task = dict(PairTask.objects.filter(experiment=experiment).values_list("pk", "verdicts"))
    counted = dict(
        Judgement.objects.filter(task__experiment=experiment).values_list("task").annotate(n=Count("pk")).order_by()
    )
    return {
        "ledger_mismatches": budget_ledger_mismatches_get(),
        "budget_spent": (budget.spent, Judgement.objects.filter(task__experiment=experiment).count()),
        "progress": (stored_left, experiment_progress_recount(experiment_id=experiment.pk)),
        "tasks": ({k: v for k, v in per_task.items() if v}, counted),
    }


def assert_recomputed(experiment):
    found = state(experiment)
    assert found["ledger_mismatches"] == []
    for key in ("budget_spent", "progress", "tasks"):
        stored, recomputed = found[key]
        assert stored == recomputed, key


# ---------------------------------------------------------------- a rater's change


def test_a_rater_changes_a_recent_verdict_in_place_audited_and_recomputed(experiment, users, clock):
    rater = users["rater"]
    judgement = judge(experiment, rater)
    OutboxMessage.objects.all().delete()
    clock.advance(120)
    changed = judgement_change(judgement_id=judgement.pk, rater=rater, verdict="not_equivalent")
    assert (changed.pk, changed.verdict) == (judgement.pk, "not_equivalent")
    assert Judgement.objects.get(pk=judgement.pk).verdict == "not_equivalent"
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.actor, entry.subject, entry.experiment_id) == (
        "verdict.change",
        rater,
        rater,
        experiment.pk,
    )
    assert (entry.field, entry.old_value, entry.new_value) == (
        f"verdict #{judgement.pk}",
        "equivalent",
        "not_equivalent",
    )
    assert list(OutboxMessage.objects.values_list("kind", "target_id")) == [("estimates_refresh", experiment.pk)]
    assert BudgetLedgerEntry.objects.count() == 1  # still one verdict, spent once
    assert_recomputed(experiment)


def test_a_change_is_refused_after_undo_seconds_and_for_another_raters_verdict(experiment, users, clock, settings):
    rater, other = users["rater"], UserFactory(roles=["rater"])
    judgement = judge(experiment, rater)
    with pytest.raises(JudgementRefused, match="no such verdict of yours"):
        judgement_change(judgement_id=judgement.pk, rater=other, verdict="not_equivalent")
    clock.advance(settings.UNDO_SECONDS + 1)
    with pytest.raises(JudgementRefused, match="changed for 10 minutes only"):
        judgement_change(judgement_id=judgement.pk, rater=rater, verdict="not_equivalent")
    with pytest.raises(ValidationError):
        judgement_change(judgement_id=judgement.pk, rater=rater, verdict="maybe")
    assert Judgement.objects.get(pk=judgement.pk).verdict == "equivalent"
    assert not AuditEntry.objects.exists()


def test_any_of_the_last_undo_seconds_can_be_changed_not_only_the_latest_five(experiment, users):
    rater = users["rater"]
    judgements = [judge(experiment, rater) for _ in range(8)]
    judgement_change(judgement_id=judgements[0].pk, rater=rater, verdict="unsure")
    assert Judgement.objects.get(pk=judgements[0].pk).verdict == "unsure"


# ---------------------------------------------------------------- an admin's void


def test_voiding_a_burst_leaves_the_estimates_budgets_pools_and_ledger_of_a_recompute(experiment, users, clock):
    rater, admin = users["rater"], users["admin"]
    first = pool_create(actor=admin, name="first", max_verdicts=100, reason="r", via="api")
    second = pool_create(actor=admin, name="second", max_verdicts=100, reason="r", via="api")
    budget = ExperimentBudget.objects.get(experiment=experiment)
    budget_update(budget=budget, actor=admin, changes={"pool": first}, reason="r", via="api")
    others = UserFactory.create_batch(2, roles=["rater"])
    for other in others:
        judge(experiment, other)
    before = estimates_refresh(experiment_id=experiment.pk)
    clock.advance(60)
    start = clock.now
    burst = []
    for _ in range(5):
        clock.advance(1)
        burst.append(judge(experiment, rater, verdict="not_equivalent"))
    clock.advance(600)
    judge(experiment, rater)  # after the range: kept
    # The experiment moved pools since: the refund goes to the pool that was charged.
    budget.refresh_from_db()
    budget_update(budget=budget, actor=admin, changes={"pool": second}, reason="r", via="api")
    OutboxMessage.objects.all().delete()

    voided = judgements_void(
        actor=admin, rater=rater, since=start, until=start + timedelta(minutes=10), reason="key burst"
    )

    assert sorted(voided) == sorted(j.pk for j in burst)
    assert not Judgement.objects.filter(pk__in=voided).exists()
    kept = RetractedJudgement.objects.filter(client_id__in=[j.client_id for j in burst])
    assert sorted(kept.values_list("voided_by", flat=True)) == [admin.pk] * 5
    assert (BudgetPool.objects.get(pk=first.pk).spent, BudgetPool.objects.get(pk=second.pk).spent) == (3, 0)
    refunds = BudgetLedgerEntry.objects.filter(kind="refund")
    assert sorted(refunds.values_list("pool", "amount")) == [(first.pk, -1)] * 5
    assert_recomputed(experiment)
    # The pairs want a verdict again (replication 2): another rater is offered one of them.
    tasks = {j.task_id for j in burst}
    assert all(t.verdicts < t.wanted for t in PairTask.objects.filter(pk__in=tasks))
    assert set(OutboxMessage.objects.values_list("kind", "target_id")) == {("estimates_refresh", experiment.pk)}
    # The estimates equal those of the verdicts that were never voided (the rater's later one aside).
    Judgement.objects.filter(rater=rater).exclude(pk__in=voided).delete()  # as if never given
    after = estimates_refresh(experiment_id=experiment.pk)
    assert (after.judgements, after.estimates) == (before.judgements, before.estimates)
    entry = AuditEntry.objects.get(action="verdict.void")
    assert (entry.actor, entry.subject, entry.experiment_id, entry.new_value, entry.reason) == (
        admin,
        rater,
        experiment.pk,
        "5 voided",
        "key burst",
    )


def test_one_verdict_voided_goes_back_to_the_queue(experiment, users):
    rater, admin, other = users["rater"], users["admin"], UserFactory(roles=["rater"])
    experiment.replication = 1
    PairTask.objects.filter(experiment=experiment).update(wanted=1)
    experiment_progress_recount(experiment_id=experiment.pk)
    judgement = judge(experiment, rater)
    assert judgements_void(actor=admin, judgement_id=judgement.pk, reason="wrong") == [judgement.pk]
    assert PairTask.objects.get(pk=judgement.task_id).verdicts == 0
    offered = assignment_next(experiment=experiment, rater=other)
    assert offered.pk == judgement.task_id  # the first in the queue again
    assert_recomputed(experiment)


@pytest.mark.parametrize("role", ["engineer", "rater"])
def test_only_admins_void(experiment, users, role):
    judgement = judge(experiment, users["rater"])
    with pytest.raises(PermissionDenied):
        judgements_void(actor=users[role], judgement_id=judgement.pk, reason="no")
    assert Judgement.objects.filter(pk=judgement.pk).exists() and not AuditEntry.objects.exists()


def test_a_void_without_a_reason_or_matching_nothing_writes_nothing(experiment, users, clock):
    rater, admin = users["rater"], users["admin"]
    judgement = judge(experiment, rater)
    with pytest.raises(ValidationError, match="Say why"):
        judgements_void(actor=admin, judgement_id=judgement.pk, reason="  ")
    later = clock.now + timedelta(minutes=1)
    with pytest.raises(ValidationError, match="No verdict matches"):
        judgements_void(actor=admin, rater=rater, since=later, until=later + timedelta(minutes=10), reason="r")
    with pytest.raises(ValidationError, match="must come after"):
        judgements_void(actor=admin, rater=rater, since=later, until=later, reason="r")
    assert Judgement.objects.filter(pk=judgement.pk).exists()
    assert not AuditEntry.objects.exists() and not RetractedJudgement.objects.exists()
    assert_recomputed(experiment)


def test_an_undo_is_audited_as_the_first_half_of_a_change(experiment, users):
    from raterapp.services.judging import judgement_undo

    rater = users["rater"]
    judgement = judge(experiment, rater, verdict="not_equivalent")
    judgement_undo(judgement_id=judgement.pk, rater=rater)
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.actor, entry.subject, entry.experiment_id, entry.field, entry.old_value) == (
        "verdict.change",
        rater,
        rater,
        experiment.pk,
        f"verdict #{judgement.pk}",
        "not_equivalent",
    )
    assert_recomputed(experiment)


def test_a_change_after_the_snapshot_makes_the_estimates_stale(experiment, users, clock, settings):
    from raterapp.selectors.staleness import estimates_staleness_get

    rater = users["rater"]
    judgement = judge(experiment, rater)
    estimates_refresh(experiment_id=experiment.pk)
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    assert estimates_staleness_get(experiment=experiment) is None
    clock.advance(1)
    judgement_change(judgement_id=judgement.pk, rater=rater, verdict="not_equivalent")
    changed_at = clock.now
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    assert estimates_staleness_get(experiment=experiment)["since"] == changed_at.isoformat()
    estimates_refresh(experiment_id=experiment.pk)
    assert estimates_staleness_get(experiment=experiment) is None


def test_a_late_retry_of_a_voided_verdict_is_told_it_was_voided_and_records_nothing(experiment, users):
    rater = users["rater"]
    task = assignment_next(experiment=experiment, rater=rater)
    client_id = uuid.uuid4()
    judgement = judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=client_id)[0]
    judgements_void(actor=users["admin"], judgement_id=judgement.pk, reason="wrong")
    with pytest.raises(JudgementRefused, match="voided by an admin"):
        judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=client_id)
    assert not Judgement.objects.exists()
    assert_recomputed(experiment)
