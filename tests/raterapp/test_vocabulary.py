"""The shared words are defined once and every place that speaks them agrees."""

import uuid

import pytest
from django.core.exceptions import PermissionDenied
from drf_spectacular.generators import SchemaGenerator

from raterapp.access import ADMIN, RATER, require_role
from raterapp.api.serializers.budgets import BudgetUpdateSerializer
from raterapp.api.serializers.judging import NextPairSerializer
from raterapp.forms import BudgetForm
from raterapp.models import Judgement, PairTask, sampled_q
from raterapp.services.experiments.budgets import MAX_REPLICATION
from raterapp.services.judging.gold import gold_pair_create
from raterapp.vocabulary import RATER_BLOCKED_WORDS, QueueClosedReason, rater_end_screen_words
from tests.raterapp.prepared import experiment_prepared

REASONS = [
    "queue_empty",
    "quota_daily",
    "quota_total",
    "budget_spent",
    "budget_paused",
    "rater_paused",
    "not_assigned",
]


def test_the_queue_closed_reasons_are_the_seven_stable_codes():
    assert QueueClosedReason.values == REASONS
    assert QueueClosedReason.QUOTA_DAILY == "quota_daily" and str(QueueClosedReason.QUOTA_DAILY) == "quota_daily"


def test_the_rater_home_and_the_end_screen_explain_every_reason():
    assert set(RATER_BLOCKED_WORDS) == set(REASONS) == set(rater_end_screen_words())
    assert RATER_BLOCKED_WORDS["budget_spent"] is RATER_BLOCKED_WORDS[QueueClosedReason.BUDGET_SPENT]
    for words in RATER_BLOCKED_WORDS.values():
        assert all(title and text for title, text in (words["home"], words["end"])) and isinstance(words["waits"], bool)


def test_the_next_pair_answer_and_its_schema_list_every_reason():
    assert list(NextPairSerializer().fields["reason"].choices) == REASONS
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert schema["components"]["schemas"]["QueueClosedReasonEnum"]["enum"] == REASONS


def test_one_maximum_replication_bounds_the_service_form_and_api():
    assert MAX_REPLICATION == 20
    assert BudgetUpdateSerializer().fields["replication"].max_value == MAX_REPLICATION
    assert BudgetForm.base_fields["replication"].max_value == MAX_REPLICATION


@pytest.mark.parametrize("actor, refused", [(None, True), ("rater", True), ("engineer", True), ("admin", False)])
def test_require_role_refuses_anyone_without_it_with_the_reason(users, actor, refused):
    person = users[actor] if actor else None
    if refused:
        with pytest.raises(PermissionDenied, match="^Only admins do this.$"):
            require_role(person, ADMIN, "Only admins do this.")
    else:
        require_role(person, ADMIN, "Only admins do this.")
    require_role(users["rater"], RATER, "unused")


def test_sampled_and_gold_split_the_tasks(users):
    experiment = experiment_prepared(owner=users["engineer"])
    first = PairTask.objects.filter(experiment=experiment).order_by("rank").first()
    gold = gold_pair_create(
        experiment=experiment,
        actor=users["admin"],
        item_a=first.item_b.item_id,
        item_b=first.item_a.item_id,
        answer="equivalent",
    )
    everything = set(PairTask.objects.filter(experiment=experiment).values_list("pk", flat=True))
    sampled = set(PairTask.objects.sampled().filter(experiment=experiment).values_list("pk", flat=True))
    assert set(PairTask.objects.gold().filter(experiment=experiment).values_list("pk", flat=True)) == {gold.pk}
    assert sampled == everything - {gold.pk} and first.pk in sampled
    Judgement.objects.create(task=gold, rater=users["rater"], verdict="equivalent", client_id=uuid.uuid4())
    Judgement.objects.create(task=first, rater=users["rater"], verdict="equivalent", client_id=uuid.uuid4())
    assert list(Judgement.objects.filter(sampled_q("task__")).values_list("task", flat=True)) == [first.pk]
    assert list(Judgement.objects.exclude(sampled_q("task__")).values_list("task", flat=True)) == [gold.pk]
