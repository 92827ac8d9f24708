"""Slice estimates are computed by the worker's derived step after each snapshot (never by the
snapshot itself, which must stay fast) and stored on its DerivedEstimate; the slices endpoint
only reads the newest ones (before any derived step they show as pending)."""

import uuid

import pytest

from raterapp.models import DerivedEstimate
from raterapp.selectors.samples import judged_sample_get
from raterapp.selectors.slices import PENDING_NOTE
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh import slice_estimates
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared


@pytest.fixture
def judged(people):
    experiment = experiment_prepared(owner=people["owner"], slices=True, confidence=0.9)
    rater = UserFactory(roles=["rater"])
    verdicts = ["equivalent", "not_equivalent", "unsure"]
    k = 0
    while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
        judgement_submit(task=task, rater=rater, verdict=verdicts[k % 3], client_id=uuid.uuid4())
        k += 1
    return experiment


def refused(**kwargs):
    raise AssertionError("slice estimates computed here")


def test_the_derived_step_stores_the_slice_estimates_the_page_then_reads(client_of, judged, monkeypatch):
    snapshot = estimates_refresh(experiment_id=judged.pk)
    derived = derived_refresh(experiment_id=judged.pk)
    expected = slice_estimates.slice_estimates_compute(experiment=judged, judged=judged_sample_get(experiment=judged))
    assert set(derived.slices) == {"colour"} and set(derived.slices["colour"]) == {"blue", "red"}
    assert DerivedEstimate.objects.get(pk=derived.pk).slices == expected

    monkeypatch.setattr(slice_estimates, "estimate_quality_by_slice", refused)
    body = client_of("owner").get(f"/api/experiments/{judged.pk}/slices/?attribute=colour").json()
    assert (body["snapshot"], body["estimated_values"], body["note"]) == (snapshot.pk, 2, None)
    assert body["computed_from"] == {
        "derived": derived.pk,
        "created_at": derived.created_at.isoformat(),
        "judgements": snapshot.judgements,
    }
    assert {row["label"]: row["metric"] for row in body["rows"]} == {
        label: value["metric"] for label, value in expected["colour"].items()
    }


def test_the_snapshot_no_longer_computes_slice_estimates(judged, monkeypatch):
    monkeypatch.setattr(slice_estimates, "estimate_quality_by_slice", refused)
    snapshot = estimates_refresh(experiment_id=judged.pk)
    assert snapshot.judgements > 0 and not hasattr(snapshot, "slices")


def test_the_page_shows_the_newest_slice_estimates_until_the_next_derived_step(client_of, judged):
    estimates_refresh(experiment_id=judged.pk)
    first = derived_refresh(experiment_id=judged.pk)
    newer = estimates_refresh(experiment_id=judged.pk)
    client = client_of("owner")
    body = client.get(f"/api/experiments/{judged.pk}/slices/?attribute=colour").json()
    assert (body["snapshot"], body["computed_from"]["derived"], body["note"]) == (newer.pk, first.pk, None)
    assert body["estimated_values"] == 2

    second = derived_refresh(experiment_id=judged.pk)
    body = client.get(f"/api/experiments/{judged.pk}/slices/?attribute=colour").json()
    assert body["computed_from"]["derived"] == second.pk != first.pk


def test_before_any_derived_step_the_slice_estimates_show_as_pending(client_of, judged):
    estimates_refresh(experiment_id=judged.pk)
    # A derived row from before the slices were computed there has none.
    DerivedEstimate.objects.create(experiment=judged, judgements=1, seconds=0.0, payload={}, slices=None)
    body = client_of("owner").get(f"/api/experiments/{judged.pk}/slices/?attribute=colour").json()
    assert (body["estimated_values"], body["note"], body["computed_from"]) == (0, PENDING_NOTE, None)
    assert [(row["label"], row["metric"], row["contribution"]) for row in body["rows"]] == [
        ("blue", None, None),
        ("red", None, None),
    ]
    assert [row["impact"]["JaccardDistance"] is not None for row in body["rows"]] == [True, True]
