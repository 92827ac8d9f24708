import uuid

import pytest
from rest_framework.test import APIClient

from raterapp.models import BudgetPool, SampledPair
from raterapp.services.accounts.api_tokens import api_token_create
from raterapp.services.judging import assignment_next, judgement_submit, pair_report_create
from raterapp.services.judging.gold import gold_pair_create
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.refresh.rater_agreement import rater_agreement_refresh
from raterapp.services.refresh.rater_aware import rater_aware_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

ROLES = ("anonymous", "rater", "owner", "other", "admin")


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    """A media storage of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def people(db):
    """A user for each column of the role tables (anonymous is None)."""
    return {
        "anonymous": None,
        "rater": UserFactory(roles=["rater"]),
        "owner": UserFactory(roles=["engineer"]),
        "other": UserFactory(roles=["engineer"]),
        "admin": UserFactory(roles=["admin"]),
    }


@pytest.fixture
def client_of(people):
    """``client_of("owner")``: an API client logged in as that person."""

    def make(role):
        client = APIClient()
        if people[role] is not None:
            client.force_authenticate(people[role])
        return client

    return make


@pytest.fixture
def experiment(people):
    return experiment_prepared(owner=people["owner"])


@pytest.fixture
def world(people, experiment):
    """The owner's experiment with a snapshot, a verdict of the rater and a pair leased to them."""
    judged = assignment_next(experiment=experiment, rater=people["rater"])
    judgement, _ = judgement_submit(task=judged, rater=people["rater"], verdict="equivalent", client_id=uuid.uuid4())
    task = assignment_next(experiment=experiment, rater=people["rater"])
    estimates_refresh(experiment_id=experiment.pk)
    derived_refresh(experiment_id=experiment.pk)
    rater_aware_refresh(experiment_id=experiment.pk)
    rater_agreement_refresh(experiment_id=experiment.pk)
    rater_agreement_refresh(experiment_id=None)
    pair = SampledPair.objects.filter(experiment=experiment, task=judged).first()
    pool = BudgetPool.objects.create(name="team pool", max_verdicts=1000)
    token, _ = api_token_create(actor=people["owner"])
    gold = gold_pair_create(
        experiment=experiment, actor=people["admin"], item_a=judged.item_a.item_id, item_b=judged.item_b.item_id,
        answer="equivalent",
    )  # fmt: skip
    reporter = UserFactory(roles=["rater"])
    report, _ = pair_report_create(
        task=assignment_next(experiment=experiment, rater=reporter), rater=reporter, reason="unreadable"
    )
    return {
        "experiment": experiment, "task": task, "judgement": judgement, "pair": pair, "pool": pool,
        "rater": people["rater"], "owner": people["owner"], "token": token, "gold": gold, "report": report,
    }  # fmt: skip
