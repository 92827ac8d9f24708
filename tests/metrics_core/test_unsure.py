"""Sensitivity to *unsure* (abcde-spec §12): each estimate's range over deciding the unsure verdicts.

By hand on the 23-draw sample of test_estimation_simulation, equal to the value without unsure
verdicts, and against brute force: every way of deciding each unsure pair (all its unsure
verdicts one way) gives a value inside [unsure_low, unsure_high], and the ends are reached.
"""

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pytest

import metrics_core as mc
from tests.metrics_core.helpers import HAND_JACCARD_ROWS, HAND_VERDICTS, estimates_of, hand_population


def test_hand_computed_unsure_ranges():
    """Unsure verdicts of the hand sample: {b,c} (split, its only verdict) and one of three on {a,b}
    (intersection; the other two not equivalent). Counted as judged, they change the reweighting
    too: all 10 split draws are judged.

    split share p (equivalent): value 1/2 ({a,c} 8 draws at 1/2); {b,c} equivalent → (8·½ + 2)/10 = 3/5;
      not equivalent → 4/10 = 2/5.   GoodSplitDistance = 3/32·(1 − p) ∈ [3/80, 9/160].
    intersection share (spec §14: the index is 11/48 + 1/32 · share): value 0; {a,b} at 1/3 → 1/3.
      AffectedGoodIndex ∈ [11/48, 11/48 + 1/96], AffectedBadIndex = 1/32 · (1 − share) ∈ [1/48, 1/32].
    merge: no unsure verdict → the value 7/48.
    GoodMinusBadDistance = 3/32(1 − 2p) + 7/48 ∈ 7/48 ± 3/160.
    GoodSplitRate = SplitRate(T)·Σ Dι(1 − e)/Σ Dι, ι = 1 for a's and b's rows, 2 for c's:
      Σ Dι = 5 + 6 + 1 + 2 = 14; {b,c} equivalent → 1/8 · 5.5/14 = 11/224, not → 1/8 · 8.5/14 = 17/224.
    ΔPrecision = (1/2)·Σ v l e / 23 (v = 1 once {b,c} counts): labels {a,c} −1 (5 draws), −2 (3);
      {b,c} −1, −2; merge Σ = 5; self 2·1 + 3·(−½) = ½; {a,b} +1 on both rows (4 draws).
      Highest: {b,c} not equivalent, {a,b} at 1/3: −5.5 + 5 + ½ + 4/3 = 4/3 → 2/69.
      Lowest: {b,c} equivalent, {a,b} at 0: −5.5 − 3 + 5 + ½ = −3 → −3/46.
    """
    est = estimates_of(hand_population(), "jaccard", HAND_JACCARD_ROWS, HAND_VERDICTS)
    expected = {
        "GoodSplitDistance": (F(3, 80), F(9, 160)),
        "BadSplitDistance": (F(3, 80), F(9, 160)),
        "GoodMergeDistance": (F(7, 48), F(7, 48)),
        "BadMergeDistance": (F(0), F(0)),
        "GoodDistance": (F(3, 80) + F(7, 48), F(9, 160) + F(7, 48)),
        "BadDistance": (F(3, 80), F(9, 160)),
        "GoodMinusBadDistance": (F(7, 48) - F(3, 160), F(7, 48) + F(3, 160)),
        "AffectedGoodIndex": (F(11, 48), F(11, 48) + F(1, 96)),
        "AffectedBadIndex": (F(1, 48), F(1, 32)),
        "DeltaPrecision": (F(-3, 46), F(2, 69)),
        "GoodSplitRate": (F(11, 224), F(17, 224)),
        "BadSplitRate": (F(11, 224), F(17, 224)),
        "GoodMergeRate": (F(1, 6), F(1, 6)),  # MergeRate(T) · 1: every merge pair equivalent
        "BadMergeRate": (F(0), F(0)),
    }
    assert set(expected) == set(est)
    for name, (low, high) in expected.items():
        e = est[name]
        assert (e.unsure_low, e.unsure_high) == pytest.approx((float(low), float(high)), rel=1e-12, abs=1e-15), name
    # Merge has no unsure verdict, and its draws are weighted as before: exactly the value.
    assert est["GoodMergeDistance"].unsure_low == est["GoodMergeDistance"].value == est["GoodMergeDistance"].unsure_high


def judged_case(scheme, seed, unsure_share):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, 14)
    exp = np.where(rng.random(14) < 0.5, rng.integers(0, 4, 14), base) + 10
    pop = mc.population_from_labels(base, exp, rng.uniform(0.5, 2.0, 14))
    gold = rng.integers(0, 3, 14)
    sample = mc.sample_pairs(pop, n_draws=60, scheme=scheme, rng=rng)
    a, b = mc.pairs_for_judgement(sample, rng=rng)
    rows = []
    for x, y in zip(a.tolist(), b.tolist()):
        if rng.random() < 0.1:
            continue  # not judged yet
        for _ in range(int(rng.integers(1, 3))):  # one or two raters
            unsure = rng.random() < unsure_share
            rows.append((x, y, "unsure" if unsure else ("equivalent" if gold[x] == gold[y] else "not_equivalent")))
    return pop, sample, rows


def quality(pop, sample, rows):
    i, j, v = (np.array(c) for c in zip(*rows))
    return mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(i, j, v))


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_without_unsure_the_range_is_the_value(scheme):
    for seed in range(5):
        pop, sample, rows = judged_case(scheme, seed, 0.0)
        for name, e in quality(pop, sample, rows).estimates.items():
            if math.isnan(e.value):
                assert math.isnan(e.unsure_low) and math.isnan(e.unsure_high), name
            else:
                assert e.unsure_low == e.value == e.unsure_high, (seed, name)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_unsure_range_is_the_range_over_deciding_each_unsure_pair(scheme):
    checked = 0
    for seed in range(40):
        pop, sample, rows = judged_case(scheme, seed, 0.12)
        unsure_pairs = sorted({(min(x, y), max(x, y)) for x, y, v in rows if v == "unsure"})
        if not 1 <= len(unsure_pairs) <= 5:
            continue
        got = quality(pop, sample, rows)
        values = {name: [] for name in got.estimates}
        for choice in itertools.product(("equivalent", "not_equivalent"), repeat=len(unsure_pairs)):
            decided = dict(zip(unsure_pairs, choice))
            rows_decided = [(x, y, decided[(min(x, y), max(x, y))] if v == "unsure" else v) for x, y, v in rows]
            for name, e in quality(pop, sample, rows_decided).estimates.items():
                values[name].append(e.value)
        for name, e in got.estimates.items():
            v = np.array(values[name])
            if np.isnan(v).any():
                continue
            assert e.unsure_low == pytest.approx(v.min(), rel=1e-9, abs=1e-14), (seed, name)
            assert e.unsure_high == pytest.approx(v.max(), rel=1e-9, abs=1e-14), (seed, name)
        checked += 1
    assert checked >= 10
