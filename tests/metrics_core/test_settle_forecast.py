"""The forecast of the verdicts that settle a decision (abcde-spec §9, §10): by hand, and against
simulated experiments that keep judging until their sequence settles.

Run the simulation with its figures: ``pytest tests/metrics_core/test_settle_forecast.py -m slow -s``.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

import metrics_core as mc
from metrics_core import Estimate
from tests.metrics_core.helpers import drawn_once, judge, simulation_population

N, HORIZON = 400, 2000


def estimate_at(value, half_width, n=N, horizon=HORIZON):
    """An estimate whose sequence is ``value ± half_width`` after ``n`` judged draws."""
    se = half_width / mc.confidence_sequence_factor(judged=n, horizon=horizon, confidence=0.95)
    return Estimate(value=value, stderr=se, ci_low=value - 1.96 * se, ci_high=value + 1.96 * se, judged_draws=n, drawn_draws=n, cs_low=value - half_width, cs_high=value + half_width)


def forecast(e, margin=0.0, **kwargs):
    args = {"horizon": HORIZON, "draws_per_pair": 1.0, "replication": 1} | kwargs
    return mc.settle_plan(estimate=e, margin=margin, **args)


def test_the_nearer_the_margin_the_more_draws():
    """An estimate on the margin still settles in most futures (its truth is off the margin on one
    side or the other), later than any estimate away from it."""
    draws = [forecast(estimate_at(value, 0.04)).judged_draws for value in (0.0, 0.01, 0.02, 0.03, 0.035)]
    assert all(math.isfinite(d) for d in draws)
    assert all(nearer > farther for nearer, farther in zip(draws, draws[1:])), draws


def test_far_from_the_margin_the_forecast_follows_the_sequence_boundary():
    """Ten of today's standard errors from the margin, the futures agree: about where the
    sequence's own boundary reaches the distance, not where ``n·(hw/h)²`` puts it."""
    e = estimate_at(0.06, 0.04, n=50)
    sigma = e.cs_half_width / mc.confidence_sequence_factor(judged=50, horizon=HORIZON, confidence=0.95) * math.sqrt(50)
    boundary = mc.judged_for_half_width(sigma=sigma, target_half_width=0.06 - 0.03, horizon=HORIZON, confidence=0.95)
    fixed_rule = 50 * (0.04 / 0.03) ** 2
    planned = forecast(e, margin=0.03).judged_draws + 50
    assert planned == pytest.approx(boundary, rel=0.25)
    assert abs(planned - boundary) < abs(planned - fixed_rule)


def test_verdicts_count_the_draws_of_every_class():
    e = estimate_at(0.02, 0.04)
    whole = forecast(e, draws_per_pair=1.5, replication=2, cost_per_verdict=0.5)
    assert whole.verdicts == math.ceil(whole.judged_draws / 1.5 * 2) and whole.cost == whole.verdicts * 0.5
    share = forecast(e, class_share=0.25, draws_per_pair=1.5, replication=2)
    assert share.judged_draws == pytest.approx(4 * whole.judged_draws, abs=4)


def test_a_decided_or_empty_estimate():
    assert forecast(estimate_at(0.05, 0.04)) == mc.Plan(judged_draws=0.0, verdicts=0.0, cost=0.0, reached=True)
    assert forecast(estimate_at(0.0, 0.01), margin=0.02) == mc.Plan(judged_draws=0.0, verdicts=0.0, cost=0.0, reached=True)  # inside ±δ
    assert math.isnan(forecast(Estimate(value=math.nan, stderr=math.nan, ci_low=0.0, ci_high=0.1, judged_draws=0, drawn_draws=50)).verdicts)
    assert math.isnan(forecast(Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500)).verdicts)  # no sequence stored
    assert forecast(estimate_at(0.01, 0.04)) == forecast(estimate_at(0.01, 0.04))  # deterministic


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"margin": -0.1}, "margin"),
        ({"draws_per_pair": 0.5}, "draws_per_pair"),
        ({"class_share": 0.0}, "class_share"),
        ({"class_share": 1.5}, "class_share"),
        ({"replication": 0}, "replication"),
        ({"horizon": 0}, "horizon"),
        ({"cost_per_verdict": -1.0}, "cost_per_verdict"),
    ],
)
def test_settle_plan_validates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        forecast(estimate_at(0.02, 0.04), **kwargs)


# ---- against a simulation -------------------------------------------------------------------

# (scheme, deciding metric, margin, judged draws of the metric at the forecast)
CELLS = [
    ("precision", "DeltaPrecision", 0.0, 100),
    ("jaccard", "GoodMinusBadDistance", 0.05, 40),
    ("stratified", "GoodMinusBadDistance", 0.1, 100),
]
PLANNED, STEP, SEEDS, MAX_STEPS = 1000, 5, 24, 3000


def settle_run(pop, gold, scheme, metric, margin, early, seed):
    """Batches of ``STEP`` draws, every pair judged from Ideal, a look after each. At the first look
    with ``early`` judged draws of the metric, if undecided, the forecast as the app makes it;
    then the verdicts until the decision settles. None when it was decided before."""
    union, start, look = None, None, None
    for batch in range(MAX_STEPS):
        new = mc.sample_pairs(pop, n_draws=STEP, scheme=scheme, rng=mc.batch_rng(seed=seed, batch=batch))
        union = new if union is None else mc.concatenate_samples([union, new])
        pairs, verdicts = judge(union, gold)
        quality = mc.estimate_quality(pop, union, verdicts, horizon=PLANNED)
        decided = mc.decide(quality, metric=metric, margin=margin).outcome != "not_enough_data"
        e = quality[metric]
        if start is None and e.judged_draws >= early:
            if decided:
                return None
            plan = mc.settle_plan(
                estimate=e,
                margin=margin,
                horizon=max(round(e.drawn_draws * PLANNED / union.n_draws), 1),
                class_share=e.drawn_draws / union.n_draws,
                draws_per_pair=union.n_draws / drawn_once(union),
                replication=1,
            )
            start = (plan.verdicts, pairs)
        elif start is not None:
            look = pairs - start[1] if look is None else look  # the verdicts of the first look after it
            if decided:
                return start[0], pairs - start[1], look
    return start[0], math.inf, look


@pytest.mark.slow
def test_the_settle_forecast_is_calibrated():
    """On ``SEEDS`` simulated experiments per cell, the verdicts actually needed over the forecast:
    the median ratio lies in [0.5, 2] in every cell, and pooled, the experiments that needed more
    than forecast are no more than a median forecast allows (binomial bound at p = 1/2, 99%). A
    look's verdicts are the finest the simulation resolves, so a smaller forecast counts as one look."""
    pop, gold = simulation_population()
    gold = np.asarray(gold)
    lines, failures, late, runs = ["\nsettle forecast vs simulated experiments"], [], 0, 0
    for scheme, metric, margin, early in CELLS:
        rows = [settle_run(pop, gold, scheme, metric, margin, early, seed) for seed in range(SEEDS)]
        rows = np.array([row for row in rows if row is not None], dtype=float)
        forecast_, actual = np.maximum(rows[:, 0], rows[:, 2]), rows[:, 1]
        ratio = float(np.median(actual / forecast_))
        late += int((actual > forecast_).sum())
        runs += len(rows)
        lines.append(
            f"{scheme:<10} {metric:<21} δ={margin:<4} at {early:>3}: {len(rows)} runs, median forecast "
            f"{np.median(forecast_):.0f}, needed {np.median(actual):.0f}, median ratio {ratio:.2f}, "
            f"needed more {np.mean(actual > forecast_):.2f}"
        )
        if not 0.5 <= ratio <= 2.0:
            failures.append(f"{scheme} {metric}: median actual/forecast {ratio:.2f}")
    bound = int(binom.ppf(0.99, runs, 0.5))
    lines.append(f"pooled: {late} of {runs} needed more than forecast (bound {bound})")
    print("\n".join(lines))
    if late > bound:
        failures.append(f"{late} of {runs} runs needed more than forecast (at most {bound} for a median forecast)")
    assert not failures, "\n".join(failures)


def test_pairs_already_drawn_are_counted_before_a_new_batch():
    """Verdicts on the sample's waiting pairs bring its draws per pair (here 1.5), not a new
    batch's (here 20, a sample whose draws mostly repeat pairs): the forecast counts them first."""
    e = mc.Estimate(value=0.05, stderr=0.02, ci_low=0.01, ci_high=0.09, judged_draws=400, drawn_draws=500, cs_low=-0.02, cs_high=0.12)
    common = {"estimate": e, "margin": 0.0, "horizon": 500, "draws_per_pair": 20.0, "replication": 1}
    new_only = mc.settle_plan(**common)
    waiting = mc.settle_plan(**common, pending_pairs=10_000, pending_draws_per_pair=1.5)
    assert waiting.judged_draws == new_only.judged_draws
    assert waiting.verdicts == math.ceil(new_only.judged_draws / 1.5)
    few = mc.settle_plan(**common, pending_pairs=10, pending_draws_per_pair=1.5)
    assert few.verdicts == math.ceil(10 + (new_only.judged_draws - 15) / 20.0)
