"""The Dask backend of metrics_core: the same impact metrics and pair samples at any scale.

Items come from partitioned Parquet (a folder, a file or any fsspec URL) and stay on the
workers; only O(#buckets + S) values reach the driver. The formulas are the in-memory
backend's, executed on Dask: one definition of each metric, two executions. Results do not
depend on the number of partitions or workers (see :mod:`.items` and :mod:`.sampling`).
Computations run on the current ``dask.distributed`` client when there is one, else on
Dask's local scheduler; a scheduler set in ``dask.config`` (``synchronous``, ``threads``) wins
over a client, as everywhere in Dask. Both give the same results.

Example: four items in one Parquet file, Base {a,b,c},{d} and Exp {a,b},{c,d}. SplitDistance
is 1/3 for a and b, 2/4 for c (its union is {a,b,c,d}) and 0 for d; MergeDistance is 1/4 for
c and 1/2 for d.

>>> import numpy as np, pandas as pd, tempfile
>>> folder = tempfile.mkdtemp()
>>> pd.DataFrame({"item_id": list("abcd"), "base_cluster": [1, 1, 1, 2],
...               "exp_cluster": [1, 1, 2, 2]}).to_parquet(f"{folder}/part.0.parquet")
>>> items = read_items(folder)
>>> m = impact_metrics(items)
>>> round(m.metrics["SplitDistance"], 6), round(m.metrics["MergeDistance"], 6), m.affected_items
(0.291667, 0.1875, 4)
>>> pairs = sample_pairs(items, n_draws=1000, rng=np.random.default_rng(1))
>>> int(pairs["draws"].sum()), sorted(set(pairs["pair_class"]))
(1000, ['intersection', 'merge', 'self', 'split'])
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
