"""Shared pieces of the Dask backend tests: a small cluster, the synchronous scheduler and items
written as Parquet parts."""

from __future__ import annotations

import contextlib
import logging

import dask
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

logging.getLogger("distributed").setLevel(logging.ERROR)


def synchronous_scheduler():
    """Dask's synchronous scheduler, with the task-based shuffle it needs (the cluster's is P2P)."""
    return dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"})


@contextlib.contextmanager
def local_client(n_workers=2, **kwargs):
    """A LocalCluster of ``n_workers`` single-threaded workers in this process, and its client."""
    from distributed import Client, LocalCluster

    with LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=False, dashboard_address=":0", **kwargs
    ) as cluster, Client(cluster) as client:
        yield client


def items_frame(base, exp, weights=None, ids=None, **attributes):
    """The items of a population as a DataFrame (``item_id`` = position unless ``ids`` is given)."""
    frame = pd.DataFrame(
        {"item_id": np.arange(len(base)) if ids is None else ids, "base_cluster": base, "exp_cluster": exp}
    )
    if weights is not None:
        frame["weight"] = np.asarray(weights, dtype=float)
    for name, values in attributes.items():
        frame[name] = values
    return frame


def write_parts(frame, folder, n_parts, seed=0):
    """``frame`` as ``n_parts`` Parquet files in ``folder``, rows shuffled first (seeded)."""
    folder.mkdir(parents=True, exist_ok=True)
    order = np.random.default_rng(seed).permutation(len(frame))
    for k, rows in enumerate(np.array_split(order, n_parts)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[rows], preserve_index=False), folder / f"part.{k}.parquet")
    return folder
