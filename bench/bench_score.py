"""``python -m metrics_core score`` on 1M pairs of the demo's catalogue (issue 35): seconds, whole process.

The catalogue is the demo's (Febrl 3's 5,000 records as ``raterapp.services.demo`` writes them:
title, an address as description, date of birth, social-security id and state as attributes).
Two PAIRS files of ``--pairs`` rows (1M by default):

- ``uniform``: pairs of items drawn uniformly, with replacement (nearly all distinct);
- ``sample``: ``sample ITEMS --pairs N --seed 1`` on the demo's clusterings, whose rows are the
  distinct drawn pairs (far fewer than N on 5,000 items: the file's size is printed).

Each is scored ``--rounds`` times as its own process (``python -m metrics_core score CATALOGUE
PAIRS --out SCORES``), CSV and Parquet in turns of the input and output; the median wall and CPU
seconds (user + sys, from ``os.wait4``) and the peak RSS are printed as one JSON line per file.

Run:
  .venv/bin/python bench/bench_score.py                 # 1M pairs, 3 rounds
  .venv/bin/python bench/bench_score.py --pairs 200000 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def run_process(argv: list[str]) -> dict:
    """One whole process: its wall and CPU seconds and peak RSS."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    stdout, stderr = process.stdout.read().decode(), process.stderr.read().decode()  # type: ignore[union-attr]
    process.stdout.close(), process.stderr.close()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)}: {stderr[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "mib": usage.ru_maxrss / 1024, "stdout": stdout}


def demo_files(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    # The demo's builder lives in the app; it needs no settings (pyarrow and numpy only).
    sys.path.insert(0, str(ROOT))
    from raterapp.services.demo import demo_files_write

    return demo_files_write(folder=folder)


def pairs_files(folder: pathlib.Path, paths: dict[str, pathlib.Path], n_pairs: int) -> dict[str, pathlib.Path]:
    ids = pcsv.read_csv(paths["catalogue"], convert_options=pcsv.ConvertOptions(include_columns=["item_id"]))
    ids = ids.column(0).combine_chunks()
    rng = np.random.default_rng(1)
    rows = rng.integers(0, len(ids), (n_pairs, 2))
    uniform = pa.table({"i": ids.take(pa.array(rows[:, 0])), "j": ids.take(pa.array(rows[:, 1]))})
    files = {"uniform.csv": folder / "uniform.csv", "uniform.parquet": folder / "uniform.parquet"}
    pcsv.write_csv(uniform, files["uniform.csv"])
    pq.write_table(uniform, files["uniform.parquet"])
    for extension in ("csv", "parquet"):
        out = folder / f"sample.{extension}"
        run_process(
            [
                PYTHON,
                "-m",
                "metrics_core",
                "sample",
                str(paths["items"]),
                "--pairs",
                str(n_pairs),
                "--seed",
                "1",
                "--out",
                str(out),
            ]
        )
        files[f"sample.{extension}"] = out
    catalogue = pcsv.read_csv(
        paths["catalogue"],
        convert_options=pcsv.ConvertOptions(column_types={"date_of_birth": pa.string(), "soc_sec_id": pa.string()}),
    )
    pq.write_table(catalogue, folder / "catalogue.parquet")
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name)
        paths = demo_files(folder / "demo")
        files = pairs_files(folder, paths, args.pairs)
        for kind in ("uniform", "sample"):
            for extension in ("csv", "parquet"):
                pairs = files[f"{kind}.{extension}"]
                catalogue = paths["catalogue"] if extension == "csv" else folder / "catalogue.parquet"
                out = folder / f"scores_{kind}.{extension}"
                runs = [
                    run_process([PYTHON, "-m", "metrics_core", "score", str(catalogue), str(pairs), "--out", str(out)])
                    for _ in range(args.rounds)
                ]
                rows = pq.read_metadata(pairs).num_rows if extension == "parquet" else sum(1 for _ in open(pairs)) - 1
                print(
                    json.dumps(
                        {
                            "pairs_file": f"{kind}.{extension}",
                            "rows": rows,
                            "scored": json.loads(runs[0]["stdout"])["pairs"],
                            "wall_s": round(statistics.median(r["wall"] for r in runs), 2),
                            "cpu_s": round(statistics.median(r["cpu"] for r in runs), 2),
                            "peak_MiB": round(max(r["mib"] for r in runs)),
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
