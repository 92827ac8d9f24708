"""Rater agreement statistics (metrics_core.agreement) against published values.

Published examples with more than three categories go through the private count-matrix
cores (units × categories), which take any number of categories; examples with three
categories go through the public functions, with the categories mapped onto the verdicts.
Published values are given to 3 decimals, so those tests compare ``round(x, 3)``; values
printed to more decimals by a reference implementation are compared to all of them.
"""

import json
import math
import subprocess
import sys
from itertools import combinations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import metrics_core as mc
from metrics_core.agreement import (
    fleiss_from_counts,
    gwet_ac1_from_counts,
    krippendorff_from_counts,
    observed_agreement,
)

E, N, U = mc.VERDICTS  # equivalent, not_equivalent, unsure


def rows_from_table(table):
    """Two raters' verdicts (a, b) on one unit per count of a 3×3 contingency table."""
    a, b = [], []
    for i in range(3):
        for j in range(3):
            a += [mc.VERDICTS[i]] * int(table[i][j])
            b += [mc.VERDICTS[j]] * int(table[i][j])
    return a, b


def long_rows(a, b):
    """The (unit, verdict) rows of two raters who judged units 0..n-1."""
    n = len(a)
    return list(range(n)) + list(range(n)), list(a) + list(b)


def counts_from_raw(raw, categories):
    """Units × categories counts from a raters × units list of ratings (None = missing)."""
    counts = np.zeros((len(raw[0]), len(categories)))
    for ratings in raw:
        for unit, value in enumerate(ratings):
            if value is not None:
                counts[unit, categories.index(value)] += 1
    return counts


# ------------------------------------------------------------------------------------------
# Fleiss' kappa


# Fleiss' kappa worked example, Wikipedia "Fleiss' kappa" (after Fleiss 1971): 10 subjects,
# 14 raters, 5 categories; P-bar = 0.378, P_e = 0.213, kappa = 0.210. The same table is the
# Wikipedia check of statsmodels (statsmodels/stats/tests/test_inter_rater.py, table1).
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_wikipedia_worked_example():
    # Source: Wikipedia "Fleiss' kappa", worked example (P-bar 0.378, P_e 0.213, kappa 0.210).
    got = fleiss_from_counts(WIKIPEDIA_FLEISS)
    assert round(got.observed, 3) == 0.378
    assert round(got.expected, 3) == 0.213
    assert round(got.value, 3) == 0.210


# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses; the raw ratings as
# in R's irr package (`diagnoses`), reproduced in statsmodels' test_inter_rater.py.
FLEISS_1971_DIAGNOSES = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip


def test_fleiss_kappa_fleiss_1971_diagnoses():
    # Source: Fleiss (1971), Psychological Bulletin 76(5), kappa = .430 over the 30 patients;
    # R irr::kappam.fleiss(diagnoses) prints 0.4302445 (quoted in statsmodels' test_inter_rater.py).
    counts = np.array([[row.count(c) for c in range(1, 6)] for row in FLEISS_1971_DIAGNOSES])
    got = fleiss_from_counts(counts).value
    assert round(got, 3) == 0.430
    assert got == pytest.approx(0.4302445, abs=5e-8)


# ------------------------------------------------------------------------------------------
# Krippendorff's alpha and Gwet's AC1 with missing ratings: Krippendorff's (2011) reliability
# data for section C, 4 observers × 12 units, values 1..5, units rated by 4, 3, 2 or 1
# observers; as in R DescTools::KrippAlpha's example ("the C data from Krippendorff") and in
# irrCAC's `raw_4raters`, which cites Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.,
# p. 120.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, None],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
KRIPPENDORFF_COUNTS = counts_from_raw(KRIPPENDORFF_2011, [1, 2, 3, 4, 5])


def test_krippendorff_data_as_tabulated():
    # By hand from the data: m_u per unit, and the value totals n_c over the 11 pairable units
    # (unit 12 has a single value, a 3): 9, 13, 10, 5, 3, n = 40.
    assert KRIPPENDORFF_COUNTS.sum(axis=1).tolist() == [3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 2, 1]
    assert KRIPPENDORFF_COUNTS[:11].sum(axis=0).tolist() == [9, 13, 10, 5, 3]


def test_krippendorff_alpha_nominal_krippendorff_2011():
    # Source: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", C. Nominal data,
    # any number of observers, missing data: alpha = 0.743 (n = 40 pairable values).
    got = krippendorff_from_counts(KRIPPENDORFF_COUNTS)
    assert round(got.value, 3) == 0.743
    # By hand: the off-diagonal coincidences sum to 8 (unit 2: 6/3, unit 6: 12/3, unit 8: 6/3),
    # so D_o = 8/40 and A_o = 0.8; A_e = Σ n_c (n_c - 1) / (n (n - 1)) = 344/1560.
    assert got.observed == pytest.approx(0.8, abs=1e-15)
    assert got.expected == pytest.approx((9 * 8 + 13 * 12 + 10 * 9 + 5 * 4 + 3 * 2) / (40 * 39), abs=1e-15)
    assert got.value == pytest.approx(1 - (8 / 40) / (1 - 344 / 1560), rel=1e-14)


def test_gwet_ac1_and_fleiss_with_missing_ratings_gwet_handbook():
    # Source: Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120 data: AC1 = 0.775
    # (p_a = 0.818, p_e = 0.190) and Fleiss' generalised kappa = 0.761 (p_e = 0.239). To 5 decimals
    # as printed by Gwet's irrCAC (python port afergadis/irrCAC, irrCAC/raw.py doctest):
    # AC1 0.77544, p_e 0.19032; kappa 0.76117, p_e 0.23872; p_a 0.81818. Unit 12 (one rating)
    # counts in pi_k there, as it does in the core.
    ac1 = gwet_ac1_from_counts(KRIPPENDORFF_COUNTS)
    assert (round(ac1.observed, 3), round(ac1.expected, 3), round(ac1.value, 3)) == (0.818, 0.190, 0.775)
    assert (round(ac1.observed, 5), round(ac1.expected, 5), round(ac1.value, 5)) == (0.81818, 0.19032, 0.77544)
    kappa = fleiss_from_counts(KRIPPENDORFF_COUNTS)
    assert (round(kappa.expected, 3), round(kappa.value, 3)) == (0.239, 0.761)
    assert (round(kappa.expected, 5), round(kappa.value, 5)) == (0.23872, 0.76117)


# ------------------------------------------------------------------------------------------
# Three categories, through the public functions


# Gwet (2014), Handbook, 4th ed.: 100 pregnant women classified by 2 abstractors as Ectopic,
# AIU or NIU (irrCAC's `cont3x3abstractors`); mapped onto equivalent, not_equivalent, unsure.
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]


def test_two_abstractors_gwet_handbook():
    # Source: Gwet (2014), Handbook, 3×3 abstractors table: Cohen's kappa 0.796, Scott's pi 0.796
    # (= Fleiss' kappa for 2 raters), Krippendorff's alpha 0.797, AC1 0.849; values as computed
    # by Gwet's irrCAC (its python port's tests, test/unit/irrCAC/table/test_{cohen,scott,
    # krippendorff,gwet}.py). Percent agreement 89/100.
    a, b = rows_from_table(ABSTRACTORS)
    assert round(mc.cohens_kappa(a=a, b=b), 3) == 0.796
    unit, verdict = long_rows(a, b)
    s = mc.agreement_summary(unit=unit, verdict=verdict)
    assert (s.replicated_pairs, s.verdicts) == (100, 200)
    assert s.observed_agreement == pytest.approx(0.89, abs=1e-15)
    assert s.unanimous_share == pytest.approx(0.89, abs=1e-15)
    assert round(s.fleiss_kappa, 3) == 0.796
    assert round(s.krippendorff_alpha, 3) == 0.797
    assert round(s.gwet_ac1, 3) == 0.849
    assert s.unsure_share == pytest.approx((60 + 63) / 200, abs=1e-15)


# irrCAC's `raw_gender` data: 4 raters, 15 units, categories a, b, c (complete ratings).
GENDER = [
    "a a a a a b b b c a a a a a b",
    "a a a a b a b c c a a a a b a",
    "a b b c a a b b c a b b c a a",
    "c c c c a a b b c c c c c a a",
]


def test_four_raters_three_categories_irrcac():
    # Cross-check with Gwet's irrCAC (python port afergadis/irrCAC, test/unit/irrCAC/raw/
    # test_{gwet,fleiss,krippendorff}.py, raw_gender): AC1 0.208 (p_a 0.456, p_e 0.312),
    # Fleiss' kappa 0.129 (p_e 0.375), Krippendorff's alpha 0.143.
    mapping = {"a": E, "b": N, "c": U}
    unit, verdict, rater = [], [], []
    for r, ratings in enumerate(GENDER):
        for u, value in enumerate(ratings.split()):
            unit.append(u)
            verdict.append(mapping[value])
            rater.append(f"rater{r}")
    s = mc.agreement_summary(unit=unit, verdict=verdict, rater=rater)
    assert round(s.observed_agreement, 3) == 0.456
    assert round(s.gwet_ac1, 3) == 0.208
    assert round(s.fleiss_kappa, 3) == 0.129
    assert round(s.krippendorff_alpha, 3) == 0.143


# ------------------------------------------------------------------------------------------
# Cohen's kappa


def test_cohens_kappa_wikipedia_2x2_example():
    # Source: Wikipedia "Cohen's kappa", simple example: 50 grant proposals, yes/yes 20,
    # A yes B no 5, A no B yes 10, no/no 15: p_o = 0.7, p_e = 0.5, kappa = 0.4.
    a, b = rows_from_table([[20, 5, 0], [10, 15, 0], [0, 0, 0]])
    assert mc.cohens_kappa(a=a, b=b) == pytest.approx(0.4, abs=1e-15)


def test_cohens_kappa_sas_3x3_example():
    # SAS PROC FREQ printout "Simple Kappa Coefficient 0.4842" for the table [[0,4,1],[0,8,0],
    # [0,1,5]], quoted in statsmodels' test_inter_rater.py (UnweightedCohens); by hand
    # p_o = 13/19, p_e = (5·0 + 8·13 + 6·6)/19² = 140/361, kappa = 107/221 = 0.48416.
    a, b = rows_from_table([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    got = mc.cohens_kappa(a=a, b=b)
    assert round(got, 4) == 0.4842
    assert got == pytest.approx(107 / 221, rel=1e-14)


@pytest.mark.parametrize("seed", range(20))
def test_cohens_kappa_matches_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 200))
    a = rng.choice(mc.VERDICTS, size=n, p=[0.6, 0.3, 0.1])
    agree = rng.random(n) < rng.random()
    b = np.where(agree, a, rng.choice(mc.VERDICTS, size=n))
    want = cohen_kappa_score(a, b, labels=list(mc.VERDICTS))
    got = mc.cohens_kappa(a=a, b=b)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_cohens_kappa_undefined_is_nan():
    assert math.isnan(mc.cohens_kappa(a=[], b=[]))
    assert math.isnan(mc.cohens_kappa(a=[E, E], b=[E, E]))  # p_e = 1
    assert mc.cohens_kappa(a=[E, N], b=[E, N]) == 1.0
    assert mc.cohens_kappa(a=[E, N], b=[N, E]) == -1.0


def test_cohens_kappa_accepts_codes_and_validates():
    assert mc.cohens_kappa(a=[0, 1, 2, 2], b=[0, 1, 2, 1]) == mc.cohens_kappa(a=[E, N, U, U], b=[E, N, U, N])
    with pytest.raises(ValueError, match=r"b\[1\] = 'maybe'"):
        mc.cohens_kappa(a=[E, N], b=[E, "maybe"])
    with pytest.raises(ValueError, match="same length"):
        mc.cohens_kappa(a=[E, N], b=[E])


# ------------------------------------------------------------------------------------------
# Pairwise Cohen's kappa


def random_judgements(seed, *, n_units=60, n_raters=6, max_replication=4):
    """Random verdict rows: each unit judged by 1..max_replication distinct raters."""
    rng = np.random.default_rng(seed)
    unit, verdict, rater = [], [], []
    for u in range(n_units):
        truth = rng.integers(3)
        raters = rng.choice(n_raters, size=int(rng.integers(1, max_replication + 1)), replace=False)
        for r in raters:
            v = truth if rng.random() < 0.7 else rng.integers(3)
            unit.append(u)
            verdict.append(mc.VERDICTS[v])
            rater.append(f"r{r}")
    return unit, verdict, rater


@pytest.mark.parametrize("seed", range(10))
def test_pairwise_cohens_kappa_matches_scikit_learn_per_pair(seed):
    unit, verdict, rater = random_judgements(seed)
    by_rater = {}
    for u, v, r in zip(unit, verdict, rater):
        by_rater.setdefault(r, {})[u] = v
    want = []
    for ra, rb in combinations(sorted(by_rater), 2):
        shared = sorted(set(by_rater[ra]) & set(by_rater[rb]))
        if shared:
            a = [by_rater[ra][u] for u in shared]
            b = [by_rater[rb][u] for u in shared]
            want.append((ra, rb, len(shared), cohen_kappa_score(a, b, labels=list(mc.VERDICTS))))
    got = mc.pairwise_cohens_kappa(unit=unit, verdict=verdict, rater=rater)
    assert [(g.rater_a, g.rater_b, g.units) for g in got] == [w[:3] for w in want]
    for g, w in zip(got, want):
        assert (math.isnan(g.kappa) and math.isnan(w[3])) or g.kappa == pytest.approx(w[3], rel=1e-12, abs=1e-14)


def test_pairwise_cohens_kappa_orders_raters_whatever_the_row_order():
    unit, verdict, rater = [1, 1, 2, 2, 3, 3], [E, E, N, N, E, U], [9, 3, 3, 9, 9, 3]
    got = mc.pairwise_cohens_kappa(unit=unit, verdict=verdict, rater=rater)
    assert got == [mc.RaterPairKappa(3, 9, 3, mc.cohens_kappa(a=[E, N, U], b=[E, N, E]))]
    assert isinstance(got[0].rater_a, int)
    assert mc.pairwise_cohens_kappa(unit=unit[::-1], verdict=verdict[::-1], rater=rater[::-1]) == got


def test_pairwise_cohens_kappa_without_shared_units_is_empty():
    assert mc.pairwise_cohens_kappa(unit=[1, 2], verdict=[E, N], rater=["a", "b"]) == []
    assert mc.pairwise_cohens_kappa(unit=[], verdict=[], rater=[]) == []


# ------------------------------------------------------------------------------------------
# agreement_summary: brute force, hand examples, properties


def brute_force_summary(unit, verdict):
    """The statistics straight from their definitions, with Python loops over units and pairs."""
    by_unit = {}
    for u, v in zip(unit, verdict):
        by_unit.setdefault(u, []).append(mc.VERDICTS.index(v))
    units = [vs for vs in by_unit.values() if len(vs) >= 2]
    if not units:
        return None
    q = 3
    # Share of agreeing ordered pairs of distinct ratings in each unit, then the mean (P-bar).
    per_unit = [sum(x == y for i, x in enumerate(vs) for j, y in enumerate(vs) if i != j) / (len(vs) * (len(vs) - 1)) for vs in units]
    p_a = sum(per_unit) / len(units)
    pi = [sum(vs.count(k) / len(vs) for vs in units) / len(units) for k in range(q)]
    pe_fleiss = sum(p * p for p in pi)
    pe_ac1 = sum(p * (1 - p) for p in pi) / (q - 1)
    # Krippendorff: the coincidence matrix o_ck = Σ_u Σ_{i≠j} [v_i = c][v_j = k] / (m_u − 1).
    o = [[0.0] * q for _ in range(q)]
    for vs in units:
        for i, x in enumerate(vs):
            for j, y in enumerate(vs):
                if i != j:
                    o[x][y] += 1 / (len(vs) - 1)
    n_c = [sum(row) for row in o]
    n = sum(n_c)
    disagree = sum(o[c][k] for c in range(q) for k in range(q) if c != k)
    expected_disagree = sum(n_c[c] * n_c[k] for c in range(q) for k in range(q) if c != k)
    alpha = 1 - (n - 1) * disagree / expected_disagree if expected_disagree else math.nan
    kappa = (p_a - pe_fleiss) / (1 - pe_fleiss) if pe_fleiss < 1 else math.nan
    return {
        "replicated_pairs": len(units),
        "verdicts": sum(len(vs) for vs in units),
        "unanimous_share": sum(len(set(vs)) == 1 for vs in units) / len(units),
        "observed_agreement": p_a,
        "fleiss_kappa": kappa,
        "krippendorff_alpha": alpha,
        "gwet_ac1": (p_a - pe_ac1) / (1 - pe_ac1),
        "unsure_share": sum(vs.count(2) for vs in units) / sum(len(vs) for vs in units),
    }


@pytest.mark.parametrize("seed", range(30))
def test_agreement_summary_matches_brute_force(seed):
    unit, verdict, rater = random_judgements(seed, n_units=int(np.random.default_rng(seed).integers(3, 40)))
    got = mc.agreement_summary(unit=unit, verdict=verdict, rater=rater).as_dict()
    want = brute_force_summary(unit, verdict)
    if want is None:
        assert got["replicated_pairs"] == 0
        return
    assert set(got) == set(want)
    for name, value in want.items():
        if isinstance(value, float) and math.isnan(value):
            assert got[name] is None, name
        else:
            assert got[name] == pytest.approx(value, rel=1e-12, abs=1e-14), name


def test_tiny_hand_example():
    # Pair 1: E E E (unanimous, P_1 = 1); pair 2: E N (P_2 = 0); pair 3: N N U (P_3 = 2/6);
    # pair 4: a single U, ignored. unanimous 1/3; P-bar = (1 + 0 + 1/3)/3 = 4/9; 1 unsure of 8.
    unit = [1, 1, 1, 2, 2, 3, 3, 3, 4]
    verdict = [E, E, E, E, N, N, N, U, U]
    s = mc.agreement_summary(unit=unit, verdict=verdict)
    assert (s.replicated_pairs, s.verdicts) == (3, 8)
    assert s.unanimous_share == pytest.approx(1 / 3, abs=1e-15)
    assert s.observed_agreement == pytest.approx(4 / 9, abs=1e-15)
    assert s.unsure_share == pytest.approx(1 / 8, abs=1e-15)
    # pi = ((1 + 1/2 + 0)/3, (0 + 1/2 + 2/3)/3, (1/3)/3) = (1/2, 7/18, 1/9)
    pe_fleiss = (1 / 2) ** 2 + (7 / 18) ** 2 + (1 / 9) ** 2
    assert s.fleiss_kappa == pytest.approx((4 / 9 - pe_fleiss) / (1 - pe_fleiss), rel=1e-14)


def test_perfect_agreement_is_one():
    unit = [1, 1, 2, 2, 2, 3, 3]
    verdict = [E, E, N, N, N, U, U]
    s = mc.agreement_summary(unit=unit, verdict=verdict)
    assert (s.fleiss_kappa, s.krippendorff_alpha, s.gwet_ac1) == (1.0, 1.0, 1.0)
    assert (s.unanimous_share, s.observed_agreement) == (1.0, 1.0)
    assert mc.cohens_kappa(a=[E, N, U], b=[E, N, U]) == 1.0


def test_a_single_category_leaves_kappa_and_alpha_undefined():
    # Chance agreement is 1 for kappa and alpha (0/0); AC1's chance term is 0 there, so AC1 = 1.
    s = mc.agreement_summary(unit=[1, 1, 2, 2], verdict=[E, E, E, E])
    assert math.isnan(s.fleiss_kappa) and math.isnan(s.krippendorff_alpha)
    assert s.gwet_ac1 == 1.0
    d = s.as_dict()
    assert d["fleiss_kappa"] is None and d["krippendorff_alpha"] is None and d["gwet_ac1"] == 1.0


def test_units_with_one_verdict_are_ignored():
    unit, verdict = [1, 1, 2, 2, 2, 3, 3], [E, N, N, N, U, E, E]
    base = mc.agreement_summary(unit=unit, verdict=verdict)
    more = mc.agreement_summary(unit=unit + [7, 8, 9], verdict=verdict + [U, U, E])
    assert more == base


def test_invariant_to_row_order_and_unit_labels():
    unit, verdict, rater = random_judgements(3, n_units=50)
    base = mc.agreement_summary(unit=unit, verdict=verdict, rater=rater)
    order = np.random.default_rng(0).permutation(len(unit))
    shuffled = mc.agreement_summary(
        unit=np.asarray(unit)[order], verdict=np.asarray(verdict)[order], rater=np.asarray(rater)[order]
    )
    relabelled = mc.agreement_summary(
        unit=[f"pair-{(u * 7919) % 10007}" for u in unit], verdict=verdict, rater=rater
    )
    for other in (shuffled, relabelled):
        for name, value in base.as_dict().items():
            assert other.as_dict()[name] == pytest.approx(value, rel=1e-13, abs=1e-15), name


def test_empty_and_unreplicated_inputs_are_valid():
    for unit, verdict in (([], []), ([1, 2, 3], [E, N, U])):
        s = mc.agreement_summary(unit=unit, verdict=verdict)
        assert (s.replicated_pairs, s.verdicts) == (0, 0)
        d = s.as_dict()
        assert {k: v for k, v in d.items() if v is not None} == {"replicated_pairs": 0, "verdicts": 0}
        json.dumps(d, allow_nan=False)


def test_as_dict_keys_are_the_stored_contract():
    d = mc.agreement_summary(unit=[1, 1], verdict=[E, N]).as_dict()
    assert list(d) == [
        "replicated_pairs",
        "verdicts",
        "unanimous_share",
        "observed_agreement",
        "fleiss_kappa",
        "krippendorff_alpha",
        "gwet_ac1",
        "unsure_share",
    ]
    json.dumps(d, allow_nan=False)


def test_accepts_codes_pandas_and_numpy_inputs():
    import pandas as pd

    want = mc.agreement_summary(unit=[5, 5, 6, 6], verdict=[E, N, U, U])
    assert mc.agreement_summary(unit=np.array([5, 5, 6, 6]), verdict=[0, 1, 2, 2]) == want
    assert mc.agreement_summary(unit=pd.Series([5, 5, 6, 6]), verdict=pd.Series([E, N, U, U])) == want


def test_validation_errors_name_the_argument_and_row():
    with pytest.raises(ValueError, match=r"verdict\[2\] = 'yes'"):
        mc.agreement_summary(unit=[1, 1, 2], verdict=[E, N, "yes"])
    with pytest.raises(ValueError, match="same length"):
        mc.agreement_summary(unit=[1, 1, 2], verdict=[E, N])
    with pytest.raises(ValueError, match=r"unit\[1\] is missing"):
        mc.agreement_summary(unit=[1, None, 2], verdict=[E, N, U])
    with pytest.raises(ValueError, match="rows 0 and 2 are two verdicts of the same rater"):
        mc.agreement_summary(unit=[1, 1, 1], verdict=[E, N, E], rater=["a", "b", "a"])
    with pytest.raises(ValueError, match="rows 1 and 3 are two verdicts of the same rater"):
        mc.pairwise_cohens_kappa(unit=[1, 2, 1, 2], verdict=[E, N, E, U], rater=[1, 1, 2, 1])
    with pytest.raises(ValueError, match="one-dimensional"):
        mc.agreement_summary(unit=[[1, 2]], verdict=[E])


def test_missing_labels_are_found_the_same_in_a_process_without_pandas():
    """The command line keeps pandas out of its process: None and NaN among Python objects are
    still missing there, named by their row (text is not)."""
    code = (
        "import importlib.abc, sys\n"
        "class NoPandas(importlib.abc.MetaPathFinder):  # as the command line's process\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'pandas':\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, NoPandas())\n"
        "import numpy as np, metrics_core as mc\n"
        "for unit in ([1, 'a', None], ['x', 0, float('nan')], ['u', 2.5, np.nan], ['a', 'b', 'a']):\n"
        "    try:\n"
        "        print(mc.agreement_summary(unit=np.array(unit, dtype=object), verdict=['equivalent'] * 3).replicated_pairs)\n"
        "    except ValueError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stderr == ""
    assert done.stdout.splitlines() == ["unit[2] is missing: every verdict needs a unit"] * 3 + ["1"]


def test_observed_agreement_core_ignores_single_rated_units():
    # The core P-bar on counts: unit 2 has one rating and does not enter the mean.
    assert observed_agreement([[2, 0, 0], [0, 1, 0], [1, 1, 0]]) == 0.5
    assert math.isnan(observed_agreement(np.zeros((0, 3))))
