"""Estimates from judged samples (spec §5-6): by hand, against the reference, and by simulation.

* Hand-computed estimates on hand-written samples (acceptance point 5), including the class
  reweighting of JDD §8 (10 split draws of which 8 judged: each judged one weighs 10/8 = 1.25).
* ``estimate_quality`` against ``reference.reference_estimates`` (spec §5-6 written out over
  explicit rows) on random populations, samples, verdicts and vantage slices.
* A seeded simulation with a known Ideal clustering (acceptance point 4): the estimates are
  unbiased for the truth of ``quality_from_gold`` and the 95% intervals cover it 93-99% of the
  time, for every metric of every scheme.
"""

import math
from fractions import Fraction as F

import numpy as np
import pytest
from scipy.stats import norm

import metrics_core as mc
from tests.metrics_core import reference as ref
from tests.metrics_core.helpers import (
    HAND_JACCARD_ROWS,
    HAND_VERDICTS,
    UNSURE_RATE,
    estimates_of,
    hand_population,
    random_verdict_rows,
    simulation_population,
    verdicts_of,
)

Z95 = float(norm.ppf(0.975))
a, b, c, d = 0, 1, 2, 3  # the hand population's first items (tests/metrics_core/helpers.py)

# The rates from the same sample (see the docstring of test_hand_computed_jaccard_estimates).
HAND_JACCARD_RATES = {
    "GoodSplitRate": F(1, 16),
    "BadSplitRate": F(1, 16),
    "GoodMergeRate": F(1, 6),
    "BadMergeRate": F(0),
}


def test_hand_computed_jaccard_estimates():
    """A ``jaccard`` sample of 23 draws written by hand.

    class         rows (draws)                  judged  weight v = drawn/judged
    split         (a,c)5 (c,a)3 (b,c)1 (c,b)1    8/10    10/8 = 1.25    ({b,c} is unsure)
    merge         (c,d)3 (d,c)1                  4/4     1
    self          (a,a)2 (d,d)3                  5/5     1
    intersection  (a,b)2 (b,a)2                  4/4     1

    Labels l_ij (JDD eqs 92-94), a_i = w(U)/w(Exp(i)), b_i = w(U)/w(Base(i)):
      a: w(U)=4, a_a = 4/2 = 2, b_a = 4/4 = 1 → split −1, stable +1
      c: w(U)=8, a_c = 8/6 = 4/3, b_c = 8/4 = 2 → split −2, merge 4/3
      d: w(U)=6, a_d = 6/6 = 1, b_d = 6/4 = 3/2 → merge 1, stable −1/2
    x = l·e per judged draw and Σ v·x:
      split  1.25·(5·(−1·1/2) + 3·(−2·1/2)) = 1.25·(−5.5) = −6.875
      merge  3·(4/3) + 1·1 = 5;   self 2·1 + 3·(−1/2) = 0.5;   intersection 0
      Σ v x = −1.375 = −11/8,  Σ v = 1.25·8 + 4 + 5 + 4 = 23
    ΔPrecision = (1/2)·(−11/8)/23 = −11/368. Without the 1.25 reweighting it would be
    (1/2)·(−5.5 + 5 + 0.5)/21 = 0: the reweighting matters.

    Class metrics (the weight cancels within one class):
      GoodSplitDistance = 3/32 · mean(1 − e) = 3/32 · 1/2 = 3/64 = BadSplitDistance
      GoodMergeDistance = 7/48 · 1 = 7/48, BadMergeDistance = 0
      AffectedGoodIndex: self pairs are known, not judged (spec §14), so the index is the self
      pairs' exact total plus the intersection's total times its own share: the self total is
      Σ (w_i/W)·(w_i/w(U_i)) over a, b, c, d = 1/64 + 1/64 + 1/32 + 1/6 = 11/48, the
      intersection's 25/96 − 11/48 = 1/32 with share 0 ({a,b} not equivalent): 11/48, and
      AffectedBadIndex = 1/32 · 1 = 1/32. (Pooling the 5 self and 4 intersection draws would give
      25/96 · 5/9, as if the sample's split of the two were their masses' 22 : 3.)
    Rates (spec §6, importance weight w(U)/w(Base(i)) for splits, w(U)/w(Exp(i)) for merges):
      GoodSplitRate = (1/2)·1.25·(5·(1/2)·(4/4) + 3·(1/2)·(8/4))/23 = (1/2)·6.875/23 = 55/368 = BadSplitRate
      GoodMergeRate = (1/2)·(3·1·(8/6) + 1·1·(6/6))/23 = (1/2)·5/23 = 5/46, BadMergeRate = 0
    """
    est = estimates_of(hand_population(), "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS)
    expected = {
        "GoodSplitDistance": F(3, 64),
        "BadSplitDistance": F(3, 64),
        "GoodMergeDistance": F(7, 48),
        "BadMergeDistance": F(0),
        "GoodDistance": F(3, 64) + F(7, 48),
        "BadDistance": F(3, 64),
        "GoodMinusBadDistance": F(7, 48),
        "AffectedGoodIndex": F(11, 48),
        "AffectedBadIndex": F(1, 32),
        "DeltaPrecision": F(-11, 368),
    }
    assert set(est) == set(expected) | set(HAND_JACCARD_RATES) == set(mc.metrics_for_scheme("jaccard"))
    for name, value in expected.items():
        assert est[name].value == pytest.approx(float(value), abs=1e-15, rel=1e-13), name

    # Draw counts: 10 split draws drawn, 8 judged (the 1000/800 situation of JDD §8).
    assert (est["GoodSplitDistance"].drawn_draws, est["GoodSplitDistance"].judged_draws) == (10, 8)
    assert (est["GoodMergeDistance"].drawn_draws, est["GoodMergeDistance"].judged_draws) == (4, 4)
    # The index rests on the intersection draws only: the self pairs are known (spec §14).
    assert (est["AffectedGoodIndex"].drawn_draws, est["AffectedGoodIndex"].judged_draws) == (4, 4)
    assert (est["DeltaPrecision"].drawn_draws, est["DeltaPrecision"].judged_draws) == (23, 16)  # 5 self draws

    # Standard errors (spec §6), unit = distinct unordered pair.
    # AffectedGoodIndex: the one intersection unit {a,b} (D=4, x=0 = m): SE 0, scaled by the
    # intersection's total 1/32; Wilson on n_eff = (Σ v D)² / Σ v² k = 16/4 = 4 at p = 0, mapped
    # to 11/48 + 1/32 · share (AffectedBadIndex: 1/32 · (1 − share)).
    assert est["AffectedGoodIndex"].stderr == pytest.approx(0.0, abs=1e-15)
    assert est["AffectedBadIndex"].stderr == pytest.approx(0.0, abs=1e-15)
    p, n = 0.0, 4.0
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    assert est["AffectedGoodIndex"].ci_low == pytest.approx(11 / 48, rel=1e-12)
    assert est["AffectedGoodIndex"].ci_high == pytest.approx(11 / 48 + 1 / 32 * (centre + half), rel=1e-12)
    assert est["AffectedBadIndex"].ci_low == pytest.approx(1 / 32 * (1 - centre - half), rel=1e-12)
    assert est["AffectedBadIndex"].ci_high == pytest.approx(1 / 32, rel=1e-12)
    # GoodSplitDistance: one judged unit {a,c} with x = 1/2 = m: SE 0.
    assert est["GoodSplitDistance"].stderr == pytest.approx(0.0, abs=1e-15)
    # ΔPrecision: units (x_u = mean of x over the unit's draws):
    #   {a,c}: D=8, x_u = (5·(−1/2) + 3·(−1))/8 = −11/16, v = 1.25, split q = 1/2 → k = 8 + 1/2·8·7 = 36
    #   {c,d}: D=4, x_u = (3·4/3 + 1)/4 = 5/4, k = 4;  {a}: D=2, x=1;  {d}: D=3, x=−1/2;  {a,b}: D=4, x=0
    #   n = 21 judged draws, Σ v D = 23, m = −11/184.
    #   Spec §14: k's part (1 − q)·D² of the split pairs lost together is centred at the split
    #   class's mean, which its one judged unit {a,c} equals: only q·D = 4 of its k = 36 remains.
    m = -11 / 184
    ss = 1.25**2 * 4 * (-11 / 16 - m) ** 2 + 4 * (5 / 4 - m) ** 2 + 2 * (1 - m) ** 2 + 3 * (-0.5 - m) ** 2 + 4 * m**2
    se_dp = 0.5 * math.sqrt(21 / 20 * ss / 23**2)
    assert est["DeltaPrecision"].stderr == pytest.approx(se_dp, rel=1e-12)
    assert est["DeltaPrecision"].ci_low == pytest.approx(-11 / 368 - Z95 * se_dp, rel=1e-12)
    assert est["DeltaPrecision"].ci_high == pytest.approx(-11 / 368 + Z95 * se_dp, rel=1e-12)
    # GoodDistance: independent classes, SE = sqrt(SE_split² + SE_merge²) = sqrt(0 + 0) here.
    assert est["GoodDistance"].stderr == pytest.approx(math.hypot(est["GoodSplitDistance"].stderr, est["GoodMergeDistance"].stderr))


def test_hand_computed_precision_estimates():
    """A ``precision`` sample of 11 draws written by hand.

    u_ij = (w_i/W)·w_j·c_ij (spec §4c). Per vantage item (W = 16):
      a: split c: (1/16)·2·(1/4) = 1/32; stable a, b: (1/16)·1·|1/2 − 1/4| = 1/64 each → 1/16
      b: the same → 1/16
      c: split a, b: (2/16)·1·(1/4) = 1/32 each; merge d: (2/16)·4·(1/6) = 1/12;
         self: (2/16)·2·|1/6 − 1/4| = 1/48 → 1/6
      d: merge c: (4/16)·2·(1/6) = 1/12; self: (4/16)·4·|1/6 − 1/4| = 1/12 → 1/6
      Σ u = 1/16 + 1/16 + 1/6 + 1/6 = 11/24  (Σ split u = 1/8 = SplitRate(T), Σ merge u = 1/6 = MergeRate(T))
    Labels: merge +1, split −1, stable sign(1/w(Exp(i)) − 1/w(Base(i))): a, b +1; c, d −1.

    class         rows (draws)         judged  v
    split         (a,c)3 (b,c)1        3/4     4/3
    merge         (d,c)2               2/2     1
    self          (c,c)1 (a,a)2        3/3     1
    intersection  (b,a)2               2/2     1
    Σ v x = (4/3)·3·(−1·1/2) + 2·(+1·1) + 1·(−1) + 2·(+1) + 2·(+1·0) = −2 + 2 − 1 + 2 + 0 = 1
    Σ v = 4 + 2 + 3 + 2 = 11 → ΔPrecision = (11/24)·(1/11) = 1/24
    GoodSplitRate = SplitRate(T)·mean(1 − e) = (1/8)·(1/2) = 1/16 = BadSplitRate
    GoodMergeRate = MergeRate(T)·1 = 1/6, BadMergeRate = 0
    """
    rows = [(a, c, 3), (b, c, 1), (d, c, 2), (c, c, 1), (a, a, 2), (b, a, 2)]
    est = estimates_of(hand_population(), "precision", rows, HAND_VERDICTS)
    expected = {
        "DeltaPrecision": F(1, 24),
        "GoodSplitRate": F(1, 16),
        "BadSplitRate": F(1, 16),
        "GoodMergeRate": F(1, 6),
        "BadMergeRate": F(0),
    }
    assert set(est) == set(expected)
    for name, value in expected.items():
        assert est[name].value == pytest.approx(float(value), abs=1e-15, rel=1e-13), name
    assert (est["GoodSplitRate"].drawn_draws, est["GoodSplitRate"].judged_draws) == (4, 3)


def test_hand_computed_stratified_estimates():
    """A ``stratified`` sample: each stratum estimated on its own, combined with its exact total.

    diff stratum (total JaccardDistance(T) = 23/96): split (a,c)2 [e=1/2], (c,b)2 [unsure];
      merge (c,d)1 [e=1]. v_split = 4/2 = 2, v_merge = 1.
      ΔPrecision part: Σ v x = 2·2·(−1·1/2) + 1·(4/3) = −2 + 4/3 = −2/3, Σ v = 5 → m = −2/15.
    stable stratum (total AJI(T) = 25/96): self (d,d)1 [l = −1/2], intersection (b,a)1 [e = 0].
      m = (−1/2 + 0)/2 = −1/4.
    ΔPrecision = (23/96)·(−2/15) + (25/96)·(−1/4) = −46/1440 − 25/384 = −(736 + 1500)/23040 = −559/5760.
    AffectedGoodIndex = the self pairs' exact total 11/48 (test_hand_computed_jaccard_estimates)
      plus the intersection's 1/32 times its share 0 ({a,b} not equivalent) = 11/48 (spec §14).
    """
    rows_i = [a, c, c, d, b]
    rows_j = [c, b, d, d, a]
    draws = [2, 2, 1, 1, 1]
    strata = [mc.STRATA.index(s) for s in ("diff", "diff", "diff", "stable", "stable")]
    pop = hand_population()
    sample = mc.PairSample.from_columns(
        pop, scheme="stratified", i=np.array(rows_i), j=np.array(rows_j), draws=np.array(draws),
        stratum=np.array(strata, dtype=np.int8), diff_share=0.5,
    )
    est = mc.estimate_quality(pop, sample, verdicts_of(HAND_VERDICTS)).estimates
    assert est["DeltaPrecision"].value == pytest.approx(-559 / 5760, rel=1e-13)
    assert est["AffectedGoodIndex"].value == pytest.approx(11 / 48, rel=1e-13)
    assert est["GoodSplitDistance"].value == pytest.approx(3 / 32 * 1 / 2, rel=1e-13)


def test_hand_computed_jaccard_rates_importance_weighted_shares():
    """metrics_core's rates ("ours", a refinement of spec §6): SplitRate(T) times the share of
    not-equivalent split draws weighted by the importance ι = w(U)/w(Base(i)); Σ_split w_ij·ι is
    exactly SplitRate(T), so Good + Bad = SplitRate(T).
    Judged split rows: (a,c)×5 with ι = w{a,b,c}/w{a,b,c} = 4/4 = 1 and (c,a)×3 with
    ι = w{a,b,c,d}/w{a,b,c} = 8/4 = 2, both of value 1/2 ({b,c} is unjudged; v = 10/8 cancels):
      GoodSplitRate = (1/8)·(5·1·(1/2) + 3·2·(1/2))/(5·1 + 3·2) = (1/8)·(1/2) = 1/16 = BadSplitRate.
    Merge rows (c,d)×3, (d,c)×1, {c,d} equivalent: GoodMergeRate = MergeRate(T) = 1/6, Bad = 0.
    From a ``stratified`` sample (rows below), the judged split draws are (a,c)×2 of value 1/2:
      GoodSplitRate = (1/8)·(1/2) = 1/16.
    """
    est = estimates_of(hand_population(), "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS)
    for name, value in HAND_JACCARD_RATES.items():
        assert est[name].value == pytest.approx(float(value), abs=1e-15, rel=1e-13), name
    pop = hand_population()
    sample = mc.PairSample.from_columns(
        pop, scheme="stratified", i=np.array([a, c, c, d, b]), j=np.array([c, b, d, d, a]),
        draws=np.array([2, 2, 1, 1, 1]), diff_share=0.5,
        stratum=np.array([mc.STRATA.index(s) for s in ("diff", "diff", "diff", "stable", "stable")], dtype=np.int8),
    )
    est = mc.estimate_quality(pop, sample, verdicts_of(HAND_VERDICTS)).estimates
    assert est["GoodSplitRate"].value == pytest.approx(1 / 16, rel=1e-13)


def test_verdicts_from_judgements_counts_unordered_pairs():
    """Spec §5: one verdict on (i, j) serves (j, i); self pairs are ignored; codes are accepted."""
    v = mc.verdicts_from_judgements(
        np.array([5, 2, 2, 7, 3, 3, 9]),
        np.array([2, 5, 5, 7, 1, 1, 4]),
        np.array(["equivalent", "not_equivalent", "unsure", "equivalent", "unsure", "unsure", "equivalent"], dtype=object),
    )
    got = {(int(x), int(y)): (int(e), int(n), int(u)) for x, y, e, n, u in zip(v.a, v.b, v.equivalent, v.not_equivalent, v.unsure)}
    assert got == {(2, 5): (1, 1, 1), (1, 3): (0, 0, 2), (4, 9): (1, 0, 0)}
    codes = mc.verdicts_from_judgements([5, 2], [2, 5], [mc.VERDICTS.index("equivalent"), mc.VERDICTS.index("unsure")])
    assert (int(codes.equivalent[0]), int(codes.unsure[0])) == (1, 1)
    with pytest.raises(ValueError):
        mc.verdicts_from_judgements([1], [2], ["maybe"])


# ------------------------------------------------------------------------------------------
# Against the reference estimator (spec §5-6) on random samples.
# ------------------------------------------------------------------------------------------
def sample_rows(sample):
    return [
        (int(i), int(j), mc.PAIR_CLASSES[cl], mc.STRATA[s], int(dr))
        for i, j, cl, s, dr in zip(sample.i, sample.j, sample.pair_class, sample.stratum, sample.draws)
    ]


def judged_everywhere(sample, i, j, verdict):
    """True when every class (per stratum) of the sample has at least one judged draw."""
    values = ref.pair_equivalence_values(zip(i.tolist(), j.tolist(), verdict.tolist()))
    drawn, judged = set(), set()
    for ii, jj, cl, s, _ in sample_rows(sample):
        drawn.add((s, cl))
        if ii == jj or (min(ii, jj), max(ii, jj)) in values:
            judged.add((s, cl))
    return drawn == judged


CROSS_CASES = [(seed, scheme) for seed in range(40) for scheme in mc.SCHEMES]


def cross_case(seed, scheme):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(8, 60))
    weights = ref.random_weights(rng, n, ["mild", "lognormal", "extreme", "unit"][seed % 4])
    gold = ref.random_labels(rng, n, int(rng.integers(2, n // 2 + 2)))
    base = ref.perturb(rng, gold, int(rng.integers(1, 8)))
    exp = ref.perturb(rng, base, int(rng.integers(1, 8)))
    pop = mc.population_from_labels(base, exp, weights)
    while not mc.impact_metrics(pop).affected_items:
        exp = ref.perturb(rng, base, 3)
        pop = mc.population_from_labels(base, exp, weights)
    return rng, pop, base, exp, weights, gold


def cross_check(seed, scheme):
    """``(estimate_quality result, reference result)`` on one random judged sample."""
    rng, pop, base, exp, weights, gold = cross_case(seed, scheme)
    rp = ref.RefPopulation(base.tolist(), exp.tolist(), weights)
    for _attempt in range(50):
        sample = mc.sample_pairs(pop, n_draws=int(rng.integers(5, 400)), scheme=scheme, rng=rng,
                                 diff_share=float(rng.uniform(0.2, 0.8)))
        x, y = mc.pairs_for_judgement(sample, rng=rng)
        # Judge only part of the pairs (live estimates), with unsure and replicated verdicts.
        keep = rng.random(len(x)) < 0.85
        i, j, verdict = random_verdict_rows(
            rng, pop, gold, np.asarray(x)[keep], np.asarray(y)[keep],
            unsure_rate={"split": 0.1, "merge": 0.3, "intersection": 0.2}, consistent=seed % 3 != 0,
        )
        if judged_everywhere(sample, i, j, verdict):
            break
    else:
        pytest.fail("could not draw a sample with a judged draw in every class")
    verdicts = mc.verdicts_from_judgements(i, j, verdict)
    vantage = None if seed % 2 == 0 else rng.random(pop.n_items) < 0.6
    if vantage is not None:
        # The slice must also have a judged draw in every class it samples.
        sub = [r for r in sample_rows(sample) if vantage[r[0]]]
        values = ref.pair_equivalence_values(zip(i.tolist(), j.tolist(), verdict.tolist()))
        if not sub or {(r[3], r[2]) for r in sub} != {
            (r[3], r[2]) for r in sub if r[0] == r[1] or (min(r[0], r[1]), max(r[0], r[1])) in values
        }:
            vantage = None
    got = mc.estimate_quality(pop, sample, verdicts, vantage=vantage).estimates
    want = ref.reference_estimates(
        rp, scheme, sample_rows(sample), list(zip(i.tolist(), j.tolist(), verdict.tolist())),
        vantage=None if vantage is None else set(np.flatnonzero(vantage).tolist()),
    )
    return got, want


IMPORTANCE_WEIGHTED_RATES = ("GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate")


def compare_estimates(got, want, names):
    problems = []
    for name in names:
        w = want[name]
        g = got[name]
        checks = [("value", g.value, w.value), ("stderr", g.stderr, w.stderr)]
        if w.interval != "unspecified":
            checks += [("ci_low", g.ci_low, w.ci_low), ("ci_high", g.ci_high, w.ci_high)]
        if name not in ("GoodDistance", "BadDistance") and w.interval == "wilson":
            checks += [("judged_draws", g.judged_draws, w.judged_draws), ("drawn_draws", g.drawn_draws, w.drawn_draws)]
        for what, gv, wv in checks:
            if math.isnan(wv):
                ok = math.isnan(gv)
            else:
                ok = math.isclose(gv, wv, rel_tol=1e-9, abs_tol=1e-13)
            if not ok:
                problems.append(f"{name}.{what}: got {gv!r}, reference {wv!r}")
        defined = not (math.isnan(g.value) or math.isnan(g.ci_low) or math.isnan(g.ci_high))
        if defined and not g.ci_low <= g.value + 1e-12 <= g.ci_high + 2e-12:
            problems.append(f"{name}: value {g.value!r} outside its interval [{g.ci_low!r}, {g.ci_high!r}]")
    return problems


@pytest.mark.parametrize(("seed", "scheme"), CROSS_CASES)
def test_estimates_match_reference_estimator(seed, scheme):
    """Every estimate except the importance-weighted rates of jaccard/stratified samples."""
    got, want = cross_check(seed, scheme)
    assert set(got) == set(want) == set(mc.metrics_for_scheme(scheme))
    names = [n for n in want if scheme == "precision" or n not in IMPORTANCE_WEIGHTED_RATES]
    problems = compare_estimates(got, want, names)
    assert not problems, "\n".join(problems)


def test_rates_from_jaccard_samples_match_importance_weighted_shares():
    """metrics_core's rates from ``jaccard``/``stratified`` samples ("ours", see the reference):
    SplitRate(T) (MergeRate(T)) times the importance-weighted share over the split (merge) draws,
    with a Wilson interval on the effective size. One test over 20 random cases."""
    problems = []
    for seed, scheme in [c for c in CROSS_CASES if c[1] != "precision"][:20]:
        got, want = cross_check(seed, scheme)
        problems += [f"[{seed}-{scheme}] {p}" for p in compare_estimates(got, want, IMPORTANCE_WEIGHTED_RATES)]
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:12])


def test_vantage_of_everything_is_the_overall_estimate():
    rng, pop, *_ , gold = cross_case(3, "jaccard")
    sample = mc.sample_pairs(pop, n_draws=300, rng=rng)
    x, y = mc.pairs_for_judgement(sample, rng=rng)
    i, j, verdict = random_verdict_rows(rng, pop, gold, x, y, unsure_rate={"split": 0, "merge": 0, "intersection": 0})
    verdicts = mc.verdicts_from_judgements(i, j, verdict)
    whole = mc.estimate_quality(pop, sample, verdicts).estimates
    masked = mc.estimate_quality(pop, sample, verdicts, vantage=np.ones(pop.n_items, bool)).estimates
    for name in whole:
        assert masked[name].value == pytest.approx(whole[name].value, rel=1e-12, abs=1e-15), name
        assert masked[name].stderr == pytest.approx(whole[name].stderr, rel=1e-12, abs=1e-15), name


# ------------------------------------------------------------------------------------------
# Simulation with a known Ideal clustering (acceptance point 4).
# ------------------------------------------------------------------------------------------
SIM_REPS = 2000
SIM_DRAWS = 300


def run_simulation(pop, gold, scheme, reps, seed, vantage):
    """Estimates and interval ends over ``reps`` independent judged samples.

    Returns ``{(slice, metric): (values, lows, highs)}``; slice "all" is the overall estimate,
    "slice" the estimate restricted to the vantage mask (the same samples and verdicts).
    """
    rng = np.random.default_rng(seed)
    names = mc.metrics_for_scheme(scheme)
    out = {(s, m): (np.empty(reps), np.empty(reps), np.empty(reps)) for s in ("all", "slice") for m in names}
    for r in range(reps):
        sample = mc.sample_pairs(pop, n_draws=SIM_DRAWS, scheme=scheme, rng=rng)
        x, y = mc.pairs_for_judgement(sample, rng=rng)
        i, j, verdict = random_verdict_rows(rng, pop, gold, x, y, unsure_rate=UNSURE_RATE)
        verdicts = mc.verdicts_from_judgements(i, j, verdict)
        for s, mask in (("all", None), ("slice", vantage)):
            est = mc.estimate_quality(pop, sample, verdicts, vantage=mask).estimates
            for m in names:
                values, lows, highs = out[(s, m)]
                values[r], lows[r], highs[r] = est[m].value, est[m].ci_low, est[m].ci_high
    return out


@pytest.fixture(scope="module")
def simulation_setup():
    pop, gold = simulation_population()
    truth = mc.quality_from_gold(pop, gold)
    # A vantage slice of about half the items. Its truth is each metric's contribution
    # Σ_{i ∈ slice} w_i/W · metric(i), from the brute-force reference.
    vantage = np.random.default_rng(77).random(pop.n_items) < 0.5
    rp = ref.RefPopulation(pop.base.tolist(), pop.exp.tolist(), pop.weight.tolist())
    slice_truth = ref.quality_overall(rp, list(gold), items=np.flatnonzero(vantage).tolist())
    return pop, gold, {"all": truth, "slice": slice_truth}, vantage


def test_simulation_population_has_good_and_bad_splits_and_merges(simulation_setup):
    pop, gold, truths, _ = simulation_setup
    truth = truths["all"]
    assert 250 <= pop.n_items <= 400
    for name in ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance",
                 "AffectedGoodIndex", "AffectedBadIndex"):
        assert truth[name] > 0.002, name
        assert truths["slice"][name] > 0.001, name
    # The truth itself agrees with the brute-force reference.
    rp = ref.RefPopulation(pop.base.tolist(), pop.exp.tolist(), pop.weight.tolist())
    want = ref.quality_overall(rp, list(gold))
    for name, value in want.items():
        assert truth[name] == pytest.approx(value, abs=1e-12), name


@pytest.mark.slow
@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_estimates_are_unbiased_and_intervals_cover(simulation_setup, scheme):
    pop, gold, truths, vantage = simulation_setup
    seed = {"jaccard": 1, "stratified": 2, "precision": 3}[scheme]
    results = run_simulation(pop, gold, scheme, SIM_REPS, seed, vantage)
    lines = [f"\n{scheme}: {SIM_REPS} samples of {SIM_DRAWS} draws; unsure split/merge/intersection "
             f"= {UNSURE_RATE['split']:.0%}/{UNSURE_RATE['merge']:.0%}/{UNSURE_RATE['intersection']:.0%}; "
             f"slice: = vantage on {vantage.sum()} of {pop.n_items} items",
             f"{'metric':<24} {'truth':>10} {'mean':>10} {'bias/SE':>8} {'coverage':>9} {'nan':>4}"]
    failures = []
    for (s, name), (v, lows, highs) in results.items():
        label = name if s == "all" else f"slice:{name}"
        t = truths[s][name]
        nan = int(np.isnan(v).sum() + np.isnan(lows).sum() + np.isnan(highs).sum())
        ok = ~np.isnan(v)
        mean = v[ok].mean()
        se_mean = v[ok].std(ddof=1) / math.sqrt(ok.sum())
        bias_z = (mean - t) / se_mean if se_mean > 0 else (0.0 if mean == t else math.inf)
        coverage = ((lows <= t + 1e-12) & (t - 1e-12 <= highs)).mean()
        lines.append(f"{label:<24} {t:>10.5f} {mean:>10.5f} {bias_z:>8.2f} {coverage:>9.3f} {nan:>4}")
        if nan:
            failures.append(f"{label}: {nan} NaN estimates or interval ends")
        if abs(bias_z) >= 4:
            failures.append(f"{label}: mean {mean:.6f} vs truth {t:.6f} ({bias_z:.1f} SE)")
        if not 0.93 <= coverage <= 0.99:
            failures.append(f"{label}: coverage {coverage:.3f} outside [0.93, 0.99]")
    print("\n".join(lines))
    assert not failures, "\n".join(failures)
