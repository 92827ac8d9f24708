"""The command line end to end against what a user would run instead (issue 37): the issue's table.

Each row runs our command (A) and its reference (B) as whole processes, in turns A B A B
(``--pairs-of-runs`` pairs), and reports the median of the pairs' CPU-time ratios A/B (user +
sys of the process and its threads, from ``os.wait4``'s rusage: a shared machine inflates it far
less than the wall time), the median CPU seconds and peak RSS (``ru_maxrss``) of each side, and
the goal. Rows (``--rows``, comma-separated; default all):

  =========== ===================================================== ======================================= ======
  row         A                                                     B                                       goal
  =========== ===================================================== ======================================= ======
  impact      ``impact ITEMS``                                      read + ``contingency_matrix(sparse)``   ≤ 0.5
  compare-1e3 ``compare TRUTH PRED``, integer ids, 1e3 clusters     read + pandas join + ARI alone          ≤ 0.7
  compare-1e5 the same with 1e5 clusters                            the same                                ≤ 0.7
  sample      ``sample ITEMS --pairs 100000 --seed 1 --out P``      ``pyarrow.parquet.read_table`` alone    ≤ 2
  estimate    ``estimate ITEMS PAIRS JUDGEMENTS``, 1M judged draws  ``impact ITEMS`` (the same checkout)    ≤ 1.5
  =========== ===================================================== ======================================= ======

The references are ``cli_references.py``; the inputs (``cli_inputs.py``: Parquet, integer ids,
N/3 Base clusters, weights) are written by a child process into ``--workdir`` (a temporary folder
without it; with it, files already there are reused, so a before and an after run read the same
files). ``--code-dir DIR`` runs our commands with the ``metrics_core`` of another checkout (cwd
and PYTHONPATH), e.g. a ``git worktree`` of the commit before a change. Its ``metrics_core`` is
compiled to bytecode first, as an installed package is (pip compiles a wheel's modules, the image
``python -m compileall``): where ``PYTHONDONTWRITEBYTECODE`` is set, every run would otherwise
compile our hundred modules again (0.08-0.09 CPU s), which the reference, all in site-packages,
never pays.

This process imports nothing beyond the standard library: a child started by (v)fork and exec
keeps in its ``ru_maxrss`` the resident size of its parent at the exec, so a lean parent keeps
the children's figures their own (the JSON's ``runner_peak_MiB``, their floor).

``--memory``: ``impact``'s working state at ``--memory-items`` (30M) items, issue 37's memory
acceptance: the peak RSS of ``impact`` (its own VmHWM, ``peak_rss.py``) minus that of a process
that imported the engine (``bench_memory.py``'s baseline), minus the input's 32 bytes an item, per
item (goal ≤ 64).

Run:
  .venv/bin/python bench/bench_cli.py --items 200000 --pairs-of-runs 1       # a quick check
  .venv/bin/python bench/bench_cli.py --workdir /tmp/bench-cli [--code-dir /tmp/bench-before] [--json]
  .venv/bin/python bench/bench_cli.py --workdir /tmp/bench-cli --rows= --memory  # the memory figure alone
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = pathlib.Path(__file__).resolve().parent
PYTHON = sys.executable
ENGINE_IMPORTED = "import metrics_core.cli, numpy, pandas, pyarrow.parquet, pyarrow.csv"  # as bench_memory.py
INPUT_BYTES_PER_ITEM = 32  # item_id, base_cluster, exp_cluster, weight: 8 bytes each
MEMORY_GOAL = 64


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    command: str
    reference: str
    goal: float


ROWS = {
    row.name: row
    for row in (
        Row("impact", "`impact items.parquet`", "read + scikit-learn `contingency_matrix(sparse=True)`", 0.5),
        Row("compare-1e3", "`compare`, integer ids, 1e3 clusters", "read + pandas join + `adjusted_rand_score`", 0.7),
        Row("compare-1e5", "`compare`, integer ids, 1e5 clusters", "same", 0.7),
        Row("sample", "`sample --pairs 100000`", "reading the Parquet file alone", 2.0),
        Row("estimate", "`estimate` on 1M draws (judged)", "one `impact` run on the same items", 1.5),
    )
}


@dataclasses.dataclass(frozen=True)
class Run:
    cpu: float
    wall: float
    mib: float
    stdout: str
    stderr: str


def run_process(argv: list[str], *, cwd: pathlib.Path, env: dict[str, str] | None = None) -> Run:
    """One whole process: its CPU seconds (user + sys) and peak RSS from its rusage."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {process.returncode}\n{stderr[-3000:]}")
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, stdout, stderr[-3000:])


class Bench:
    """The commands of one run: ours from ``code_dir``, the references from this folder."""

    def __init__(self, args: argparse.Namespace, folder: pathlib.Path) -> None:
        self.code_dir = pathlib.Path(args.code_dir).resolve()
        self.env = os.environ | {"PYTHONPATH": str(self.code_dir)}
        subprocess.run([PYTHON, "-m", "compileall", "-q", str(self.code_dir / "metrics_core")], check=True)
        self.folder, self.n, self.draws = folder, args.items, args.judged_draws
        self.out = folder / "out" / str(os.getpid())  # benches sharing a folder write apart
        self.out.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> str:
        return str(self.folder / name)

    def ours(self, *argv: str) -> Run:
        return run_process([PYTHON, "-m", "metrics_core", *argv], cwd=self.code_dir, env=self.env)

    def reference(self, *argv: str) -> Run:
        return run_process([PYTHON, str(BENCH / "cli_references.py"), *argv], cwd=BENCH)

    def sides(self, row: str):
        """The row's (A, B) as two callables, each running one process."""
        n, items = self.n, self.path(f"items_{self.n}.parquet")
        if row == "impact":
            return (lambda: self.ours("impact", items)), (lambda: self.reference("impact", items))
        if row.startswith("compare-"):
            clusters = int(float(row.split("-")[1]))
            files = self.path(f"truth_{n}_{clusters}.parquet"), self.path(f"pred_{n}_{clusters}.parquet")
            return (lambda: self.ours("compare", *files)), (lambda: self.reference("compare", *files))
        if row == "sample":
            pairs = self.out / "sample_pairs.parquet"

            def sample() -> Run:
                pairs.unlink(missing_ok=True)  # so that check() sees this run's file
                return self.ours("sample", items, "--pairs", "100000", "--seed", "1", "--out", str(pairs))

            return sample, (lambda: self.reference("read", items))
        pairs, judgements = (
            self.path(f"pairs_{n}_{self.draws}.parquet"),
            self.path(f"judgements_{n}_{self.draws}.parquet"),
        )
        return (lambda: self.ours("estimate", items, pairs, judgements)), (lambda: self.ours("impact", items))


def check(bench: Bench, row: str, a: Run, b: Run) -> None:
    """The two sides computed what they should: our JSON (sample: its file), compare's ARI scikit-learn's."""
    ours, theirs = json.loads(a.stdout or "{}"), json.loads(b.stdout)
    expected = {"impact": "metrics", "estimate": "estimates"}.get(row, "metrics" if row != "sample" else None)
    if expected and expected not in ours or row == "sample" and not (bench.out / "sample_pairs.parquet").exists():
        raise SystemExit(f"{row}: no {expected or 'PAIRS file'} in our output: {a.stdout[:500]!r}")
    if row.startswith("compare-"):
        difference = abs(ours["metrics"]["AdjustedRandIndex"] - theirs["AdjustedRandIndex"])
        if not (difference < 1e-9 and ours["items"] == theirs["items"]):
            raise SystemExit(f"{row}: compare disagrees with scikit-learn: {ours['metrics']} vs {theirs}")


def figures(run: Run) -> dict:
    return {"cpu_s": round(run.cpu, 3), "wall_s": round(run.wall, 3), "MiB": round(run.mib)}


def measure_row(bench: Bench, row: str, pairs_of_runs: int) -> dict:
    run_a, run_b = bench.sides(row)
    runs = []
    for k in range(pairs_of_runs):
        a, b = run_a(), run_b()
        check(bench, row, a, b)
        runs.append((a, b))
        print(f"{row} pair {k + 1}: A {a.cpu:.2f} s {a.mib:.0f} MiB, B {b.cpu:.2f} s {b.mib:.0f} MiB", file=sys.stderr)
    goal = ROWS[row].goal
    ratio = statistics.median(a.cpu / b.cpu for a, b in runs)
    return {
        "row": row,
        "ratio": round(ratio, 3),
        "goal": goal,
        "met": ratio <= goal,
        "a_cpu_s": round(statistics.median(a.cpu for a, _ in runs), 2),
        "b_cpu_s": round(statistics.median(b.cpu for _, b in runs), 2),
        "a_wall_s": round(statistics.median(a.wall for a, _ in runs), 2),
        "b_wall_s": round(statistics.median(b.wall for _, b in runs), 2),
        "a_MiB": round(statistics.median(a.mib for a, _ in runs)),
        "b_MiB": round(statistics.median(b.mib for _, b in runs)),
        "runs": [{side: figures(run) for side, run in (("a", a), ("b", b))} for a, b in runs],
    }


def measure_memory(bench: Bench, items: int) -> dict:
    """impact's peak RSS beyond a process with the engine imported, minus the input, per item."""

    def vm_hwm(*argv: str) -> tuple[int, Run]:
        run = run_process([PYTHON, str(BENCH / "peak_rss.py"), *argv], cwd=bench.code_dir, env=bench.env)
        return int(run.stderr.rsplit("peak_rss_bytes ", 1)[1]), run

    baseline, _ = vm_hwm("-c", ENGINE_IMPORTED)
    peak, run = vm_hwm("-m", "metrics_core", "impact", bench.path(f"items_{items}.parquet"))
    beyond = (peak - baseline) / items
    print(f"memory: impact peak {peak / 2**20:.0f} MiB, baseline {baseline / 2**20:.0f} MiB", file=sys.stderr)
    return {
        "items": items,
        "baseline_MiB": round(baseline / 2**20),
        "impact_peak_MiB": round(peak / 2**20),
        "impact_cpu_s": round(run.cpu, 2),
        "impact_wall_s": round(run.wall, 2),
        "beyond_interpreter_B_per_item": round(beyond, 1),
        "working_state_B_per_item": round(beyond - INPUT_BYTES_PER_ITEM, 1),
        "goal": MEMORY_GOAL,
        "met": beyond - INPUT_BYTES_PER_ITEM <= MEMORY_GOAL,
    }


def generate(args: argparse.Namespace, folder: pathlib.Path, rows: list[str], *, memory: bool) -> None:
    """The inputs, by a child process (its memory is not this process's, nor the measured ones')."""
    started = time.perf_counter()
    compare = ",".join(row.split("-")[1] for row in rows if row.startswith("compare-"))
    command = [PYTHON, str(BENCH / "cli_inputs.py"), str(folder), "--seed", str(args.seed), "--code-dir", args.code_dir]
    if rows:
        judged = ["--judged", str(args.judged_draws)] if "estimate" in rows else []
        subprocess.run([*command, "--items", str(args.items), "--compare", compare, *judged], check=True)
    if memory:
        subprocess.run([*command, "--items", str(args.memory_items)], check=True)
    print(f"inputs ready in {time.perf_counter() - started:.0f} s: {folder}", file=sys.stderr)


def machine(code_dir: str) -> dict:
    """Where and what was measured: the checkout's commit (and whether metrics_core differs from it)."""
    code_dir = str(pathlib.Path(code_dir).resolve())

    def git(*argv: str) -> str:
        done = subprocess.run(["git", "-C", code_dir, *argv], capture_output=True, text=True)
        return done.stdout.strip()

    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "")
    memory = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return {
        "code_dir": code_dir,
        "commit": git("rev-parse", "HEAD"),
        "metrics_core_changed_since_commit": bool(git("status", "--porcelain", "--", "metrics_core")),
        "cores": os.cpu_count(),
        "cpu": model,
        "memory_GiB": round(memory / 2**20, 1),
        "load_average_at_start": [round(load, 2) for load in os.getloadavg()],
    }


def markdown(results: dict) -> str:
    lines = [
        f"{results['items']:,} items, {results['pairs_of_runs']} interleaved pair(s) A B a row, medians; "
        f"code {results['machine']['commit'][:12]}"
        + (" + uncommitted metrics_core changes" if results["machine"]["metrics_core_changed_since_commit"] else ""),
        "",
    ]
    if results["rows"]:
        lines += [
            "| command (A) | reference (B) | CPU ratio A/B | CPU s A / B | peak MiB A / B | goal | met |",
            "|---|---|---|---|---|---|---|",
        ]
        for figures in results["rows"]:
            row = ROWS[figures["row"]]
            lines.append(
                f"| {row.command} | {row.reference} | **{figures['ratio']:.2f}** | "
                f"{figures['a_cpu_s']:.1f} / {figures['b_cpu_s']:.1f} | {figures['a_MiB']:,} / {figures['b_MiB']:,} | "
                f"≤ {row.goal:g} | {'yes' if figures['met'] else 'no'} |"
            )
    if memory := results.get("memory"):
        lines += [
            "",
            f"`impact` at {memory['items']:,} items: peak {memory['impact_peak_MiB']:,} MiB, a process with the engine "
            f"imported {memory['baseline_MiB']:,} MiB: {memory['beyond_interpreter_B_per_item']} B/item beyond it, "
            f"**{memory['working_state_B_per_item']} B/item of working state** beyond the input's "
            f"{INPUT_BYTES_PER_ITEM} (goal ≤ {memory['goal']}: {'met' if memory['met'] else 'not met'}).",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--pairs-of-runs", type=int, default=3)
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ROWS)}; empty: none")
    parser.add_argument("--workdir", help="the inputs' folder, kept (default: a temporary folder, removed)")
    parser.add_argument("--code-dir", default=str(BENCH.parent), help="the checkout whose metrics_core is measured")
    parser.add_argument("--judged-draws", type=int, default=1_000_000, help="draws of the estimate row's sample")
    parser.add_argument("--memory", action="store_true", help="also impact's working state at --memory-items")
    parser.add_argument("--memory-items", type=int, default=30_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="also print the results as one JSON object")
    args = parser.parse_args()
    rows = [row for row in args.rows.split(",") if row]
    if unknown := set(rows) - set(ROWS):
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}")
    folder = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="bench_cli_")).resolve()
    try:
        results = {"items": args.items, "pairs_of_runs": args.pairs_of_runs, "machine": machine(args.code_dir)}
        generate(args, folder, rows, memory=args.memory)
        bench = Bench(args, folder)
        results["rows"] = [measure_row(bench, row, args.pairs_of_runs) for row in rows]
        if args.memory:
            results["memory"] = measure_memory(bench, args.memory_items)
    finally:
        shutil.rmtree(folder / "out" / str(os.getpid()), ignore_errors=True)
        if not args.workdir:
            shutil.rmtree(folder, ignore_errors=True)
    results["machine"]["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    results["runner_peak_MiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(markdown(results))
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
