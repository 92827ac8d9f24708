"""Fixtures of the metrics_core tests."""

import pytest


@pytest.fixture
def client(dask_cluster_client):
    """The session's LocalCluster client (the Dask backend's tests)."""
    return dask_cluster_client
