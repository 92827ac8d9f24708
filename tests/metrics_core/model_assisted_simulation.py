"""Model-assisted estimates simulated (abcde-spec §15): scores of a known quality for the draw-order runs
of draw_order_simulation, shared by the coverage tests and bench/bench_model_assisted.py.

A pair's score is ``sigmoid(a·(±1) + ε)``, ``+1`` for a pair Ideal puts together, ``ε ~ N(0, 1)``
drawn once per pair: the binormal model, whose AUC is ``Φ(a·√2)``. ``a = 1.163`` gives AUC 0.95,
``0.595`` AUC 0.80; ``random`` is ``sigmoid(ε)``; ``inverted`` the AUC-0.95 score negated;
``inverted_merge`` negated in the merge class only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import binom

import metrics_core as mc
from metrics_core.estimation import estimate_quality_assisted
from tests.metrics_core.draw_order_simulation import DISTANCE_METRICS, DrawOrderRun, World, demo_world, world

SCORE_KINDS = ("auc95", "auc80", "random", "inverted", "inverted_merge")
_SEPARATION = {"auc95": 1.163, "auc80": 0.595, "random": 0.0, "inverted": -1.163, "inverted_merge": 1.163}
MERGE = mc.PAIR_CLASSES.index("merge")
N_DRAWS = 4000
LEVELS = (100, 200, 400)
COVERED = DISTANCE_METRICS
MERGE_METRICS = ("GoodMergeDistance", "BadMergeDistance")


def simulated_scores(world: World, sample: mc.PairSample, kind: str, seed: int) -> np.ndarray:
    """A score per sample row of the given ``kind`` (module docstring); a pair's two rows share it."""
    same = world.ideal[sample.i] == world.ideal[sample.j]
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    _, pair = np.unique(low.astype(np.int64) * (int(high.max()) + 1) + high, return_inverse=True)
    noise = np.random.default_rng(seed).normal(size=int(pair.max()) + 1)[pair]
    separation = np.full(len(sample), _SEPARATION[kind])
    if kind == "inverted_merge":
        separation[sample.pair_class == MERGE] *= -1.0
    return 1.0 / (1.0 + np.exp(-(separation * np.where(same, 1.0, -1.0) + noise)))


def demo_card_scores():
    """The demo's world (Febrl 3) and a function of item positions ``(i, j)`` giving each pair's built-in
    card similarity of the demo's catalogue (what the worker stores for the demo's pairs). Scores are
    kept by unordered pair: pass every run's pairs at once first, and each run's own are looked up
    (one pass over the catalogue instead of one a run)."""
    from raterapp.services.demo import demo_catalogue, febrl_records

    w = demo_world()
    catalogue = demo_catalogue(febrl_records())
    cards = {"title": catalogue["title"], "description": catalogue["description"]}
    attributes = {name: catalogue[name] for name in ("date_of_birth", "soc_sec_id", "state")}
    n = len(catalogue)
    known = {"keys": np.zeros(0, dtype=np.int64), "scores": np.zeros(0)}

    def scores(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        keys = np.minimum(i, j).astype(np.int64) * n + np.maximum(i, j)
        have = np.zeros(len(keys), dtype=bool)
        if len(known["keys"]):
            have = known["keys"][np.minimum(np.searchsorted(known["keys"], keys), len(known["keys"]) - 1)] == keys
        missing = np.unique(keys[~have])
        if len(missing):
            new = mc.card_similarity(cards=cards, attributes=attributes, i=missing // n, j=missing % n)
            order = np.argsort(merged := np.concatenate([known["keys"], missing]))
            known["keys"], known["scores"] = merged[order], np.concatenate([known["scores"], new])[order]
        return known["scores"][np.searchsorted(known["keys"], keys)]

    return w, scores


def pair_scores(w, sample: mc.PairSample, strength: float, seed: int) -> np.ndarray:
    """A score per sample row, the same for a pair's two rows: the truth plus noise, as a probability."""
    same = (w.ideal[sample.i] == w.ideal[sample.j]).astype(float)
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    _, pair = np.unique(low * (sample.i.max() + sample.j.max() + 2) + high, return_inverse=True)
    noise = np.random.default_rng(seed).normal(size=pair.max() + 1)[pair]
    return 1.0 / (1.0 + np.exp(-(strength * (2 * same - 1) + noise)))


def judged_with_unsure_and_replicas(run: DrawOrderRun, tasks: int, seed: int):
    """The first ``tasks`` pairs judged from the truth, a tenth of them *unsure* only, a tenth
    twice (one of those the wrong way round); each row's labelled draws."""
    rng = np.random.default_rng(seed)
    a, b = run.a[:tasks], run.b[:tasks]
    truth = np.where(run.world.ideal[a] == run.world.ideal[b], "equivalent", "not_equivalent")
    flip = {"equivalent": "not_equivalent", "not_equivalent": "equivalent"}
    kind = rng.integers(0, 10, size=tasks)
    rows_a, rows_b, verdicts = [], [], []
    for x, y, t, k in zip(a.tolist(), b.tolist(), truth.tolist(), kind.tolist()):
        said = ["unsure"] if k == 0 else [t, flip[t]] if k == 1 else [t]
        rows_a += [x] * len(said)
        rows_b += [y] * len(said)
        verdicts += said
    judged = set(zip(a.tolist(), b.tolist()))
    low, high = np.minimum(run.sample.i, run.sample.j), np.maximum(run.sample.i, run.sample.j)
    resolved = np.array([pair in judged for pair in zip(low.tolist(), high.tolist())], dtype=bool)
    counts, _ = mc.labelled_prefix(run.sample, run.positions, resolved)
    return mc.verdicts_from_judgements(rows_a, rows_b, verdicts), counts


def holds(low: float, high: float, truth: float) -> bool:
    """Whether an interval holds the truth; an undefined one (not enough data) claims nothing."""
    return math.isnan(low) or math.isnan(high) or low - 1e-12 <= truth <= high + 1e-12


def short_of(rate: float, n: int, level: float) -> bool:
    """Whether ``rate`` of ``n`` trials is below ``level`` beyond a binomial 1% bound (a real shortfall)."""
    return binom.cdf(round(rate * n), n, level) < 0.01


@dataclass
class CoverageTally:
    """Interval coverage of the model-assisted and the human-only estimates of the same runs, by cell,
    and the model-assisted width over the human-only one, by (verdicts, metric)."""

    covered: defaultdict = field(default_factory=lambda: defaultdict(int))
    human_covered: defaultdict = field(default_factory=lambda: defaultdict(int))
    trials: defaultdict = field(default_factory=lambda: defaultdict(int))
    ratios: defaultdict = field(default_factory=lambda: defaultdict(list))

    def add(self, result, truth: dict, verdicts: int, cell: tuple = ()) -> None:
        """One run's estimates at ``verdicts``, counted in ``cell`` (then the metric)."""
        for name in COVERED:
            e, h = result[name], result.human[name]
            self.trials[(*cell, name)] += 1
            self.covered[(*cell, name)] += holds(e.ci_low, e.ci_high, truth[name])
            self.human_covered[(*cell, name)] += holds(h.ci_low, h.ci_high, truth[name])
            if h.ci_high > h.ci_low:
                self.ratios[(verdicts, name)].append((e.ci_high - e.ci_low) / (h.ci_high - h.ci_low))

    def pooled(self) -> tuple[float, float]:
        """Pooled coverage, model-assisted and human-only."""
        n = sum(self.trials.values())
        return sum(self.covered.values()) / n, sum(self.human_covered.values()) / n

    def medians(self) -> dict:
        return {key: float(np.median(r)) for key, r in self.ratios.items()}


def check_synthetic_coverage(kind: str) -> None:
    """The coverage test of one score ``kind`` on the synthetic lognormal population (its docstring is
    test_model_assisted_coverage.py's): simulated, printed, and asserted."""
    w = world("lognormal")
    tally = CoverageTally()
    for scheme in ("jaccard", "stratified"):
        for seed in range(300):
            run = DrawOrderRun.draw(w, scheme, N_DRAWS, seed)
            scores = simulated_scores(w, run.sample, kind, 50_000 + seed)
            for verdicts in LEVELS:
                judged, counts = run.judged(verdicts)
                result = estimate_quality_assisted(w.population, run.sample, judged, scores, labelled_draws=counts)
                tally.add(result, w.truth, verdicts, (scheme, verdicts))
    (pooled, human), trials, ratios = tally.pooled(), tally.trials, tally.ratios
    rates = {cell: tally.covered[cell] / trials[cell] for cell in trials}
    lowest = min(rates.items(), key=lambda item: item[1])
    medians = tally.medians()
    print(f"\n{kind}: pooled coverage {pooled:.4f} (human-only {human:.4f}); lowest cell {lowest}")
    print("  median width ratio to human-only:", {k: round(v, 3) for k, v in sorted(medians.items())})
    assert pooled >= 0.93, pooled
    assert pooled >= human - 0.015, (pooled, human)
    assert not any(short_of(rate, trials[cell], 0.88) for cell, rate in rates.items()), lowest
    if kind == "random":
        assert max(medians.values()) <= 1.02, medians
        assert max(float(np.percentile(r, 95)) for r in ratios.values()) <= 1.05
    if kind == "auc95":
        assert max(medians[(v, name)] for v in (200, 400) for name in MERGE_METRICS) <= 0.75, medians
    if kind in ("auc95", "inverted"):  # the calibration turns an inverted score round
        assert medians[(400, "GoodMergeDistance")] <= 0.8, medians
