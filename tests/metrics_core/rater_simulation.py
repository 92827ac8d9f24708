"""Simulated raters who err, for the Dawid–Skene and rater-aware tests (abcde-spec §13).

Five raters with known sensitivity and specificity between 0.6 and 0.98 (two careless), each
sampled pair judged by three different raters, and gold pairs (known answer, half equivalent)
making up about 5% of the verdicts, also judged by three raters.
"""

import numpy as np

import metrics_core as mc
from metrics_core.rater_aware import estimate_quality_rater_aware

SENSITIVITY = np.array([0.98, 0.93, 0.85, 0.72, 0.62])
SPECIFICITY = np.array([0.97, 0.80, 0.90, 0.65, 0.75])
REPLICATION = 3
GOLD_SHARE = 0.05


def verdicts_on(rng, truth, sensitivity=SENSITIVITY, specificity=SPECIFICITY, replication=REPLICATION):
    """Verdict rows on units with the given truth (1 equivalent): unit index, rater, verdict name."""
    n_units = len(truth)
    rater = np.argsort(rng.random((n_units, len(sensitivity))), axis=1)[:, :replication].ravel()
    unit = np.repeat(np.arange(n_units), replication)
    says = np.where(
        truth[unit] == 1, rng.random(len(unit)) < sensitivity[rater], rng.random(len(unit)) >= specificity[rater]
    )
    return unit, rater, np.where(says, "equivalent", "not_equivalent")


def gold_pairs(rng, ideal, n):
    """``n`` pairs of distinct items, the first half from one Ideal cluster, and their answers."""
    a = rng.integers(0, len(ideal), n)
    b = rng.integers(0, len(ideal), n)
    for k in range(n // 2):
        b[k] = rng.choice(np.flatnonzero(ideal == ideal[a[k]]))
    keep = a != b
    a, b = a[keep], b[keep]
    return a, b, np.where(ideal[a] == ideal[b], "equivalent", "not_equivalent")


def judged_experiment(rng, pop, ideal, *, draws, scheme, sensitivity=SENSITIVITY, specificity=SPECIFICITY):
    """A sample, its verdicts and gold: ``(sample, verdict rows, gold rows)`` with positions."""
    sample = mc.sample_pairs(pop, n_draws=draws, scheme=scheme, rng=rng)
    n = pop.n_items
    keys = np.unique((np.minimum(sample.i, sample.j) * n + np.maximum(sample.i, sample.j))[sample.i != sample.j])
    a, b = keys // n, keys % n
    unit, rater, verdict = verdicts_on(rng, (ideal[a] == ideal[b]).astype(int), sensitivity, specificity)
    i, j = a[unit], b[unit]
    n_gold = max(1, round(GOLD_SHARE / (1 - GOLD_SHARE) * len(unit) / REPLICATION))
    ga, gb, answer = gold_pairs(rng, ideal, n_gold)
    gunit, grater, gverdict = verdicts_on(rng, (answer == "equivalent").astype(int), sensitivity, specificity)
    rows = (
        np.concatenate([i, ga[gunit]]),
        np.concatenate([j, gb[gunit]]),
        np.concatenate([verdict, gverdict]),
        np.concatenate([rater, grater]),
    )
    return sample, rows, (ga, gb, answer), len(unit)


def raw_and_rater_aware(rng, pop, ideal, *, draws, scheme="jaccard", n_boot=100, **raters):
    """Raw-verdict estimates (sampled pairs' verdicts only, as today) and rater-aware ones."""
    sample, (i, j, verdict, rater), (ga, gb, answer), n_sampled = judged_experiment(
        rng, pop, ideal, draws=draws, scheme=scheme, **raters
    )
    raw = mc.estimate_quality(
        pop, sample, mc.verdicts_from_judgements(i[:n_sampled], j[:n_sampled], verdict[:n_sampled])
    )
    aware = estimate_quality_rater_aware(
        pop,
        sample,
        i=i,
        j=j,
        verdict=verdict,
        rater=rater,
        gold_i=ga,
        gold_j=gb,
        gold_answer=answer,
        rng=rng,
        n_boot=n_boot,
    )
    return raw, aware
