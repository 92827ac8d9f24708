"""ΔRecall and IQ over a Recall_Base range, with their sequence and unsure bounds (abcde-spec §14).

* The interval is the union of the intervals at each Recall_Base of the range: it holds the
  interval ``recall_base=R`` gives (same bootstrap seed) for every R of the range.
* The sequence holds the interval, and every value of the diagram over the box of the inputs'
  sequences × the range (checked at random points of the box, not the grid the code uses).
* The unsure bounds are the value without unsure verdicts, and with them they hold the estimate
  with every unsure verdict decided either way.
* A seeded simulation (slow): on random changes whose true Recall_Base lies in 40-80%, the
  interval covers the diagram's limit at the true Recall_Base at the nominal rate (binomial
  bound), and the true ΔRecall far more often than the interval at the 60%/80% rule.
"""

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.derived.equations import diagram_arrays
from tests.metrics_core.helpers import (
    UNSURE_RATE,
    binomial_floor,
    brute_force_truth,
    random_change,
    random_verdict_rows,
    simulation_population,
)

NAMES = mc.DERIVED_METRICS


def judged(n_draws=1500, seed=5, unsure=None):
    """A jaccard sample of the simulation population, judged from its gold clustering; with
    ``unsure`` (a rate) that share of the pairs is unsure, the rest decided."""
    pop, gold = simulation_population()
    rng = np.random.default_rng(seed)
    sample = mc.sample_pairs(pop, n_draws=n_draws, rng=rng)
    x, y = mc.pairs_for_judgement(sample, rng=rng)
    equivalent = np.asarray(gold)[x] == np.asarray(gold)[y]
    verdict = np.where(equivalent, "equivalent", "not_equivalent").astype(object)
    is_unsure = rng.random(len(x)) < (unsure or 0.0)
    verdict[is_unsure] = "unsure"
    return pop, sample, x, y, verdict, is_unsure


def derived(pop, sample, x, y, verdict, seed=0, **kwargs):
    verdicts = mc.verdicts_from_judgements(x, y, verdict)
    return mc.derived_metrics(pop, sample, verdicts, rng=np.random.default_rng(seed), n_boot=300, **kwargs)


def test_interval_is_the_union_over_the_range_and_the_value_stays_at_the_rule():
    pop, sample, x, y, verdict, _ = judged()
    ranged = derived(pop, sample, x, y, verdict)
    rule = ranged.diagram.recall_base
    assert ranged.diagram.recall_base_rule == "default" and rule in (0.6, 0.8)
    lows, highs = {name: [] for name in NAMES}, {name: [] for name in NAMES}
    for r in (0.4, 0.5, 0.6, 0.7, 0.8):
        fixed = derived(pop, sample, x, y, verdict, recall_base=r)
        for name in NAMES:
            e, f = ranged[name], fixed[name]
            assert (f.recall_base_low, f.recall_base_high) == (r, r)
            assert e.ci_low <= f.ci_low and f.ci_high <= e.ci_high, (name, r)
            lows[name].append(f.ci_low)
            highs[name].append(f.ci_high)
    for name in NAMES:
        e = ranged[name]
        assert (e.recall_base_low, e.recall_base_high) == (0.4, 0.8)
        assert e.value == derived(pop, sample, x, y, verdict, recall_base=rule)[name].value
        # Here ΔRecall and IQ move with Recall_Base: the union is wider than any one interval.
        assert e.ci_high - e.ci_low > max(h - lo for lo, h in zip(lows[name], highs[name])) + 0.005, name
        # ... and no wider than the intervals' hull: a grid between the five values adds little.
        assert e.ci_low >= min(lows[name]) - 0.02 and e.ci_high <= max(highs[name]) + 0.02, name


def test_a_range_without_the_rule_moves_the_value_to_its_nearest_end():
    pop, sample, x, y, verdict, _ = judged()
    low = derived(pop, sample, x, y, verdict, recall_base_range=(0.3, 0.5))
    at_end = derived(pop, sample, x, y, verdict, recall_base=0.5)
    assert (low.diagram.recall_base, low.diagram.recall_base_rule) == (0.5, "range")
    for name in NAMES:
        assert low[name].value == at_end[name].value
        assert (low[name].recall_base_low, low[name].recall_base_high) == (0.3, 0.5)
    for bad, message in (((0.8, 0.4), "low <= high"), ((0.0, 0.5), "must be in"), (0.5, "a pair")):
        with pytest.raises(ValueError, match=message):
            derived(pop, sample, x, y, verdict, recall_base_range=bad)


def test_sequence_holds_the_interval_and_the_diagram_over_the_box_of_the_inputs_sequences():
    """Random points of the box (GoodSplitRate, GoodMergeRate, ΔPrecision within their sequences;
    the Bad rates the exact rates minus the Good ones) × Recall_Base in the range: every ΔRecall
    and IQ lies within the propagated sequence."""
    pop, sample, x, y, verdict, _ = judged(n_draws=600)
    d = derived(pop, sample, x, y, verdict)
    quality = mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(x, y, verdict))
    exact = mc.impact_metrics(pop).metrics
    for name in NAMES:
        e = d[name]
        assert e.cs_low <= e.ci_low <= e.value <= e.ci_high <= e.cs_high, name
        assert e.cs_high - e.cs_low > e.ci_high - e.ci_low, name  # a sequence, not the interval again
    rng = np.random.default_rng(1)
    points = 3000
    uniform = lambda e: rng.uniform(e.cs_low, e.cs_high, points)  # noqa: E731
    split, merge = uniform(quality["GoodSplitRate"]), uniform(quality["GoodMergeRate"])
    arrays = diagram_arrays(
        affected_weight_fraction=exact["AffectedWeightFraction"],
        good_split_rate=split,
        bad_split_rate=exact["SplitRate"] - split,
        good_merge_rate=merge,
        bad_merge_rate=exact["MergeRate"] - merge,
        delta_precision=uniform(quality["DeltaPrecision"]),
        weight_fraction_of_base_cluster=exact["WeightFractionOfBaseCluster"],
        jaccard_distance=exact["JaccardDistance"],
        recall_base=rng.uniform(0.4, 0.8, points),
    )
    for name in NAMES:
        values = arrays[name][np.isfinite(arrays[name])]
        e = d[name]
        assert len(values) > points // 2
        slack = 1e-3 * (e.cs_high - e.cs_low)  # the code's grid against random points
        assert e.cs_low - slack <= values.min() and values.max() <= e.cs_high + slack, name
        # The box reaches well beyond the interval: the extremes are not the interval's.
        assert values.min() < e.ci_low and values.max() > e.ci_high, name


def test_unsure_bounds_are_the_value_without_unsure_verdicts_and_hold_every_decision():
    pop, sample, x, y, verdict, _ = judged()
    sure = derived(pop, sample, x, y, verdict)
    for name in NAMES:
        assert sure[name].unsure_low == sure[name].value == sure[name].unsure_high, name

    pop, sample, x, y, verdict, is_unsure = judged(unsure=0.15)
    unsure = derived(pop, sample, x, y, verdict)
    decided = []
    for answer in ("equivalent", "not_equivalent"):
        resolved = verdict.copy()
        resolved[is_unsure] = answer
        decided.append(derived(pop, sample, x, y, resolved, recall_base=unsure.diagram.recall_base))
    for name in NAMES:
        e = unsure[name]
        assert e.unsure_low < e.unsure_high, name
        assert e.unsure_low <= e.value <= e.unsure_high, name
        for other in decided:
            assert e.unsure_low - 1e-12 <= other[name].value <= e.unsure_high + 1e-12, name


def test_a_given_recall_base_is_the_range_and_nothing_judged_stays_undefined():
    pop, sample, x, y, verdict, _ = judged(n_draws=400)
    given = derived(pop, sample, x, y, verdict, recall_base=0.467, recall_base_range=(0.4, 0.8))
    for name in NAMES:
        e = given[name]
        assert (e.recall_base_low, e.recall_base_high) == (0.467, 0.467)
        assert e.as_dict()["recall_base_low"] == 0.467
    empty = mc.derived_metrics(
        pop, sample, mc.verdicts_from_judgements([], [], []), rng=np.random.default_rng(0), n_boot=20
    )
    for name in NAMES:
        e = empty[name].as_dict()
        assert [e[k] for k in ("value", "ci_low", "cs_low", "unsure_low")] == [None] * 4
        assert (e["recall_base_low"], e["recall_base_high"]) == (0.4, 0.8)


# ------------------------------------------------------------------------------------------
# Coverage (seeded simulation)
# ------------------------------------------------------------------------------------------
COVERAGE_POPULATIONS = 300


@pytest.mark.slow
def test_range_interval_covers_at_the_nominal_rate_when_the_true_recall_base_is_in_the_range():
    """300 random changes (test_derived.random_change) whose true Recall_Base(AffectedItems) lies in
    40-80%, each a jaccard sample of 1000 draws judged from its Ideal clustering (unsure verdicts
    included), 300 replicates, 95% intervals.

    The interval over the range covers the diagram's own limit at the true Recall_Base (the diagram of
    the exact metrics: what the estimate converges to had Recall_Base been known) at ≥ 95%, judged
    pooled over ΔRecall and IQ with a binomial bound (α = 0.001). Against the true ΔRecall it does
    far better than the interval at the 60%/80% rule alone (which it always contains); it is not at
    95% there, because the diagram itself is an approximation. Measured here (seed 11, 300 changes):
    the limit 0.980 (ΔRecall) and 0.940 (IQ); the truth 0.893 against 0.650 at the rule (ΔRecall) and
    0.603 against 0.340 (IQ).
    """
    rng = np.random.default_rng(11)
    counts = {key: {name: 0 for name in NAMES} for key in ("limit", "true", "true_at_rule")}
    n = 0
    while n < COVERAGE_POPULATIONS:
        base, exp, ideal, weights = random_change(rng)
        pop = mc.population_from_labels(base, exp, weights)
        if not pop.cell_affected().any():
            continue
        true_recall, true_iq, recall_base, _ = brute_force_truth(base, exp, ideal, weights)
        if not 0.4 <= recall_base <= 0.8:
            continue
        n += 1
        limit = mc.affected_item_diagram_from_metrics(
            mc.quality_from_gold(pop, ideal), mc.impact_metrics(pop).metrics, recall_base=recall_base
        )
        sample = mc.sample_pairs(pop, n_draws=1000, rng=rng)
        x, y = mc.pairs_for_judgement(sample, rng=rng)
        verdicts = mc.verdicts_from_judgements(*random_verdict_rows(rng, pop, ideal, x, y, unsure_rate=UNSURE_RATE))
        seed = int(rng.integers(2**32))
        ranged = mc.derived_metrics(pop, sample, verdicts, rng=np.random.default_rng(seed), n_boot=300)
        at_rule = mc.derived_metrics(
            pop, sample, verdicts, rng=np.random.default_rng(seed), n_boot=300, recall_base=ranged.diagram.recall_base
        )
        for name, truth, target in (("DeltaRecall", true_recall, limit.delta_recall), ("IQ", true_iq, limit.iq)):
            e, r = ranged[name], at_rule[name]
            if not math.isnan(r.ci_low):  # undefined (SplitRate = MergeRate): covers nothing
                assert e.ci_low <= r.ci_low and r.ci_high <= e.ci_high  # the same replicates: a superset
            counts["limit"][name] += e.ci_low <= target <= e.ci_high
            counts["true"][name] += e.ci_low <= truth <= e.ci_high
            counts["true_at_rule"][name] += r.ci_low <= truth <= r.ci_high
    print(
        "\n"
        + "\n".join(
            f"{key:<13} " + "  ".join(f"{name} {c / n:.3f}" for name, c in row.items()) for key, row in counts.items()
        )
    )
    pooled = sum(counts["limit"].values())
    assert pooled >= binomial_floor(2 * n, 0.95), counts
    for name in NAMES:
        assert counts["limit"][name] >= binomial_floor(n, 0.90), (name, counts)
        # The truth: paired against the interval at the rule, far more often covered.
        assert counts["true"][name] - counts["true_at_rule"][name] >= 0.1 * n, (name, counts)
