"""An experiment's sampled pairs and verdicts, as the arrays metrics_core takes and as export rows.

Item positions (``Item.position``) index the population arrays; item ids are what
people read, so exports carry ids, the columns of the metrics_core command line
(``i, j, pair_class, stratum, draws, scheme`` and ``i, j, verdict``) first.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from metrics_core import (
    PAIR_CLASSES,
    STRATA,
    PairSample,
    PairVerdicts,
    Population,
    SampleContext,
    jaccard_contributions,
    verdicts_from_judgements,
)
from raterapp.models import Experiment, Item, Judgement, PairTask, ReusedVerdict, SampledPair, sampled_q
from raterapp.population_files import ExperimentCache, population_for_experiment, population_version

PAIR_FIELDS: tuple[str, ...] = (
    "i",
    "j",
    "pair_class",
    "stratum",
    "draws",
    "scheme",
    "jaccard_contribution",
    "task",
    "verdicts",
    "wanted",
    "batch",
    "score",
)
JUDGEMENT_FIELDS = ("i", "j", "verdict", "task", "rater", "comment", "created_at", "reused", "source_experiment")


@dataclass(frozen=True)
class JudgedSample:
    """An experiment's population, sample and every verdict on it, as metrics_core takes them.

    Experiments prepared on Dask have no population here: ``context`` holds what the
    estimators need of it. ``source`` is whichever the experiment has.
    """

    population: Population | None
    sample: PairSample
    i: np.ndarray  # positions of the judged pairs' items, one row per verdict
    j: np.ndarray
    verdict: np.ndarray
    verdicts: PairVerdicts
    context: SampleContext | None = None
    scores: np.ndarray | None = None  # each sample row's score (abcde-spec §15); NaN where unscored

    @property
    def source(self) -> Population | SampleContext:
        return self.population if self.population is not None else cast(SampleContext, self.context)

    @property
    def n_positions(self) -> int:
        """One more than the largest item position (positions index the population, or the sample's items)."""
        if self.population is not None:
            return self.population.n_items
        return int(max(self.sample.i.max(initial=-1), self.sample.j.max(initial=-1))) + 1


@dataclass(frozen=True)
class _FixedSample:
    """What never changes once an experiment is open for rating: its sample (rows in
    ``SampledPair`` id order, ``pair_ids``), and the item positions of its (non-gold) tasks
    by task id."""

    sample: PairSample
    pair_ids: np.ndarray
    task_ids: np.ndarray  # sorted
    task_a: np.ndarray
    task_b: np.ndarray
    context: SampleContext | None = None  # Dask engine: what the estimators need of the population
    scores: np.ndarray | None = None  # each row's score (abcde-spec §15); NaN where unscored
    # Computed on first use, against the population of the version the sample was read with.
    derived: dict = field(default_factory=dict, compare=False)

    def contributions(self, population: Population | None) -> np.ndarray:
        if "contributions" not in self.derived:
            source = self.context if population is None else population
            self.derived["contributions"] = jaccard_contributions(source, self.sample)
        return self.derived["contributions"]


# Per experiment, tagged with its sample version and its population file's version (population_files'
# one rule). Bounded: a process serves a few experiments at a time.
SAMPLE_CACHE_SIZE = 8
_FIXED: ExperimentCache[_FixedSample] = ExperimentCache(SAMPLE_CACHE_SIZE)


def judged_sample_get(*, experiment: Experiment) -> JudgedSample:
    """Everything an estimate of the experiment rests on, read in one go so that it agrees.

    The sample and the tasks are read once per process (a recompute then reads only the
    verdicts: one row per verdict, no join to the items).
    """
    population = _population_of(experiment)
    fixed = _fixed_sample(experiment, population)
    rows = list(
        Judgement.objects.filter(sampled_q("task__"), task__experiment=experiment).values_list("task_id", "verdict")
    )
    rows += ReusedVerdict.objects.filter(experiment=experiment).values_list("task_id", "source__verdict")
    task = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    verdict = np.array([row[1] for row in rows], dtype=object)
    index = np.searchsorted(fixed.task_ids, task)
    if len(task) and (index.max() >= len(fixed.task_ids) or (fixed.task_ids[index] != task).any()):
        fixed = _fixed_sample_read(experiment, population)  # tasks changed meanwhile: as they are now
        index = np.searchsorted(fixed.task_ids, task)
    i, j = fixed.task_a[index], fixed.task_b[index]
    return JudgedSample(
        population,
        fixed.sample,
        i,
        j,
        verdict,
        verdicts_from_judgements(i, j, verdict),
        context=fixed.context,
        scores=fixed.scores,
    )


def sample_contributions_get(*, experiment: Experiment) -> dict[int, float]:
    """Every sampled pair's contribution to JaccardDistance (JDD §4.5), by ``SampledPair`` id."""
    population = _population_of(experiment)
    fixed = _fixed_sample(experiment, population)
    return dict(zip(fixed.pair_ids.tolist(), fixed.contributions(population).tolist(), strict=True))


def _population_of(experiment: Experiment) -> Population | None:
    """The population in memory; None for an experiment prepared on Dask (it has none)."""
    if experiment.engine == Experiment.Engine.DASK:
        return None
    return population_for_experiment(experiment)[1]


def _fixed_sample(experiment: Experiment, population: Population | None) -> _FixedSample:
    """The sample, kept once sampling is over (rating or done); a batch appended after that is a
    new ``sample_version``."""
    version = (experiment.sample_version, None if population is None else population_version(experiment))
    sampling_over = experiment.status in (Experiment.Status.RATING, Experiment.Status.DONE)
    read = functools.partial(_fixed_sample_read, experiment, population)
    return _FIXED.get_or_read(experiment, version, read, keep=sampling_over)


def _fixed_sample_read(experiment: Experiment, population: Population | None) -> _FixedSample:
    position_of = _item_positions(experiment)
    tasks = PairTask.objects.sampled().filter(experiment=experiment).order_by("pk")
    task_ids, a, b = (np.asarray(c, dtype=np.int64) for c in _columns(tasks.values_list("pk", "item_a", "item_b"), 3))
    if population is None:
        pair_ids, sample, context = _sample_read_with_context(experiment, position_of)
    else:
        (pair_ids, sample), context = _sample_read(experiment, population, position_of), None
    scores = _scores_read(experiment, pair_ids)
    return _FixedSample(sample, pair_ids, task_ids, position_of(a), position_of(b), context, scores)


def _scores_read(experiment: Experiment, pair_ids: np.ndarray) -> np.ndarray:
    """Each sampled pair's score, in ``pair_ids`` order (NaN where it has none)."""
    rows = SampledPair.objects.filter(experiment=experiment).order_by("pk").values_list("pk", "score")
    pk, score = _columns(rows, 2)
    scores = np.array([np.nan if value is None else value for value in score], dtype=np.float64)
    if not np.array_equal(np.asarray(pk, dtype=np.int64), pair_ids):  # pairs added meanwhile: by id
        scores = scores[np.searchsorted(np.asarray(pk, dtype=np.int64), pair_ids)]
    return scores


def _item_positions(experiment: Experiment):
    """Item row id → population position, for reading pairs without joining the items."""
    ids, positions = (
        np.asarray(c, dtype=np.int64)
        for c in _columns(Item.objects.filter(experiment=experiment).order_by("pk").values_list("pk", "position"), 2)
    )
    return lambda item_ids: positions[np.searchsorted(ids, item_ids)]


def _sample_read(experiment: Experiment, population: Population, position_of) -> tuple[np.ndarray, PairSample]:
    rows = SampledPair.objects.filter(experiment=experiment).order_by("pk")
    pk, i, j, draws, pair_class, stratum = _columns(
        rows.values_list("pk", "vantage", "partner", "draws", "pair_class", "stratum"), 6
    )
    return np.asarray(pk, dtype=np.int64), PairSample.from_columns(
        population,
        scheme=experiment.scheme,
        i=position_of(np.asarray(i, dtype=np.int64)),
        j=position_of(np.asarray(j, dtype=np.int64)),
        draws=np.asarray(draws, dtype=np.int64),
        pair_class=np.asarray(pair_class, dtype=object),
        stratum=np.asarray(stratum, dtype=object),
        diff_share=experiment.diff_share if experiment.scheme == Experiment.Scheme.STRATIFIED else None,
    )


def _sample_read_with_context(experiment: Experiment, position_of) -> tuple[np.ndarray, PairSample, SampleContext]:
    """The sample of an experiment prepared on Dask, with the vantage cells' weights stored beside it."""
    rows = SampledPair.objects.filter(experiment=experiment).order_by("pk")
    fields = (
        "pk",
        "vantage",
        "partner",
        "draws",
        "pair_class",
        "stratum",
        "vantage_union",
        "vantage_base",
        "vantage_exp",
    )
    pk, i, j, draws, pair_class, stratum, union, base, exp = _columns(rows.values_list(*fields), len(fields))
    sample = PairSample(
        experiment.scheme,
        position_of(np.asarray(i, dtype=np.int64)),
        position_of(np.asarray(j, dtype=np.int64)),
        np.array([PAIR_CLASSES.index(c) for c in pair_class], dtype=np.int64),
        np.array([STRATA.index(c) for c in stratum], dtype=np.int64),
        np.asarray(draws, dtype=np.int64),
        experiment.diff_share if experiment.scheme == Experiment.Scheme.STRATIFIED else None,
    )
    impact = experiment.impact or {}
    context = SampleContext.from_columns(
        union=np.asarray(union, dtype=float),
        base=np.asarray(base, dtype=float),
        exp=np.asarray(exp, dtype=float),
        totals=impact["context"]["totals"],
        rate_totals=impact["context"]["rate_totals"],
        exact=impact["metrics"],
    )
    return np.asarray(pk, dtype=np.int64), sample, context


def sampled_pairs_rows(*, experiment: Experiment) -> list[dict]:
    """Every sampled pair with item ids, class, stratum, draws (over every batch), its contribution
    to JaccardDistance, its task's verdict count (``task`` is null for self pairs), the batch
    that first drew it and its score (abcde-spec §15; null until scored)."""
    rows = list(
        SampledPair.objects.filter(experiment=experiment)
        .order_by("pk")
        .values(
            "vantage__item_id",
            "partner__item_id",
            "pair_class",
            "stratum",
            "draws",
            "task",
            "task__verdicts",
            "task__wanted",
            "batch",
            "score",
        )
    )
    if not rows:
        return []  # not sampled yet, and maybe without a population file
    population = _population_of(experiment)
    contributions = _fixed_sample(experiment, population).contributions(population)
    return [
        {
            "i": row["vantage__item_id"],
            "j": row["partner__item_id"],
            "pair_class": row["pair_class"],
            "stratum": row["stratum"],
            "draws": row["draws"],
            "scheme": experiment.scheme,
            "jaccard_contribution": float(contribution),
            "task": row["task"],
            "verdicts": row["task__verdicts"],
            "wanted": row["task__wanted"],
            "batch": row["batch"],
            "score": row["score"],
        }
        for row, contribution in zip(rows, contributions, strict=True)
    ]


def judgements_rows(*, experiment: Experiment) -> list[dict]:
    """Every verdict on a sampled pair (gold questions are not part of the sample) with the
    item ids of its pair, oldest first; verdicts reused from another experiment of the workspace
    (abcde-spec §11) come first, ``reused`` true and their ``source_experiment`` named."""
    fields = ("task__item_a__item_id", "task__item_b__item_id", "task")
    verdict_fields = ("verdict", "rater", "comment", "created_at")
    reused = (
        ReusedVerdict.objects.filter(experiment=experiment)
        .order_by("source__created_at", "source__pk")
        .values(*fields, *(f"source__{name}" for name in verdict_fields), "source__task__experiment")
    )
    own = (
        Judgement.objects.filter(sampled_q("task__"), task__experiment=experiment)
        .order_by("created_at", "pk")
        .values(*fields, *verdict_fields)
    )
    return [
        _judgement_row(row, prefix="source__", source_experiment=row["source__task__experiment"]) for row in reused
    ] + [_judgement_row(row, prefix="", source_experiment=None) for row in own]


def _judgement_row(row: dict, *, prefix: str, source_experiment: int | None) -> dict:
    return {
        "i": row["task__item_a__item_id"],
        "j": row["task__item_b__item_id"],
        "verdict": row[f"{prefix}verdict"],
        "task": row["task"],
        "rater": row[f"{prefix}rater"],
        "comment": row[f"{prefix}comment"],
        "created_at": row[f"{prefix}created_at"],
        "reused": source_experiment is not None,
        "source_experiment": source_experiment,
    }


def _columns(rows, width: int) -> list[list]:
    columns = list(zip(*rows))
    return [list(c) for c in columns] if columns else [[] for _ in range(width)]
