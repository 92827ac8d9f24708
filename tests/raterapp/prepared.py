"""Experiments ready for rating, built straight from rows and a population file.

What the preparation pipeline stores, without going through uploads: the population
Parquet, the exact impact, the Item rows of sampled items, the SampledPair rows, the
PairTasks in rank order and the record of batch 0 (sample with ``default_rng(seed)``, task order with
``default_rng(seed + 1)``, as the pipeline does). ``draw_order_experiment`` saves that sample again in
draw order; ``experiment_of`` is an experiment of any number of pairs, its rows only (no population).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
from django.db import connection

from metrics_core import PAIR_CLASSES, STRATA, impact_metrics, pairs_for_judgement, sample_pairs
from raterapp.models import Experiment, ExperimentBudget, ImpactGroup, Item, PairTask, SampleBatch, SampledPair
from raterapp.population_files import population_for_experiment, population_write
from raterapp.services.experiments.budgets import budget_create
from raterapp.services.judging.progress import experiment_progress_recount
from raterapp.services.preparation.impact_groups import impact_groups_build
from raterapp.services.preparation.sampled_rows import SampledRows, sample_tasks_ordered, sampled_rows_save
from raterapp.services.sampling.scores import builtin_scores_fill

# Base {0..5} {6..9} {10, 11}; Exp splits the first, merges the others: every pair class occurs.
BASE = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
EXP = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2]
SELF = PAIR_CLASSES.index("self")


def experiment_prepared(
    *,
    owner,
    base=BASE,
    exp=EXP,
    weights=None,
    scheme: str = "jaccard",
    n_draws: int = 300,
    replication: int = 1,
    seed: int = 7,
    confidence: float = 0.95,
    name: str = "prepared",
    slices: bool = False,
) -> Experiment:
    """With ``slices``, the population has the items' ``colour`` attribute (red for odd
    positions, blue for even, as their cards say) and the impact groups are stored."""
    experiment = Experiment.objects.create(
        name=name,
        owner=owner,
        scheme=scheme,
        n_draws=n_draws,
        replication=replication,
        seed=seed,
        confidence=confidence,
        question="Same person?",
        guidelines="Look at the names.",
        task_order=Experiment.TaskOrder.RANDOM,  # its tasks are made in random order below
    )
    budget_create(experiment=experiment)
    n = len(base)
    ids = [f"item-{k:03d}" for k in range(n)]
    columns = {
        "item_id": pa.array(ids),
        "base_cluster": pa.array([f"b{label}" for label in base]),
        "exp_cluster": pa.array([f"e{label}" for label in exp]),
        "weight": pa.array(np.ones(n) if weights is None else np.asarray(weights, dtype=float)),
    }
    if slices:
        columns["colour"] = pa.array(["red" if k % 2 else "blue" for k in range(n)])
    experiment.population_file = population_write(experiment_id=experiment.pk, columns=columns)
    _, population = population_for_experiment(experiment)
    experiment.impact = {**impact_metrics(population).as_dict(), "dropped_items": 0}
    experiment.items_count, experiment.dropped_items = n, 0
    experiment.status, experiment.progress = Experiment.Status.RATING, 1.0
    experiment.save()
    if slices:
        _, groups = impact_groups_build(experiment=experiment, on_progress=lambda _: None)
        ImpactGroup.objects.bulk_create(groups)

    sample = sample_pairs(population, n_draws=n_draws, scheme=scheme, rng=np.random.default_rng(seed))
    task_a, task_b = pairs_for_judgement(sample, rng=np.random.default_rng(seed + 1))
    positions = np.unique(np.concatenate([sample.i, sample.j])).tolist()
    items = {
        p: Item.objects.create(
            experiment=experiment,
            item_id=ids[p],
            position=p,
            title=f"Title {p}",
            description=f"Description {p}",
            image_url=f"https://img.example/{p}.png",
            url=f"https://example.org/{p}",
            attributes={"colour": "red" if p % 2 else "blue"},
            base_cluster=f"b{base[p]}",
            exp_cluster=f"e{exp[p]}",
            weight=1.0 if weights is None else float(weights[p]),
        )
        for p in positions
    }
    task_of = {}
    for rank, (a, b) in enumerate(zip(task_a.tolist(), task_b.tolist())):
        task_of[a, b] = PairTask.objects.create(
            experiment=experiment, item_a=items[a], item_b=items[b], rank=rank, wanted=replication
        )
    for i, j, code, stratum, draws in zip(
        sample.i.tolist(), sample.j.tolist(), sample.pair_class.tolist(), sample.stratum.tolist(), sample.draws.tolist()
    ):
        SampledPair.objects.create(
            experiment=experiment,
            vantage=items[i],
            partner=items[j],
            pair_class=PAIR_CLASSES[code],
            stratum=STRATA[stratum],
            draws=draws,
            task=None if code == SELF else task_of[min(i, j), max(i, j)],
        )
    SampleBatch.objects.create(experiment=experiment, index=0, draws=n_draws, status="done", drawn_by=owner)
    builtin_scores_fill(experiment=experiment)  # as the pipeline stores its pairs (abcde-spec §15)
    return experiment


def sample_of(experiment: Experiment):
    """The population and the sample the builder drew (same seed)."""
    _, population = population_for_experiment(experiment)
    sample = sample_pairs(
        population, n_draws=experiment.n_draws, scheme=experiment.scheme, rng=np.random.default_rng(experiment.seed)
    )
    return population, sample


def draw_order_experiment(owner, *, base=BASE, exp=EXP, n_draws=300, seed=11, title=None):
    """The prepared experiment's sample saved again through ``sampled_rows_save``, in draw order
    (``title``: each item's title by its position, instead of the builder's)."""
    experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=n_draws, seed=seed)
    population, sample = sample_of(experiment)
    items = [
        Item(
            experiment_id=experiment.pk,
            item_id=i.item_id,
            position=i.position,
            title=i.title if title is None else title(i.position),
            weight=i.weight,
        )
        for i in Item.objects.filter(experiment=experiment).order_by("position")
    ]
    positions = np.array([item.position for item in items], dtype=np.int64)
    SampledPair.objects.filter(experiment=experiment).delete()
    PairTask.objects.filter(experiment=experiment).delete()
    Item.objects.filter(experiment=experiment).delete()
    SampleBatch.objects.filter(experiment=experiment).delete()
    Experiment.objects.filter(pk=experiment.pk).update(task_order=Experiment.TaskOrder.DRAW)
    experiment.refresh_from_db()
    # The rows are stored sorted by first position (as metrics_core sample writes them); ``sample``
    # stays as drawn, the order its draw positions are dealt in.
    stored, task_a, task_b, row_positions, _ = sample_tasks_ordered(experiment=experiment, sample=sample, batch=0)
    rows = SampledRows(experiment, items, positions, stored, task_a, task_b, row_positions=row_positions)
    sampled_rows_save(rows=rows, batch_size=100)
    return experiment, population, sample


def experiment_of(n_pairs: int, owner) -> Experiment:
    """An experiment in rating, open to all raters, of ``n_pairs`` tasks over as few items as hold them."""
    experiment = Experiment.objects.create(
        name=f"{n_pairs} pairs", owner=owner, status=Experiment.Status.RATING, open_to_all_raters=True, gold_rate=0
    )
    ExperimentBudget.objects.update_or_create(experiment=experiment, defaults={"max_verdicts": None})
    n_items = math.ceil((1 + math.sqrt(1 + 8 * n_pairs)) / 2)
    items = Item.objects.bulk_create(
        Item(experiment=experiment, item_id=f"i{k}", position=k, title=f"Item {k}", base_cluster="b", exp_cluster="e",
             weight=1.0)
        for k in range(n_items)
    )  # fmt: skip
    ranks = np.random.default_rng(n_pairs).permutation(n_pairs)
    pairs = itertools.islice(itertools.combinations(items, 2), n_pairs)
    PairTask.objects.bulk_create(
        (PairTask(experiment=experiment, item_a=a, item_b=b, rank=int(r), wanted=1) for (a, b), r in zip(pairs, ranks)),
        batch_size=10_000,
    )
    experiment_progress_recount(experiment_id=experiment.pk)  # as the services that add tasks do
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE raterapp_pairtask")
    return experiment
