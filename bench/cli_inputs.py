"""The input files of ``bench_cli.py`` (issue 37), written by a process of their own so that the
memory they take is not in the measured processes' figures.

  * ``items_N.parquet``: integer ``item_id`` (0..N-1, in order, as ``bench_memory.py``),
    ``base_cluster`` (about N/3 clusters), ``exp_cluster`` (10% of the items moved, 2% of the
    clusters merged), ``weight`` uniform in [0.5, 2): four 8-byte columns, 32 bytes an item;
  * ``truth_K.parquet`` and ``pred_K.parquet`` for ``compare``: integer ``item_id`` and
    ``cluster_id``, K truth clusters, the prediction moving 10% of the items and merging 2% of the
    clusters, its rows in another (random) order than the truth's, so that matching items is work;
  * ``pairs_N_S.parquet``: ``sample ITEMS --pairs S --seed 2`` of the checkout measured, and
    ``judgements_N_S.parquet``: one verdict for every distinct non-self pair in it, seeded
    (equivalent with probability 0.95 for intersection pairs, 0.6 for split pairs, 0.3 for merge
    pairs; 2% unsure).

A file already in the folder is kept: the same folder serves a before and an after run.

Run: .venv/bin/python bench/cli_inputs.py FOLDER --items N [--seed 0] [--compare] [--judged S]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _common import make_codes, moved_and_merged

ROW_GROUP = 1 << 20
EQUIVALENT_SHARE = {"intersection": 0.95, "split": 0.6, "merge": 0.3}
UNSURE_SHARE = 0.02


def items_path(folder: pathlib.Path, n: int) -> pathlib.Path:
    return folder / f"items_{n}.parquet"


def compare_paths(folder: pathlib.Path, n: int, clusters: int) -> tuple[pathlib.Path, pathlib.Path]:
    return folder / f"truth_{n}_{clusters}.parquet", folder / f"pred_{n}_{clusters}.parquet"


def judged_paths(folder: pathlib.Path, n: int, draws: int) -> tuple[pathlib.Path, pathlib.Path]:
    return folder / f"pairs_{n}_{draws}.parquet", folder / f"judgements_{n}_{draws}.parquet"


def write_by_row_groups(path: pathlib.Path, columns: dict[str, np.ndarray]) -> None:
    """Write in row groups of 1M rows (never a second copy of the whole table), then move into place."""
    schema = pa.schema([(name, pa.from_numpy_dtype(values.dtype)) for name, values in columns.items()])
    partial = path.with_suffix(f".{os.getpid()}.partial")  # another bench may be writing the same file
    with pq.ParquetWriter(partial, schema) as writer:
        for start in range(0, len(next(iter(columns.values()))), ROW_GROUP):
            part = [values[start : start + ROW_GROUP] for values in columns.values()]
            writer.write_table(pa.table(part, schema=schema), row_group_size=ROW_GROUP)
    os.replace(partial, path)


def write_items(path: pathlib.Path, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    base, exp = make_codes(n, max(n // 3, 1), rng)
    weight = rng.uniform(0.5, 2.0, n)
    write_by_row_groups(path, {"item_id": np.arange(n), "base_cluster": base, "exp_cluster": exp, "weight": weight})


def write_compare(folder: pathlib.Path, n: int, clusters: int, seed: int) -> None:
    rng = np.random.default_rng([seed, clusters])
    truth = rng.integers(0, clusters, n)
    pred = moved_and_merged(truth, clusters, rng, moved=0.10, merged=0.02)
    order = rng.permutation(n)
    truth_path, pred_path = compare_paths(folder, n, clusters)
    write_by_row_groups(truth_path, {"item_id": np.arange(n), "cluster_id": truth})
    write_by_row_groups(pred_path, {"item_id": order, "cluster_id": pred[order]})


def write_judged(folder: pathlib.Path, n: int, draws: int, seed: int, code_dir: str) -> None:
    """The checkout's own sample (its PAIRS format), and a verdict for each distinct non-self pair."""
    pairs, judgements = judged_paths(folder, n, draws)
    if not pairs.exists():
        command = ["-m", "metrics_core", "sample", str(items_path(folder, n)), "--pairs", str(draws)]
        environment = os.environ | {"PYTHONPATH": code_dir}
        subprocess.run(
            [sys.executable, *command, "--seed", "2", "--out", str(pairs)], cwd=code_dir, env=environment, check=True
        )
    sample = pq.read_table(pairs, columns=["i", "j", "pair_class"])
    sample = sample.filter(pc.not_equal(sample["pair_class"], "self"))
    classes = sample["pair_class"].to_numpy(zero_copy_only=False)
    rng = np.random.default_rng([seed, draws])
    equivalent = np.zeros(len(classes), dtype=bool)
    for name, share in EQUIVALENT_SHARE.items():
        where = classes == name
        equivalent[where] = rng.random(int(where.sum())) < share
    verdict = np.where(equivalent, "equivalent", "not_equivalent").astype(object)
    verdict[rng.random(len(verdict)) < UNSURE_SHARE] = "unsure"
    table = pa.table({"i": sample["i"], "j": sample["j"], "verdict": pa.array(verdict, pa.string())})
    partial = judgements.with_suffix(f".{os.getpid()}.partial")
    pq.write_table(table, partial)
    os.replace(partial, judgements)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", type=lambda text: [int(float(k)) for k in text.split(",") if k], default=[])
    parser.add_argument("--judged", type=int, default=0, help="draws of the judged sample (0: none)")
    parser.add_argument("--code-dir", default=str(pathlib.Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    if not items_path(args.folder, args.items).exists():
        write_items(items_path(args.folder, args.items), args.items, args.seed)
    for clusters in args.compare:
        if not all(path.exists() for path in compare_paths(args.folder, args.items, clusters)):
            write_compare(args.folder, args.items, clusters, args.seed)
    if args.judged and not judged_paths(args.folder, args.items, args.judged)[1].exists():
        write_judged(args.folder, args.items, args.judged, args.seed, args.code_dir)


if __name__ == "__main__":
    main()
