"""Judging in draw order, simulated (abcde-spec §14): the populations, the raters and today's order.

Shared by the coverage and sequence tests (tests/metrics_core/test_draw_order_coverage.py) and
the benchmark of the savings (bench/bench_draw_order.py). Verdicts come from a known Ideal
clustering, one per pair; the truth is ``quality_from_gold``.

* **Draw order** (the product now): a batch's pairs become tasks in the order of their first
  draw in the batch's seeded permutation; raters judge the first ``k``; the estimates use the
  labelled prefix.
* **Today's order** (before §14): the pairs in a uniformly random order, the first ``k`` judged,
  the estimates over every draw; ΔPrecision's SE centred at the pooled mean
  (:func:`todays_delta_precision_stderr`, the formula the product used until §14).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

import metrics_core as mc
from tests.metrics_core.helpers import simulation_population

# The class distances, Good−Bad and ΔPrecision: the metrics whose coverage the simulations judge.
DISTANCE_METRICS = (
    "GoodSplitDistance",
    "BadSplitDistance",
    "GoodMergeDistance",
    "BadMergeDistance",
    "GoodMinusBadDistance",
    "DeltaPrecision",
)


@dataclass(frozen=True)
class World:
    """A population, its Ideal clustering and its true quality metrics."""

    population: mc.Population
    ideal: np.ndarray
    truth: dict


def world(weights: str) -> World:
    """The simulation population of test_estimation_simulation (~300 items in clusters of 1-40)
    with ``"unit"`` weights or ``"lognormal"`` ones (σ = 1: a heavy item weighs ~10× a light one)."""
    pop, ideal = simulation_population()
    n = pop.n_items
    w = np.ones(n) if weights == "unit" else np.random.default_rng(99).lognormal(0.0, 1.0, n)
    population = mc.population_from_labels(pop.base, pop.exp, w)
    ideal = np.asarray(ideal)
    return World(population, ideal, mc.quality_from_gold(population, ideal))


def demo_world() -> World:
    # The demo's records and clusterings are the app's (raterapp.services.demo); no database is used.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    import django

    django.setup()
    from raterapp.services.demo import demo_clusterings, febrl_records

    records = febrl_records()
    base, exp = demo_clusterings(records)
    ideal = np.unique(np.asarray(records["entity"].to_pylist()), return_inverse=True)[1]
    population = mc.population_from_labels(base, exp)
    return World(population, ideal, mc.quality_from_gold(population, ideal))


def verdicts_on(world: World, a: np.ndarray, b: np.ndarray) -> mc.PairVerdicts:
    """One verdict from Ideal on each pair ``(a, b)``."""
    same = world.ideal[a] == world.ideal[b]
    return mc.verdicts_from_judgements(a, b, np.where(same, "equivalent", "not_equivalent"))


@dataclass(frozen=True)
class DrawOrderRun:
    """One sample judged in draw order: ask for the estimates after any number of verdicts."""

    world: World
    sample: mc.PairSample
    positions: np.ndarray
    a: np.ndarray  # the tasks, in the order raters are served
    b: np.ndarray

    @classmethod
    def draw(cls, world: World, scheme: str, n_draws: int, seed: int) -> DrawOrderRun:
        sample = mc.sample_pairs(world.population, n_draws=n_draws, scheme=scheme, rng=mc.batch_rng(seed=seed, batch=0))
        positions = mc.draw_positions(sample, rng=mc.batch_order_rng(seed=seed, batch=0))
        a, b = mc.pairs_in_draw_order(sample, positions)
        return cls(world, sample, positions, a, b)

    def judged(self, verdicts: int) -> tuple[mc.PairVerdicts, np.ndarray]:
        """The first ``verdicts`` tasks' verdicts, and each sample row's labelled draws."""
        a, b = self.a[:verdicts], self.b[:verdicts]
        judged = set(zip(a.tolist(), b.tolist()))
        low, high = np.minimum(self.sample.i, self.sample.j), np.maximum(self.sample.i, self.sample.j)
        resolved = np.array([pair in judged for pair in zip(low.tolist(), high.tolist())], dtype=bool)
        counts, _ = mc.labelled_prefix(self.sample, self.positions, resolved)
        return verdicts_on(self.world, a, b), counts

    def estimates(self, verdicts: int, horizon: int | None = None) -> mc.QualityEstimates:
        judged, counts = self.judged(verdicts)
        return mc.estimate_quality(self.world.population, self.sample, judged, labelled_draws=counts, horizon=horizon)

    def derived(self, verdicts: int, recall_base: float, seed: int) -> mc.DerivedMetrics:
        """ΔRecall and IQ at a known Recall_Base (a ground truth's), from the labelled prefix."""
        judged, counts = self.judged(verdicts)
        return mc.derived_metrics(
            self.world.population,
            self.sample,
            judged,
            rng=np.random.default_rng(seed),
            n_boot=100,
            recall_base=recall_base,
            labelled_draws=counts,
        )


def todays_order(world: World, scheme: str, n_draws: int, seed: int, verdicts: int):
    """The same sample judged as before §14: random task order, every draw estimated from.
    Returns ``(sample, PairVerdicts)``."""
    sample = mc.sample_pairs(world.population, n_draws=n_draws, scheme=scheme, rng=mc.batch_rng(seed=seed, batch=0))
    a, b = mc.pairs_for_judgement(sample, rng=mc.batch_order_rng(seed=seed, batch=0))
    return sample, verdicts_on(world, a[:verdicts], b[:verdicts])


def todays_delta_precision_stderr(world: World, sample: mc.PairSample, verdicts: mc.PairVerdicts) -> float:
    """ΔPrecision's SE as the product computed it before §14 (``jaccard`` scheme): spec §6 with the
    term of pairs missing together centred at the pooled mean,
    ``SE² = n/(n−1) Σ_u v_u² k_u (x_u − m)² / (Σ v_u D_u)²`` times ``Σ w_ij``."""
    if sample.scheme != "jaccard":
        raise ValueError("written for the jaccard scheme")
    pop = world.population
    sets = {name: pop.cell_sets[name][pop.cell[sample.i]] for name in ("union", "base", "exp")}
    exp_ratio, base_ratio = sets["union"] / sets["exp"], sets["union"] / sets["base"]
    label = np.select(
        [sample.pair_class == mc.PAIR_CLASSES.index("merge"), sample.pair_class == mc.PAIR_CLASSES.index("split")],
        [exp_ratio, -base_ratio],
        exp_ratio - base_ratio,
    )
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    value = {}
    for k in range(len(verdicts.a)):
        eq, ne = verdicts.equivalent[k], verdicts.not_equivalent[k]
        if eq + ne:
            value[(int(verdicts.a[k]), int(verdicts.b[k]))] = eq / (eq + ne)
    is_self = sample.i == sample.j
    share = np.array(
        [1.0 if s else value.get(pair, np.nan) for s, pair in zip(is_self, zip(low.tolist(), high.tolist()))]
    )
    unit = np.unique(np.stack([sample.pair_class, low, high], axis=1), axis=0, return_inverse=True)[1].ravel()
    klass = sample.pair_class
    drawn = np.bincount(klass, weights=sample.draws, minlength=4)
    judged_rows = ~np.isnan(share)
    judged = np.bincount(klass[judged_rows], weights=sample.draws[judged_rows], minlength=4)
    v = np.divide(drawn, judged, out=np.zeros(4), where=judged > 0)
    units_of_class = np.array([len(np.unique(unit[klass == c])) for c in range(4)])
    judged_units = np.array([len(np.unique(unit[(klass == c) & judged_rows])) for c in range(4)])
    q = np.divide(judged_units, units_of_class, out=np.zeros(4), where=units_of_class > 0)
    rows = np.flatnonzero(judged_rows)
    n_units = int(unit.max()) + 1
    D = np.bincount(unit[rows], weights=sample.draws[rows], minlength=n_units)
    wx = np.bincount(unit[rows], weights=sample.draws[rows] * label[rows] * share[rows], minlength=n_units)
    unit_class = np.zeros(n_units, dtype=np.int64)
    unit_class[unit] = klass
    present = D > 0
    D, wx, vu, qu = D[present], wx[present], v[unit_class[present]], q[unit_class[present]]
    x = wx / D
    total = float(np.sum(vu * D))
    m = float(np.sum(vu * wx)) / total
    k = D + (1.0 - qu) * D * (D - 1.0)
    n = float(D.sum())
    spread = float(np.sum(vu * vu * k * (x - m) ** 2))
    exact = mc.impact_metrics(pop).metrics
    mass = exact["SplitDistance"] + exact["MergeDistance"] + exact["AffectedJaccardIndex"]  # Σ w_ij
    return mass * np.sqrt(n / (n - 1.0) * spread) / total
