"""Coupled sampling in a workspace (abcde-spec §11): batch ``b`` of an experiment that reuses verdicts
is drawn coupled to batch ``b`` of the most recent earlier experiment of its workspace with the same
question version and scheme (``metrics_core.sample_coupled``). Its draws stay i.i.d. from its own
distribution, and keep the earlier experiment's pairs (whose verdicts it reuses) as often as that
allows. Batches of different indices couple with independent earlier batches, so the union of an
experiment's batches stays one i.i.d. sample (abcde-spec §10).

The earlier batch is reproduced from its seed (or, when it was itself coupled, from its own earlier
batch, recursively) and checked against the earlier experiment's stored pairs. Whatever goes wrong
with the earlier experiment, the batch is drawn the ordinary way and the problem logged: coupling
never fails a preparation or a batch. Experiments couple to experiments of their own engine: in
memory here, on Dask in :mod:`.dask_coupled` (the same rule, ``metrics_core.dask_backend.coupling``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded

from metrics_core import (
    CoupledSample,
    PairSample,
    Population,
    batch_rng,
    couple_sample,
    coupling_rng,
    sample_pairs,
)
from raterapp.exceptions import DATABASE_OUT_OF_REACH
from raterapp.models import Experiment, SampleBatch, SampledPair
from raterapp.population_files import population_for_experiment

logger = logging.getLogger(__name__)
Status = Experiment.Status
T = TypeVar("T")

# Earlier experiments coupled in a chain are reproduced this deep at most.
MAX_DEPTH = 8


class CouplingUnavailable(Exception):
    """The earlier experiment's batch cannot be reproduced as it was drawn."""


@dataclass(frozen=True, eq=False)
class BatchSample:
    """A drawn batch, and when it was coupled: to which experiment, and the draws that kept its draw."""

    sample: PairSample
    coupled_to: Experiment | None = None
    kept: int | None = None


def batch_sample_draw(
    *, experiment: Experiment, ids: np.ndarray, population: Population, batch: int, n_draws: int
) -> BatchSample:
    """Draw batch ``batch`` of ``n_draws`` draws: coupled when an earlier experiment qualifies."""
    found = coupled_if_possible(
        experiment=experiment,
        batch=batch,
        couple=lambda source: _coupled(experiment, ids, population, batch, n_draws, source, depth=0),
    )
    if found is not None:
        coupled, source = found
        return BatchSample(coupled.sample, source, coupled.kept)
    return BatchSample(_ordinary(experiment, population, batch, n_draws))


def coupled_if_possible(
    *, experiment: Experiment, batch: int, couple: Callable[[Experiment], T]
) -> tuple[T, Experiment] | None:
    """``couple(source)`` and ``source``, the earlier experiment that batch ``batch`` couples to;
    None when none qualifies or the coupling fails (logged: the batch is then drawn the ordinary
    way, whichever the engine). A lost database and a task's time limit are the caller's."""
    source = coupling_source_find(experiment=experiment, batch=batch)
    if source is None:
        return None
    try:
        return couple(source), source
    except (*DATABASE_OUT_OF_REACH, SoftTimeLimitExceeded):
        raise
    except Exception:
        logger.warning(
            "experiment %s: batch %s not coupled to experiment %s, drawn the ordinary way",
            experiment.pk,
            batch,
            source.pk,
            exc_info=True,
        )
        return None


def coupling_source_find(*, experiment: Experiment, batch: int) -> Experiment | None:
    """The most recent earlier experiment of the workspace, under the same question version, scheme
    and engine, that offers its verdicts and has drawn batch ``batch``; None when the experiment
    does not reuse verdicts."""
    if not experiment.reuse_verdicts:
        return None
    return (
        Experiment.objects.filter(
            workspace_id=experiment.workspace_id,
            question_version_id=experiment.question_version_id,
            scheme=experiment.scheme,
            reuse_verdicts=True,
            engine=experiment.engine,
            status__in=[Status.RATING, Status.DONE],
            pk__lt=experiment.pk,
            batches__index=batch,
            batches__status=SampleBatch.Status.DONE,
        )
        .order_by("-pk")
        .first()
    )


def _ordinary(experiment: Experiment, population: Population, batch: int, n_draws: int) -> PairSample:
    return sample_pairs(
        population,
        n_draws=n_draws,
        scheme=experiment.scheme,
        rng=batch_rng(seed=experiment.seed, batch=batch),
        diff_share=experiment.diff_share,
    )


def _coupled(
    experiment: Experiment,
    ids: np.ndarray,
    population: Population,
    batch: int,
    n_draws: int,
    source: Experiment,
    *,
    depth: int,
) -> CoupledSample:
    """Batch ``batch`` of ``experiment`` coupled to the same batch of ``source``, drawn again
    (``depth``: how many coupled experiments lie between this one and the batch being drawn)."""
    source_ids, source_population, source_sample = _batch_reproduce(source, batch, depth=depth)
    return couple_sample(
        population,
        n_draws=n_draws,
        scheme=experiment.scheme,
        rng=coupling_rng(seed=experiment.seed, batch=batch, source=source.pk),
        source_population=source_population,
        source_sample=source_sample,
        item_ids=ids,
        source_item_ids=source_ids,
        diff_share=experiment.diff_share,
    )


def _batch_reproduce(experiment: Experiment, batch: int, *, depth: int) -> tuple[np.ndarray, Population, PairSample]:
    """The item ids, population and batch ``batch`` of an earlier experiment, drawn again as it was."""
    if depth > MAX_DEPTH:
        raise CouplingUnavailable(f"a chain of more than {MAX_DEPTH} coupled experiments")
    record = SampleBatch.objects.get(experiment=experiment, index=batch, status=SampleBatch.Status.DONE)
    ids, population = population_for_experiment(experiment)
    if record.coupled_to_id is None:
        sample = _ordinary(experiment, population, batch, record.draws)
    else:
        upstream = Experiment.objects.get(pk=record.coupled_to_id)
        sample = _coupled(experiment, ids, population, batch, record.draws, upstream, depth=depth + 1).sample
    if depth == 0:  # the whole chain, through its last link
        stored_batch_check(experiment=experiment, batch=batch, i=ids[sample.i], j=ids[sample.j], draws=sample.draws)
    return ids, population, sample


def stored_batch_check(*, experiment: Experiment, batch: int, i, j, draws) -> None:
    """A reproduced batch (pairs of item ids ``i``, ``j`` with their ``draws``) must be what the
    experiment stored: its pairs stored (first drawn in this batch or before, with at least these
    draws), and every pair first drawn in it among them."""
    stored = {
        (a, b): (count, first)
        for a, b, count, first in SampledPair.objects.filter(experiment=experiment).values_list(
            "vantage__item_id", "partner__item_id", "draws", "batch"
        )
    }
    drawn = set()
    ids = zip((str(v) for v in np.asarray(i).tolist()), (str(v) for v in np.asarray(j).tolist()))
    for pair, count in zip(ids, np.asarray(draws).tolist()):
        have = stored.get(pair)
        if have is None or have[0] < count or have[1] > batch:
            raise CouplingUnavailable(f"batch {batch} of experiment {experiment.pk} does not reproduce its pairs")
        drawn.add(pair)
    if any(first == batch and pair not in drawn for pair, (_, first) in stored.items()):
        raise CouplingUnavailable(f"batch {batch} of experiment {experiment.pk} misses pairs it stored")
