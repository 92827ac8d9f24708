"""What judging in draw order saves (abcde-spec §14): half-widths at the same verdicts.

On the demo's data (Febrl 3, its Base and Exp, the true entities as Ideal) and on a synthetic
population with lognormal item weights, each seed draws one sample and judges its first 100 /
200 / 400 tasks (one verdict from Ideal each), once in draw order (the product now: the labelled
prefix) and once in today's order (random task order, every draw). It prints, per metric, the
median 95% half-width in draw order over today's order at the same verdicts (both with the
§14 variances), ΔPrecision's also over the pre-§14 formula, and the coverage of both.

    .venv/bin/python bench/bench_draw_order.py [--seeds 100] [--draws 2000]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "metrics_core")]

from draw_order_simulation import (  # noqa: E402
    DrawOrderRun,
    World,
    demo_world,
    todays_delta_precision_stderr,
    todays_order,
    world,
)

import metrics_core as mc  # noqa: E402

METRICS = ("GoodSplitDistance", "GoodMergeDistance", "GoodMinusBadDistance", "DeltaPrecision", "AffectedGoodIndex")
LEVELS = (100, 200, 400)


def measure(w: World, scheme: str, seeds: int, draws: int) -> None:
    half = {order: defaultdict(list) for order in ("draw", "today")}
    covered = {order: defaultdict(int) for order in ("draw", "today")}
    before = defaultdict(list)
    for seed in range(seeds):
        run = DrawOrderRun.draw(w, scheme, draws, seed)
        for verdicts in LEVELS:
            sample, judged = todays_order(w, scheme, draws, seed, verdicts)
            results = {"draw": run.estimates(verdicts), "today": mc.estimate_quality(w.population, sample, judged)}
            for order, q in results.items():
                for name in METRICS:
                    e = q[name]
                    half[order][(verdicts, name)].append((e.ci_high - e.ci_low) / 2)
                    covered[order][(verdicts, name)] += e.ci_low - 1e-12 <= w.truth[name] <= e.ci_high + 1e-12
            if scheme == "jaccard":
                before[verdicts].append(1.959964 * todays_delta_precision_stderr(w, sample, judged))
    print(f"\n{scheme}: median half-width, draw order / today's order (coverage draw / today), {seeds} seeds")
    print(f"{'metric':<22}" + "".join(f"{v:>26}" for v in LEVELS))
    for name in METRICS:
        cells = []
        for verdicts in LEVELS:
            key = (verdicts, name)
            ratio = np.nanmedian(half["draw"][key]) / np.nanmedian(half["today"][key])
            cover = f"{covered['draw'][key] / seeds:.2f}/{covered['today'][key] / seeds:.2f}"
            cells.append(f"{ratio:>10.3f} ({cover})")
        print(f"{name:<22}" + "".join(f"{c:>26}" for c in cells))
    if before:
        ratios = [np.nanmedian(half["draw"][(v, "DeltaPrecision")]) / np.nanmedian(before[v]) for v in LEVELS]
        print(f"{'ΔPrecision / pre-§14':<22}" + "".join(f"{r:>26.3f}" for r in ratios))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args()
    for label, make in (
        ("demo data (Febrl 3)", demo_world),
        ("synthetic, lognormal weights", lambda: world("lognormal")),
    ):
        w = make()
        print(f"\n=== {label}: {w.population.n_items} items, {args.draws} draws ===")
        for scheme in ("jaccard", "stratified"):
            measure(w, scheme, args.seeds, args.draws)


if __name__ == "__main__":
    main()
