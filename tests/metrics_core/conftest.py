"""Fixtures of the metrics_core tests."""

import pytest

from tests.metrics_core.dask_run import local_client


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 single-threaded workers and its client, one per test module (the Dask backend's tests)."""
    with local_client(2) as client:
        yield client
