"""The rater's loop beyond one verdict: preloading, renewal, undo, broken-pair reports, gold questions, quotas."""

import uuid
from datetime import timedelta

import numpy as np
import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from raterapp.models import Judgement, Lease, PairReport, PairTask, RaterProfile, RetractedJudgement
from raterapp.selectors.judging import rater_progress_get
from raterapp.selectors.rater_quality import gold_accuracy_list, gold_pairs_list
from raterapp.selectors.samples import judged_sample_get, judgements_rows
from raterapp.services.judging import (
    JudgementRefused,
    QueueClosed,
    assignment_next,
    judgement_submit,
    judgement_undo,
    leases_renew,
    pair_report_create,
)
from raterapp.services.judging.gold import experiment_gold_rate_set, gold_pair_create
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.judging import state
from tests.raterapp.prepared import experiment_prepared

pytestmark = [pytest.mark.usefixtures("media"), pytest.mark.rating_loop]


def submit(task, rater, verdict="equivalent", client_id=None):
    return judgement_submit(task=task, rater=rater, verdict=verdict, client_id=client_id or uuid.uuid4())


@pytest.fixture
def experiment(users):
    experiment = experiment_prepared(owner=users["engineer"])
    experiment.gold_rate = 0.0
    experiment.save()
    return experiment


@pytest.fixture
def rater(users):
    return users["rater"]


# ---------------------------------------------------------------- preloading and renewal


def test_holding_the_current_pair_leases_a_second_one_for_preloading(experiment, rater):
    current = assignment_next(experiment=experiment, rater=rater)
    preloaded = assignment_next(experiment=experiment, rater=rater, holding=[current.pk])
    assert preloaded.pk != current.pk
    assert set(Lease.objects.filter(rater=rater).values_list("task", flat=True)) == {current.pk, preloaded.pk}


def test_a_reload_finds_the_held_pairs_again_oldest_first(experiment, rater):
    current = assignment_next(experiment=experiment, rater=rater)
    preloaded = assignment_next(experiment=experiment, rater=rater, holding=[current.pk])
    assert assignment_next(experiment=experiment, rater=rater).pk == current.pk
    assert assignment_next(experiment=experiment, rater=rater, holding=[current.pk]).pk == preloaded.pk
    assert Lease.objects.filter(rater=rater).count() == 2


def test_a_third_pair_is_refused_and_nothing_changes(experiment, rater):
    current = assignment_next(experiment=experiment, rater=rater)
    preloaded = assignment_next(experiment=experiment, rater=rater, holding=[current.pk])
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="already hold 2"):
        assignment_next(experiment=experiment, rater=rater, holding=[current.pk, preloaded.pk])
    assert state(experiment) == before


def test_renewal_extends_live_leases(experiment, rater, clock):
    task = assignment_next(experiment=experiment, rater=rater)
    clock.advance(settings.LEASE_SECONDS - 5)
    renewed, lost = leases_renew(rater=rater, task_ids=[task.pk])
    assert (lost, [lease.task_id for lease in renewed]) == ([], [task.pk])
    assert Lease.objects.get().expires_at == clock.now + timedelta(seconds=settings.LEASE_SECONDS)


def test_renewal_of_an_expired_lease_keeps_it_while_nobody_took_the_slot(experiment, rater, clock):
    task = assignment_next(experiment=experiment, rater=rater)
    clock.advance(settings.LEASE_SECONDS + 30)
    renewed, lost = leases_renew(rater=rater, task_ids=[task.pk])
    assert (lost, len(renewed)) == ([], 1)


def test_renewal_reports_a_lease_lost_to_another_rater_and_unknown_tasks(experiment, rater, clock):
    task = assignment_next(experiment=experiment, rater=rater)
    clock.advance(settings.LEASE_SECONDS + 1)
    other = UserFactory(roles=["rater"])
    assert assignment_next(experiment=experiment, rater=other).pk == task.pk
    renewed, lost = leases_renew(rater=rater, task_ids=[task.pk, 10**9])
    assert (renewed, lost) == ([], [task.pk, 10**9])
    assert list(Lease.objects.values_list("rater", flat=True)) == [other.pk]


# ---------------------------------------------------------------- undo


def test_undo_moves_the_verdict_aside_and_leases_the_pair_back(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    judgement, _ = submit(task, rater, verdict="not_equivalent")
    following = assignment_next(experiment=experiment, rater=rater)
    again = judgement_undo(judgement_id=judgement.pk, rater=rater)
    assert again.pk == task.pk and again.verdicts == 0
    assert not Judgement.objects.filter(pk=judgement.pk).exists()
    retracted = RetractedJudgement.objects.get()
    assert (retracted.task_id, retracted.rater_id, retracted.verdict) == (task.pk, rater.pk, "not_equivalent")
    assert retracted.client_id == judgement.client_id and retracted.judged_at == judgement.created_at
    assert set(Lease.objects.filter(rater=rater).values_list("task", flat=True)) == {task.pk, following.pk}
    answer, created = submit(again, rater, verdict="equivalent")
    assert created
    assert list(Judgement.objects.filter(task=task).values_list("verdict", flat=True)) == ["equivalent"]
    task.refresh_from_db()
    assert task.verdicts == 1


def test_a_retry_of_an_undone_submit_records_nothing(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    client_id = uuid.uuid4()
    judgement, _ = submit(task, rater, client_id=client_id)
    judgement_undo(judgement_id=judgement.pk, rater=rater)
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="undone"):
        submit(task, rater, client_id=client_id)
    assert state(experiment) == before


def test_any_verdict_of_the_last_undo_seconds_can_be_undone_and_each_only_once(experiment, rater, clock):
    judgements = [submit(assignment_next(experiment=experiment, rater=rater), rater)[0] for _ in range(3)]
    clock.advance(settings.UNDO_SECONDS - 60)
    judgements += [submit(assignment_next(experiment=experiment, rater=rater), rater)[0] for _ in range(5)]
    judgement_undo(judgement_id=judgements[1].pk, rater=rater)  # the seventh latest: reopened all the same
    judgement_undo(judgement_id=judgements[4].pk, rater=rater)
    with pytest.raises(JudgementRefused, match="no such verdict"):  # it is gone
        judgement_undo(judgement_id=judgements[1].pk, rater=rater)
    clock.advance(61)
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="minutes only"):  # older than UNDO_SECONDS now
        judgement_undo(judgement_id=judgements[0].pk, rater=rater)
    assert state(experiment) == before
    judgement_undo(judgement_id=judgements[3].pk, rater=rater)
    assert sorted(RetractedJudgement.objects.values_list("task", flat=True)) == sorted(
        judgements[k].task_id for k in (1, 3, 4)
    )


def test_undo_steps_back_through_the_latest_verdicts_and_each_pair_is_answered_once_more(experiment, users):
    from raterapp.models import ExperimentBudget

    rater = users["rater"]
    ExperimentBudget.objects.update_or_create(experiment=experiment, defaults={"max_verdicts": 10})
    judgements = [submit(assignment_next(experiment=experiment, rater=rater), rater)[0] for _ in range(4)]
    assert ExperimentBudget.objects.get(experiment=experiment).spent == 4
    reopened = [judgement_undo(judgement_id=j.pk, rater=rater) for j in reversed(judgements[1:])]
    assert [task.pk for task in reopened] == [j.task_id for j in reversed(judgements[1:])]
    assert ExperimentBudget.objects.get(experiment=experiment).spent == 1  # each undo gives its unit back
    assert set(Lease.objects.filter(rater=rater).values_list("task", flat=True)) == {t.pk for t in reopened}
    assert list(Judgement.objects.values_list("pk", flat=True)) == [judgements[0].pk]
    for task in reopened:
        submit(task, rater, verdict="unsure")
    # Every pair holds exactly one standing verdict; the undone ones are kept aside, counted nowhere.
    assert sorted(Judgement.objects.values_list("task", "verdict")) == sorted(
        [(judgements[0].task_id, "equivalent")] + [(t.pk, "unsure") for t in reopened]
    )
    assert (
        list(PairTask.objects.filter(pk__in=[j.task_id for j in judgements]).values_list("verdicts", flat=True))
        == [1] * 4
    )
    assert RetractedJudgement.objects.count() == 3
    assert ExperimentBudget.objects.get(experiment=experiment).spent == 4 == Judgement.objects.count()
    assert not Lease.objects.filter(rater=rater).exists()


def test_undo_is_refused_when_the_rater_holds_too_many_pairs(experiment, rater, monkeypatch):
    from raterapp.services.judging import verdicts

    monkeypatch.setattr(verdicts, "MAX_HELD_WITH_UNDONE", 2)
    judgements = [submit(assignment_next(experiment=experiment, rater=rater), rater)[0] for _ in range(3)]
    judgement_undo(judgement_id=judgements[2].pk, rater=rater)
    judgement_undo(judgement_id=judgements[1].pk, rater=rater)
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="already hold 2 pairs"):
        judgement_undo(judgement_id=judgements[0].pk, rater=rater)
    assert state(experiment) == before


def test_undo_is_refused_after_undo_seconds_and_for_others(experiment, rater, clock):
    judgement, _ = submit(assignment_next(experiment=experiment, rater=rater), rater)
    with pytest.raises(JudgementRefused, match="no such verdict"):
        judgement_undo(judgement_id=judgement.pk, rater=UserFactory(roles=["rater"]))
    clock.advance(settings.UNDO_SECONDS + 1)
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="minutes only"):
        judgement_undo(judgement_id=judgement.pk, rater=rater)
    assert state(experiment) == before


# ---------------------------------------------------------------- broken pairs


def test_a_reported_pair_is_released_never_offered_to_the_reporter_again_and_stays_unjudged(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    report, created = pair_report_create(task=task, rater=rater, reason="missing_data", note="no title")
    assert created and (report.reason, report.note) == ("missing_data", "no title")
    assert not Lease.objects.exists()
    task.refresh_from_db()
    assert task.verdicts == 0
    offered = set()
    while (t := assignment_next(experiment=experiment, rater=rater)) is not None:
        offered.add(t.pk)
        submit(t, rater)
    assert task.pk not in offered
    assert assignment_next(experiment=experiment, rater=UserFactory(roles=["rater"])).pk == task.pk


def test_a_report_is_idempotent_and_needs_a_lease(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    first, _ = pair_report_create(task=task, rater=rater, reason="unreadable")
    again, created = pair_report_create(task=task, rater=rater, reason="other")
    assert (again.pk, created) == (first.pk, False)
    other_task = PairTask.objects.exclude(pk=task.pk).first()
    with pytest.raises(JudgementRefused, match="not assigned"):
        pair_report_create(task=other_task, rater=rater, reason="other")
    with pytest.raises(ValidationError):
        pair_report_create(task=other_task, rater=rater, reason="boring")
    assert PairReport.objects.count() == 1


# ---------------------------------------------------------------- gold questions


@pytest.fixture
def gold(experiment, users):
    sampled = PairTask.objects.filter(experiment=experiment).order_by("rank").first()
    return gold_pair_create(
        experiment=experiment,
        actor=users["admin"],
        item_a=sampled.item_b.item_id,
        item_b=sampled.item_a.item_id,
        answer="equivalent",
    )


def test_gold_pairs_are_made_by_admins_from_items_with_cards(experiment, users, gold):
    assert gold.is_gold and gold.wanted == 0 and gold.item_a.position < gold.item_b.position
    with pytest.raises(PermissionDenied):
        gold_pair_create(experiment=experiment, actor=users["engineer"], item_a="0", item_b="1", answer="equivalent")
    with pytest.raises(ValidationError, match="already a gold"):
        gold_pair_create(
            experiment=experiment,
            actor=users["admin"],
            item_a=gold.item_a.item_id,
            item_b=gold.item_b.item_id,
            answer="not_equivalent",
        )
    with pytest.raises(ValidationError, match="No item 'nope'"):
        gold_pair_create(experiment=experiment, actor=users["admin"], item_a="nope", item_b="1", answer="equivalent")
    with pytest.raises(ValidationError):
        gold_pair_create(
            experiment=experiment, actor=users["admin"], item_a=gold.item_a.item_id, item_b="x", answer="unsure"
        )
    with pytest.raises(PermissionDenied):
        experiment_gold_rate_set(experiment=experiment, actor=users["engineer"], gold_rate=0.3)
    assert PairTask.objects.exclude(gold_answer="").count() == 1


def test_gold_questions_are_mixed_in_at_the_rate_and_go_to_every_rater_once(experiment, users, gold):
    rng = np.random.default_rng(5)
    PairTask.objects.filter(experiment=experiment, gold_answer="").update(wanted=3)
    experiment_gold_rate_set(experiment=experiment, actor=users["admin"], gold_rate=0.5)
    experiment.refresh_from_db()
    raters = UserFactory.create_batch(3, roles=["rater"])
    served = {r.pk: [] for r in raters}
    for rater in raters:
        while (task := assignment_next(experiment=experiment, rater=rater, rng=rng)) is not None:
            served[rater.pk].append(task.pk)
            submit(task, rater, verdict="equivalent" if rater == raters[0] else "not_equivalent")
    for rater in raters:
        assert served[rater.pk].count(gold.pk) <= 1
    # each rater meets the only gold question (at rate 0.5, missing it 30 times has chance 1e-9)
    assert all(gold.pk in served[r.pk] for r in raters)
    assert all(len(served[r.pk]) == PairTask.objects.filter(experiment=experiment).count() for r in raters)
    gold.refresh_from_db()
    assert gold.verdicts == 3


def test_gold_verdicts_count_in_no_estimate_export_or_progress(experiment, users, gold, rater):
    experiment.gold_rate = 1.0
    experiment.save()
    task = assignment_next(experiment=experiment, rater=rater)
    assert task.pk == gold.pk  # rate 1: gold first while any is left
    submit(task, rater)
    regular = assignment_next(experiment=experiment, rater=rater)
    assert not regular.is_gold
    submit(regular, rater)
    assert (
        len(judged_sample_get(experiment=experiment).verdict) == 1 and len(judgements_rows(experiment=experiment)) == 1
    )
    wanted = sum(PairTask.objects.filter(experiment=experiment, gold_answer="").values_list("wanted", flat=True))
    progress = rater_progress_get(experiment=experiment, rater=rater)
    assert progress["remaining"] == wanted - 1
    assert progress["mine"] == 2  # the rater's own count includes the gold answer


def test_gold_accuracy_per_rater_with_its_interval(experiment, users, gold):
    experiment.gold_rate = 1.0
    experiment.save()
    second = gold_pair_create(
        experiment=experiment,
        actor=users["admin"],
        item_a=PairTask.objects.filter(gold_answer="").order_by("rank")[1].item_a.item_id,
        item_b=PairTask.objects.filter(gold_answer="").order_by("rank")[1].item_b.item_id,
        answer="not_equivalent",
    )
    good, poor = UserFactory(username="good", roles=["rater"]), UserFactory(username="poor", roles=["rater"])
    answers = {
        good: {gold.pk: "equivalent", second.pk: "not_equivalent"},
        poor: {gold.pk: "unsure", second.pk: "equivalent"},
    }
    for rater, by_task in answers.items():
        for _ in range(2):
            task = assignment_next(experiment=experiment, rater=rater)
            submit(task, rater, verdict=by_task[task.pk])
    rows = {row["username"]: row for row in gold_accuracy_list(experiment=experiment)}
    assert (rows["good"]["answered"], rows["good"]["correct"], rows["good"]["accuracy"]) == (2, 2, 1.0)
    assert rows["good"]["ci_high"] == 1.0 and 0.2 < rows["good"]["ci_low"] < 0.5  # Wilson, n=2
    assert (rows["poor"]["answered"], rows["poor"]["unsure"], rows["poor"]["correct"], rows["poor"]["accuracy"]) == (
        2,
        1,
        0,
        0.0,
    )
    listed = {t.pk: (t.judged, t.correct) for t in gold_pairs_list(experiment=experiment)}
    assert listed == {gold.pk: (2, 1), second.pk: (2, 1)}


# ---------------------------------------------------------------- quotas and progress


def test_a_daily_quota_stops_leasing_counting_held_pairs(experiment, rater):
    RaterProfile.objects.create(user=rater, daily_quota=2)
    current = assignment_next(experiment=experiment, rater=rater)
    preloaded = assignment_next(experiment=experiment, rater=rater, holding=[current.pk])
    submit(current, rater)
    with pytest.raises(QueueClosed) as closed:  # one verdict today + one pair held = 2
        assignment_next(experiment=experiment, rater=rater, holding=[preloaded.pk])
    assert closed.value.reason == "quota_daily"
    submit(preloaded, rater)
    with pytest.raises(QueueClosed) as closed:
        assignment_next(experiment=experiment, rater=rater)
    assert closed.value.reason == "quota_daily"
    assert Judgement.objects.filter(rater=rater).count() == 2
    progress = rater_progress_get(experiment=experiment, rater=rater)
    assert progress["quota"] == {"daily": 2, "daily_left": 0, "total": None, "total_left": None}


def test_a_total_quota_counts_verdicts_of_earlier_days(experiment, rater, clock):
    RaterProfile.objects.create(user=rater, total_quota=1)
    submit(assignment_next(experiment=experiment, rater=rater), rater)
    clock.advance(3 * 24 * 3600)
    with pytest.raises(QueueClosed) as closed:
        assignment_next(experiment=experiment, rater=rater)
    assert closed.value.reason == "quota_total"


def test_progress_counts_this_session_today_mine_and_what_remains(experiment, rater, clock):
    submit(assignment_next(experiment=experiment, rater=rater), rater)
    clock.advance(60)
    session_start = timezone.now()
    clock.advance(60)
    submit(assignment_next(experiment=experiment, rater=rater), rater)
    progress = rater_progress_get(experiment=experiment, rater=rater, session_start=session_start)
    total = PairTask.objects.filter(experiment=experiment).count()
    assert (progress["session"], progress["today"], progress["mine"], progress["remaining"]) == (1, 2, 2, total - 2)
    assert rater_progress_get(experiment=experiment, rater=rater)["session"] is None
