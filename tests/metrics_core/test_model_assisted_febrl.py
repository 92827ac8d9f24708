"""Model-assisted estimates (abcde-spec §15), simulated: sequences that hold at every look, and the
demo's data with the built-in score. Run with its figures: ``pytest THIS_FILE -m slow -s``. (The
synthetic populations' coverage and widths are in test_model_assisted_coverage*.py: a module each,
so that the test runner spreads them over its workers.)"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import binom

from metrics_core.estimation import estimate_quality_assisted
from tests.metrics_core.draw_order_simulation import DrawOrderRun, world
from tests.metrics_core.model_assisted_simulation import (
    COVERED,
    LEVELS,
    MERGE_METRICS,
    N_DRAWS,
    CoverageTally,
    demo_card_scores,
    holds,
    simulated_scores,
)


@pytest.mark.slow
def test_model_assisted_sequences_hold_at_every_look():
    """Looks every 10% of 400 verdicts, the calibration refit at each, 100 repetitions of each scheme
    with the AUC-0.95 score: the share of repetitions in which any look's sequence excludes the truth
    is within a 5% rate (binomial bound at 1%), for the class distances, Good−Bad and ΔPrecision."""
    w = world("lognormal")
    misses, reps = defaultdict(int), 0
    for scheme in ("jaccard", "stratified"):
        for seed in range(100):
            run = DrawOrderRun.draw(w, scheme, N_DRAWS, 20_000 + seed)
            scores = simulated_scores(w, run.sample, "auc95", seed)
            missed = set()
            for verdicts in range(40, 401, 40):
                judged, counts = run.judged(verdicts)
                q = estimate_quality_assisted(
                    w.population, run.sample, judged, scores, labelled_draws=counts, horizon=N_DRAWS
                )
                missed |= {name for name in COVERED if not holds(q[name].cs_low, q[name].cs_high, w.truth[name])}
            reps += 1
            for name in missed:
                misses[name] += 1
    print("\never missed:", {name: f"{misses[name]}/{reps}" for name in COVERED})
    bound = binom.ppf(0.99, reps, 0.05)
    assert all(misses[name] <= bound for name in COVERED), (dict(misses), bound)


@pytest.mark.slow
def test_on_the_demo_data_the_built_in_score_covers_and_halves_the_merge_intervals():
    """The demo's Febrl data with the built-in card similarity, 300 seeds of each scheme: pooled
    coverage ≥ 93% and within 1.5 points of the human-only one; the merge distances' median
    half-width at most 0.6× the human-only one at 200 and 400 verdicts (measured -s: 0.56-0.57)."""
    w, scores_of = demo_card_scores()
    tally = CoverageTally()
    runs = {
        (scheme, seed): DrawOrderRun.draw(w, scheme, N_DRAWS, seed)
        for scheme in ("jaccard", "stratified")
        for seed in range(300)
    }
    scores_of(*(np.concatenate([getattr(run.sample, side) for run in runs.values()]) for side in "ij"))
    for run in runs.values():
        scores = scores_of(run.sample.i, run.sample.j)
        for verdicts in LEVELS:
            judged, counts = run.judged(verdicts)
            result = estimate_quality_assisted(w.population, run.sample, judged, scores, labelled_draws=counts)
            tally.add(result, w.truth, verdicts)
    (pooled, human), medians = tally.pooled(), tally.medians()
    print(f"\nFebrl, built-in score: pooled coverage {pooled:.4f} (human-only {human:.4f})")
    print("  median width ratio:", {k: round(v, 3) for k, v in sorted(medians.items())})
    assert pooled >= 0.93 and pooled >= human - 0.015, (pooled, human)
    assert max(medians[(v, name)] for v in (200, 400) for name in MERGE_METRICS) <= 0.6, medians
