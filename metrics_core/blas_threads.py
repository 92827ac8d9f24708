"""BLAS on one thread: numpy's matrix products in the product's processes.

The products metrics_core makes are small (the Dawid-Skene EM multiplies (replicates × units) by
(units × raters) hundreds of times; the ΔRecall/IQ bootstrap, blocks of replicates by draws).
OpenBLAS's threads cost more than they save on such sizes, and they spin while they wait: the
rater-aware bootstrap took 16 times the CPU with the default threads on two shared cores. The
processes that compute (the command line, Celery's workers, the test workers) are already as many
as the cores. One thread also gives the same sums, to the bit, on any number of cores.
"""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits


def use_one_blas_thread() -> None:
    """Limit every BLAS library loaded in this process (numpy's) to one thread, for the process's life."""
    threadpool_limits(limits=1, user_api="blas")


def blas_threads() -> list[int]:
    """The thread count of each BLAS library loaded in this process."""
    return [int(pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas"]
