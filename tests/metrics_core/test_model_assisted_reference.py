"""The model-assisted estimator against ppi-python (abcde-spec §15's reference), on the mean case:
one draw per pair, a class's labelled pairs a prefix of its draws.

Our all-draws part is over every drawn draw, the labelled ones included (so that with every draw
judged the estimate is the human-only one): ppi-python's unlabelled set is then every drawn draw.
ppi-python's variances divide by ``n`` where §6 and §14 divide by ``n − 1``: its SE times
``sqrt(n/(n−1))`` is ours. ``λ`` is ours (the least-squares slope without PPI++'s ``1 + n/N``,
since our two sets overlap), passed to ppi-python as ``lam``."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import ppi_py as ppi  # a test dependency (requirements/dev.lock): missing, the module fails, never skips
import pytest

import metrics_core as mc
from metrics_core.estimation import estimate_quality_assisted
from metrics_core.estimation.assist import Assist
from metrics_core.estimation.draws import Draws

SPLIT = mc.PAIR_CLASSES.index("split")
Z = NormalDist().inv_cdf(0.975)


def mean_case(seed: int, tasks: int):
    """Forty Base clusters of 200 items, each split in two by Exp: 1.6 million split pairs, so that
    600 draws repeat none (checked). Verdicts: equivalent with probability 0.2 + 0.5·score."""
    base = np.repeat(np.arange(40), 200)
    exp = base * 2 + (np.arange(8000) % 2)
    population = mc.population_from_labels(base, exp)
    for attempt in range(100):  # the first sample of this seed whose split pairs are all drawn once
        sample = mc.sample_pairs(population, n_draws=600, scheme="jaccard", rng=mc.batch_rng(seed=seed, batch=attempt))
        low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
        split = sample.pair_class == SPLIT
        if (sample.draws[split] == 1).all() and len(set(zip(low[split], high[split]))) == split.sum():
            break
    rng = np.random.default_rng(seed)
    scores = rng.uniform(size=len(sample))
    equivalent = rng.uniform(size=len(sample)) < 0.2 + 0.5 * scores
    positions = mc.draw_positions(sample, rng=mc.batch_order_rng(seed=seed, batch=attempt))
    a, b = mc.pairs_in_draw_order(sample, positions)
    row = {pair: r for r, pair in enumerate(zip(low.tolist(), high.tolist()))}  # a pair's verdict: its row's
    judged = [row[pair] for pair in zip(a[:tasks].tolist(), b[:tasks].tolist())]
    verdicts = mc.verdicts_from_judgements(
        low[judged], high[judged], np.where(equivalent[judged], "equivalent", "not_equivalent")
    )
    taken = set(zip(a[:tasks].tolist(), b[:tasks].tolist()))
    resolved = np.array([pair in taken for pair in zip(low.tolist(), high.tolist())], dtype=bool)
    counts, _ = mc.labelled_prefix(sample, positions, resolved)
    return population, sample, scores, equivalent, verdicts, counts


@pytest.mark.parametrize("seed", range(5))
def test_the_split_share_is_ppi_pythons_mean_with_our_lambda(seed):
    """Raw-score rule (20–49 judged split pairs): value equals ``ppi_mean_ci``'s centre and the SE its
    half-width / z · sqrt(n/(n−1)), both to 1e-12."""
    population, sample, scores, equivalent, verdicts, counts = mean_case(seed, tasks=80)
    assisted = estimate_quality_assisted(population, sample, verdicts, scores, labelled_draws=counts)
    split = next(c for c in assisted.classes if c.pair_class == "split")
    assert split.rule == "raw" and 0.0 < split.lam < 1.0, split
    rows = sample.pair_class == SPLIT
    labelled = rows & (counts > 0)
    y, yhat, unlabelled = equivalent[labelled].astype(float), scores[labelled], scores[rows]
    n = len(y)
    low, high = ppi.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=split.lam)
    low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
    total = mc.impact_metrics(population).metrics["SplitDistance"]
    bad = assisted["BadSplitDistance"]
    assert bad.value / total == pytest.approx((low + high) / 2, abs=1e-12)
    assert bad.stderr / total == pytest.approx((high - low) / (2 * Z) * np.sqrt(n / (n - 1)), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_the_cross_fitted_split_share_is_crossppi_pythons_point(seed):
    """Calibrated rule (≥ 50 judged split pairs) with λ = 1: the value is ``crossppi_mean_ci``'s centre
    with our cross-fitted predictions (a judged pair its out-of-fold one, any other the mean of the
    fold models). crossppi's interval treats the two sets as disjoint, ours overlap (λ = 1 is not
    the variance-minimising λ here): the interval is compared at the tuned λ, above."""
    population, sample, scores, equivalent, verdicts, counts = mean_case(seed, tasks=320)
    assisted = estimate_quality_assisted(population, sample, verdicts, scores, labelled_draws=counts, score_lambda=1.0)
    split = next(c for c in assisted.classes if c.pair_class == "split")
    assert split.rule == "calibrated", split
    draws = Draws.build(population, sample, verdicts, None, counts)
    full = Draws.build(population, sample, verdicts, None, None)
    h = Assist(draws, full, sample, scores, 1.0).h_row
    rows = sample.pair_class == SPLIT
    labelled = rows & (counts > 0)
    low, high = ppi.crossppi_mean_ci(equivalent[labelled].astype(float), h[labelled], h[rows][:, None], alpha=0.05)
    total = mc.impact_metrics(population).metrics["SplitDistance"]
    centre = (float(np.ravel(low)[0]) + float(np.ravel(high)[0])) / 2
    assert assisted["BadSplitDistance"].value / total == pytest.approx(centre, abs=1e-12)
