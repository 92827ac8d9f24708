"""The plan (abcde-spec §10): judged draws, verdicts and money to reach a half-width, by hand and
against a simulation that draws batches until the half-width is reached.

Run the simulation with its figures: ``pytest tests/metrics_core/test_planning.py -m slow -s``.
"""

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import Estimate
from tests.metrics_core.helpers import drawn_once, judge, simulation_population


def test_fixed_plan_by_hand():
    # n = 400 judged draws, half-width 0.04 → 0.02: 400 · (0.04/0.02)² − 400 = 1200 more judged draws;
    # 1.25 draws per pair → 960 pairs, replication 2 → 1920 verdicts at 0.10 → 192.
    e = Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500)
    plan = mc.plan_to_half_width(estimate=e, target_half_width=0.02, draws_per_pair=1.25, replication=2, cost_per_verdict=0.1)
    assert plan == mc.Plan(judged_draws=1200.0, verdicts=1920.0, cost=192.0, reached=False)
    assert plan.as_dict() == {"judged_draws": 1200.0, "verdicts": 1920.0, "cost": 192.0, "reached": False}
    # 400 · (0.04/0.03)² − 400 = 311.1 → 312 judged draws; /1 · 1 → 312 verdicts; no cost by default.
    assert mc.plan_to_half_width(estimate=e, target_half_width=0.03, draws_per_pair=1, replication=1) == mc.Plan(
        judged_draws=312.0, verdicts=312.0, cost=0.0, reached=False
    )
    # Already there.
    assert mc.plan_to_half_width(estimate=e, target_half_width=0.05, draws_per_pair=1, replication=3) == mc.Plan(
        judged_draws=0.0, verdicts=0.0, cost=0.0, reached=True
    )


def test_sequence_plan_solves_the_formula_with_sigma_held():
    n, horizon = 300, 2000
    se = 0.01
    cs_half = mc.confidence_sequence_half_width(stderr=se, judged=n, horizon=horizon, confidence=0.95)
    e = Estimate(value=0.05, stderr=se, ci_low=0.05 - 1.96 * se, ci_high=0.05 + 1.96 * se, judged_draws=n, drawn_draws=400, cs_low=0.05 - cs_half, cs_high=0.05 + cs_half)
    target = cs_half / 2
    plan = mc.plan_to_half_width(
        estimate=e, target_half_width=target, draws_per_pair=1.5, replication=1, kind="sequence", horizon=horizon
    )
    t = n + plan.judged_draws
    sigma = math.sqrt(n) * se
    assert mc.confidence_sequence_half_width(stderr=sigma / math.sqrt(t), judged=t, horizon=horizon, confidence=0.95) <= target
    assert mc.confidence_sequence_half_width(stderr=sigma / math.sqrt(t - 1), judged=t - 1, horizon=horizon, confidence=0.95) > target
    assert plan.verdicts == math.ceil(plan.judged_draws / 1.5)
    # Halving the fixed interval takes n·(2²) − n = 900 more; the sequence, tuned for 2000, gets
    # relatively tighter on the way there (its factor falls from 3.53 at 300 to 3.10 at 923), so fewer.
    fixed = mc.plan_to_half_width(estimate=e, target_half_width=1.96 * se / 2, draws_per_pair=1.5, replication=1)
    assert fixed.judged_draws == 900.0
    assert plan.judged_draws == 623.0
    # Default horizon: the estimate's drawn draws (400); another horizon, another plan.
    default = mc.plan_to_half_width(estimate=e, target_half_width=target, draws_per_pair=1, replication=1, kind="sequence")
    at_400 = mc.plan_to_half_width(
        estimate=e, target_half_width=target, draws_per_pair=1, replication=1, kind="sequence", horizon=400
    )
    assert default == at_400 and default.judged_draws != plan.judged_draws


def test_plan_without_anything_to_extrapolate_from():
    nothing = Estimate(value=math.nan, stderr=math.nan, ci_low=0.0, ci_high=0.1, judged_draws=0, drawn_draws=50)
    for kind in mc.PLAN_KINDS:
        plan = mc.plan_to_half_width(estimate=nothing, target_half_width=0.01, draws_per_pair=1, replication=1, kind=kind)
        assert math.isnan(plan.judged_draws) and math.isnan(plan.verdicts) and math.isnan(plan.cost) and not plan.reached
        assert plan.as_dict() == {"judged_draws": None, "verdicts": None, "cost": None, "reached": False}
    old = Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500)  # stored before sequences existed: cs is nan
    assert math.isnan(
        mc.plan_to_half_width(estimate=old, target_half_width=0.01, draws_per_pair=1, replication=1, kind="sequence").cost
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"target_half_width": 0.0}, "target_half_width"),
        ({"draws_per_pair": 0.5}, "draws_per_pair"),
        ({"replication": 0}, "replication"),
        ({"cost_per_verdict": -1.0}, "cost_per_verdict"),
        ({"kind": "bayes"}, "kind"),
    ],
)
def test_plan_validates(kwargs, match):
    args = {"estimate": Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500), "target_half_width": 0.01, "draws_per_pair": 1.0,
            "replication": 1} | kwargs
    with pytest.raises(ValueError, match=match):
        mc.plan_to_half_width(**args)


# ---- against a simulation -------------------------------------------------------------------

BATCH, EARLY, HORIZON, TARGET_DRAWS, SEEDS = 50, 300, 2000, 1500, 24


def grow_until_reached(pop, gold, seed, targets):
    """Batches of 50 draws (batch_rng) until ΔPrecision's half-widths reach the targets; plans at 300."""
    union, early, reached = None, None, {}
    for batch in range(400):
        new = mc.sample_pairs(pop, n_draws=BATCH, rng=mc.batch_rng(seed=seed, batch=batch))
        union = new if union is None else mc.concatenate_samples([union, new])
        pairs, verdicts = judge(union, gold)
        e = mc.estimate_quality(pop, union, verdicts, horizon=HORIZON)["DeltaPrecision"]
        if early is None:
            if e.judged_draws >= EARLY:
                per_new_pair = union.n_draws / drawn_once(union)
                plans = {
                    kind: mc.plan_to_half_width(estimate=e, target_half_width=target, draws_per_pair=per_new_pair,
                                                replication=1, kind=kind, horizon=HORIZON)
                    for kind, target in targets.items()
                }
                early = (e.judged_draws, pairs)
            continue
        for kind, half_width in (("fixed", e.half_width), ("sequence", e.cs_half_width)):
            if kind not in reached and half_width <= targets[kind]:
                plan = plans[kind]
                reached[kind] = (plan.judged_draws, e.judged_draws - early[0], plan.verdicts, pairs - early[1])
        if len(reached) == len(targets):
            return reached
    raise AssertionError(f"seed {seed}: the targets were not reached")


@pytest.mark.slow
def test_plan_predicts_what_a_simulation_needs():
    """The targets are the half-widths an experiment of 1500 judged draws is expected to have
    (σ of ΔPrecision per draw from a 40 000-draw sample): fixed 1.96·σ/sqrt(1500), sequence
    σ/sqrt(1500) · factor(1500, H = 2000). Each of 24 experiments grows by batches of 50 draws, every
    pair judged from Ideal; its plan is made at the first look with ≥ 300 judged draws, with the
    Good–Turing draws per new pair (the draws per distinct pair so far undercount the repeats to come)."""
    pop, gold = simulation_population()
    gold = np.asarray(gold)
    big = mc.sample_pairs(pop, n_draws=40_000, rng=mc.batch_rng(seed=10**6, batch=0))
    e = mc.estimate_quality(pop, big, judge(big, gold)[1])["DeltaPrecision"]
    sigma = e.stderr * math.sqrt(e.judged_draws)
    targets = {
        "fixed": 1.959963984540054 * sigma / math.sqrt(TARGET_DRAWS),
        "sequence": sigma / math.sqrt(TARGET_DRAWS)
        * mc.confidence_sequence_factor(judged=TARGET_DRAWS, horizon=HORIZON, confidence=0.95),
    }
    runs = [grow_until_reached(pop, gold, seed, targets) for seed in range(SEEDS)]
    lines = [f"\nplan at {EARLY} judged draws vs {SEEDS} simulated experiments (ΔPrecision, jaccard, batches of {BATCH})",
             f"{'kind':<9} {'target':>8} {'planned draws':>14} {'needed':>7} {'ratio':>6} {'planned verdicts':>17} {'needed':>7} {'ratio':>6}"]
    failures = []
    for kind, target in targets.items():
        r = np.array([run[kind] for run in runs])
        draws_ratio = float(np.median(r[:, 0] / r[:, 1]))
        verdicts_ratio = float(np.median(r[:, 2] / r[:, 3]))
        lines.append(f"{kind:<9} {target:>8.4f} {np.median(r[:, 0]):>14.0f} {np.median(r[:, 1]):>7.0f} {draws_ratio:>6.2f} "
                     f"{np.median(r[:, 2]):>17.0f} {np.median(r[:, 3]):>7.0f} {verdicts_ratio:>6.2f}")
        for what, ratio in (("judged draws", draws_ratio), ("verdicts", verdicts_ratio)):
            if not 0.75 <= ratio <= 1.25:
                failures.append(f"{kind}: planned/needed {what} {ratio:.2f} (median over {SEEDS} seeds)")
    print("\n".join(lines))
    assert not failures, "\n".join(failures)
