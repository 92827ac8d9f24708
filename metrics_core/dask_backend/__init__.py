"""The Dask backend of metrics_core: the same impact metrics and pair samples at any scale.

Items come from partitioned Parquet (a folder, a file or any fsspec URL) and stay on the
workers; only O(#buckets + S) values reach the driver. The formulas are the in-memory
backend's, executed on Dask: one definition of each metric, two executions. Results do not
depend on the number of partitions or workers (see :mod:`.items` and :mod:`.sampling`).
Computations run on the current ``dask.distributed`` client when there is one, else on
Dask's local scheduler.
"""

from .context import items_rows, sample_context
from .impact import (
    PER_CLUSTER_COLUMNS,
    PER_ITEM_METRICS,
    impact_by_slice,
    impact_metrics,
    impact_per_cluster,
    impact_per_item,
    write_parquet,
)
from .items import DaskItems, read_items
from .sampling import PAIRS_COLUMNS, sample_pairs

__all__ = [
    "DaskItems",
    "PAIRS_COLUMNS",
    "PER_CLUSTER_COLUMNS",
    "PER_ITEM_METRICS",
    "impact_by_slice",
    "impact_metrics",
    "impact_per_cluster",
    "impact_per_item",
    "items_rows",
    "read_items",
    "sample_context",
    "sample_pairs",
    "write_parquet",
]
