"""The reconciler (Celery beat's ``raterapp.reconcile``) and the staleness it repairs: estimates that
lag the verdicts for longer than ESTIMATES_STALE_SECONDS are recomputed, pending side effects are
dispatched, and the dashboard says "Stale since …" meanwhile."""

import uuid

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from raterapp.models import EstimateSnapshot, Experiment, OutboxMessage
from raterapp.selectors.staleness import estimates_staleness_get, experiments_stale_list
from raterapp.services import outbox
from raterapp.services import reconcile as reconcile_module
from raterapp.services.judging import assignment_next, judgement_submit, judgement_undo
from raterapp.services.reconcile import reconcile
from raterapp.services.refresh.estimates import estimates_compute, estimates_refresh
from raterapp.tasks import reconcile_task
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.usefixtures("media")
Kind = OutboxMessage.Kind


@pytest.fixture
def no_effects(monkeypatch):
    """The verdicts' own refreshes are not dispatched (as when the broker was away)."""
    dispatched = []
    for kind in Kind.values:
        monkeypatch.setitem(outbox.EFFECTS, kind, lambda target_id, kind=kind: dispatched.append((kind, target_id)))
    return dispatched


def pending_effects():
    return sorted(set(OutboxMessage.objects.values_list("kind", "target_id")))


def judge(experiment, n, rater=None):
    rater = rater or UserFactory(roles=["rater"])
    judgements = []
    for _ in range(n):
        task = assignment_next(experiment=experiment, rater=rater)
        judgements.append(judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())[0])
    return judgements


def test_estimates_lagging_longer_than_the_grace_are_stale_and_the_reconciler_recomputes_them(
    engineer, no_effects, clock
):
    experiment = experiment_prepared(owner=engineer)
    current = experiment_prepared(owner=engineer, name="current")
    first = judge(experiment, 3)[0]
    judge(current, 2)
    estimates_refresh(experiment_id=current.pk)
    assert estimates_staleness_get(experiment=experiment) is None  # a refresh normally follows: not stale yet
    assert experiments_stale_list() == []

    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    stale = estimates_staleness_get(experiment=experiment)
    assert stale == {
        "since": first.created_at.isoformat(),
        "label": f"Stale since {first.created_at:%H:%M:%S} UTC",
        "help": stale["help"],
        "verdicts": 3,
        "estimated_verdicts": 0,
    }
    assert stale["help"].startswith("Estimates that lag the verdicts")
    assert experiments_stale_list() == [experiment.pk]

    pending = pending_effects()
    assert reconcile() == {"dispatched": len(pending), "recomputed": [experiment.pk]}
    assert sorted(no_effects) == pending  # the verdicts' own refreshes, which never reached the broker
    snapshot = EstimateSnapshot.objects.get(experiment=experiment)
    assert snapshot.judgements == 3
    assert snapshot.estimates == estimates_compute(experiment=Experiment.objects.get(pk=experiment.pk))
    assert estimates_staleness_get(experiment=experiment) is None
    assert EstimateSnapshot.objects.filter(experiment=current).count() == 1  # current estimates are left alone


def test_a_verdict_given_or_undone_after_the_snapshot_makes_it_stale(engineer, no_effects, clock):
    experiment = experiment_prepared(owner=engineer)
    rater = UserFactory(roles=["rater"])
    judgements = judge(experiment, 2, rater)
    estimates_refresh(experiment_id=experiment.pk)
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    assert estimates_staleness_get(experiment=experiment) is None

    clock.advance(1)
    judgement_undo(judgement_id=judgements[-1].pk, rater=rater)
    undone_at = clock.now
    assert estimates_staleness_get(experiment=experiment) is None
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    stale = estimates_staleness_get(experiment=experiment)
    assert (stale["since"], stale["verdicts"], stale["estimated_verdicts"]) == (undone_at.isoformat(), 1, 2)

    estimates_refresh(experiment_id=experiment.pk)
    judge(experiment, 1)
    given_at = clock.now
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    stale = estimates_staleness_get(experiment=experiment)
    assert (stale["since"], stale["verdicts"], stale["estimated_verdicts"]) == (given_at.isoformat(), 2, 1)


def test_a_verdict_committed_after_the_snapshot_read_with_an_older_time_is_seen_by_its_count(
    engineer, no_effects, clock
):
    experiment = experiment_prepared(owner=engineer)
    judge(experiment, 2)
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    EstimateSnapshot.objects.filter(pk=snapshot.pk).update(judgements=1)  # as if one verdict was read too late
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    stale = estimates_staleness_get(experiment=experiment)
    assert (stale["since"], stale["verdicts"], stale["estimated_verdicts"]) == (snapshot.created_at.isoformat(), 2, 1)


def test_the_reconciler_dispatches_the_pending_outbox(engineer, no_effects):
    OutboxMessage.objects.create(kind=Kind.EXPERIMENT_PREPARE, target_id=41, attempts=3, last_error="broker down")
    OutboxMessage.objects.create(kind=Kind.ESTIMATES_REFRESH, target_id=42)
    OutboxMessage.objects.create(kind=Kind.ESTIMATES_REFRESH, target_id=42)
    assert reconcile_task.apply().get() == {"dispatched": 2, "recomputed": []}
    assert no_effects == [(Kind.EXPERIMENT_PREPARE, 41), (Kind.ESTIMATES_REFRESH, 42)]
    assert OutboxMessage.objects.count() == 0


def test_one_experiment_that_cannot_be_recomputed_does_not_hold_up_the_others(engineer, no_effects, clock, monkeypatch):
    broken, fine = experiment_prepared(owner=engineer, name="broken"), experiment_prepared(owner=engineer, name="fine")
    judge(broken, 1)
    judge(fine, 1)
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    real = reconcile_module.estimates_refresh

    def refresh(*, experiment_id):
        if experiment_id == broken.pk:
            raise MemoryError("too big")
        return real(experiment_id=experiment_id)

    monkeypatch.setattr(reconcile_module, "estimates_refresh", refresh)
    pending = pending_effects()
    assert reconcile() == {"dispatched": len(pending), "recomputed": [fine.pk]}
    assert experiments_stale_list() == [broken.pk]


def test_the_beat_schedule_runs_the_reconciler_on_the_live_queue():
    entry = settings.CELERY_BEAT_SCHEDULE["reconcile"]
    assert (entry["task"], entry["schedule"]) == ("raterapp.reconcile", settings.RECONCILE_INTERVAL_SECONDS)
    assert entry["options"]["expires"] == settings.RECONCILE_INTERVAL_SECONDS
    assert settings.CELERY_TASK_ROUTES["raterapp.reconcile"]["queue"].startswith("live")
    assert reconcile_task.name == "raterapp.reconcile"


def test_the_dashboard_says_stale_since_and_its_version_changes(engineer, no_effects, clock):
    experiment = experiment_prepared(owner=engineer)
    Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.RATING)
    judge(experiment, 1)
    estimates_refresh(experiment_id=experiment.pk)
    client = APIClient()
    client.force_authenticate(engineer)
    url = f"/api/experiments/{experiment.pk}/dashboard/"
    current = client.get(url)
    assert current.json()["stale"] is None

    given = judge(experiment, 1)[0]
    clock.advance(settings.ESTIMATES_STALE_SECONDS + 1)
    stale = client.get(url, HTTP_IF_NONE_MATCH=current["ETag"])
    assert stale.status_code == 200 and stale["ETag"] != current["ETag"]
    body = stale.json()["stale"]
    assert (body["label"], body["verdicts"], body["estimated_verdicts"]) == (
        f"Stale since {given.created_at:%H:%M:%S} UTC", 2, 1
    )
    assert client.get(url, HTTP_IF_NONE_MATCH=stale["ETag"]).status_code == 304

    reconcile()
    caught_up = client.get(url, HTTP_IF_NONE_MATCH=stale["ETag"])
    assert caught_up.status_code == 200 and caught_up.json()["stale"] is None
