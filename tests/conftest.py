"""Fixtures shared across the suite."""

import os

import pytest

# The helper modules whose functions assert (tests/test_test_imports.py keeps helpers out of test
# modules): pytest rewrites their asserts as a test module's, so that a failing one shows its values.
pytest.register_assert_rewrite(
    "tests.browser.helpers", "tests.e2e.helpers", "tests.metrics_core.cli_run", "tests.raterapp.helpers"
)

from tests.metrics_core.dask_run import local_client  # noqa: E402 - after the rewrite is registered


@pytest.fixture(scope="module")
def dask_cluster_client():
    """One LocalCluster of 2 single-threaded workers in this process, and its client, for the module
    that needs it (starting one takes 0.05 s after the first). Not for the whole run: idle, its event
    loop and heartbeats took 10-25% more CPU time from every later test of the same pytest-xdist
    worker."""
    with local_client(2) as client:
        yield client


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Modules with slow tests (simulations, process-level tests) first, in their order, the others
    after them: pytest-xdist's ``--dist load`` (``make test-fast``) hands tests to its workers in this
    order, so the long ones start early and the many short ones even out the end. (``--dist
    loadscope``, ``make test``'s main lane, orders modules by their number of tests instead, unless
    ``--no-loadscope-reorder``: measured, its three workers still end within 14 s of each other.)"""
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_modules)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI every service a test may skip for is promised (PostgreSQL, Redis, Chromium), so a
    skipped test there is a failing one: it would hide that the service was not used."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.longrepr = f"skipped in CI, which promises every service: {reason}"
