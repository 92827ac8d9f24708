"""Rater management services: create and invite, deactivate and reactivate, pause and unpause,
quotas, assignment to experiments, and the automatic pause. Only admins act; a refused action
changes nothing; a deactivated rater's verdicts stay; a paused or unassigned rater gets no pair."""

import uuid
from datetime import datetime, timedelta
from unittest import mock

import pytest
from django.contrib.auth.models import Permission, User
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import F
from django.http import Http404
from django.test import Client
from django.utils import timezone

from metrics_core import agreement_summary, pairwise_cohens_kappa
from metrics_core.proportions import proportion_interval
from raterapp.access import access_experiment_for_rater, access_task_for_rater
from raterapp.models import Experiment, ExperimentBudget, Item, Judgement, Lease, PairTask, RaterProfile
from raterapp.selectors.rater_home import rater_summary_get
from raterapp.selectors.rater_quality import gold_accuracy_list
from raterapp.selectors.raters import experiment_agreement_get, rater_stats_list
from raterapp.services.accounts.rater_auto_pause import raters_auto_pause
from raterapp.services.accounts.raters import (
    experiment_open_to_all_set,
    experiment_raters_set,
    rater_assign,
    rater_create,
    rater_deactivate,
    rater_pause,
    rater_quota_set,
    rater_reactivate,
    rater_unassign,
    rater_unpause,
    rater_update,
)
from raterapp.services.judging import QueueClosed, assignment_next, judgement_submit, leases_renew
from raterapp.services.refresh.rater_agreement import rater_agreement_refresh
from raterapp.tasks import raters_auto_pause_task
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.usefixtures("media")


@pytest.fixture
def experiment(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=3)
    Experiment.objects.filter(pk=experiment.pk).update(gold_rate=0.0)
    experiment.refresh_from_db()
    return experiment


@pytest.fixture
def admin(users):
    return users["admin"]


@pytest.fixture
def rater(users):
    return users["rater"]


def judge(experiment, rater, verdict="equivalent"):
    task = assignment_next(experiment=experiment, rater=rater)
    return judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())[0]


def state():
    """Everything the rater services may change, to show that a refused action changed nothing."""
    return {
        "users": sorted(User.objects.values_list("pk", "username", "email", "is_active", "password")),
        "groups": sorted(User.groups.through.objects.values_list("user", "group")),
        "profiles": sorted(
            RaterProfile.objects.values_list(
                "user", "daily_quota", "total_quota", "paused", "paused_reason", "paused_at", "unpaused_at"
            )
        ),
        "assigned": sorted(Experiment.assigned_raters.through.objects.values_list("experiment", "user")),
        "leases": sorted(Lease.objects.values_list("task", "rater", "expires_at")),
        "judgements": sorted(Judgement.objects.values_list("pk", "task", "rater", "verdict")),
    }


# ---------------------------------------------------------------- create and invite


def test_an_admin_creates_a_rater_with_a_password(admin):
    user, link = rater_create(actor=admin, username="rita", email="rita@example.org", password="a-long-pass-phrase")
    assert link is None
    assert user.check_password("a-long-pass-phrase") and user.is_active
    assert list(user.groups.values_list("name", flat=True)) == ["rater"]
    assert RaterProfile.objects.filter(user=user, paused=False, daily_quota=None).exists()


def test_without_a_password_the_rater_gets_a_one_time_link_to_choose_one(admin):
    user, link = rater_create(actor=admin, username="rita", email="rita@example.org")
    assert not user.has_usable_password()
    assert link.startswith("/accounts/set-password/")
    browser = Client()
    form = browser.get(link, follow=True)  # Django moves the token into the session, then shows the form
    assert form.status_code == 200 and b"Choose your password" in form.content and b"new_password1" in form.content
    done = browser.post(
        form.redirect_chain[-1][0],
        {"new_password1": "correct-horse-battery", "new_password2": "correct-horse-battery"},
        follow=True,
    )
    assert done.status_code == 200 and b"Password set" in done.content
    assert Client().login(username="rita", password="correct-horse-battery")
    again = Client().get(link, follow=True)
    assert b"does not work any more" in again.content and b"new_password1" not in again.content


@pytest.mark.parametrize("role", ["rater", "engineer", "nobody"])
def test_only_admins_create_raters_and_a_refusal_changes_nothing(users, role):
    before = state()
    with pytest.raises(PermissionDenied):
        rater_create(actor=users[role], username="rita", email="rita@example.org")
    assert state() == before


@pytest.mark.parametrize(
    "fields, error",
    [
        ({"username": "Rater", "email": "x@example.org"}, "username"),  # taken (names are case-insensitive)
        ({"username": " ", "email": "x@example.org"}, "username"),
        ({"username": "rita", "email": "not-an-address"}, "email"),
        ({"username": "rita", "email": "x@example.org", "password": "short"}, "password"),
    ],
)
def test_invalid_new_raters_are_refused_and_nothing_is_created(admin, fields, error):
    before = state()
    with pytest.raises(ValidationError) as refused:
        rater_create(actor=admin, **fields)
    assert error in refused.value.message_dict
    assert state() == before


# ---------------------------------------------------------------- deactivate


def test_deactivation_keeps_the_verdicts_and_releases_the_leases(experiment, admin, rater):
    judgement = judge(experiment, rater)
    held = assignment_next(experiment=experiment, rater=rater)
    rater_deactivate(actor=admin, rater=rater)
    rater.refresh_from_db()
    assert not rater.is_active
    assert list(Judgement.objects.values_list("pk", "rater", "verdict")) == [(judgement.pk, rater.pk, "equivalent")]
    assert ExperimentBudget.objects.get(experiment=experiment).spent == 1
    assert not Lease.objects.filter(rater=rater).exists()  # the held pair is back in the queue at once
    assert PairTask.objects.get(pk=held.pk).verdicts == 0


def test_a_deactivated_rater_cannot_sign_in_and_their_session_ends(admin, rater):
    browser = Client()
    assert browser.login(username="rater", password="pw-rater")
    assert browser.get("/rate/").status_code == 200
    rater_deactivate(actor=admin, rater=rater)
    assert browser.get("/rate/").status_code == 302  # signed out: to the sign-in page
    assert not Client().login(username="rater", password="pw-rater")
    rater_reactivate(actor=admin, rater=rater)
    assert Client().login(username="rater", password="pw-rater")


def test_deactivation_is_refused_to_non_admins_for_non_raters_and_oneself(experiment, users, rater):
    assignment_next(experiment=experiment, rater=rater)
    before = state()
    for actor, target, refusal in [
        (users["engineer"], rater, PermissionDenied),
        (rater, rater, PermissionDenied),
        (users["admin"], users["engineer"], ValidationError),
    ]:
        with pytest.raises(refusal):
            rater_deactivate(actor=actor, rater=target)
    with pytest.raises(PermissionDenied):
        rater_reactivate(actor=users["engineer"], rater=rater)
    assert state() == before


# ---------------------------------------------------------------- pause


def test_a_paused_rater_gets_no_pair_and_loses_held_ones_until_unpaused(experiment, admin, rater, clock):
    held = assignment_next(experiment=experiment, rater=rater)
    profile = rater_pause(actor=admin, rater=rater, reason="Answers look random.")
    assert (profile.paused, profile.paused_reason, profile.paused_at) == (True, "Answers look random.", clock.now)
    assert not Lease.objects.filter(rater=rater).exists()
    with pytest.raises(QueueClosed) as closed:
        assignment_next(experiment=experiment, rater=rater)
    assert closed.value.reason == "rater_paused"
    clock.advance(60)
    profile = rater_unpause(actor=admin, rater=rater)
    assert (profile.paused, profile.paused_reason, profile.paused_at, profile.unpaused_at) == (False, "", None, clock.now)
    assert assignment_next(experiment=experiment, rater=rater).pk == held.pk


def test_pausing_again_replaces_the_reason_and_keeps_the_time(admin, rater, clock):
    first = rater_pause(actor=admin, rater=rater, reason="first")
    clock.advance(10)
    again = rater_pause(actor=admin, rater=rater, reason="second")
    assert (again.paused_at, again.paused_reason) == (first.paused_at, "second")


def test_pause_needs_a_reason_and_an_admin(experiment, users, rater):
    assignment_next(experiment=experiment, rater=rater)
    before = state()
    with pytest.raises(ValidationError):
        rater_pause(actor=users["admin"], rater=rater, reason="  ")
    for role in ("engineer", "rater"):
        with pytest.raises(PermissionDenied):
            rater_pause(actor=users[role], rater=rater, reason="r")
        with pytest.raises(PermissionDenied):
            rater_unpause(actor=users[role], rater=rater)
    assert state() == before


# ---------------------------------------------------------------- quotas


def test_quotas_are_set_and_a_lowered_quota_stops_leasing(experiment, admin, rater):
    judge(experiment, rater)
    profile = rater_quota_set(actor=admin, rater=rater, daily_quota=1, total_quota=None, reason="r")
    assert (profile.daily_quota, profile.total_quota) == (1, None)
    with pytest.raises(QueueClosed) as closed:
        assignment_next(experiment=experiment, rater=rater)
    assert closed.value.reason == "quota_daily"
    assert Judgement.objects.filter(rater=rater).count() == 1


@pytest.mark.parametrize("daily, total", [(-1, None), (1.5, None), (None, "7"), (True, None), (2**31, None)])
def test_invalid_quotas_are_refused(admin, rater, daily, total):
    before = state()
    with pytest.raises(ValidationError):
        rater_quota_set(actor=admin, rater=rater, daily_quota=daily, total_quota=total, reason="r")
    assert state() == before


def test_a_refused_update_changes_nothing_even_when_part_of_it_was_valid(admin, users, rater):
    rater_quota_set(actor=admin, rater=rater, daily_quota=5, total_quota=50, reason="r")
    before = state()
    with pytest.raises(PermissionDenied):
        rater_update(actor=users["engineer"], rater=rater, changes={"daily_quota": 1})
    with pytest.raises(ValidationError):  # the quota is valid, the pause has no reason: neither happens
        rater_update(actor=admin, rater=rater, changes={"daily_quota": 1, "quota_reason": "r", "paused": True})
    assert state() == before
    rater_update(actor=admin, rater=rater, changes={"total_quota": 9, "quota_reason": "r", "paused": True, "paused_reason": "why"})
    profile = RaterProfile.objects.get(user=rater)
    assert (profile.daily_quota, profile.total_quota, profile.paused, profile.paused_reason) == (5, 9, True, "why")


# ---------------------------------------------------------------- assignment


def test_an_experiment_with_assigned_raters_is_theirs_only(experiment, admin, rater):
    other = UserFactory(roles=["rater"])
    other_held = assignment_next(experiment=experiment, rater=other)
    task = PairTask.objects.filter(experiment=experiment).first()
    assert rater_assign(actor=admin, experiment=experiment, raters=[rater]) == [rater.pk]
    assert not Lease.objects.filter(rater=other).exists()  # released: the experiment is no longer theirs
    assert access_experiment_for_rater(rater, experiment.pk) == experiment
    assert [row["experiment"] for row in rater_summary_get(rater=rater)["experiments"]] == [experiment.pk]
    for refused in (lambda: access_experiment_for_rater(other, experiment.pk), lambda: access_task_for_rater(other, task.pk)):
        with pytest.raises(Http404):
            refused()
    assert rater_summary_get(rater=other)["experiments"] == []
    with pytest.raises(QueueClosed) as closed:  # had the page passed its access check before the change
        assignment_next(experiment=experiment, rater=other)
    assert closed.value.reason == "not_assigned"
    assert assignment_next(experiment=experiment, rater=rater).pk == other_held.pk
    assert rater_unassign(actor=admin, experiment=experiment, raters=[rater]) == []
    assert access_experiment_for_rater(other, experiment.pk) == experiment  # open to every rater again


def test_an_admin_opens_an_experiment_to_every_rater_and_closes_it_again(experiment, admin, rater, users):
    held = assignment_next(experiment=experiment, rater=rater)  # open to all (the suite's settings)
    before = (experiment.open_to_all_raters, list(Lease.objects.values_list("task", "rater")))
    for refused in (users["engineer"], rater):
        with pytest.raises(PermissionDenied):
            experiment_open_to_all_set(actor=refused, experiment=experiment, open_to_all=False)
    experiment.refresh_from_db()
    assert (experiment.open_to_all_raters, list(Lease.objects.values_list("task", "rater"))) == before
    assert experiment_open_to_all_set(actor=admin, experiment=experiment, open_to_all=False) is True
    assert not Experiment.objects.get(pk=experiment.pk).open_to_all_raters
    assert not Lease.objects.filter(task=held).exists()  # open to nobody: the held pair is released
    with pytest.raises(Http404):
        access_experiment_for_rater(rater, experiment.pk)
    assert experiment_open_to_all_set(actor=admin, experiment=experiment, open_to_all=False) is False  # unchanged
    assert experiment_open_to_all_set(actor=admin, experiment=experiment, open_to_all=True) is True
    assert access_experiment_for_rater(rater, experiment.pk) == experiment


def test_closing_to_all_keeps_the_leases_of_assigned_raters(experiment, admin, rater):
    rater_assign(actor=admin, experiment=experiment, raters=[rater])
    held = assignment_next(experiment=experiment, rater=rater)
    experiment_open_to_all_set(actor=admin, experiment=experiment, open_to_all=False)
    assert Lease.objects.filter(task=held, rater=rater).exists()
    assert access_experiment_for_rater(rater, experiment.pk) == experiment


def test_unassigning_one_of_several_releases_only_their_leases(experiment, admin, rater):
    second = UserFactory(roles=["rater"])
    experiment_raters_set(actor=admin, experiment=experiment, rater_ids=[rater.pk, second.pk])
    assignment_next(experiment=experiment, rater=rater)
    kept = assignment_next(experiment=experiment, rater=second)
    assert rater_unassign(actor=admin, experiment=experiment, raters=[rater]) == [second.pk]
    assert list(Lease.objects.values_list("task", "rater")) == [(kept.pk, second.pk)]


def test_a_lease_granted_while_the_assignment_changed_is_dropped_at_its_next_renewal(experiment, rater):
    held = assignment_next(experiment=experiment, rater=rater)
    someone_else = UserFactory(roles=["rater"])
    experiment.assigned_raters.add(someone_else)  # as if committed between the lease's check and its commit
    assert leases_renew(rater=rater, task_ids=[held.pk]) == ([], [held.pk])
    assert not Lease.objects.filter(rater=rater).exists()


def test_assignment_refuses_non_admins_non_raters_and_unknown_ids(experiment, users, rater):
    rater_assign(actor=users["admin"], experiment=experiment, raters=[rater])
    before = state()
    with pytest.raises(PermissionDenied):
        experiment_raters_set(actor=users["engineer"], experiment=experiment, rater_ids=[])
    with pytest.raises(PermissionDenied):
        rater_unassign(actor=users["engineer"], experiment=experiment, raters=[rater])
    with pytest.raises(ValidationError, match="Not raters"):
        rater_assign(actor=users["admin"], experiment=experiment, raters=[users["engineer"]])
    with pytest.raises(ValidationError, match="No such users"):
        experiment_raters_set(actor=users["admin"], experiment=experiment, rater_ids=[rater.pk, 10**9])
    assert state() == before


# ---------------------------------------------------------------- automatic pause


@pytest.fixture
def quick(settings):
    """Thresholds of the settings' defaults, written out; the automatic pause on."""
    settings.RATER_MIN_SECONDS, settings.RATER_MIN_TIMED_VERDICTS = 2.0, 10
    settings.RATER_MIN_GOLD_ACCURACY, settings.RATER_MIN_GOLD_ANSWERS = 0.7, 10
    settings.RATER_AUTO_PAUSE = True
    return settings


def rush(experiment, rater, clock, n, seconds):
    """The rater gives ``n`` verdicts, ``seconds`` apart."""
    for _ in range(n):
        clock.advance(seconds)
        judge(experiment, rater)


def test_the_automatic_pause_pauses_flagged_raters_naming_the_flag(quick, experiment, rater, clock):
    careful = UserFactory(roles=["rater"])
    rush(experiment, rater, clock, 11, 1.0)  # 10 gaps of 1 s
    rush(experiment, careful, clock, 11, 5.0)
    assert raters_auto_pause() == [rater.pk]
    profile = RaterProfile.objects.get(user=rater)
    assert profile.paused and profile.paused_at == clock.now
    assert profile.paused_reason == (
        "Paused automatically. too_fast: median 1.0 s per verdict over 10 verdicts, below 2 s."
    )
    assert not RaterProfile.objects.filter(user=careful, paused=True).exists()
    assert raters_auto_pause() == []  # already paused


def test_the_automatic_pause_is_off_unless_the_setting_is_on(quick, experiment, rater, clock):
    rush(experiment, rater, clock, 11, 1.0)
    quick.RATER_AUTO_PAUSE = False
    assert raters_auto_pause() == []
    assert not RaterProfile.objects.filter(paused=True).exists()


def test_after_an_admin_unpauses_only_later_verdicts_count(quick, experiment, admin, rater, clock):
    rush(experiment, rater, clock, 11, 1.0)
    assert raters_auto_pause() == [rater.pk]
    clock.advance(3600)
    rater_unpause(actor=admin, rater=rater)
    assert raters_auto_pause(rater_ids=[rater.pk]) == []  # the admin overruled that evidence
    rush(experiment, rater, clock, 11, 1.5)  # and it happens again
    assert raters_auto_pause(rater_ids=[rater.pk]) == [rater.pk]


def test_only_admins_run_the_automatic_pause_by_hand(quick, experiment, users, rater, clock):
    rush(experiment, rater, clock, 11, 1.0)
    with pytest.raises(PermissionDenied):
        raters_auto_pause(actor=users["engineer"])
    assert not RaterProfile.objects.filter(paused=True).exists()
    assert raters_auto_pause(actor=users["admin"]) == [rater.pk]


def test_verdicts_schedule_one_check_per_rater_a_minute(quick, experiment, rater, django_capture_on_commit_callbacks):
    other = UserFactory(roles=["rater"])
    with mock.patch.object(raters_auto_pause_task, "apply_async") as apply_async:
        try:
            for who in (rater, rater, other, rater):
                with django_capture_on_commit_callbacks(execute=True):
                    judge(experiment, who)
            assert apply_async.call_args_list == [
                mock.call(args=[rater.pk], countdown=60),
                mock.call(args=[other.pk], countdown=60),
            ]
            raters_auto_pause_task(rater.pk)  # the check clears the rater's pending key first
            with django_capture_on_commit_callbacks(execute=True):
                judge(experiment, rater)
            assert apply_async.call_count == 3
        finally:
            for who in (rater, other):
                cache.delete(f"rater-auto-pause-pending:{who.pk}")


def test_with_the_automatic_pause_off_verdicts_schedule_nothing(experiment, rater, settings, django_capture_on_commit_callbacks):
    settings.RATER_AUTO_PAUSE = False
    with mock.patch.object(raters_auto_pause_task, "apply_async") as apply_async:
        with django_capture_on_commit_callbacks(execute=True):
            judge(experiment, rater)
    apply_async.assert_not_called()



# ---------------------------------------------------------------- numbers per rater (hand-built rows)


T0 = timezone.make_aware(datetime(2026, 3, 2, 9, 0, 0))


def say(task, rater, verdict, seconds):
    """A stored verdict at ``T0 + seconds`` (``verdicts`` of the task kept in step, as the services do)."""
    judgement = Judgement.objects.create(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
    Judgement.objects.filter(pk=judgement.pk).update(created_at=T0 + timedelta(seconds=seconds))
    PairTask.objects.filter(pk=task.pk).update(verdicts=F("verdicts") + 1)


def gold_tasks(experiment, n, answer="equivalent"):
    items = list(Item.objects.filter(experiment=experiment).order_by("position"))
    pairs = [(a, b) for k, a in enumerate(items) for b in items[k + 1 :]][:n]
    return [
        PairTask.objects.create(experiment=experiment, item_a=a, item_b=b, rank=0, wanted=0, gold_answer=answer)
        for a, b in pairs
    ]


@pytest.fixture
def trio():
    return [UserFactory(username=name, roles=["rater"]) for name in ("ann", "bob", "cy")]


@pytest.fixture
def tasks(experiment):
    return list(PairTask.objects.filter(experiment=experiment, gold_answer="").order_by("rank"))


def stats_of(**scope):
    """The rows of the scope, after the worker's step that follows a snapshot (the stored agreement)."""
    experiment = scope.get("experiment")
    rater_agreement_refresh(experiment_id=experiment.pk if experiment is not None else None)
    return {row["username"]: row for row in rater_stats_list(**scope)}


def test_counts_unsure_share_and_median_seconds_leave_breaks_out(experiment, tasks, trio):
    ann = trio[0]
    for k, (verdict, at) in enumerate(
        [("equivalent", 0), ("unsure", 3), ("equivalent", 8), ("not_equivalent", 708), ("equivalent", 709.5)]
    ):
        say(tasks[k], ann, verdict, at)
    row = stats_of(experiment=experiment)["ann"]
    # gaps 3, 5, 700 (a break: left out), 1.5
    assert (row["verdicts"], row["unsure"], row["unsure_share"]) == (5, 1, 0.2)
    assert (row["timed_verdicts"], row["median_seconds"]) == (3, 3.0)
    assert row["last_verdict_at"] == T0 + timedelta(seconds=709.5)
    # since: only later verdicts, each timed from the rater's previous verdict, even an earlier one
    later = stats_of(experiment=experiment, since=T0 + timedelta(seconds=5))["ann"]
    assert (later["verdicts"], later["timed_verdicts"], later["median_seconds"]) == (3, 2, 3.25)


def test_the_gap_before_a_verdict_counts_a_verdict_in_another_experiment(experiment, users, tasks, trio):
    other = experiment_prepared(owner=users["engineer"], replication=3, name="other")
    ann = trio[0]
    say(tasks[0], ann, "equivalent", 0)
    say(PairTask.objects.filter(experiment=other).first(), ann, "equivalent", 10)
    say(tasks[1], ann, "equivalent", 12)
    here = stats_of(experiment=experiment)["ann"]
    assert (here["verdicts"], here["timed_verdicts"], here["median_seconds"]) == (2, 1, 2.0)
    everywhere = stats_of()["ann"]
    assert (everywhere["verdicts"], everywhere["timed_verdicts"], everywhere["median_seconds"]) == (3, 2, 6.0)


def test_gold_accuracy_with_its_wilson_interval_as_gold_accuracy_list_gives_it(experiment, trio):
    bob = trio[1]
    gold = gold_tasks(experiment, 12)
    for k, task in enumerate(gold):
        say(task, bob, "equivalent" if k < 7 else "not_equivalent" if k < 10 else "unsure", k * 10)
    row = stats_of(experiment=experiment)["bob"]
    assert (row["gold_answered"], row["gold_unsure"], row["gold_correct"], row["gold_accuracy"]) == (12, 2, 7, 0.7)
    low, high = proportion_interval(7, 10, experiment.confidence)
    assert (row["gold_ci_low"], row["gold_ci_high"]) == (low, high)
    (listed,) = gold_accuracy_list(experiment=experiment)
    assert (listed["accuracy"], listed["ci_low"], listed["ci_high"]) == (0.7, low, high)
    assert (row["verdicts"], row["unsure"]) == (12, 2)  # gold answers are verdicts too


def test_agreement_with_the_others_on_replicated_pairs(experiment, tasks, trio):
    ann, bob, cy = trio
    E, N, U = "equivalent", "not_equivalent", "unsure"
    rows = [
        (tasks[0], ann, E), (tasks[0], bob, E), (tasks[0], cy, N),
        (tasks[1], ann, N), (tasks[1], bob, N), (tasks[1], cy, N),
        (tasks[2], ann, E), (tasks[2], bob, N),
        (tasks[3], ann, U),  # judged once: not replicated
    ]  # fmt: skip
    for k, (task, rater, verdict) in enumerate(rows):
        say(task, rater, verdict, 100 * k)
    for task in gold_tasks(experiment, 2):  # gold questions count in no agreement
        say(task, ann, N, 2000 + task.pk)
        say(task, bob, E, 2000 + task.pk)
    stats = stats_of(experiment=experiment)
    # ann-bob: kappa 0.4 on 3 pairs; ann-cy and bob-cy: kappa 0 on 2 pairs (weighted means below)
    expected = {
        "ann": {"replicated_verdicts": 3, "mean_kappa": 0.24, "kappa_raters": 2, "majority_verdicts": 2, "majority_share": 0.5},
        "bob": {"replicated_verdicts": 3, "mean_kappa": 0.24, "kappa_raters": 2, "majority_verdicts": 2, "majority_share": 0.5},
        "cy": {"replicated_verdicts": 2, "mean_kappa": 0.0, "kappa_raters": 2, "majority_verdicts": 2, "majority_share": 0.5},
    }
    for name, numbers in expected.items():
        got = {key: stats[name][key] for key in numbers}
        assert got == pytest.approx(numbers), name

    replicated = rows[:8]
    unit = [task.pk for task, _, _ in replicated]
    rater = [r.pk for _, r, _ in replicated]
    verdict = [v for _, _, v in replicated]
    agreement = experiment_agreement_get(experiment=experiment)
    assert agreement["summary"] == agreement_summary(unit=unit, verdict=verdict, rater=rater).as_dict()
    assert agreement["summary"]["replicated_pairs"] == 3
    pairwise = {(p["rater_a_username"], p["rater_b_username"]): (p["pairs"], p["kappa"]) for p in agreement["pairwise"]}
    assert pairwise == {
        ("ann", "bob"): (3, pytest.approx(0.4)),
        ("ann", "cy"): (2, 0.0),
        ("bob", "cy"): (2, 0.0),
    }
    for p in pairwise_cohens_kappa(unit=unit, verdict=verdict, rater=rater):  # the same rows, straight from metrics_core
        assert [x for x in agreement["pairwise"] if (x["rater_a"], x["rater_b"]) == (p.rater_a, p.rater_b)][0]["kappa"] == p.kappa
    assert [row["username"] for row in agreement["raters"]] == ["ann", "bob", "cy"]
    assert agreement["raters"][0]["mean_kappa"] == stats["ann"]["mean_kappa"]


def test_one_raters_row_reads_only_the_verdicts_on_their_pairs_and_equals_theirs_in_the_whole_list(
    experiment, tasks, trio, monkeypatch
):
    """The one-row partial (and the API's rater detail) read no verdict beyond the pairs the rater
    judged, however many the others gave elsewhere: their agreement depends on nothing else."""
    ann, bob, cy = trio
    E, N = "equivalent", "not_equivalent"
    rows = [(tasks[0], ann, E), (tasks[0], cy, N), (tasks[1], ann, N), (tasks[1], cy, N)]
    rows += [(task, rater, E if (k + task.pk) % 3 else N) for task in tasks[2:12] for k, rater in enumerate((ann, bob))]
    for k, (task, rater, verdict) in enumerate(rows):
        say(task, rater, verdict, 10 * k)
    from raterapp.selectors import raters as selector

    read = []
    agreement_rows = selector._agreement_rows
    monkeypatch.setattr(selector, "_agreement_rows", lambda *columns: read.append(len(columns[0])) or agreement_rows(*columns))
    everyone = stats_of()
    assert read == [len(rows)]
    (row,) = rater_stats_list(raters=[cy.pk])
    assert read[1] == 4  # cy's two pairs, each with ann's verdict too; none of the twenty on the others' pairs
    assert row == everyone["cy"] and row["replicated_verdicts"] == 2 and row["kappa_raters"] == 1


def test_without_replicated_pairs_agreement_is_empty_not_made_up(experiment, tasks, trio):
    say(tasks[0], trio[0], "equivalent", 0)
    agreement = experiment_agreement_get(experiment=experiment)
    assert agreement["summary"]["replicated_pairs"] == 0 and agreement["summary"]["fleiss_kappa"] is None
    assert (agreement["raters"], agreement["pairwise"]) == ([], [])
    row = stats_of(experiment=experiment)["ann"]
    assert (row["mean_kappa"], row["majority_share"], row["replicated_verdicts"]) == (None, None, 0)


@pytest.mark.parametrize(
    "gaps, flagged",
    [
        ([2.0] * 10, False),  # at the threshold: not below it
        ([1.9] * 10, True),
        ([0.5] * 9, False),  # too few timed verdicts to judge
        ([1.0] * 5 + [3.0] * 6, False),  # median 3.0
        ([1.0] * 6 + [3.0] * 5, True),  # median 1.0
    ],
)
def test_the_too_fast_flag_at_its_thresholds(quick, experiment, tasks, trio, gaps, flagged):
    at = 0.0
    say(tasks[0], trio[0], "equivalent", at)
    for k, gap in enumerate(gaps, start=1):
        at += gap
        say(tasks[k], trio[0], "equivalent", at)
    row = stats_of(experiment=experiment)["ann"]
    assert (row["too_fast"], "too_fast" in row["flags"]) == (flagged, flagged)


@pytest.mark.parametrize(
    "right, wrong, unsure, flagged",
    [
        (7, 3, 0, False),  # 0.7 on 10: at the threshold
        (7, 4, 0, True),  # 0.636 on 11
        (6, 4, 0, True),  # 0.6 on 10
        (0, 9, 5, False),  # 9 sure answers: too few to judge
    ],
)
def test_the_low_gold_accuracy_flag_at_its_thresholds(quick, experiment, trio, right, wrong, unsure, flagged):
    answers = ["equivalent"] * right + ["not_equivalent"] * wrong + ["unsure"] * unsure
    for k, (task, verdict) in enumerate(zip(gold_tasks(experiment, len(answers)), answers)):
        say(task, trio[1], verdict, 60 * k)
    row = stats_of(experiment=experiment)["bob"]
    assert (row["low_gold_accuracy"], row["flags"]) == (flagged, ["low_gold_accuracy"] if flagged else [])


def test_the_list_has_every_rater_and_an_experiment_its_assigned_ones(experiment, admin, users, tasks, trio):
    ann, bob, cy = trio
    say(tasks[0], ann, "equivalent", 0)
    assert {"ann", "bob", "cy", "rater"} == set(stats_of())
    assert set(stats_of(experiment=experiment)) == {"ann"}
    rater_assign(actor=admin, experiment=experiment, raters=[bob])
    rows = stats_of(experiment=experiment)
    assert set(rows) == {"ann", "bob"} and rows["bob"]["verdicts"] == 0 and rows["bob"]["flags"] == []


# ---------------------------------------------------------------- the Django admin's actions


@pytest.mark.parametrize(
    "action, expected",
    [
        ("pause_selected", {"paused": True, "is_active": True}),
        ("deactivate_selected", {"paused": False, "is_active": False}),
    ],
)
def test_django_admin_actions_call_the_services(experiment, rater, action, expected):
    root = User.objects.create_superuser("root", password="pw-root")
    RaterProfile.objects.create(user=rater)
    assignment_next(experiment=experiment, rater=rater)
    browser = Client()
    browser.force_login(root)
    profile = RaterProfile.objects.get(user=rater)
    response = browser.post(
        "/admin/raterapp/raterprofile/", {"action": action, "_selected_action": [profile.pk]}, follow=True
    )
    assert response.status_code == 200 and b"1 rater " in response.content
    profile.refresh_from_db()
    rater.refresh_from_db()
    assert {"paused": profile.paused, "is_active": rater.is_active} == expected
    assert not Lease.objects.filter(rater=rater).exists()
    if action == "pause_selected":
        assert profile.paused_reason == "Paused by root in the Django admin."
        browser.post("/admin/raterapp/raterprofile/", {"action": "unpause_selected", "_selected_action": [profile.pk]})
        profile.refresh_from_db()
        assert not profile.paused and profile.unpaused_at is not None


def test_a_staff_user_who_is_not_an_admin_changes_nothing_through_the_actions(experiment, rater):
    staff = UserFactory(username="staff", roles=["engineer"])
    staff.is_staff = True
    staff.save()
    staff.user_permissions.add(*Permission.objects.filter(codename__in=["view_raterprofile", "change_raterprofile"]))
    RaterProfile.objects.create(user=rater)
    before = state()
    browser = Client()
    browser.force_login(staff)
    response = browser.post(
        "/admin/raterapp/raterprofile/",
        {"action": "pause_selected", "_selected_action": [RaterProfile.objects.get(user=rater).pk]},
        follow=True,
    )
    assert b"Only admins manage raters" in response.content
    assert state() == before


def test_assigning_raters_in_the_django_admin_goes_through_the_service(experiment, users, rater):
    root = User.objects.create_superuser("root", password="pw-root")
    other = UserFactory(roles=["rater"])
    assignment_next(experiment=experiment, rater=other)
    browser = Client()
    browser.force_login(root)
    url = f"/admin/raterapp/experiment/{experiment.pk}/change/"
    form = browser.get(url).context["adminform"].form
    assert set(form.fields["assigned_raters"].queryset) == {rater, other}  # raters only
    data = {name: value for name, value in form.initial.items() if name in form.fields and value is not None}
    data.update({"owner": experiment.owner_id, "shared_with": [], "assigned_raters": [rater.pk]})
    response = browser.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    assert list(experiment.assigned_raters.all()) == [rater]
    assert not Lease.objects.filter(rater=other).exists()  # released, as the service does
