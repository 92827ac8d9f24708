"""Each rater's agreement, computed by the worker and stored (issue 36): it is what
metrics_core.rater_agreement gives on the same verdicts, in one experiment and across all of
them; a snapshot has it recomputed (once per burst); the raters' lists read it, and only a window
(``since``) or one rater's row read verdicts for it."""

import uuid
from datetime import timedelta
from unittest import mock

import pytest
from django.db.models import F
from django.utils import timezone

from metrics_core import rater_agreement
from metrics_core.results import json_number
from raterapp.models import Experiment, Judgement, PairTask, RaterAgreement
from raterapp.selectors.raters import rater_agreement_computed_get, rater_stats_list
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.refresh.rater_agreement import rater_agreement_refresh
from raterapp.services.scheduling import RATER_AGREEMENT_ALL_PENDING, debounce_cache
from raterapp.tasks import rater_agreement_all_refresh_task, rater_agreement_refresh_task
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.usefixtures("media")

E, N, U = "equivalent", "not_equivalent", "unsure"


@pytest.fixture(autouse=True)
def no_pending_keys(db):
    """The debounce keys outlive test transactions (and other tests leave the one of all experiments)."""
    debounce_cache().delete(RATER_AGREEMENT_ALL_PENDING)
    yield
    debounce_cache().delete(RATER_AGREEMENT_ALL_PENDING)
    for experiment_id in Experiment.objects.values_list("pk", flat=True):
        for key in ("rater-agreement", "estimates", "derived", "rater-aware"):
            debounce_cache().delete(f"{key}-pending:{experiment_id}")


@pytest.fixture
def raters():
    return [UserFactory(username=name, roles=["rater"]) for name in ("ann", "bob", "cy")]


@pytest.fixture
def experiments(users):
    made = [experiment_prepared(owner=users["engineer"], replication=3, name=name) for name in ("one", "two")]
    Experiment.objects.filter(pk__in=[e.pk for e in made]).update(gold_rate=0.0)
    return made


def tasks_of(experiment):
    return list(PairTask.objects.filter(experiment=experiment, gold_answer="").order_by("rank"))


def say(task, rater, verdict):
    """A stored verdict (``verdicts`` of the task kept in step, as the services do)."""
    Judgement.objects.create(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
    PairTask.objects.filter(pk=task.pk).update(verdicts=F("verdicts") + 1)


def said(rows):
    for task, rater, verdict in rows:
        say(task, rater, verdict)
    return rows


def expected(rows) -> dict[int, dict]:
    """metrics_core's rows on the replicated verdicts given, as the stats rows spell them."""
    return {
        int(row.rater): {
            "replicated_verdicts": row.replicated_verdicts,
            "mean_kappa": json_number(row.mean_kappa),
            "kappa_raters": row.kappa_raters,
            "majority_verdicts": row.majority_units,
            "majority_share": json_number(row.majority_share),
        }
        for row in rater_agreement(
            unit=[t.pk for t, _, _ in rows], verdict=[v for _, _, v in rows], rater=[r.pk for _, r, _ in rows]
        )
    }


def stored(experiment) -> dict[int, dict]:
    return {int(rater): row for rater, row in RaterAgreement.objects.get(experiment=experiment).raters.items()}


def agreement_columns(rows: list[dict]) -> dict[int, dict]:
    keys = ("replicated_verdicts", "mean_kappa", "kappa_raters", "majority_verdicts", "majority_share")
    return {row["rater"]: {key: row[key] for key in keys} for row in rows if row["replicated_verdicts"]}


def test_the_stored_agreement_is_what_metrics_core_gives_in_one_experiment_and_across_all(experiments, raters):
    ann, bob, cy = raters
    one, two = (tasks_of(e) for e in experiments)
    in_one = said([
        (one[0], ann, E), (one[0], bob, E), (one[0], cy, N),
        (one[1], ann, N), (one[1], bob, N), (one[1], cy, N),
        (one[2], ann, E), (one[2], bob, N),
    ])  # fmt: skip
    in_two = said([(two[0], ann, N), (two[0], cy, N), (two[1], bob, E), (two[1], cy, U), (two[2], ann, E), (two[2], bob, E)])
    say(one[3], ann, U)  # judged once: not replicated
    gold = PairTask.objects.filter(pk=one[4].pk)
    gold.update(gold_answer=E)
    say(one[4], ann, N), say(one[4], bob, E)  # gold questions count in no agreement

    first = rater_agreement_refresh(experiment_id=experiments[0].pk)
    everywhere = rater_agreement_refresh(experiment_id=None)

    assert stored(experiments[0]) == expected(in_one) and len(expected(in_one)) == 3
    assert stored(None) == expected(in_one + in_two) != expected(in_one)
    assert (first.judgements, everywhere.judgements) == (8, 14)
    assert RaterAgreement.objects.filter(experiment=experiments[1]).exists() is False  # not asked for yet
    # The lists read what is stored: the experiment's raters and every rater.
    assert agreement_columns(rater_stats_list(experiment=experiments[0])) == expected(in_one)
    assert agreement_columns(rater_stats_list()) == expected(in_one + in_two)
    assert rater_agreement_computed_get() == {"computed_at": everywhere.computed_at, "judgements": 14}


def test_before_the_first_computation_the_lists_have_no_agreement_and_say_so(experiments, raters):
    ann, bob, _ = raters
    tasks = tasks_of(experiments[0])
    said([(tasks[0], ann, E), (tasks[0], bob, N)])
    assert rater_agreement_computed_get() is None
    assert rater_agreement_computed_get(experiment=experiments[0]) is None
    row = {r["username"]: r for r in rater_stats_list()}["ann"]
    assert (row["replicated_verdicts"], row["mean_kappa"], row["majority_share"]) == (0, None, None)


def test_a_window_and_one_raters_row_read_the_verdicts_not_the_stored_agreement(experiments, raters):
    ann, bob, cy = raters
    tasks = tasks_of(experiments[0])
    said([(tasks[0], ann, E), (tasks[0], bob, E), (tasks[1], ann, N), (tasks[1], bob, E)])
    rater_agreement_refresh(experiment_id=None)
    later = said([(tasks[2], ann, E), (tasks[2], cy, N), (tasks[3], ann, N), (tasks[3], cy, N)])
    moment = timezone.now() - timedelta(seconds=1)
    Judgement.objects.filter(task__in=[tasks[2], tasks[3]]).update(created_at=moment + timedelta(seconds=1))
    Judgement.objects.filter(task__in=[tasks[0], tasks[1]]).update(created_at=moment - timedelta(days=1))

    everyone = {row["username"]: row for row in rater_stats_list()}
    assert everyone["cy"]["replicated_verdicts"] == 0  # the stored agreement predates cy's verdicts
    window = agreement_columns(rater_stats_list(since=moment))
    assert window == expected(later)
    (cy_row,) = rater_stats_list(raters=[cy.pk])
    assert agreement_columns([cy_row]) == {cy.pk: expected(later)[cy.pk]}


def test_a_computation_older_than_the_stored_one_leaves_it(experiments, raters):
    ann, bob, _ = raters
    tasks = tasks_of(experiments[0])
    said([(tasks[0], ann, E), (tasks[0], bob, N)])
    newer = rater_agreement_refresh(experiment_id=experiments[0].pk)
    RaterAgreement.objects.filter(pk=newer.pk).update(computed_at=newer.computed_at + timedelta(hours=1))
    say(tasks[1], ann, E), say(tasks[1], bob, E)
    rater_agreement_refresh(experiment_id=experiments[0].pk)  # read the verdicts before the stored one did
    kept = RaterAgreement.objects.get(experiment=experiments[0])
    assert (kept.judgements, kept.computed_at) == (2, newer.computed_at + timedelta(hours=1))
    assert RaterAgreement.objects.count() == 1


def test_a_burst_of_snapshots_schedules_one_computation_per_scope(experiments, settings, django_capture_on_commit_callbacks):
    with (
        mock.patch.object(rater_agreement_refresh_task, "apply_async") as one,
        mock.patch.object(rater_agreement_all_refresh_task, "apply_async") as every,
    ):
        for experiment in experiments + experiments:
            with django_capture_on_commit_callbacks(execute=True):
                estimates_refresh(experiment_id=experiment.pk)
    countdown = settings.RATER_AGREEMENT_DEBOUNCE_SECONDS
    assert one.call_args_list == [mock.call(args=[experiment.pk], countdown=countdown) for experiment in experiments]
    assert every.call_count == 1 and every.call_args.kwargs["args"] == []


def test_after_a_new_snapshot_the_worker_recomputes_it(experiments, raters, settings, django_capture_on_commit_callbacks):
    """Celery run eagerly: the snapshot's derived step runs the agreement of the experiment and of all."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.DERIVED_BOOTSTRAP_REPLICATES = settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 10
    experiment = experiments[0]
    ann, bob, cy = raters
    for rater in (ann, bob):
        for _ in range(3):
            judgement_submit(task=assignment_next(experiment=experiment, rater=rater), rater=rater, verdict=E, client_id=uuid.uuid4())
    with django_capture_on_commit_callbacks(execute=True):
        estimates_refresh(experiment_id=experiment.pk)
    first = RaterAgreement.objects.get(experiment=experiment)
    assert first.judgements == 6 and stored(experiment)[ann.pk]["replicated_verdicts"] == 3
    assert stored(None) == stored(experiment)

    for _ in range(3):
        judgement_submit(task=assignment_next(experiment=experiment, rater=cy), rater=cy, verdict=N, client_id=uuid.uuid4())
    with django_capture_on_commit_callbacks(execute=True):
        estimates_refresh(experiment_id=experiment.pk)
    again = RaterAgreement.objects.get(experiment=experiment)
    assert again.pk == first.pk and again.judgements == 9 and again.computed_at > first.computed_at
    rows = list(Judgement.objects.filter(task__experiment=experiment).values_list("task", "rater", "verdict"))
    by_pk = {"task": {t.pk: t for t in tasks_of(experiment)}, "rater": {r.pk: r for r in raters}}
    assert stored(experiment) == expected([(by_pk["task"][t], by_pk["rater"][r], v) for t, r, v in rows])
    assert stored(None) == stored(experiment)
