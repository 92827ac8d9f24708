"""The batch form never proposes what the batch API refuses (issue 32): the form's prefilled draws
and the API read one limit (``raterapp.selectors.batches``); a proposal cut to it says so."""

import re

from raterapp.models import Experiment, SampleBatch
from raterapp.selectors import batches
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.helpers.dashboard import judge, raters
from tests.raterapp.prepared import experiment_prepared


def form_of(people, experiment):
    """The experiment page's batch form: its prefilled draws, its max and its note on the limit."""
    from django.test import Client

    page = Client()
    page.force_login(people["owner"])
    html = page.get(f"/experiments/{experiment.pk}/").content.decode()
    field = re.search(r'<input id="batch-draws"[^>]*>', html).group(0)
    note = re.search(r'<p class="small" id="batch-limit" data-batch-limit>(.*?)</p>', html, re.S).group(1)
    return int(re.search(r'value="(\d+)"', field).group(1)), int(re.search(r'max="(\d+)"', field).group(1)), note


def post(client_of, experiment, draws):
    return client_of("owner").post(f"/api/experiments/{experiment.pk}/batches/", {"draws": draws}, format="json")


def undecided(people, n_draws=300):
    """ΔPrecision decides, after a few verdicts: far from settled, so the plan wants many draws
    (beyond the sample's waiting pairs, which are judged first, when the sample is small)."""
    experiment = experiment_prepared(owner=people["owner"], n_draws=n_draws)
    # A margin near the estimate (about −0.24 here): settling takes far more than the waiting pairs.
    Experiment.objects.filter(pk=experiment.pk).update(decision_metric="DeltaPrecision", equivalence_margin=0.2)
    experiment.refresh_from_db()
    judge(experiment, raters(1), limit=4)
    estimates_refresh(experiment_id=experiment.pk)
    return experiment


def test_a_plan_beyond_the_batch_limit_is_proposed_at_the_limit_and_the_api_accepts_it(people, client_of, monkeypatch):
    monkeypatch.setattr(batches, "MAX_BATCH_DRAWS", 100)
    experiment = undecided(people, n_draws=100)
    settle = client_of("owner").get(f"/api/experiments/{experiment.pk}/decision/").json()["settle"]
    assert settle["needed_draws"] > 100  # the plan exceeds what one batch may hold
    assert (settle["suggested_draws"], settle["suggested_clamped"]) == (100, True)

    draws, most, note = form_of(people, experiment)
    assert (draws, most) == (100, 100)
    assert "Capped" in note and f"{settle['needed_draws']:,}" in note and "at most 100" in note
    assert post(client_of, experiment, draws + 1).status_code == 400  # the form's max is the API's
    assert client_of("owner").get(f"/api/experiments/{experiment.pk}/batches/plan/?draws={draws}").status_code == 200
    response = post(client_of, experiment, draws)
    assert response.status_code == 202, response.json()
    assert SampleBatch.objects.get(experiment=experiment, index=1).draws == 100


def test_the_room_left_in_the_sample_caps_the_proposal_too(people, client_of, monkeypatch):
    experiment = undecided(people)
    monkeypatch.setattr(batches, "MAX_TOTAL_DRAWS", 300 + 40)  # batch 0 holds 300 draws: room for 40
    draws, most, note = form_of(people, experiment)
    assert (draws, most) == (40, 40) and "Capped" in note
    assert post(client_of, experiment, 41).status_code == 400
    assert post(client_of, experiment, draws).status_code == 202

    monkeypatch.setattr(batches, "MAX_TOTAL_DRAWS", 300)  # full: nothing to propose, and the form says so
    SampleBatch.objects.filter(experiment=experiment, index=1).delete()
    draws, most, note = form_of(people, experiment)
    assert most == 0 and "no batch can be added" in note
    assert post(client_of, experiment, 1).status_code == 400


def test_a_plan_within_the_limit_is_proposed_as_it_is(people, client_of):
    experiment = undecided(people, n_draws=100)
    settle = client_of("owner").get(f"/api/experiments/{experiment.pk}/decision/").json()["settle"]
    assert settle["suggested_clamped"] is False and settle["suggested_draws"] == settle["needed_draws"]
    draws, most, note = form_of(people, experiment)
    assert draws == settle["needed_draws"] and most == batches.MAX_BATCH_DRAWS
    assert "Capped" not in note and f"{batches.MAX_BATCH_DRAWS:,}" in note
