"""Confidence sequences (abcde-spec §9): the formula by hand, its shape, the estimates' sequences,
and the acceptance simulation (a watched dashboard: 10 looks, the truth known from Ideal).

Run the simulation with its figures: ``pytest tests/metrics_core/test_sequential.py -m slow -s``.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

import metrics_core as mc
from tests.metrics_core import reference as ref
from tests.metrics_core.helpers import (
    HAND_JACCARD_ROWS,
    HAND_VERDICTS,
    estimates_of,
    hand_population,
    simulation_population,
)

# -2 log 0.05 = 5.991464547, log(6.991464547) = 1.944690055: ρ²·H = 7.936154602 at 95%.
RHO2_H_95 = 7.936154601737565


def formula(se, t, horizon, confidence=0.95):
    """The spec's boundary written out: m ± σ̂_t sqrt(2(tρ²+1)/(t²ρ²) log(sqrt(tρ²+1)/α)), σ̂_t² = t SE²."""
    alpha = 1 - confidence
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / horizon
    sigma = math.sqrt(t) * se
    return sigma * math.sqrt(2 * (t * rho2 + 1) / (t * t * rho2) * math.log(math.sqrt(t * rho2 + 1) / alpha))


# ---- the formula ---------------------------------------------------------------------------


def test_rho_squared_by_hand():
    assert mc.horizon_rho_squared(horizon=100, confidence=0.95) == pytest.approx(0.07936154601737565, rel=1e-13)
    assert mc.horizon_rho_squared(horizon=400, confidence=0.95) == pytest.approx(RHO2_H_95 / 400, rel=1e-13)
    # 99%: -2 log 0.01 = 9.210340372, log(10.210340372) = 2.323400: ρ² = 11.533740 / H
    assert mc.horizon_rho_squared(horizon=10, confidence=0.99) == pytest.approx(1.1533740, rel=1e-6)
    for bad in (0, -5, math.inf, math.nan):
        with pytest.raises(ValueError, match="horizon"):
            mc.horizon_rho_squared(horizon=bad, confidence=0.95)
    with pytest.raises(ValueError, match="confidence"):
        mc.horizon_rho_squared(horizon=10, confidence=1.0)


@pytest.mark.parametrize(
    ("se", "t", "horizon", "expected"),
    [
        # t = H = 100, SE 0.05: σ̂ = 0.5, tρ² = 7.936155, 2(tρ²+1)/(t²ρ²) = 17.872309/793.615460
        # = 0.0225201, log(sqrt(8.936155)/0.05) = log(59.786803) = 4.0907850
        # → 0.5 · sqrt(0.0225201 · 4.0907850) = 0.1517604
        (0.05, 100, 100, 0.15176044951881265),
        # t = 25, H = 100, SE 0.1: σ̂ = 0.5, tρ² = 1.984039, 2(2.984039)/(625 · 0.0793615) = 0.1203218,
        # log(sqrt(2.984039)/0.05) = 3.5423711 → 0.5 · sqrt(0.4262249) = 0.3264293
        (0.1, 25, 100, 0.3264293371826405),
        # t = 100, H = 400, SE 0.05: tρ² = 1.984039, 2(2.984039)/(10⁴ · 0.0198404) = 0.0300804
        # → 0.5 · sqrt(0.0300804 · 3.5423711) = 0.1632147
        (0.05, 100, 400, 0.16321466859132025),
    ],
)
def test_half_width_by_hand(se, t, horizon, expected):
    got = mc.confidence_sequence_half_width(stderr=se, judged=t, horizon=horizon, confidence=0.95)
    assert got == pytest.approx(expected, rel=1e-12)
    assert got == pytest.approx(formula(se, t, horizon), rel=1e-12)
    assert mc.confidence_sequence_factor(judged=t, horizon=horizon, confidence=0.95) * se == pytest.approx(got, rel=1e-12)


def test_half_width_vectorises_and_is_undefined_without_draws():
    t = np.array([0, 1, 10, 1000])
    got = mc.confidence_sequence_half_width(stderr=np.array([0.1, 0.1, 0.1, np.nan]), judged=t, horizon=50, confidence=0.9)
    assert math.isnan(got[0]) and math.isnan(got[3])
    assert got[1:3].tolist() == pytest.approx([formula(0.1, 1, 50, 0.9), formula(0.1, 10, 50, 0.9)], rel=1e-12)


def test_shape_of_the_sequence():
    t = np.arange(1, 20001)
    for confidence in (0.8, 0.9, 0.95, 0.99):
        factor = mc.confidence_sequence_factor(judged=t, horizon=1000, confidence=confidence)
        z = norm.ppf(0.5 + confidence / 2)
        # Wider than the fixed normal interval at every t: CS ⊇ fixed interval for the normal metrics.
        assert factor.min() > 1.3 * z, confidence
        # Tightest (relative to 1/sqrt(t)) near the horizon.
        assert 900 <= t[np.argmin(factor)] <= 1200, confidence
    # With σ̂ held, the half-width falls strictly as verdicts come in.
    sigma = 0.4
    half = mc.confidence_sequence_half_width(stderr=sigma / np.sqrt(t), judged=t, horizon=1000, confidence=0.95)
    assert np.all(np.diff(half) < 0)
    # At a given t the sequence is narrowest when tuned to that t, and a higher confidence widens it.
    at = lambda horizon, confidence=0.95: mc.confidence_sequence_factor(judged=500, horizon=horizon, confidence=confidence)  # noqa: E731
    assert at(500) < at(125) and at(500) < at(2000)
    assert at(500, 0.9) < at(500, 0.95) < at(500, 0.99)
    # Near t = H the sequence is about 1.55 times the fixed 95% interval (3.035 / 1.960).
    assert mc.confidence_sequence_factor(judged=1000, horizon=1000, confidence=0.95) / norm.ppf(0.975) == pytest.approx(
        1.5485, abs=5e-4
    )


def test_judged_for_half_width_inverts_the_formula():
    for sigma, target, horizon in [(0.5, 0.05, 1000), (0.3, 0.2, 50), (1.0, 0.01, 200)]:
        t = mc.judged_for_half_width(sigma=sigma, target_half_width=target, horizon=horizon, confidence=0.95)
        assert formula(sigma / math.sqrt(t), t, horizon) == pytest.approx(target, rel=1e-9)
    assert mc.judged_for_half_width(sigma=0.0, target_half_width=0.1, horizon=10, confidence=0.95) == 0.0
    assert math.isnan(mc.judged_for_half_width(sigma=math.nan, target_half_width=0.1, horizon=10, confidence=0.95))


def test_share_sequence_floor_and_score_form():
    f = mc.confidence_sequence_factor(judged=40, horizon=40, confidence=0.95)
    # SE 0 at share 1/2 (two raters disagree on every pair): the floor (k+1)/(n+2) = 21/42 = 1/2 decides.
    low, high = mc.share_confidence_sequence(share=0.5, stderr=0.0, n_eff=40, judged=40, horizon=40, confidence=0.95)
    assert (low, high) == pytest.approx((0.5 - f * math.sqrt(0.25 / 40), 0.5 + f * math.sqrt(0.25 / 40)), rel=1e-12)
    # Design effect: 40 judged draws worth 20 effective ones widen the floor by sqrt(2).
    low2, high2 = mc.share_confidence_sequence(share=0.5, stderr=0.0, n_eff=20, judged=40, horizon=40, confidence=0.95)
    assert high2 - 0.5 == pytest.approx(math.sqrt(2) * (high - 0.5), rel=1e-12)
    # All 40 verdicts agree (share 0): never a point; the score (Wilson) form at the sequence's factor.
    low, high = mc.share_confidence_sequence(share=0.0, stderr=0.0, n_eff=40, judged=40, horizon=40, confidence=0.95)
    assert low == 0.0 and high == pytest.approx(ref.wilson_interval(0.0, 40, f)[1], rel=1e-12) and high > 0.15
    # Interior, SE above the floor: the spec's formula, where it is wider than the score form.
    se = 0.08
    low, high = mc.share_confidence_sequence(share=0.4, stderr=se, n_eff=40, judged=40, horizon=40, confidence=0.95)
    w_low, w_high = ref.wilson_interval(0.4, 40, f)
    assert low == pytest.approx(min(0.4 - f * se, w_low), rel=1e-12)
    assert high == pytest.approx(max(0.4 + f * se, w_high), rel=1e-12)
    assert low == pytest.approx(0.4 - f * se, rel=1e-12)  # SE 0.08 > sqrt(0.24/40): the formula is wider


# ---- the estimates' sequences ---------------------------------------------------------------


def test_hand_sample_sequences():
    """The 23-draw hand sample of test_estimation_simulation (Σ w_ij = 1/2, SplitDistance 3/32,
    MergeDistance 7/48, AffectedJaccardIndex 25/96; H = 23 draws by default)."""
    est = estimates_of(hand_population(), "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS)
    # ΔPrecision: normal, all classes, t = 16 draws judged by a rater (the 5 self draws are known,
    # not judged: spec §14), H = 23. SE(m) floored (spec §14) at Σ_g (N_g/N)² l̄²_g p̃(1 − p̃)/n_eff,g:
    #   split {a,c}: N 10, n 8, k 4 → p̃ 5/10; Σ D l² = 5·1 + 3·4 = 17; k_u = 8 + ½·8·7 = 36 → n_eff 64/36
    #   merge {c,d}: N 4, n 4, k 4 → p̃ 5/6; Σ D l² = 3·16/9 + 1 = 19/3; n_eff 16/4 = 4
    #   intersection {a,b}: N 4, n 4, k 0 → p̃ 1/6; Σ D l² = 4; n_eff 4
    floor = (
        (10 / 23) ** 2 * (17 / 8) * (1 / 4) / (64 / 36)
        + (4 / 23) ** 2 * (19 / 12) * (5 / 36) / 4
        + (4 / 23) ** 2 * 1 * (5 / 36) / 4
    )
    dp = est["DeltaPrecision"]
    se_m = max(dp.stderr / 0.5, math.sqrt(floor))
    half = 0.5 * formula(se_m, 16, 23)
    assert (dp.cs_low, dp.cs_high) == pytest.approx((dp.value - half, dp.value + half), rel=1e-12)
    # AffectedGoodIndex = 11/48 + 1/32 · the intersection's share 0 of t = 4 judged draws (one unit,
    # SE 0, n_eff 4); H = 23 · (1/32)/(1/2) = 1.4375; the floor (1/6)(5/6)·4/4 decides the normal
    # form, the score (Wilson) form at the sequence's factor the upper end.
    h = 23 * (1 / 32) / 0.5
    f = formula(1.0, 4, h)  # the factor: half-width per unit of SE(m)
    floor_se = math.sqrt((1 / 6) * (5 / 6) / 4)
    w_low, w_high = ref.wilson_interval(0.0, 4, f)
    low, high = 0.0, min(max(f * floor_se, w_high), 1.0)
    agi = est["AffectedGoodIndex"]
    assert (agi.cs_low, agi.cs_high) == pytest.approx((11 / 48 + low / 32, 11 / 48 + high / 32), rel=1e-12)
    abi = est["AffectedBadIndex"]
    assert (abi.cs_low, abi.cs_high) == pytest.approx(((1 - high) / 32, (1 - low) / 32), rel=1e-12)
    # GoodMinusBadDistance: split part S(1 − 2p), merge part M(2p − 1); SE twice the classes'.
    gmb = est["GoodMinusBadDistance"]
    assert gmb.stderr == pytest.approx(2 * math.hypot(est["GoodSplitDistance"].stderr, est["GoodMergeDistance"].stderr))
    for name in est:
        e = est[name]
        assert e.cs_low <= e.ci_low + 1e-15 and e.ci_high <= e.cs_high + 1e-15, name
        assert e.cs_low <= e.value <= e.cs_high, name


def test_horizon_changes_the_sequence_not_the_interval():
    pop = hand_population()
    default = estimates_of(pop, "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS)
    same = estimates_of(pop, "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS, horizon=23)
    later = estimates_of(pop, "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS, horizon=2300)
    assert same == default
    for name, e in later.items():
        d = default[name]
        assert (e.value, e.stderr, e.ci_low, e.ci_high, e.unsure_low, e.unsure_high) == (
            d.value, d.stderr, d.ci_low, d.ci_high, d.unsure_low, d.unsure_high,
        ), name
    dp = later["DeltaPrecision"]
    # t = 16 draws judged by a rater; the SE as floored in test_hand_sample_sequences.
    ratio = default["DeltaPrecision"].cs_half_width / formula(1.0, 16, 23)
    assert dp.cs_half_width == pytest.approx(formula(ratio, 16, 2300), rel=1e-12)
    assert dp.cs_half_width > default["DeltaPrecision"].cs_half_width  # tuned for 2300, not for 21
    with pytest.raises(ValueError, match="horizon"):
        estimates_of(pop, "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS, horizon=0)


def fully_judged(scheme, seed, n_draws=600, diff_share=0.5):
    """A sample of the simulation population with one verdict from Ideal on every pair."""
    pop, gold = simulation_population()
    gold = np.asarray(gold)
    sample = mc.sample_pairs(pop, n_draws=n_draws, scheme=scheme, rng=np.random.default_rng(seed), diff_share=diff_share)
    a, b = mc.pairs_for_judgement(sample, rng=np.random.default_rng(seed + 1))
    verdicts = mc.verdicts_from_judgements(a, b, np.where(gold[a] == gold[b], "equivalent", "not_equivalent"))
    return pop, sample, verdicts


@pytest.mark.parametrize("scheme", ["jaccard", "stratified"])
def test_class_horizon_is_the_class_share_of_the_planned_draws(scheme):
    """Split draws: H = horizon × (stratum's share of the draws) × SplitDistance / (stratum's mass).
    Every pair judged once, so v = 1, q = 1 and n_eff = t."""
    pop, sample, verdicts = fully_judged(scheme, 3, diff_share=0.3)
    horizon = 5000
    est = mc.estimate_quality(pop, sample, verdicts, horizon=horizon)
    m = mc.impact_metrics(pop).metrics
    split, merge, stable = m["SplitDistance"], m["MergeDistance"], m["AffectedJaccardIndex"]
    if scheme == "jaccard":
        h = horizon * split / (split + merge + stable)
    else:
        diff_draws = sample.draws[sample.stratum == mc.STRATA.index("diff")].sum()
        h = horizon * diff_draws / sample.n_draws * split / (split + merge)
    e = est["BadSplitDistance"]
    t = e.judged_draws
    low, high = mc.share_confidence_sequence(
        share=e.value / split, stderr=e.stderr / split, n_eff=t, judged=t, horizon=h, confidence=0.95
    )
    assert (e.cs_low, e.cs_high) == pytest.approx((split * low, split * high), rel=1e-10)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_sequence_contains_the_interval_up_to_the_horizon(scheme):
    """At every t ≤ H, for every metric (normal ones by the formula, shares by the score form)."""
    pop, gold = simulation_population()
    gold = np.asarray(gold)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        sample = mc.sample_pairs(pop, n_draws=400, scheme=scheme, rng=rng)
        a, b = mc.pairs_for_judgement(sample, rng=rng)
        verdict = np.where(gold[a] == gold[b], "equivalent", "not_equivalent")
        verdict[rng.random(len(a)) < 0.1] = "unsure"
        for share in (0.2, 0.6, 1.0):
            k = int(share * len(a))
            for horizon in (None, 4000):
                q = mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(a[:k], b[:k], verdict[:k]), horizon=horizon)
                for name, e in q.estimates.items():
                    if math.isnan(e.ci_low):
                        continue
                    assert e.cs_low <= e.ci_low + 1e-12 and e.ci_high <= e.cs_high + 1e-12, (seed, share, name)


def test_identical_verdicts_keep_a_sequence_width():
    """Every split pair judged not equivalent: SE 0 and BadSplitDistance 0, but the sequence has a width."""
    pop, gold = simulation_population()
    sample = mc.sample_pairs(pop, n_draws=500, rng=np.random.default_rng(2))
    a, b = mc.pairs_for_judgement(sample, rng=np.random.default_rng(3))
    split = mc.pair_classes_of(pop, a, b) == mc.PAIR_CLASSES.index("split")
    split |= mc.pair_classes_of(pop, b, a) == mc.PAIR_CLASSES.index("split")
    q = mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(a[split], b[split], ["not_equivalent"] * split.sum()))
    e = q["BadSplitDistance"]
    assert (e.value, e.stderr, e.cs_low) == (0.0, 0.0, 0.0)
    assert e.cs_high > e.ci_high > 0
    sd = mc.impact_metrics(pop).metrics["SplitDistance"]
    f = mc.confidence_sequence_factor(judged=e.judged_draws, horizon=q["BadSplitDistance"].drawn_draws, confidence=0.95)
    # (judged = drawn: every split pair judged; the sample's split share of draws is ≈ its mass share)
    assert e.cs_high == pytest.approx(sd * ref.wilson_interval(0.0, e.judged_draws, f)[1], rel=0.02)


# ---- the acceptance simulation ---------------------------------------------------------------

SIM_DRAWS = 2000
SIM_LOOKS = 10
SIM_UNSURE = {"split": 0.05, "merge": 0.15, "intersection": 0.02}
WATCHED = ("DeltaPrecision", "GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance",
           "GoodMinusBadDistance")


def watched_dashboard(scheme, reps):
    """``reps`` experiments on the simulation population, each looked at after every 10% of its pairs.

    Each experiment samples ``SIM_DRAWS`` draws (seed r, batch 0); its pairs are judged from Ideal
    in the random task order of batch_order_rng, unsure with a class-dependent rate (missing
    completely at random within the class). Returns, per metric, whether any look's sequence
    (and fixed interval) excluded the population truth, and the width ratio at the last look.
    """
    pop, gold = simulation_population()
    gold = np.asarray(gold)
    truth = mc.quality_from_gold(pop, gold)
    names = [n for n in WATCHED if n in mc.metrics_for_scheme(scheme)]
    unsure_rate = np.zeros(4)
    for cls, rate in SIM_UNSURE.items():
        unsure_rate[mc.PAIR_CLASSES.index(cls)] = rate
    cs_missed = {n: np.zeros(reps, bool) for n in names}
    ci_missed = {n: np.zeros(reps, bool) for n in names}
    ratio = {n: np.full(reps, np.nan) for n in names}
    for r in range(reps):
        sample = mc.sample_pairs(pop, n_draws=SIM_DRAWS, scheme=scheme, rng=mc.batch_rng(seed=r, batch=0))
        order = mc.batch_order_rng(seed=r, batch=0)
        a, b = mc.pairs_for_judgement(sample, rng=order)
        cls = np.maximum(mc.pair_classes_of(pop, a, b), mc.pair_classes_of(pop, b, a))
        verdict = np.where(gold[a] == gold[b], "equivalent", "not_equivalent")
        verdict[order.random(len(a)) < unsure_rate[cls]] = "unsure"
        for look in range(1, SIM_LOOKS + 1):
            k = round(len(a) * look / SIM_LOOKS)
            q = mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(a[:k], b[:k], verdict[:k]))
            for n in names:
                e, t = q[n], truth[n]
                cs_missed[n][r] |= not e.cs_low - 1e-12 <= t <= e.cs_high + 1e-12
                ci_missed[n][r] |= not e.ci_low - 1e-12 <= t <= e.ci_high + 1e-12
        for n in names:
            ratio[n][r] = q[n].cs_half_width / q[n].half_width
    return truth, {n: (cs_missed[n].mean(), ci_missed[n].mean(), float(np.median(ratio[n]))) for n in names}


@pytest.mark.slow
@pytest.mark.parametrize(("scheme", "reps"), [("jaccard", 300), ("stratified", 200), ("precision", 200)])
def test_confidence_sequences_hold_on_a_watched_dashboard(scheme, reps):
    truth, figures = watched_dashboard(scheme, reps)
    lines = [
        f"\n{scheme}: {reps} experiments of {SIM_DRAWS} draws, {SIM_LOOKS} looks, unsure split/merge/intersection "
        f"{SIM_UNSURE['split']:.0%}/{SIM_UNSURE['merge']:.0%}/{SIM_UNSURE['intersection']:.0%}",
        f"{'metric':<22} {'truth':>8} {'CS missed':>10} {'CI missed':>10} {'CS/CI width':>12}",
    ]
    for name, (cs, ci, ratio) in figures.items():
        lines.append(f"{name:<22} {truth[name]:>+8.4f} {cs:>10.3f} {ci:>10.3f} {ratio:>12.2f}")
    print("\n".join(lines))
    for name, (cs, ci, ratio) in figures.items():
        assert cs <= 0.06, f"{name}: the sequence excluded the truth at some look in {cs:.1%} of the experiments"
        assert ci > cs and ci >= 0.10, f"{name}: the fixed interval missed in {ci:.1%} (sequence {cs:.1%})"
        assert ratio <= 1.7, f"{name}: at the last look the sequence is {ratio:.2f} times as wide as the interval"
