"""Slice estimates are computed by the worker with each snapshot and stored on it; the slices
endpoint only reads them (an older snapshot without them shows them as pending)."""

import uuid

import pytest

from raterapp.models import EstimateSnapshot
from raterapp.selectors.samples import judged_sample_get
from raterapp.selectors.slices import PENDING_NOTE
from raterapp.services import slice_estimates
from raterapp.services.estimates import estimates_refresh
from raterapp.services.judging import assignment_next, judgement_submit
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


def test_each_snapshot_stores_the_slice_estimates_the_page_then_reads(client_of, judged, monkeypatch):
    snapshot = estimates_refresh(experiment_id=judged.pk)
    expected = slice_estimates.slice_estimates_compute(
        experiment=judged, judged=judged_sample_get(experiment=judged)
    )
    assert set(snapshot.slices) == {"colour"} and set(snapshot.slices["colour"]) == {"blue", "red"}
    assert EstimateSnapshot.objects.get(pk=snapshot.pk).slices == expected

    def refused(**kwargs):
        raise AssertionError("a read computed slice estimates")

    monkeypatch.setattr(slice_estimates, "estimate_quality_by_slice", refused)
    body = client_of("owner").get(f"/api/experiments/{judged.pk}/slices/?attribute=colour").json()
    assert (body["snapshot"], body["estimated_values"], body["note"]) == (snapshot.pk, 2, None)
    assert {row["label"]: row["metric"] for row in body["rows"]} == {
        label: value["metric"] for label, value in expected["colour"].items()
    }


def test_a_snapshot_from_before_slices_were_stored_shows_them_pending(client_of, judged):
    snapshot = estimates_refresh(experiment_id=judged.pk)
    EstimateSnapshot.objects.filter(pk=snapshot.pk).update(slices=None)
    body = client_of("owner").get(f"/api/experiments/{judged.pk}/slices/?attribute=colour").json()
    assert (body["estimated_values"], body["note"]) == (0, PENDING_NOTE)
    assert [(row["label"], row["metric"], row["contribution"]) for row in body["rows"]] == [
        ("blue", None, None),
        ("red", None, None),
    ]
    assert [row["impact"]["JaccardDistance"] is not None for row in body["rows"]] == [True, True]
