"""The ledger of spends and refunds: written with every charge and refund, append-only, a
refund goes to the pool its spend charged, and after any mix of verdicts, undos, refusals
and pool moves the budgets' and pools' totals equal the ledger's sums."""

import random
import uuid

import pytest
from django.db import DatabaseError, connection, transaction

from raterapp.models import AppendOnly, BudgetLedgerEntry, BudgetPool, ExperimentBudget, Judgement
from raterapp.selectors.budgets import budget_ledger_mismatches_get, budget_ledger_totals_get
from raterapp.services.experiments.budgets import budget_update, pool_create, pool_update
from raterapp.services.judging import JudgementRefused, QueueClosed, assignment_next, judgement_submit, judgement_undo
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = [pytest.mark.usefixtures("media"), pytest.mark.rating_loop]


def prepared(users, name):
    experiment = experiment_prepared(owner=users["engineer"], replication=3, name=name)
    experiment.gold_rate = 0.0
    experiment.save()
    return experiment


def budget_of(experiment) -> ExperimentBudget:
    return ExperimentBudget.objects.get(experiment=experiment)


def move(experiment, pool, admin):
    budget_update(budget=budget_of(experiment), actor=admin, changes={"pool": pool}, reason="move", via="api")


def judge(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    return judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())[0]


def spent(pool) -> int:
    pool.refresh_from_db()
    return pool.spent


def test_a_verdict_and_its_undo_are_written_to_the_ledger_with_the_pool_charged(users):
    experiment = prepared(users, "e")
    pool = pool_create(actor=users["admin"], name="A", max_verdicts=10, reason="r", via="api")
    budget_update(
        budget=budget_of(experiment),
        actor=users["admin"],
        changes={"pool": pool, "cost_per_verdict": "0.25"},
        reason="r",
        via="api",
    )
    rater = users["rater"]
    judgement = judge(experiment, rater)
    judgement_undo(judgement_id=judgement.pk, rater=rater)
    rows = list(
        BudgetLedgerEntry.objects.values_list("kind", "experiment", "pool", "rater", "verdict", "amount", "cost")
    )
    assert [row[:6] for row in rows] == [
        ("spend", experiment.pk, pool.pk, rater.pk, judgement.client_id, 1),
        ("refund", experiment.pk, pool.pk, rater.pk, judgement.client_id, -1),
    ]
    assert [str(row[6]) for row in rows] == ["0.2500", "-0.2500"]


def test_an_undo_after_the_experiment_moved_pools_refunds_the_pool_that_was_charged(users):
    experiment, neighbour = prepared(users, "moved"), prepared(users, "neighbour")
    first = pool_create(actor=users["admin"], name="first", max_verdicts=10, reason="r", via="api")
    second = pool_create(actor=users["admin"], name="second", max_verdicts=10, reason="r", via="api")
    move(experiment, first, users["admin"])
    move(neighbour, second, users["admin"])
    rater, other = UserFactory.create_batch(2, roles=["rater"])
    judgement = judge(experiment, rater)
    judge(neighbour, other)
    assert (spent(first), spent(second)) == (1, 1)
    move(experiment, second, users["admin"])
    judgement_undo(judgement_id=judgement.pk, rater=rater)
    assert (spent(first), spent(second)) == (0, 1)
    assert budget_of(experiment).spent == 0
    assert budget_ledger_mismatches_get() == []


def test_a_refused_verdict_writes_nothing_to_the_ledger(users):
    experiment = prepared(users, "e")
    first, second = UserFactory.create_batch(2, roles=["rater"])
    task = assignment_next(experiment=experiment, rater=first)
    assignment_next(experiment=experiment, rater=second)
    budget_update(
        budget=budget_of(experiment), actor=users["admin"], changes={"max_verdicts": 0}, reason="r", via="api"
    )
    with pytest.raises(JudgementRefused, match="budget is spent"):
        judgement_submit(task=task, rater=first, verdict="equivalent", client_id=uuid.uuid4())
    assert not BudgetLedgerEntry.objects.exists()


def test_ledger_entries_are_never_updated_nor_deleted(users):
    experiment = prepared(users, "e")
    judge(experiment, users["rater"])
    entry = BudgetLedgerEntry.objects.get()
    entry.amount = 5
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    with pytest.raises(AppendOnly):
        BudgetLedgerEntry.objects.filter(pk=entry.pk).update(amount=5)
    with pytest.raises(AppendOnly):
        BudgetLedgerEntry.objects.all().delete()
    if connection.vendor == "postgresql":  # the database refuses too, whoever asks
        for statement in ("UPDATE raterapp_budgetledgerentry SET amount = 5", "DELETE FROM raterapp_budgetledgerentry"):
            with pytest.raises(DatabaseError, match="never updated nor deleted"), transaction.atomic():
                connection.cursor().execute(statement)
    assert list(BudgetLedgerEntry.objects.values_list("amount", flat=True)) == [1]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_a_random_mix_of_spends_undos_refusals_and_pool_moves_the_totals_equal_the_ledger(users, seed):
    rng = random.Random(seed)
    admin = users["admin"]
    experiments = [prepared(users, f"e{k}") for k in range(2)]
    pools = [
        pool_create(actor=admin, name=f"p{k}", max_verdicts=rng.randint(4, 12), reason="r", via="api") for k in range(3)
    ]
    raters = UserFactory.create_batch(8, roles=["rater"])
    given = []  # (judgement id, rater) that may be undone
    counts = {"spend": 0, "refund": 0, "refused": 0, "move": 0}
    for _ in range(90):
        action = rng.choices(["judge", "undo", "move", "limit"], weights=[6, 2, 1, 1])[0]
        experiment = rng.choice(experiments)
        if action == "judge":
            rater = rng.choice(raters)
            try:
                given.append((judge(experiment, rater).pk, rater))
                counts["spend"] += 1
            except (QueueClosed, JudgementRefused):
                counts["refused"] += 1
        elif action == "undo" and given:
            judgement_id, rater = given.pop(rng.randrange(len(given)))
            try:
                task = judgement_undo(judgement_id=judgement_id, rater=rater)
                counts["refund"] += 1
            except JudgementRefused:
                continue  # an older verdict than the rater's latest five
            # The pair leased back is answered afresh, or left to expire.
            if rng.random() < 0.5:
                try:
                    answer = judgement_submit(task=task, rater=rater, verdict="not_equivalent", client_id=uuid.uuid4())
                    given.append((answer[0].pk, rater))
                    counts["spend"] += 1
                except JudgementRefused:
                    counts["refused"] += 1
        elif action == "move":
            move(experiment, rng.choice([*pools, None]), admin)
            counts["move"] += 1
        elif action == "limit":
            pool = rng.choice(pools)
            pool_update(pool=pool, actor=admin, changes={"max_verdicts": rng.randint(0, 15)}, reason="r", via="api")
        assert budget_ledger_mismatches_get() == []

    assert min(counts.values()) > 0, counts  # the mix really had every kind of step
    totals = budget_ledger_totals_get()
    for experiment in experiments:
        assert totals["budgets"][experiment.pk] == budget_of(experiment).spent
        assert budget_of(experiment).spent == Judgement.objects.filter(task__experiment=experiment).count()
    for pool in BudgetPool.objects.all():
        assert totals["pools"].get(pool.pk, 0) == pool.spent
    kinds = BudgetLedgerEntry.objects.values_list("kind", flat=True)
    assert (list(kinds).count("spend"), list(kinds).count("refund")) == (counts["spend"], counts["refund"])


def test_a_mismatch_between_a_total_and_the_ledger_is_reported(users):
    experiment = prepared(users, "e")
    judge(experiment, users["rater"])
    ExperimentBudget.objects.filter(experiment=experiment).update(spent=3)
    assert budget_ledger_mismatches_get() == [{"kind": "budgets", "id": experiment.pk, "spent": 3, "ledger": 1}]
