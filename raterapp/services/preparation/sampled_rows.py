"""The sample of an experiment as rows: its items, its pairs and the judgement tasks.

The sample is ``metrics_core.sample_pairs`` with batch 0's stream of the seed
(``metrics_core.batch_rng``: ``np.random.default_rng(seed)``) and the task order from
``batch_order_rng`` (``default_rng(seed + 1)``): in draw order (``Experiment.task_order``, abcde-spec
§14) ``draw_positions`` and ``pairs_in_draw_order``, each pair storing its positions; in the random
order of older experiments ``pairs_for_judgement``. The stored seed reproduces both, in the app or
with the command line. A sample coupled to an earlier experiment of
the workspace (``coupled_sampling``) is ``metrics_core.sample_coupled`` instead, reproduced from the
seed and that experiment's sample. Later batches: ``sample_batches``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
from django.utils import timezone

from metrics_core import (
    PAIR_CLASSES,
    STRATA,
    PairSample,
    batch_order_rng,
    draw_positions,
    pairs_for_judgement,
    pairs_in_draw_order,
)
from metrics_core.sampling.order import rows_by_first_position
from raterapp.models import Experiment, Item, OutboxMessage, PairTask, SampleBatch, SampledPair
from raterapp.population_files import population_attributes, population_for_experiment
from raterapp.services.judging.progress import experiment_progress_recount
from raterapp.services.outbox import outbox_add
from raterapp.services.preparation.catalogue import Catalogue, catalogue_cards_at, catalogue_rows_for
from raterapp.services.sampling.coupled import batch_sample_draw
from raterapp.services.sampling.scores import builtin_scores_fill
from raterapp.services.sampling.verdict_reuse import reused_verdicts_record, tasks_reuse_apply

SELF = PAIR_CLASSES.index("self")


@dataclass(frozen=True, eq=False)
class SampledRows:
    """Unsaved rows of a sample: ``items`` sorted by position, tasks as position pairs in rank order.

    ``vantage_sets`` (Dask engine): per sample row the ``union``, ``base`` and ``exp`` set weights
    of the vantage item's cell (metrics_core.SampleContext), stored with the pairs. ``coupled_to_id``
    and ``coupled_kept``: the coupling of the draws, if any (``coupled_sampling``).
    """

    experiment: Experiment
    items: list[Item]
    positions: np.ndarray
    sample: PairSample
    task_a: np.ndarray
    task_b: np.ndarray
    vantage_sets: dict[str, np.ndarray] | None = None
    coupled_to_id: int | None = None
    coupled_kept: int | None = None
    row_positions: list[dict] | None = None  # per sample row, {batch: positions} (draw order)


def sample_tasks_ordered(
    *, experiment: Experiment, sample: PairSample, batch: int
) -> tuple[PairSample, np.ndarray, np.ndarray, list[dict] | None, np.ndarray | None]:
    """The batch's distinct non-self pairs in the experiment's task order, and per sample row its
    positions in the batch's permutation (``{"b": [...]}``; ``None`` in random order).

    In draw order the sample returned has its rows sorted by first position, as ``metrics_core
    sample`` writes them (metrics-cli.md), so that the stored rows, their exports and the command
    line's PAIRS files are one sample in one row order; ``order`` takes the drawn rows to them
    (``None`` in random order, the sample as drawn)."""
    rng = batch_order_rng(seed=experiment.seed, batch=batch)
    if experiment.task_order != Experiment.TaskOrder.DRAW:
        task_a, task_b = pairs_for_judgement(sample, rng=rng)
        return sample, task_a, task_b, None, None
    positions = draw_positions(sample, rng=rng)
    task_a, task_b = pairs_in_draw_order(sample, positions)
    order, positions = rows_by_first_position(sample.draws, positions)
    sample = replace(sample, **{name: getattr(sample, name)[order] for name in ROW_COLUMNS})
    offsets = np.concatenate(([0], np.cumsum(sample.draws))).tolist()
    listed = positions.tolist()
    row_positions = [{str(batch): listed[offsets[r] : offsets[r + 1]]} for r in range(len(sample))]
    return sample, task_a, task_b, row_positions, order


ROW_COLUMNS = ("i", "j", "pair_class", "stratum", "draws")


def sampled_rows_build(
    *, experiment: Experiment, catalogue: Catalogue, on_progress: Callable[[float], None]
) -> SampledRows:
    """Draw the sample (batch 0) and build the Item rows of every item in a sampled pair."""
    ids, population = population_for_experiment(experiment)
    drawn = batch_sample_draw(
        experiment=experiment, ids=ids, population=population, batch=0, n_draws=experiment.n_draws
    )
    sample = drawn.sample
    on_progress(0.4)
    positions = np.unique(np.concatenate([sample.i, sample.j]))
    sampled = sampled_items_at(experiment=experiment, ids=ids, population=population, positions=positions)
    rows = sampled_rows_assemble(experiment=experiment, catalogue=catalogue, items=sampled, sample=sample)
    on_progress(0.8)
    coupled_to_id = None if drawn.coupled_to is None else drawn.coupled_to.pk
    return replace(rows, coupled_to_id=coupled_to_id, coupled_kept=drawn.kept)


def sampled_items_at(*, experiment: Experiment, ids: np.ndarray, population, positions: np.ndarray) -> SampledItems:
    """What the Item rows of the items at ``positions`` (ascending) hold besides their cards."""
    attributes = {
        name: values.to_pylist() for name, values in population_attributes(experiment, positions=positions).items()
    }
    return SampledItems(
        positions=positions,
        item_id=ids[positions].tolist(),
        base_cluster=population.base_labels[population.base[positions]].tolist(),
        exp_cluster=population.exp_labels[population.exp[positions]].tolist(),
        weight=population.given_weight(population.weight[positions]).tolist(),
        attributes=attributes,
    )


@dataclass(frozen=True)
class SampledItems:
    """The items of a sample, by ascending position: what their Item rows hold besides the card."""

    positions: np.ndarray
    item_id: list
    base_cluster: list
    exp_cluster: list
    weight: list
    attributes: dict[str, list]


def sampled_rows_assemble(
    *,
    experiment: Experiment,
    catalogue: Catalogue,
    items: SampledItems,
    sample: PairSample,
    vantage_sets: dict[str, np.ndarray] | None = None,
    items_path: str | None = None,
) -> SampledRows:
    """The rows of a drawn sample: the items with their cards, and the tasks in the experiment's
    order (:func:`sample_tasks_ordered`) from batch 0's order stream (``default_rng(seed + 1)``)."""
    sample, task_a, task_b, row_positions, order = sample_tasks_ordered(experiment=experiment, sample=sample, batch=0)
    if order is not None and vantage_sets is not None:
        vantage_sets = {name: np.asarray(values)[order] for name, values in vantage_sets.items()}
    built = sampled_item_rows(experiment=experiment, catalogue=catalogue, items=items, items_path=items_path)
    return SampledRows(
        experiment, built, items.positions, sample, task_a, task_b, vantage_sets, row_positions=row_positions
    )


def sampled_item_rows(
    *, experiment: Experiment, catalogue: Catalogue, items: SampledItems, items_path: str | None = None
) -> list[Item]:
    """Unsaved Item rows of ``items``, with their cards from the catalogue."""
    item_ids = pa.array([str(item) for item in items.item_id], type=pa.string())
    items_path = experiment.population_file if items_path is None else items_path
    rows = catalogue_rows_for(catalogue=catalogue, item_ids=item_ids, items_path=items_path)
    cards = catalogue_cards_at(catalogue=catalogue, rows=rows)
    return [
        Item(
            experiment_id=experiment.pk,
            item_id=str(items.item_id[k]),
            position=int(p),
            title=cards["title"][k],
            description=cards["description"][k],
            image_url=cards["image_url"][k],
            url=cards["url"][k],
            attributes={name: values[k] for name, values in items.attributes.items()},
            base_cluster=str(items.base_cluster[k]),
            exp_cluster=str(items.exp_cluster[k]),
            weight=items.weight[k],
        )
        for k, p in enumerate(items.positions.tolist())
    ]


def sampled_rows_save(*, rows: SampledRows, batch_size: int) -> None:
    """Create the items, then the tasks (rank = order), then the pairs linked to their task and scored
    (abcde-spec §15), and record the sample as batch 0."""
    experiment, sample = rows.experiment, rows.sample
    SampleBatch.objects.filter(experiment_id=experiment.pk).delete()
    SampleBatch.objects.create(
        experiment_id=experiment.pk,
        index=0,
        draws=sample.n_draws,
        status=SampleBatch.Status.DONE,
        drawn_by_id=experiment.owner_id,
        finished_at=timezone.now(),
        new_pairs=len(sample),
        new_tasks=len(rows.task_a),
        repeated_pairs=0,
        coupled_to_id=rows.coupled_to_id,
        coupled_kept=rows.coupled_kept,
    )
    created = Item.objects.bulk_create(rows.items, batch_size=batch_size)
    item_pk = np.array([item.pk for item in created], dtype=np.int64)

    def pk_of(positions: np.ndarray) -> list[int]:
        return item_pk[np.searchsorted(rows.positions, positions)].tolist()

    tasks = [
        PairTask(experiment_id=experiment.pk, item_a_id=a, item_b_id=b, rank=rank, wanted=experiment.replication)
        for rank, (a, b) in enumerate(zip(pk_of(rows.task_a), pk_of(rows.task_b)))
    ]
    tasks_reuse_apply(experiment=experiment, tasks=tasks, item_ids={item.pk: item.item_id for item in created})
    tasks = PairTask.objects.bulk_create(tasks, batch_size=batch_size)
    if reused_verdicts_record(experiment=experiment, tasks=tasks, batch_size=batch_size):
        outbox_add(kind=OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=experiment.pk)  # answered already
    experiment_progress_recount(experiment_id=experiment.pk)
    task_of = {(a, b): task.pk for a, b, task in zip(rows.task_a.tolist(), rows.task_b.tolist(), tasks)}
    i, j = sample.i.tolist(), sample.j.tolist()
    vantage, partner = pk_of(sample.i), pk_of(sample.j)
    sets = rows.vantage_sets
    SampledPair.objects.bulk_create(
        [
            SampledPair(
                experiment_id=experiment.pk,
                vantage_id=vantage[k],
                partner_id=partner[k],
                pair_class=PAIR_CLASSES[code],
                stratum=STRATA[stratum],
                draws=draws,
                task_id=None if code == SELF else task_of[min(i[k], j[k]), max(i[k], j[k])],
                positions=None if rows.row_positions is None else rows.row_positions[k],
                **({} if sets is None else {f"vantage_{name}": float(sets[name][k]) for name in sets}),
            )
            for k, (code, stratum, draws) in enumerate(
                zip(sample.pair_class.tolist(), sample.stratum.tolist(), sample.draws.tolist())
            )
        ],
        batch_size=batch_size,
    )
    builtin_scores_fill(experiment=experiment)
