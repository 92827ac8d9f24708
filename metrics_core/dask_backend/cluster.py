"""The Dask cluster a command-line run computes on."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from distributed import Client, LocalCluster


@contextmanager
def dask_client(scheduler: str | None) -> Iterator[Client]:
    """A client of the scheduler at ``scheduler``, or of a local cluster started for the block."""
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    with LocalCluster(dashboard_address=None) as cluster, Client(cluster) as client:
        yield client
