"""What a score of every drawn pair saves (abcde-spec §15), and what it costs.

``--widths`` (default): on the demo's data (Febrl 3, its Base and Exp, the true entities as Ideal)
with the built-in card similarity of the demo's catalogue, and on the synthetic lognormal
population of the draw-order tests with binormal scores of AUC 0.95 and a random one: each seed
draws 4,000 draws and judges its first 100 / 200 / 400 tasks in draw order (one verdict from Ideal
each); printed, per metric, the median over seeds of the model-assisted 95% half-width over the
human-only one at the same verdicts (paired), and both coverages.

``--decide``: on the demo's data with the built-in score, verdicts arrive one by one in draw order
(looks every 10 verdicts, up to 1,000); for each seed, the first look at which the headline (the
deciding metric's confidence sequence against margin 0, as the page decides) says better or worse,
with and without the score: the median number of verdicts each needs, and their ratio.

``--speed``: whole processes, in turns (A B A B), medians of CPU time: ``estimate ITEMS PAIRS
JUDGEMENTS --scores SCORES`` against the same without ``--scores``, on ``--draws`` draws (default
1M) of a ``--items`` population (default 2M), the first half of the pairs judged in draw order.

    .venv/bin/python bench/bench_model_assisted.py [--widths] [--seeds 100] [--speed] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import subprocess
import sys
import tempfile
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "metrics_core"), str(ROOT / "bench")]

from cli_inputs import items_path, write_items  # noqa: E402
from draw_order_simulation import DrawOrderRun, World, world  # noqa: E402
from model_assisted_simulation import demo_card_scores, simulated_scores  # noqa: E402

import metrics_core as mc  # noqa: E402

METRICS = ("GoodSplitDistance", "GoodMergeDistance", "BadMergeDistance", "GoodMinusBadDistance", "DeltaPrecision")
LEVELS = (100, 200, 400)
DRAWS = 4000


def widths(name: str, w: World, scores_of, seeds: int) -> None:
    ratio, covered, human_covered = defaultdict(list), defaultdict(int), defaultdict(int)
    for scheme in ("jaccard", "stratified"):
        for seed in range(seeds):
            run = DrawOrderRun.draw(w, scheme, DRAWS, seed)
            scores = scores_of(run.sample, seed)
            for verdicts in LEVELS:
                judged, counts = run.judged(verdicts)
                result = mc.estimate_quality_assisted(w.population, run.sample, judged, scores, labelled_draws=counts)
                for metric in METRICS:
                    e, h, truth = result[metric], result.human[metric], w.truth[metric]
                    key = (verdicts, metric)
                    covered[key] += e.ci_low - 1e-12 <= truth <= e.ci_high + 1e-12
                    human_covered[key] += h.ci_low - 1e-12 <= truth <= h.ci_high + 1e-12
                    if h.ci_high > h.ci_low:
                        ratio[key].append((e.ci_high - e.ci_low) / (h.ci_high - h.ci_low))
    runs = 2 * seeds
    print(f"\n{name}: median half-width, model-assisted / human-only (coverage assisted / human), {runs} runs")
    print(f"{'metric':<22}" + "".join(f"{v:>24}" for v in LEVELS))
    for metric in METRICS:
        cells = []
        for verdicts in LEVELS:
            key = (verdicts, metric)
            cover = f"{covered[key] / runs:.2f}/{human_covered[key] / runs:.2f}"
            cells.append(f"{np.median(ratio[key]):>10.3f} ({cover})")
        print(f"{metric:<22}" + "".join(f"{c:>24}" for c in cells))


def decide_earlier(seeds: int, metric: str = "GoodMinusBadDistance") -> None:
    w, builtin = demo_card_scores()
    needed = {"assisted": [], "human": []}
    for seed in range(seeds):
        run = DrawOrderRun.draw(w, "jaccard", DRAWS, seed)
        scores = builtin(run.sample.i, run.sample.j)
        first = {}
        for verdicts in range(10, min(1000, len(run.a)) + 1, 10):
            judged, counts = run.judged(verdicts)
            result = mc.estimate_quality_assisted(
                w.population, run.sample, judged, scores, labelled_draws=counts, horizon=DRAWS
            )
            for name, quality in (("assisted", result.quality), ("human", result.human)):
                if name not in first and mc.decide(quality, metric=metric).outcome != "not_enough_data":
                    first[name] = verdicts
            if len(first) == 2:
                break
        for name in needed:
            needed[name].append(first.get(name, np.nan))
    assisted, human = (np.array(needed[name], dtype=float) for name in ("assisted", "human"))
    both = ~np.isnan(assisted) & ~np.isnan(human)
    print(
        f"\nverdicts until the headline decides on {metric} (Febrl 3, built-in score, {seeds} seeds; "
        f"decided within 1,000: assisted {np.count_nonzero(~np.isnan(assisted))}, human-only "
        f"{np.count_nonzero(~np.isnan(human))}): median {np.nanmedian(assisted):.0f} with the score, "
        f"{np.nanmedian(human):.0f} without; paired median ratio {np.median(assisted[both] / human[both]):.2f}"
    )


def speed_inputs(folder: pathlib.Path, n_items: int, draws: int) -> tuple[pathlib.Path, ...]:
    items = items_path(folder, n_items)
    if not items.exists():
        write_items(items, n_items, seed=1)
    pairs = folder / f"assisted_pairs_{n_items}_{draws}.parquet"
    judgements = folder / f"assisted_judgements_{n_items}_{draws}.parquet"
    scores = folder / f"assisted_scores_{n_items}_{draws}.parquet"
    if not scores.exists():
        command = [sys.executable, "-m", "metrics_core", "sample", str(items), "--pairs", str(draws), "--seed", "2"]
        subprocess.run([*command, "--out", str(pairs)], cwd=ROOT, check=True)
        table = pq.read_table(pairs, columns=["i", "j", "pair_class"])
        other = table.filter(pc.not_equal(table["pair_class"], "self"))
        # one row per unordered pair (a pair drawn both ways has two rows), in file order
        i, j = (other[name].to_numpy().astype(np.int64) for name in ("i", "j"))
        key = np.minimum(i, j) * (int(max(i.max(), j.max())) + 1) + np.maximum(i, j)
        other = other.take(np.sort(np.unique(key, return_index=True)[1]))
        # the file is in draw order (first position): its first half of pairs is a labelled prefix
        half = other.slice(0, len(other) // 2)
        rng = np.random.default_rng(3)
        verdict = np.where(rng.random(len(half)) < 0.6, "equivalent", "not_equivalent")
        pq.write_table(pa.table({"i": half["i"], "j": half["j"], "verdict": verdict}), judgements)
        pq.write_table(pa.table({"i": other["i"], "j": other["j"], "score": rng.random(len(other))}), scores)
    return items, pairs, judgements, scores


def cpu_seconds(command: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def score_inputs(folder: pathlib.Path, n_pairs: int) -> tuple[pathlib.Path, pathlib.Path]:
    """The demo's catalogue and ``n_pairs`` pairs of its items drawn uniformly (bench_score.py's)."""
    from bench_score import demo_files, pairs_files

    catalogue, pairs = folder / "score" / "catalogue.csv", folder / "score" / "uniform.parquet"
    if not pairs.exists():
        paths = demo_files(folder / "score")
        pairs = pairs_files(folder / "score", paths, n_pairs)["uniform.parquet"]
    return catalogue, pairs


def speed(folder: pathlib.Path, n_items: int, draws: int, rounds: int) -> None:
    items, pairs, judgements, scores = speed_inputs(folder, n_items, draws)
    catalogue, score_pairs = score_inputs(folder, draws)
    plain = [sys.executable, "-m", "metrics_core", "estimate", str(items), str(pairs), str(judgements)]
    assisted = [*plain, "--scores", str(scores)]
    score = [sys.executable, "-m", "metrics_core", "score", str(catalogue), str(score_pairs), "--out"]
    times = defaultdict(list)
    for _ in range(rounds):  # in turns: A B C, A B C, ...
        times["assisted"].append(cpu_seconds(assisted))
        times["plain"].append(cpu_seconds(plain))
        times["score"].append(cpu_seconds([*score, str(folder / "score" / "scores.parquet")]))
    ratio = {name: np.median(np.array(times[name]) / np.array(times["plain"])) for name in ("assisted", "score")}
    print(
        f"\n{rounds} rounds in turns, CPU medians: estimate ({draws:,} draws of {n_items:,} items) "
        f"{np.median(times['plain']):.2f} s; estimate --scores {np.median(times['assisted']):.2f} s "
        f"(ratio {ratio['assisted']:.2f}, goal ≤ 2); score on {draws:,} pairs of the demo's catalogue "
        f"{np.median(times['score']):.2f} s (ratio {ratio['score']:.2f}, goal ≤ 2)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--widths", action="store_true")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--decide", action="store_true")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--items", type=int, default=2_000_000)
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=pathlib.Path, default=None)
    args = parser.parse_args()
    if args.decide:
        decide_earlier(args.seeds)
    if args.widths or not (args.speed or args.decide):
        w, builtin = demo_card_scores()
        widths("Febrl 3, built-in card similarity", w, lambda sample, seed: builtin(sample.i, sample.j), args.seeds)
        synthetic = world("lognormal")
        for kind in ("auc95", "random"):
            widths(
                f"synthetic lognormal, score {kind}",
                synthetic,
                lambda sample, seed, kind=kind: simulated_scores(synthetic, sample, kind, seed),
                args.seeds,
            )
    if args.speed:
        folder = args.workdir or pathlib.Path(tempfile.mkdtemp(prefix="bench-assisted-"))
        folder.mkdir(parents=True, exist_ok=True)
        speed(folder, args.items, args.draws, args.rounds)


if __name__ == "__main__":
    main()
