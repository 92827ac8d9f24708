"""Fixtures shared across the suite."""

import pytest

from tests.metrics_core.dask_run import local_client


@pytest.fixture(scope="session")
def dask_cluster_client():
    """One LocalCluster of 2 single-threaded workers in this process, and its client, for the whole
    run: started by the first test that needs it (starting one per module cost seconds each)."""
    with local_client(2) as client:
        yield client
