"""Fixtures of the metrics_core tests."""

import pytest

from tests.metrics_core.dask_run import synchronous_scheduler


@pytest.fixture
def client(dask_cluster_client):
    """The module's LocalCluster client (the Dask backend's tests)."""
    return dask_cluster_client


@pytest.fixture
def synchronous():
    """Dask's synchronous scheduler, for the backend's arithmetic against the in-memory engine over
    many cases: a half to a quarter of the CPU time of the LocalCluster's scheduling. What the
    cluster adds (P2P shuffles, several workers, scattered data) is tested on it by the tests that
    take ``client``; they check that this scheduler gives the same numbers and the same sample, bit
    for bit."""
    with synchronous_scheduler():
        yield
