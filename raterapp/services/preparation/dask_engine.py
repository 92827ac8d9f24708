"""Preparing an experiment on Dask (metrics_core.dask_backend): the population never reaches the worker.

The steps and statuses are the in-memory preparation's (:mod:`raterapp.services.preparation.pipeline`),
with its guarantees (idempotent steps, all or nothing); what differs is where the work runs.
With ``DASK_SCHEDULER_ADDRESS`` it runs on that cluster (whose workers must read the items:
a location they reach, or the shared media volume for uploads); without it, on Dask's local
scheduler inside the Celery worker, partition by partition. The worker holds O(draws) rows:
the sample, its items, and what the estimators need of their cells (stored with the pairs,
see ``SampledPair.vantage_*`` and ``impact["context"]``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import dask
import numpy as np
import pandas as pd
import pyarrow as pa
from django.conf import settings

from metrics_core import IMPACT_METRICS, PAIR_CLASSES, STRATA, ImpactTable, PairSample
from metrics_core import dask_backend as dk
from metrics_core.dask_backend.items import ITEM_COLUMNS
from metrics_core.io import InputError
from raterapp.db.fields import max_length_of
from raterapp.models import Experiment, ImpactGroup, Item
from raterapp.services.preparation.catalogue import (
    Catalogue,
    catalogue_location_check,
    catalogue_read_for,
    catalogue_rows_for,
)
from raterapp.services.preparation.impact_groups import MAX_SLICE_VALUES, TOP_CLUSTERS, impact_group_rows
from raterapp.services.preparation.sampled_rows import SampledItems, sampled_rows_assemble, sampled_rows_save
from raterapp.services.sampling.dask_coupled import dask_batch_sample_draw

Status = Experiment.Status
BATCH = 5000


@contextlib.contextmanager
def dask_session() -> Iterator[object | None]:
    """A client of the configured cluster for a whole preparation run (what the steps persist on
    the workers lives as long as it), or None for Dask's local scheduler: threads, with the
    task-based shuffle, even where this process holds a default client of another cluster."""
    if not settings.DASK_SCHEDULER_ADDRESS:
        with dask.config.set({"scheduler": "threads", "dataframe.shuffle.method": "tasks"}):
            yield None
        return
    from distributed import Client

    with Client(settings.DASK_SCHEDULER_ADDRESS, timeout=30, set_as_default=True) as client:
        yield client


def items_location_of(run) -> str:
    return run.experiment.items_location or run.uploads["items"].path


def _items(run, *, validate: bool = False) -> dk.DaskItems:
    """The items, opened once per run: the steps that follow reuse them and their cell table."""
    if run.dask_items is None:
        run.dask_items = dk.read_items(items_location_of(run), validate=validate)
    return run.dask_items


def dask_validate(run) -> None:
    """Open and check the items where they are (counting them on the way); check the catalogue."""
    items = _items(run, validate=True)
    run.progress(0.6)
    if run.experiment.catalogue_location:
        catalogue_location_check(location=run.experiment.catalogue_location)
    else:
        run.catalogue_get()
    run.advance(Status.COMPUTING_IMPACT, replace=lambda: None, progress=0.0, items_count=items.n_items, dropped_items=0)


def dask_impact(run) -> None:
    """Overall impact metrics; the clusters carrying most of the change and the slices as ImpactGroup rows."""
    location = items_location_of(run)
    experiment = run.experiment
    items = _items(run)
    overall = dk.impact_metrics(items)
    if overall.affected_items == 0:
        raise InputError(location, "no item is affected (Base and Exp are identical): nothing to sample")
    run.progress(0.3)
    per_cluster = dk.impact_per_cluster(items)
    groups = []
    for side in ("base", "exp"):
        clusters = per_cluster[per_cluster["clustering"] == side]
        clusters = clusters.assign(share=clusters["JaccardDistance"].fillna(0) * clusters["weight"])
        top = clusters.nlargest(TOP_CLUSTERS, "share").compute()
        top = top.sort_values(["share", "cluster_id"], ascending=[False, True])
        groups += impact_group_rows(experiment, side, _table_of(top))
    run.progress(0.6)
    for k, name in enumerate(items.attributes):
        if items.frame[name].nunique(dropna=False).compute() <= MAX_SLICE_VALUES:
            table = dk.impact_by_slice(items, name)
            labels = np.array(["" if pd.isna(v) else str(v) for v in table.labels], dtype=object)
            table = ImpactTable(labels, table.items, table.affected_items, table.weight, table.metrics)
            groups += impact_group_rows(experiment, name, table)
        run.progress(0.6 + 0.4 * (k + 1) / len(items.attributes))
    impact = {**overall.as_dict(), "dropped_items": 0}

    def replace() -> None:
        ImpactGroup.objects.filter(experiment=experiment).delete()
        ImpactGroup.objects.bulk_create(groups, batch_size=BATCH)

    run.advance(Status.SAMPLING, replace=replace, progress=0.0, impact=impact)


def dask_sample(run, *, rows_delete) -> None:
    """Draw the pairs on Dask (batch 0, coupled when an earlier Dask experiment of the workspace
    qualifies); store their items, the pairs with their vantage cells' weights, and the tasks."""
    location = items_location_of(run)
    experiment = run.experiment
    items = _items(run)
    drawn = dask_batch_sample_draw(experiment=experiment, items=items, batch=0, n_draws=experiment.n_draws)
    pairs = drawn.pairs
    run.progress(0.5)
    rows = dk.items_rows(items, pd.concat([pairs["i"], pairs["j"]]))
    context = dk.sample_context(items, pairs, item_rows=rows)
    run.progress(0.8)
    # Positions index the sample's items (sorted by id): the experiment has no population file.
    position = dict(zip(rows["item_id"].astype(str), range(len(rows))))
    sample = pairs_sample(experiment, pairs, position)
    sampled_items = dask_sampled_items(
        experiment=experiment,
        rows=rows,
        positions=np.arange(len(rows)),
        location=location,
        catalogue_get=run.catalogue_get,
    )
    sampled = sampled_rows_assemble(
        experiment=experiment,
        catalogue=sampled_items.catalogue,
        items=sampled_items.items,
        sample=sample,
        vantage_sets={"union": context.union, "base": context.base, "exp": context.exp},
        items_path=location,
    )
    coupled_to_id = None if drawn.coupled_to is None else drawn.coupled_to.pk
    sampled = replace(sampled, coupled_to_id=coupled_to_id, coupled_kept=drawn.kept)
    impact = {
        **experiment.impact,
        "context": {"totals": context.totals.tolist(), "rate_totals": context.rate_totals.tolist()},
    }

    def replace_rows() -> None:
        rows_delete(experiment.pk)
        sampled_rows_save(rows=sampled, batch_size=BATCH)

    run.advance(Status.RATING, replace=replace_rows, progress=1.0, impact=impact)


def pairs_sample(experiment: Experiment, pairs: pd.DataFrame, position: dict[str, int]) -> PairSample:
    """A PAIRS table drawn on Dask as a PairSample of item positions (``position``: by item id as text)."""
    at = lambda ids: np.array([position[str(v)] for v in ids.tolist()], dtype=np.int64)  # noqa: E731
    return PairSample(
        experiment.scheme,
        at(pairs["i"]),
        at(pairs["j"]),
        np.array([PAIR_CLASSES.index(c) for c in pairs["pair_class"]], dtype=np.int64),
        np.array([STRATA.index(s) for s in pairs["stratum"]], dtype=np.int64),
        pairs["draws"].to_numpy(dtype=np.int64),
        experiment.diff_share if experiment.scheme == Experiment.Scheme.STRATIFIED else None,
    )


@dataclass(frozen=True)
class DaskSampledItems:
    catalogue: Catalogue
    items: SampledItems


def dask_sampled_items(
    *,
    experiment: Experiment,
    rows: pd.DataFrame,
    positions: np.ndarray,
    location: str,
    catalogue_get: Callable[[], Catalogue],
) -> DaskSampledItems:
    """What the Item rows of sampled items (``rows``, :func:`metrics_core.dask_backend.items_rows`, at
    ``positions``) hold, with the catalogue that gives their cards (its location, or the upload's:
    ``catalogue_get``)."""
    _require_fitting(location, rows)
    names = [name for name in rows.columns if name not in ITEM_COLUMNS]
    attributes = {name: [None if pd.isna(v) else str(v) for v in rows[name]] for name in names}
    item_ids = pa.array(rows["item_id"].astype(str), type=pa.string())
    if experiment.catalogue_location:
        catalogue = catalogue_read_for(location=experiment.catalogue_location, item_ids=item_ids)
    else:
        catalogue = catalogue_get()
    # The catalogue's attributes of the sampled items join the items' own (as the in-memory path's do).
    at = pa.array(catalogue_rows_for(catalogue=catalogue, item_ids=item_ids, items_path=location))
    for name, values in catalogue.attributes.items():
        if name in attributes:
            raise InputError(catalogue.path, f"column {name!r} is also in {location}: rename one of them")
        attributes[name] = values.take(at).to_pylist()
    items = SampledItems(
        positions=positions,
        item_id=rows["item_id"].tolist(),
        base_cluster=rows["base_cluster"].tolist(),
        exp_cluster=rows["exp_cluster"].tolist(),
        weight=rows["weight"].astype(float).tolist(),
        attributes=attributes,
    )
    return DaskSampledItems(catalogue, items)


def _require_fitting(location: str, rows: pd.DataFrame) -> None:
    """The sampled items' ids and clusters must fit the database columns they are stored in."""
    for column in ("item_id", "base_cluster", "exp_cluster"):
        limit = max_length_of(Item, column)
        text = rows[column].astype(str)
        too_long = text.str.len() > limit
        if too_long.any():
            value = text[too_long].iloc[0]
            raise InputError(location, f"{column} {value[:40]!r}... is longer than {limit} characters")


def _table_of(frame: pd.DataFrame) -> ImpactTable:
    return ImpactTable(
        labels=frame["cluster_id"].astype(str).to_numpy(),
        items=frame["items"].to_numpy(dtype=np.int64),
        affected_items=frame["affected_items"].to_numpy(dtype=np.int64),
        weight=frame["weight"].to_numpy(dtype=float),
        metrics={name: frame[name].to_numpy(dtype=float) for name in IMPACT_METRICS},
    )
