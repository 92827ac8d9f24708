"""Batches of an experiment prepared on Dask (abcde-spec §10, §11): drawn the ordinary way, or coupled to
the same batch of an earlier Dask experiment of the workspace (:func:`.coupled.coupling_source_find`).

The rules are the in-memory engine's (:mod:`.coupled`): batch ``b`` is ``metrics_core.dask_backend``'s
sample with the stream ``batch_rng(seed, b)``; a coupled batch is ``dask_backend.coupling.couple_sample``
with ``coupling_rng(seed, b, source)``, the earlier batch reproduced from its seed (recursively when it
was coupled itself) and checked against the pairs it stored; whatever goes wrong with the earlier
experiment, the batch is drawn the ordinary way and the problem logged. The items stay where they are
(their location, or the items upload on the shared volume): the worker holds O(draws) rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from metrics_core import batch_rng, coupling_rng
from metrics_core import dask_backend as dk
from metrics_core.dask_backend.coupling import DaskCoupledSample, couple_sample
from raterapp.models import Experiment, SampleBatch
from raterapp.services.experiments.uploads import uploads_local_open
from raterapp.services.sampling.coupled import (
    MAX_DEPTH,
    CouplingUnavailable,
    coupled_if_possible,
    stored_batch_check,
)


@dataclass(frozen=True, eq=False)
class DaskBatchSample:
    """A batch drawn on Dask (its PAIRS table, item ids), and when it was coupled: to which
    experiment, and the draws that kept their earlier draw."""

    pairs: pd.DataFrame
    coupled_to: Experiment | None = None
    kept: int | None = None


@contextlib.contextmanager
def dask_items_open(experiment: Experiment, *, uploads: dict | None = None) -> Iterator[dk.DaskItems]:
    """The items of an experiment prepared on Dask, where they are: its location or its items upload
    (checked when it was prepared, so not read again for that). ``uploads``: the experiment's, when
    they are open already."""
    if experiment.items_location:
        yield dk.read_items(experiment.items_location, validate=False)
        return
    if uploads is not None:
        yield dk.read_items(uploads["items"].path, validate=False)
        return
    with uploads_local_open(experiment=experiment) as opened:
        yield dk.read_items(opened["items"].path, validate=False)


def dask_batch_sample_draw(*, experiment: Experiment, items: dk.DaskItems, batch: int, n_draws: int) -> DaskBatchSample:
    """Draw batch ``batch`` of ``n_draws`` draws on Dask: coupled when an earlier experiment qualifies."""
    found = coupled_if_possible(
        experiment=experiment,
        batch=batch,
        couple=lambda source: _coupled(experiment, items, batch, n_draws, source, depth=0),
    )
    if found is not None:
        coupled, source = found
        return DaskBatchSample(coupled.pairs, source, coupled.kept)
    return DaskBatchSample(_ordinary(experiment, items, batch, n_draws))


def _ordinary(experiment: Experiment, items: dk.DaskItems, batch: int, n_draws: int) -> pd.DataFrame:
    return dk.sample_pairs(
        items,
        n_draws=n_draws,
        scheme=experiment.scheme,
        rng=batch_rng(seed=experiment.seed, batch=batch),
        diff_share=experiment.diff_share,
    )


def _coupled(
    experiment: Experiment, items: dk.DaskItems, batch: int, n_draws: int, source: Experiment, *, depth: int
) -> DaskCoupledSample:
    """Batch ``batch`` of ``experiment`` coupled to the same batch of ``source``, drawn again."""
    with dask_items_open(source) as source_items:
        source_pairs = _batch_reproduce(source, source_items, batch, depth=depth)
        return couple_sample(
            items,
            n_draws=n_draws,
            scheme=experiment.scheme,
            rng=coupling_rng(seed=experiment.seed, batch=batch, source=source.pk),
            source_items=source_items,
            source_pairs=source_pairs,
            diff_share=experiment.diff_share,
        )


def _batch_reproduce(experiment: Experiment, items: dk.DaskItems, batch: int, *, depth: int) -> pd.DataFrame:
    """Batch ``batch`` of an earlier experiment (its PAIRS table), drawn again as it was."""
    if depth > MAX_DEPTH:
        raise CouplingUnavailable(f"a chain of more than {MAX_DEPTH} coupled experiments")
    record = SampleBatch.objects.get(experiment=experiment, index=batch, status=SampleBatch.Status.DONE)
    if record.coupled_to_id is None:
        pairs = _ordinary(experiment, items, batch, record.draws)
    else:
        upstream = Experiment.objects.get(pk=record.coupled_to_id)
        pairs = _coupled(experiment, items, batch, record.draws, upstream, depth=depth + 1).pairs
    if depth == 0:  # the whole chain, through its last link
        stored_batch_check(experiment=experiment, batch=batch, i=pairs["i"], j=pairs["j"], draws=pairs["draws"])
    return pairs
