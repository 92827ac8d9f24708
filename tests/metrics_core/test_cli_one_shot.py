"""``python -m metrics_core`` runs its command as a one-shot process (``main(one_shot=True)``):
the numpy engine keeps pandas out of it, with the same PAIRS file as in a process that imports
pandas (every other command: ``assert_same_one_shot`` in its own test module)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .cli_run import REPO


def _sample_in_new_process(items, out, *, one_shot: bool) -> str:
    code = (
        "import sys; from metrics_core.cli import main; "
        f"status = main(['sample', {str(items)!r}, '--pairs', '300', '--seed', '4', '--out', {str(out)!r}], "
        f"one_shot={one_shot}); print(status, 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stderr == ""
    return done.stdout.strip()


def test_one_shot_sample_keeps_pandas_out_and_draws_the_same_pairs(tmp_path):
    rng = np.random.default_rng(3)
    base = rng.integers(0, 40, 200)
    exp = np.where(rng.random(200) < 0.2, rng.integers(0, 40, 200), base)
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"item_id": np.arange(200), "base_cluster": base, "exp_cluster": exp}), items)
    assert _sample_in_new_process(items, tmp_path / "one_shot.parquet", one_shot=True) == "0 False"
    assert _sample_in_new_process(items, tmp_path / "plain.parquet", one_shot=False).startswith("0 ")
    assert pq.read_table(tmp_path / "one_shot.parquet").equals(pq.read_table(tmp_path / "plain.parquet"))
