"""More draws for an experiment: batches appended to its sample (abcde-spec §10).

Batch ``b`` is drawn from the same distribution as batch 0 with its own stream of the seed
(``metrics_core.batch_rng``; coupled to an earlier experiment's batch ``b`` when one qualifies:
``coupled_sampling``), so the union of the batches is one larger i.i.d. sample. A pair
drawn again gets more draws; a new distinct pair becomes a sampled pair and, unless it is a
self pair or already a task, a task ranked after every existing one, in the batch's own order
(``batch_order_rng``): by first draw in draw order (abcde-spec §14; each pair keeps its positions
in every batch that drew it), random in older experiments.

The owner (or an admin) asks for a batch (:func:`sample_batch_request`); the worker draws it
(:func:`sample_batch_draw`), outside any transaction, then appends every row in one
transaction, so a batch is all or nothing. At most one batch of an experiment is being drawn
(a unique constraint). A batch whose drawing failed keeps its message; asking again draws
the next index afresh. A batch whose worker vanished is re-queued by asking again once it is
older than ``STALE_AFTER``.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from metrics_core import PAIR_CLASSES, STRATA, PairSample
from metrics_core.io import InputError
from raterapp.exceptions import DATABASE_OUT_OF_REACH
from raterapp.models import Experiment, Item, OutboxMessage, PairTask, SampleBatch, SampledPair
from raterapp.population_files import population_for_experiment
from raterapp.selectors import batches
from raterapp.selectors.batches import sample_batch_draws_limit, sample_batches_drawn_total
from raterapp.services.experiments.uploads import upload_message_for_user, uploads_local_open
from raterapp.services.judging.progress import experiment_progress_recount
from raterapp.services.outbox import outbox_add
from raterapp.services.preparation.catalogue import catalogue_read
from raterapp.services.preparation.sampled_rows import sample_tasks_ordered, sampled_item_rows, sampled_items_at
from raterapp.services.sampling.coupled import batch_sample_draw
from raterapp.services.sampling.scores import builtin_scores_fill
from raterapp.services.sampling.verdict_reuse import reused_verdicts_record, tasks_reuse_apply

logger = logging.getLogger(__name__)
Status = Experiment.Status

STALE_AFTER = timedelta(minutes=15)
_BULK = 5000


def sample_batch_request(
    *,
    experiment: Experiment,
    actor,
    draws: int,
    expected_verdicts: float | None = None,
    request_id: uuid.UUID | None = None,
):
    """Ask for another batch of ``draws`` draws; the worker draws it. Returns the batch.

    ``request_id``, the client's id of the request: a request that repeats one (a double click, a
    retry after a lost answer) returns the batch the first asked for, drawn or not, and asks for
    nothing more. Refused (ValidationError) before the sample exists, past the size limits, and while
    another batch is being drawn (unless that one is stale: then it is queued again and returned).
    Experiments prepared on Dask draw their batches there (:mod:`.dask_batches`).
    """
    if request_id is not None:
        asked = SampleBatch.objects.filter(experiment=experiment, request_id=request_id).first()
        if asked is not None:
            return asked
    if experiment.status not in (Status.RATING, Status.DONE):
        raise ValidationError({"draws": "More draws can be added once the experiment is prepared."})
    if not isinstance(draws, int) or not 1 <= draws <= batches.MAX_BATCH_DRAWS:
        raise ValidationError({"draws": f"Give a whole number of draws from 1 to {batches.MAX_BATCH_DRAWS:,}."})
    limit = sample_batch_draws_limit(experiment=experiment)
    if draws > limit:
        drawn = sample_batches_drawn_total(experiment=experiment)
        raise ValidationError(
            {
                "draws": f"The sample holds {drawn:,} draws and may hold {batches.MAX_TOTAL_DRAWS:,} in all: "
                f"ask for at most {limit:,}."
            }
        )
    stale = SampleBatch.objects.filter(
        experiment=experiment, status=SampleBatch.Status.DRAWING, created_at__lt=timezone.now() - STALE_AFTER
    ).first()
    if stale is not None:
        outbox_add(kind=OutboxMessage.Kind.SAMPLE_BATCH_DRAW, target_id=stale.pk)
        return stale
    index = (SampleBatch.objects.filter(experiment=experiment).aggregate(last=Max("index"))["last"] or 0) + 1
    try:
        with transaction.atomic():
            batch = SampleBatch.objects.create(
                experiment=experiment,
                index=index,
                draws=draws,
                drawn_by=actor,
                expected_verdicts=expected_verdicts,
                request_id=request_id,
            )
            outbox_add(kind=OutboxMessage.Kind.SAMPLE_BATCH_DRAW, target_id=batch.pk)
    except IntegrityError:
        if request_id is not None:  # the same request, racing: the first one's batch
            asked = SampleBatch.objects.filter(experiment=experiment, request_id=request_id).first()
            if asked is not None:
                return asked
        raise ValidationError({"draws": "A batch is being drawn; wait until it is done."}) from None
    return batch


def sample_batch_draw(*, batch_id: int) -> None:
    """Draw a requested batch and append it to the sample; idempotent (a drawn batch is left alone).

    Bad data or an unexpected error ends the batch ``failed`` with a message (and, for the
    unexpected, an error id in the log); the sample is untouched either way.
    """
    batch = SampleBatch.objects.select_related("experiment").filter(pk=batch_id).first()
    if batch is None or batch.status != SampleBatch.Status.DRAWING:
        return
    try:
        rows = _batch_rows_build(batch)
        _batch_rows_append(batch, rows)
    except DATABASE_OUT_OF_REACH:
        raise  # a lost database connection: the task tries again, the batch stays drawing
    except InputError as exc:
        _batch_fail(batch, str(exc))
    except (ValidationError, ValueError) as exc:
        _batch_fail(batch, "; ".join(getattr(exc, "messages", [str(exc)])))
    except Exception:
        error_id = uuid.uuid4().hex[:12]
        logger.exception("batch %s of experiment %s failed (error %s)", batch.index, batch.experiment_id, error_id)
        _batch_fail(batch, f"An unexpected error stopped the drawing (error id {error_id}); ask for the batch again.")


@dataclass(frozen=True, eq=False)
class _BatchRows:
    sample: PairSample
    new_items: list[Item]
    task_a: np.ndarray  # positions of the batch's distinct unordered non-self pairs, in its random order
    task_b: np.ndarray
    coupled_to_id: int | None = None
    coupled_kept: int | None = None
    row_positions: list[dict] | None = None  # per sample row, {"b": positions} (draw order)
    vantage_sets: dict[str, np.ndarray] | None = None  # Dask engine: per sample row, its vantage cell's weights


def _batch_rows_build(batch: SampleBatch) -> _BatchRows:
    """Draw the batch and build the rows of the items no earlier batch drew (outside any transaction)."""
    experiment = batch.experiment
    if experiment.engine == Experiment.Engine.DASK:
        return _dask_batch_rows_build(batch)
    ids, population = population_for_experiment(experiment)
    drawn = batch_sample_draw(
        experiment=experiment, ids=ids, population=population, batch=batch.index, n_draws=batch.draws
    )
    sample = drawn.sample
    known = np.array(
        sorted(Item.objects.filter(experiment=experiment).values_list("position", flat=True)), dtype=np.int64
    )
    positions = np.setdiff1d(np.unique(np.concatenate([sample.i, sample.j])), known)
    new_items: list[Item] = []
    if len(positions):
        with uploads_local_open(experiment=experiment) as uploads:
            try:
                catalogue = catalogue_read(path=uploads["catalogue"].path)
            except InputError as exc:
                raise InputError(exc.path, upload_message_for_user(message=str(exc), uploads=uploads)) from None
            items = sampled_items_at(experiment=experiment, ids=ids, population=population, positions=positions)
            new_items = sampled_item_rows(experiment=experiment, catalogue=catalogue, items=items)
    sample, task_a, task_b, row_positions, _ = sample_tasks_ordered(
        experiment=experiment, sample=sample, batch=batch.index
    )
    coupled_to = None if drawn.coupled_to is None else drawn.coupled_to.pk
    return _BatchRows(sample, new_items, task_a, task_b, coupled_to, drawn.kept, row_positions)


def _dask_batch_rows_build(batch: SampleBatch) -> _BatchRows:
    """The same rows for an experiment prepared on Dask, drawn there (Dask is imported on use)."""
    from raterapp.services.sampling.dask_batches import dask_batch_build

    experiment = batch.experiment
    drawn = dask_batch_build(experiment=experiment, batch=batch.index, n_draws=batch.draws)
    sample, task_a, task_b, row_positions, order = sample_tasks_ordered(
        experiment=experiment, sample=drawn.sample, batch=batch.index
    )
    sets = drawn.vantage_sets
    if order is not None:
        sets = {name: values[order] for name, values in sets.items()}
    return _BatchRows(sample, drawn.new_items, task_a, task_b, drawn.coupled_to_id, drawn.kept, row_positions, sets)


@transaction.atomic
def _batch_rows_append(batch: SampleBatch, rows: _BatchRows) -> None:
    """Append the batch in one transaction: items, tasks and pairs that are new, more draws for the rest."""
    experiment = batch.experiment
    # Locking the batch row first makes a concurrent run of the same batch wait, then stop.
    if not SampleBatch.objects.select_for_update().filter(pk=batch.pk, status=SampleBatch.Status.DRAWING).exists():
        return
    Item.objects.bulk_create(rows.new_items, batch_size=_BULK)
    item_of = dict(Item.objects.filter(experiment=experiment).values_list("position", "pk"))
    task_of = _tasks_by_positions(experiment)
    rank = (PairTask.objects.sampled().filter(experiment=experiment).aggregate(r=Max("rank"))["r"] or -1) + 1
    new_tasks = [
        PairTask(experiment=experiment, item_a_id=item_of[a], item_b_id=item_of[b], wanted=experiment.replication)
        for a, b in zip(rows.task_a.tolist(), rows.task_b.tolist())
        if (a, b) not in task_of
    ]
    for offset, task in enumerate(new_tasks):
        task.rank = rank + offset
    item_ids = dict(Item.objects.filter(experiment=experiment).values_list("pk", "item_id"))
    tasks_reuse_apply(experiment=experiment, tasks=new_tasks, item_ids=item_ids)
    PairTask.objects.bulk_create(new_tasks, batch_size=_BULK)
    reused_verdicts_record(experiment=experiment, tasks=new_tasks, batch_size=_BULK)
    experiment_progress_recount(experiment_id=experiment.pk)
    position_of_item = {pk: position for position, pk in item_of.items()}
    for task in new_tasks:
        task_of[position_of_item[task.item_a_id], position_of_item[task.item_b_id]] = task.pk
    existing = {
        (position_of_item[v], position_of_item[p]): pair
        for pair, v, p in SampledPair.objects.filter(experiment=experiment).values_list("pk", "vantage", "partner")
    }
    sample, more, created = rows.sample, {}, []
    unordered: list[dict | None] = [None] * len(sample)
    row_positions = rows.row_positions or unordered
    sets = rows.vantage_sets
    for k, (i, j, code, stratum, draws, positions) in enumerate(
        zip(
            sample.i.tolist(),
            sample.j.tolist(),
            sample.pair_class.tolist(),
            sample.stratum.tolist(),
            sample.draws.tolist(),
            row_positions,
        )
    ):
        if (i, j) in existing:
            more[existing[i, j]] = (draws, positions)
            continue
        created.append(
            SampledPair(
                experiment=experiment,
                vantage_id=item_of[i],
                partner_id=item_of[j],
                pair_class=PAIR_CLASSES[code],
                stratum=STRATA[stratum],
                draws=draws,
                batch=batch.index,
                task_id=None if PAIR_CLASSES[code] == "self" else task_of[min(i, j), max(i, j)],
                positions=positions,
                **({} if sets is None else {f"vantage_{name}": float(sets[name][k]) for name in sets}),
            )
        )
    SampledPair.objects.bulk_create(created, batch_size=_BULK)
    builtin_scores_fill(experiment=experiment)  # the new pairs (abcde-spec §15)
    repeated = list(SampledPair.objects.filter(pk__in=list(more)).only("pk", "draws", "positions"))
    for pair in repeated:
        draws, positions = more[pair.pk]
        pair.draws += draws
        if positions is not None and pair.positions is not None:
            pair.positions = {**pair.positions, **positions}
    SampledPair.objects.bulk_update(repeated, ["draws", "positions"], batch_size=_BULK)
    SampleBatch.objects.filter(pk=batch.pk).update(
        status=SampleBatch.Status.DONE,
        finished_at=timezone.now(),
        new_pairs=len(created),
        new_tasks=len(new_tasks),
        repeated_pairs=len(repeated),
        coupled_to_id=rows.coupled_to_id,
        coupled_kept=rows.coupled_kept,
    )
    Experiment.objects.filter(pk=experiment.pk).update(
        sample_version=F("sample_version") + 1, updated_at=timezone.now()
    )
    outbox_add(kind=OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=experiment.pk)


def _tasks_by_positions(experiment: Experiment) -> dict[tuple[int, int], int]:
    """The experiment's (non-gold) tasks by the positions of their items, lower first."""
    rows = (
        PairTask.objects.sampled()
        .filter(experiment=experiment)
        .values_list("pk", "item_a__position", "item_b__position")
    )
    return {(min(a, b), max(a, b)): pk for pk, a, b in rows}


def _batch_fail(batch: SampleBatch, message: str) -> None:
    SampleBatch.objects.filter(pk=batch.pk, status=SampleBatch.Status.DRAWING).update(
        status=SampleBatch.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )
    logger.info("batch %s of experiment %s failed: %s", batch.index, batch.experiment_id, message)
