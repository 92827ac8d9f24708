"""``quality_from_gold`` against the brute-force definitions (acceptance point 2, gold part).

The reference computes ΔPrecision per item as ``Precision_Exp(i) − Precision_Base(i)`` (JDD
eq 64, first line), the distances by JDD eqs 5-8, the Affected indices by eqs 56 and 59 and
the rates by their ABCDE definitions, all over explicit sets.
"""

import math
from fractions import Fraction as F

import numpy as np
import pytest

import metrics_core as mc
from tests.metrics_core import reference as ref

N_CASES = 200


def assert_close(actual, expected, what):
    assert math.isclose(float(actual), float(expected), rel_tol=1e-12, abs_tol=1e-12), (
        f"{what}: got {actual!r}, reference {expected!r}"
    )


@pytest.mark.parametrize("seed", range(N_CASES))
def test_quality_from_gold_matches_brute_force(seed):
    base, exp, weights, gold, _ = ref.random_case(seed)
    if seed % 2:
        gold = np.array([f"g{x}" for x in gold], dtype=object)
    pop = mc.population_from_labels(base, exp, weights)
    got = mc.quality_from_gold(pop, gold)
    want = ref.quality_overall(ref.RefPopulation(base.tolist(), exp.tolist(), weights), gold.tolist())
    assert set(got) == set(ref.QUALITY_METRIC_NAMES) == set(mc.ESTIMATED_METRICS)
    for name in ref.QUALITY_METRIC_NAMES:
        assert_close(got[name], want[name], name)


def test_quality_with_nothing_affected_is_zero():
    pop = mc.population_from_labels([1, 1, 2], [5, 5, 6], [1.0, 2.0, 3.0])
    got = mc.quality_from_gold(pop, [0, 1, 1])
    for name in ref.QUALITY_METRIC_NAMES:
        assert got[name] == 0.0, name


# ------------------------------------------------------------------------------------------
# By hand. The population of test_impact_reference (weights a=1 b=1 c=2 d=4 e=8, W = 16,
# Base {a,b,c}{d}{e}, Exp {a,b}{c,d}{e}) with Ideal {a,c,d}{b}{e}.
#
#   item  split-off j (w)   merge-in j (w)   B∩E (w)       w(U)
#   a     c(2): a≡c bad     -                a(1)≡, b(1)≢   4
#   b     c(2): b≢c good    -                a(1)≢, b(1)≡   4
#   c     a(1) bad, b(1) good  d(4): c≡d good  c(2)≡        8
#   d     -                 c(2): good        d(4)≡         6
#
#   item  GSD    BSD    GMD    BMD  GoodIndex BadIndex
#   a     0      2/4    0      0    1/4       1/4
#   b     2/4    0      0      0    1/4       1/4
#   c     1/8    1/8    4/8    0    2/8       0
#   d     0      0      2/6    0    4/6       0
#
#   GoodSplitDistance(T) = (1·1/2 + 2·1/8)/16 = (3/4)/16 = 3/64;  BadSplitDistance = 3/64 likewise
#   GoodMergeDistance(T) = (2·1/2 + 4·1/3)/16 = 7/48;             BadMergeDistance = 0
#   GoodDistance = 3/64 + 7/48 = 37/192;  BadDistance = 3/64;  GoodMinusBadDistance = 28/192 = 7/48
#   AffectedGoodIndex(T) (eq 56) = (1/4 + 1/4 + 2·1/4 + 4·2/3)/16 = (11/3)/16 = 11/48
#   AffectedBadIndex(T)  (eq 59) = (1/4 + 1/4)/16 = 1/32     (11/48 + 1/32 = 25/96 = AJI ✓)
#
#   Precision_Base / Precision_Exp (weight(C(i) ∩ Ideal(i)) / weight(C(i))):
#   a: Base {a,b,c}∩{a,c,d} = {a,c}: 3/4;  Exp {a,b}∩ = {a}: 1/2   → ΔP(a) = −1/4
#   b: {b}: 1/4;                           {b}: 1/2                → ΔP(b) = +1/4
#   c: {a,c}: 3/4;                         {c,d}: 6/6 = 1          → ΔP(c) = +1/4
#   d: {d}: 4/4 = 1;                       {c,d}: 1                → ΔP(d) = 0
#   ΔPrecision(T) = (−1/4 + 1/4 + 2·1/4)/16 = 1/32
#
#   Rates: GoodSplitRate(i) = w((B\E)\Ideal)/w(B): a 0, b 2/4, c 1/4 → (1/2 + 2·1/4)/16 = 1/16
#          BadSplitRate(i)  = w((B\E)∩Ideal)/w(B): a 2/4, b 0, c 1/4 → 1/16     (sum 1/8 = SplitRate ✓)
#          GoodMergeRate(i) = w((E\B)∩Ideal)/w(E): c 4/6, d 2/6 → (2·2/3 + 4·1/3)/16 = 1/6
#          BadMergeRate = 0                                                     (sum 1/6 = MergeRate ✓)
# ------------------------------------------------------------------------------------------
HAND_BASE = ["B1", "B1", "B1", "B2", "B3"]
HAND_EXP = ["E1", "E1", "E2", "E2", "E3"]
HAND_WEIGHTS = [1.0, 1.0, 2.0, 4.0, 8.0]
HAND_GOLD = ["acd", "b", "acd", "acd", "e"]
HAND_QUALITY = {
    "GoodSplitDistance": F(3, 64),
    "BadSplitDistance": F(3, 64),
    "GoodMergeDistance": F(7, 48),
    "BadMergeDistance": F(0),
    "GoodDistance": F(37, 192),
    "BadDistance": F(3, 64),
    "GoodMinusBadDistance": F(37, 192) - F(3, 64),
    "AffectedGoodIndex": F(11, 48),
    "AffectedBadIndex": F(1, 32),
    "DeltaPrecision": F(1, 32),
    "GoodSplitRate": F(1, 16),
    "BadSplitRate": F(1, 16),
    "GoodMergeRate": F(1, 6),
    "BadMergeRate": F(0),
}


def test_hand_computed_quality_from_gold():
    pop = mc.population_from_labels(HAND_BASE, HAND_EXP, HAND_WEIGHTS)
    got = mc.quality_from_gold(pop, HAND_GOLD)
    assert set(got) == set(HAND_QUALITY)
    for name, value in HAND_QUALITY.items():
        assert got[name] == pytest.approx(float(value), abs=1e-15, rel=1e-15), name


def test_reference_agrees_with_hand():
    got = ref.quality_overall(ref.RefPopulation(HAND_BASE, HAND_EXP, HAND_WEIGHTS), HAND_GOLD)
    for name, value in HAND_QUALITY.items():
        assert got[name] == pytest.approx(float(value), abs=1e-15), name


def test_gold_equal_to_exp_or_base_gives_one_sided_quality():
    """Ideal = Exp: every split and merge is good; Ideal = Base: every one is bad."""
    for seed in range(40):
        base, exp, weights, _, _ = ref.random_case(seed)
        pop = mc.population_from_labels(base, exp, weights)
        to_exp = mc.quality_from_gold(pop, exp)
        to_base = mc.quality_from_gold(pop, base)
        for name in ("BadSplitDistance", "BadMergeDistance", "BadDistance", "BadSplitRate", "BadMergeRate"):
            assert to_exp[name] == pytest.approx(0.0, abs=1e-15), name
        for name in ("GoodSplitDistance", "GoodMergeDistance", "GoodDistance", "GoodSplitRate", "GoodMergeRate"):
            assert to_base[name] == pytest.approx(0.0, abs=1e-15), name
        assert to_exp["DeltaPrecision"] >= -1e-15 and to_base["DeltaPrecision"] <= 1e-15


def test_gold_of_wrong_length_is_rejected():
    pop = mc.population_from_labels([1, 1, 2], [1, 2, 2])
    with pytest.raises(ValueError):
        mc.quality_from_gold(pop, [0, 1])


def test_an_interval_clipped_at_a_bound_holds_a_truth_that_ties_it():
    """Issue 32: "Interval holds it: No — Error −0.0000". A rate estimated at 1 (interval clipped to
    [·, 1]) against a truth computed as a sum that lands a rounding error above 1, or a distance
    at 0 against a truth a rounding error below 0: both a tie, not a miss, and no error."""
    above_one = math.nextafter(1.0, 2.0)  # 1.0000000000000002
    below_zero = 0.3 - (0.1 + 0.2)  # -5.6e-17
    assert above_one > 1.0 and below_zero < 0.0
    assert mc.gold.estimate_against_truth(value=1.0, low=0.93, high=1.0, exact=above_one) == {"error": 0.0, "holds": True}
    assert mc.gold.estimate_against_truth(value=0.0, low=0.0, high=0.04, exact=below_zero) == {"error": 0.0, "holds": True}
    # A miss is still a miss, and an error an error, however small but above the rounding.
    missed = mc.gold.estimate_against_truth(value=0.5, low=0.45, high=0.55, exact=0.55 + 1e-6)
    assert missed["holds"] is False and missed["error"] == pytest.approx(-0.05 - 1e-6)
    assert mc.gold.estimate_against_truth(value=0.2, low=0.1, high=0.3, exact=0.2 + 1e-7)["error"] == pytest.approx(-1e-7)
    # Nothing to compare.
    for missing in ({"exact": None}, {"low": None}, {"exact": math.nan}):
        compared = mc.gold.estimate_against_truth(**({"value": 0.2, "low": 0.1, "high": 0.3, "exact": 0.2} | missing))
        assert compared["holds"] is None
    assert mc.gold.estimate_against_truth(value=None, low=0.1, high=0.3, exact=0.2) == {"error": None, "holds": True}
