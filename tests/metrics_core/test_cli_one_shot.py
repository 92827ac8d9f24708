"""``python -m metrics_core`` runs its command as a one-shot process (``main(one_shot=True)``):
the numpy engine keeps pandas out of it, with the same PAIRS file as in a process that imports
pandas (every other command: ``assert_same_one_shot`` in its own test module)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .cli_run import assert_same_one_shot


def test_one_shot_sample_keeps_pandas_out_and_draws_the_same_pairs(tmp_path):
    rng = np.random.default_rng(3)
    base = rng.integers(0, 40, 200)
    exp = np.where(rng.random(200) < 0.2, rng.integers(0, 40, 200), base)
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"item_id": np.arange(200), "base_cluster": base, "exp_cluster": exp}), items)
    out = tmp_path / "pairs.parquet"
    assert_same_one_shot("sample", items, "--pairs", 300, "--seed", 4, "--out", out, outputs=[out])
