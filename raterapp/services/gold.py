"""Gold questions: pairs with a known answer that admins mix into raters' queues."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from raterapp.access import ADMIN, has_role
from raterapp.models import Experiment, Item, PairTask


def gold_pair_create(*, experiment: Experiment, actor, item_a: str, item_b: str, answer: str) -> PairTask:
    """Mark the pair of two items of the experiment (by item id) as gold with ``answer``.

    The items must be among the experiment's carded items (those of sampled pairs). The
    gold task is separate from the sampled task of the same pair, whose verdicts keep
    counting in the estimates; gold verdicts count in none.
    """
    if not has_role(actor, ADMIN):
        raise PermissionDenied("Only admins manage gold questions.")
    if answer not in dict(PairTask.GOLD_ANSWERS):
        raise ValidationError({"answer": f"Must be one of {', '.join(dict(PairTask.GOLD_ANSWERS))}."})
    if item_a == item_b:
        raise ValidationError({"item_b": "A gold pair needs two different items."})
    items = {item.item_id: item for item in Item.objects.filter(experiment=experiment, item_id__in=[item_a, item_b])}
    for field, item_id in (("item_a", item_a), ("item_b", item_b)):
        if item_id not in items:
            raise ValidationError({field: f"No item {item_id!r} with a card in this experiment."})
    first, second = sorted((items[item_a], items[item_b]), key=lambda item: item.position)
    try:
        with transaction.atomic():
            return PairTask.objects.create(
                experiment=experiment,
                item_a=first,
                item_b=second,
                rank=0,  # gold questions are served at random, not in rank order
                wanted=0,
                gold_answer=answer,
                created_by=actor,
            )
    except IntegrityError:
        raise ValidationError({"item_b": "This pair is already a gold question."}) from None


def experiment_gold_rate_set(*, experiment: Experiment, actor, gold_rate: float) -> Experiment:
    """Set the share of gold questions in raters' queues (0 turns them off)."""
    if not has_role(actor, ADMIN):
        raise PermissionDenied("Only admins change the gold rate.")
    if not 0.0 <= gold_rate <= 0.5:
        raise ValidationError({"gold_rate": "Must be between 0 and 0.5."})
    experiment.gold_rate = gold_rate
    experiment.save(update_fields=["gold_rate", "updated_at"])
    return experiment
