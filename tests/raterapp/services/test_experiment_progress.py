"""The row that counts the verdicts an experiment's sampled pairs still want moves with every
verdict, undo, replication change and added task, and always equals the sum over the tasks."""

import uuid

import pytest
from django.db.models import F, Sum

from raterapp.models import ExperimentBudget, ExperimentProgress, Item, Lease, PairTask
from raterapp.selectors.judging import experiment_verdicts_left, rater_progress_get
from raterapp.services.experiments.budgets import budget_update
from raterapp.services.judging import assignment_next, judgement_submit, judgement_undo
from raterapp.services.judging.gold import gold_pair_create, task_retire
from raterapp.services.judging.progress import experiment_progress_recount
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.usefixtures("media")


def summed(experiment) -> int:
    tasks = PairTask.objects.filter(experiment=experiment, gold_answer="", retired_at__isnull=True)
    return tasks.aggregate(left=Sum(F("wanted") - F("verdicts")))["left"]


def row(experiment) -> int:
    return ExperimentProgress.objects.get(experiment=experiment).verdicts_left


@pytest.fixture
def experiment(users):
    experiment = experiment_prepared(owner=users["engineer"])
    experiment.gold_rate = 0.0
    experiment.save()
    return experiment


def test_without_the_row_the_tasks_are_summed_and_a_recount_writes_it(experiment):
    assert not ExperimentProgress.objects.filter(experiment=experiment).exists()
    assert experiment_verdicts_left(experiment_id=experiment.pk) == summed(experiment) > 0
    assert experiment_progress_recount(experiment_id=experiment.pk) == summed(experiment)
    assert row(experiment) == summed(experiment)


def test_verdicts_and_undos_move_the_row_with_the_tasks(experiment, users):
    rater = users["rater"]
    total = experiment_progress_recount(experiment_id=experiment.pk)
    judgements = []
    for _ in range(3):
        task = assignment_next(experiment=experiment, rater=rater)
        judgements.append(
            judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())[0]
        )
    assert row(experiment) == summed(experiment) == total - 3
    assert rater_progress_get(experiment=experiment, rater=rater)["remaining"] == total - 3
    task = judgement_undo(judgement_id=judgements[-1].pk, rater=rater)
    assert row(experiment) == summed(experiment) == total - 2
    judgement_submit(task=task, rater=rater, verdict="not_equivalent", client_id=uuid.uuid4())
    assert row(experiment) == summed(experiment) == total - 3


def test_a_refused_verdict_and_a_gold_verdict_leave_the_row_alone(experiment, users):
    rater, admin = users["rater"], users["admin"]
    experiment_progress_recount(experiment_id=experiment.pk)
    ExperimentBudget.objects.update_or_create(experiment=experiment, defaults={"max_verdicts": 1})
    task = assignment_next(experiment=experiment, rater=rater)
    ExperimentBudget.objects.filter(experiment=experiment).update(spent=1)  # spent meanwhile
    before = row(experiment)
    with pytest.raises(Exception, match="budget"):
        judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    assert row(experiment) == summed(experiment) == before
    ExperimentBudget.objects.filter(experiment=experiment).update(max_verdicts=None)
    a, b = Item.objects.filter(experiment=experiment).order_by("pk")[:2]
    gold = gold_pair_create(experiment=experiment, actor=admin, item_a=a.item_id, item_b=b.item_id, answer="equivalent")
    Lease.objects.create(task=gold, rater=rater, expires_at=task.lease.expires_at)  # as a gold lease is
    before = summed(experiment)
    experiment_progress_recount(experiment_id=experiment.pk)
    judgement_submit(task=gold, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    assert row(experiment) == summed(experiment) == before


def test_a_replication_change_recounts(experiment, users):
    experiment_progress_recount(experiment_id=experiment.pk)
    n = PairTask.objects.filter(experiment=experiment, gold_answer="").count()
    budget, _ = ExperimentBudget.objects.get_or_create(experiment=experiment)
    budget_update(budget=budget, actor=users["admin"], changes={"replication": 3}, reason="more", via="api")
    assert row(experiment) == summed(experiment) == 3 * n


def test_an_excluded_pair_wants_no_more_verdicts(experiment, users):
    total = experiment_progress_recount(experiment_id=experiment.pk)
    task = PairTask.objects.filter(experiment=experiment, gold_answer="").order_by("rank").first()
    task_retire(task=task, actor=users["admin"])
    assert row(experiment) == summed(experiment) == total - (task.wanted - task.verdicts)
    assert experiment_verdicts_left(experiment_id=experiment.pk) == total - (task.wanted - task.verdicts)
