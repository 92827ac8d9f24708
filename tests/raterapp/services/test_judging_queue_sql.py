"""The rater's queue exists twice: ``selectors.judging.task_queue_for_rater`` (the ORM, every
database, and the rate home's "is there anything left") and ``services.judging.store.queue_next``
(written out for the loop on PostgreSQL). Both must offer the same tasks in the same order."""

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from raterapp.models import Judgement, Lease, PairReport, PairTask
from raterapp.selectors.judging import task_queue_for_rater
from raterapp.services.judging.store import queue_next
from tests.raterapp.factories import make_raters
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="queue_next is PostgreSQL's")


def _walk(experiment, rater, now) -> list[int]:
    """Every task queue_next offers, following its ranks."""
    offered, after = [], None
    with transaction.atomic():
        while (task := queue_next(experiment_id=experiment.pk, rater=rater, now=now, after=after)) is not None:
            offered.append(task.pk)
            after = task.rank
    return offered


def test_the_written_out_queue_is_the_orm_queue_in_every_state_a_task_can_be_in(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=2, n_draws=200)
    rater, other, third = make_raters(3)
    now = timezone.now()
    tasks = list(PairTask.objects.filter(experiment=experiment).order_by("rank"))
    assert len(tasks) >= 12
    judged, reported, mine, full, half, expired, retired, done = tasks[:8]
    Judgement.objects.create(task=judged, rater=rater, verdict="equivalent", client_id="00000000-0000-0000-0000-000000000001")
    PairReport.objects.create(task=reported, rater=rater, reason=PairReport.Reason.choices[0][0])
    Lease.objects.create(task=mine, rater=rater, expires_at=now + timedelta(minutes=5))
    for someone in (other, third):  # both slots of replication 2 held by others
        Lease.objects.create(task=full, rater=someone, expires_at=now + timedelta(minutes=5))
    Lease.objects.create(task=half, rater=other, expires_at=now + timedelta(minutes=5))  # one slot left
    Lease.objects.create(task=expired, rater=other, expires_at=now - timedelta(minutes=1))
    PairTask.objects.filter(pk=retired.pk).update(retired_at=now)
    PairTask.objects.filter(pk=done.pk).update(verdicts=2)
    gold = tasks[8]
    PairTask.objects.filter(pk=gold.pk).update(gold_answer="equivalent")

    expected = list(task_queue_for_rater(experiment=experiment, rater=rater, now=now).values_list("pk", flat=True))
    excluded = {judged.pk, reported.pk, mine.pk, full.pk, retired.pk, done.pk, gold.pk}
    assert expected == [t.pk for t in tasks if t.pk not in excluded]
    assert _walk(experiment, rater, now) == expected
    # Another rater sees the tasks this one judged, reported or holds, and not those it fills.
    assert _walk(experiment, other, now) == list(
        task_queue_for_rater(experiment=experiment, rater=other, now=now).values_list("pk", flat=True)
    )
