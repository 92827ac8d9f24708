"""Gold questions: pairs with a known answer that admins mix into raters' queues.

A gold question is a task of its own (``gold_answer`` set), beside the sampled task of the
same pair, whose verdicts keep counting in the estimates; gold verdicts count in none.
Retiring one stops serving it and keeps its verdicts (they count in gold accuracy).
Who created or retired a question, and when, is stored on its row.
"""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from metrics_core.io import InputError
from raterapp.access import ADMIN, require_role
from raterapp.models import Experiment, Item, PairTask
from raterapp.services.judging.progress import experiment_progress_recount

ANSWERS = dict(PairTask.GOLD_ANSWERS)
ADMINS_ONLY = "Only admins manage gold questions."


def gold_pair_create(*, experiment: Experiment, actor, item_a: str, item_b: str, answer: str) -> PairTask:
    """Mark the pair of two items of the experiment (by item id) as gold with ``answer``.

    The items may be any two items of the experiment's population: one that no sampled
    pair brought in gets its card from the catalogue now (experiments prepared in memory;
    on Dask only the sampled items are known here).
    """
    require_role(actor, ADMIN, ADMINS_ONLY)
    _answer_check(answer)
    item_a, item_b = str(item_a).strip(), str(item_b).strip()
    if not item_a:
        raise ValidationError({"item_a": "Give an item id."})
    if not item_b:
        raise ValidationError({"item_b": "Give an item id."})
    if item_a == item_b:
        raise ValidationError({"item_b": "A gold pair needs two different items."})
    items = _items_with_cards(experiment, [item_a, item_b])
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


def gold_answer_set(*, task: PairTask, actor, answer: str) -> PairTask:
    """Correct the known answer of a gold question; its raters' accuracy follows."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _gold_only(task)
    _answer_check(answer)
    PairTask.objects.filter(pk=task.pk).update(gold_answer=answer)
    task.gold_answer = answer
    return task


def gold_retire(*, task: PairTask, actor) -> PairTask:
    """No rater gets the gold question any more; the verdicts given stay."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _gold_only(task)
    return task_retire(task=task, actor=actor)


def gold_restore(*, task: PairTask, actor) -> PairTask:
    """Serve a retired gold question again."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _gold_only(task)
    PairTask.objects.filter(pk=task.pk).update(retired_at=None, retired_by=None)
    task.retired_at, task.retired_by = None, None
    experiment_progress_recount(experiment_id=task.experiment_id)
    return task


def task_retire(*, task: PairTask, actor) -> PairTask:
    """Stop serving a task to raters (a retired gold question, an excluded broken pair).
    Its live leases go; its verdicts stay and count as before."""
    with transaction.atomic():
        now = timezone.now()
        PairTask.objects.filter(pk=task.pk, retired_at__isnull=True).update(retired_at=now, retired_by=actor)
        task.leases.all().delete()
        experiment_progress_recount(experiment_id=task.experiment_id)  # an excluded pair wants no more verdicts
    task.refresh_from_db(fields=["retired_at", "retired_by"])
    return task


def experiment_gold_rate_set(*, experiment: Experiment, actor, gold_rate: float) -> Experiment:
    """Set the share of gold questions in raters' queues (0 turns them off)."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    if isinstance(gold_rate, bool) or not isinstance(gold_rate, (int, float)) or not 0.0 <= gold_rate <= 0.5:
        raise ValidationError({"gold_rate": "Must be between 0 and 0.5."})
    experiment.gold_rate = gold_rate
    experiment.save(update_fields=["gold_rate", "updated_at"])
    return experiment


# ---- helpers ---------------------------------------------------------------------------------


def _items_with_cards(experiment: Experiment, item_ids: list[str]) -> dict[str, Item]:
    """The experiment's Item rows of these ids, reading the missing ones from the population
    and the catalogue; a ``ValidationError`` names an id the experiment does not have."""
    items = {item.item_id: item for item in Item.objects.filter(experiment=experiment, item_id__in=item_ids)}
    missing = [item_id for item_id in item_ids if item_id not in items]
    new_items = {item.item_id: item for item in _items_from_catalogue(experiment, missing)} if missing else {}
    for field, item_id in zip(("item_a", "item_b"), item_ids):
        if item_id not in items and item_id not in new_items:
            raise ValidationError({field: f"No item {item_id!r} in this experiment."})
    if new_items:
        Item.objects.bulk_create(new_items.values(), ignore_conflicts=True)  # a concurrent request may add them too
        saved = Item.objects.filter(experiment=experiment, item_id__in=list(new_items))
        items |= {item.item_id: item for item in saved}
    return items


def _items_from_catalogue(experiment: Experiment, item_ids: list[str]) -> list[Item]:
    """Unsaved Item rows, with their cards, of those of ``item_ids`` in the population."""
    from raterapp.population_files import population_for_experiment
    from raterapp.services.experiments.uploads import uploads_local_open
    from raterapp.services.preparation.catalogue import catalogue_read
    from raterapp.services.preparation.sampled_rows import sampled_item_rows, sampled_items_at

    if not experiment.population_file:
        return []  # Dask engine, or not prepared: only carded items are known
    ids, population = population_for_experiment(experiment)
    wanted = set(item_ids)
    positions = np.array(sorted(k for k, item_id in enumerate(ids) if item_id in wanted), dtype=np.int64)
    if not len(positions):
        return []
    with uploads_local_open(experiment=experiment) as uploads:
        if "catalogue" not in uploads:
            return []
        try:
            catalogue = catalogue_read(path=uploads["catalogue"].path)
        except InputError:
            return []
        rows = sampled_items_at(experiment=experiment, ids=ids, population=population, positions=positions)
        return sampled_item_rows(experiment=experiment, catalogue=catalogue, items=rows)


def _gold_only(task: PairTask) -> None:
    if not task.is_gold:
        raise ValidationError({"task": "This pair is not a gold question."})


def _answer_check(answer: str) -> None:
    if answer not in ANSWERS:
        raise ValidationError({"answer": f"Must be one of {', '.join(ANSWERS)}."})
