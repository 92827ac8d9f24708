"""What a user would run instead of ``python -m metrics_core``: the references of ``bench_cli.py``'s
table (issue 37), each a whole process as our commands are. They never import ``metrics_core``.

  * ``impact ITEMS``: read the Parquet file (every column) and scikit-learn's
    ``contingency_matrix(base_cluster, exp_cluster, sparse=True)``;
  * ``compare TRUTH PRED``: read both files, join them on ``item_id`` with pandas, and scikit-learn's
    ``adjusted_rand_score`` alone (printed, to check ``compare``'s AdjustedRandIndex against it);
  * ``read ITEMS``: ``pyarrow.parquet.read_table`` alone.

Run: .venv/bin/python bench/cli_references.py impact|compare|read FILE...
"""

from __future__ import annotations

import json
import sys


def reference_impact(items: str) -> dict:
    import pyarrow.parquet as pq
    from sklearn.metrics.cluster import contingency_matrix

    table = pq.read_table(items)
    cells = contingency_matrix(table["base_cluster"].to_numpy(), table["exp_cluster"].to_numpy(), sparse=True)
    return {"items": table.num_rows, "cells": int(cells.nnz)}


def reference_compare(truth: str, pred: str) -> dict:
    import pyarrow.parquet as pq
    from sklearn.metrics import adjusted_rand_score

    joined = pq.read_table(truth).to_pandas().merge(pq.read_table(pred).to_pandas(), on="item_id")
    ari = adjusted_rand_score(joined["cluster_id_x"].to_numpy(), joined["cluster_id_y"].to_numpy())
    return {"items": len(joined), "AdjustedRandIndex": float(ari)}


def reference_read(items: str) -> dict:
    import pyarrow.parquet as pq

    return {"items": pq.read_table(items).num_rows}


REFERENCES = {"impact": reference_impact, "compare": reference_compare, "read": reference_read}


def main() -> None:
    name, *files = sys.argv[1:]
    print(json.dumps(REFERENCES[name](*files)), flush=True)


if __name__ == "__main__":
    main()
