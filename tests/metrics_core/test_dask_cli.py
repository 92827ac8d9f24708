"""``python -m metrics_core impact|sample --engine dask [--scheduler ADDRESS]`` (issue #8, part 4).

The Dask engine prints the in-memory engine's JSON (to 1e-12), writes the per-item and
per-cluster tables as Parquet datasets with the in-memory columns, and writes a PAIRS file
that ``estimate`` reads unchanged. Most runs go to a scheduler started here (``--scheduler``);
one starts its own local cluster.
"""


import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from metrics_core import IMPACT_METRICS
from tests.metrics_core.cli_run import approx, run, run_json
from tests.metrics_core.dask_run import items_frame, local_client, write_parts


@pytest.fixture(scope="module")
def scheduler():
    with local_client(2, protocol="tcp") as client:
        yield client.scheduler.address


@pytest.fixture
def items(tmp_path):
    rng = np.random.default_rng(4)
    base = rng.integers(0, 40, 300)
    exp = np.where(rng.random(300) < 0.3, rng.integers(0, 40, 300), base)
    frame = items_frame(base, exp + 100, rng.uniform(0.5, 2.0, 300))
    frame.to_parquet(tmp_path / "items.parquet", index=False)
    return write_parts(frame, tmp_path / "items", 3), tmp_path / "items.parquet"


def test_impact_on_dask_prints_the_in_memory_numbers(tmp_path, items, scheduler):
    folder, single_file = items
    want = run_json("impact", single_file)
    got = run_json(
        "impact", folder, "--engine", "dask", "--scheduler", scheduler,
        "--per-item", tmp_path / "per_item", "--per-cluster", tmp_path / "per_cluster",
    )
    assert list(got) == list(want) and list(got["metrics"]) == list(IMPACT_METRICS)
    assert {k: got[k] for k in ("items", "affected_items", "dropped_items")} == {
        k: want[k] for k in ("items", "affected_items", "dropped_items")
    }
    assert got["total_weight"] == approx(want["total_weight"])
    for name, value in want["metrics"].items():
        assert got["metrics"][name] == approx(value), name
    run_json("impact", single_file, "--per-item", tmp_path / "mem_item.parquet", "--per-cluster", tmp_path / "mem_cluster.parquet")
    for dask_out, memory_out in (("per_item", "mem_item.parquet"), ("per_cluster", "mem_cluster.parquet")):
        dask_table = pq.read_table(tmp_path / dask_out)
        assert dask_table.column_names == pq.read_table(tmp_path / memory_out).column_names
        assert dask_table.num_rows == pq.read_table(tmp_path / memory_out).num_rows


def test_sample_on_dask_feeds_estimate(tmp_path, items, scheduler):
    folder, single_file = items
    pairs = tmp_path / "pairs.csv"
    done = run("sample", folder, "--pairs", 2000, "--seed", 3, "--engine", "dask", "--scheduler", scheduler, "--out", pairs)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    table = pd.read_csv(pairs)
    assert list(table.columns) == ["i", "j", "pair_class", "stratum", "draws", "scheme", "batch", "positions"]
    assert table["draws"].sum() == 2000
    # Judge every non-self pair "equivalent": estimate (in memory) reads the Dask sample as its own.
    judged = table.loc[table["i"] != table["j"], ["i", "j"]].assign(verdict="equivalent")
    judged.to_csv(tmp_path / "judgements.csv", index=False)
    estimate = run_json("estimate", single_file, pairs, tmp_path / "judgements.csv", "--n-boot", 20)
    assert estimate["scheme"] == "jaccard"
    assert estimate["estimates"]["BadMergeDistance"]["value"] == 0.0


@pytest.mark.slow
def test_sample_on_a_local_cluster_is_the_sample_on_a_scheduler(tmp_path, items, scheduler):
    folder, _ = items
    outputs = []
    for extra in ([], ["--scheduler", scheduler]):
        out = tmp_path / f"pairs{len(extra)}.parquet"
        args = ("sample", folder, "--pairs", 500, "--seed", 9, "--scheme", "stratified", "--engine", "dask")
        done = run(*args, *extra, "--out", out)
        assert (done.returncode, done.stderr) == (0, "")
        outputs.append(pd.read_parquet(out))
    pd.testing.assert_frame_equal(outputs[0], outputs[1])
    assert set(outputs[0]["stratum"]) == {"diff", "stable"}


def test_scheduler_needs_the_dask_engine(tmp_path, items):
    _, single_file = items
    done = run("impact", single_file, "--scheduler", "tcp://127.0.0.1:1")
    assert done.returncode == 2 and "--scheduler is only meaningful with --engine dask" in done.stderr


def test_dask_engine_refuses_an_existing_output_folder(tmp_path, items, scheduler):
    folder, _ = items
    (tmp_path / "taken").mkdir()
    done = run("impact", folder, "--engine", "dask", "--scheduler", scheduler, "--per-item", tmp_path / "taken")
    assert done.returncode == 2 and done.stdout == ""
    assert "exists already" in done.stderr
