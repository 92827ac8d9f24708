"""Each rater's agreement with the others (metrics_core.rater_agreement), against a brute-force
reading of its definitions on random replicated data, and on the edge cases."""

import math
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import metrics_core as mc

E, N, U = mc.VERDICTS


def brute_force(unit, verdict, rater):
    """The definitions, one rater and one unit at a time."""
    by_unit = {}
    for u, v, r in zip(unit, verdict, rater):
        by_unit.setdefault(u, {})[r] = v
    result = {}
    for r in sorted(set(rater)):
        mine = {u: votes[r] for u, votes in by_unit.items() if r in votes}
        replicated = sum(1 for u in mine if len(by_unit[u]) > 1)
        majority = matches = 0
        for u, v in mine.items():
            others = Counter(x for who, x in by_unit[u].items() if who != r)
            if others:
                top, count = others.most_common(1)[0]
                if 2 * count > sum(others.values()):
                    majority += 1
                    matches += top == v
        weighted = weight = defined = 0
        for other in sorted(set(rater) - {r}):
            shared = [u for u in mine if other in by_unit[u]]
            if not shared:
                continue
            a, b = [mine[u] for u in shared], [by_unit[u][other] for u in shared]
            if len(set(a) | set(b)) == 1:
                continue  # chance agreement 1: undefined
            with np.errstate(divide="ignore", invalid="ignore"):
                kappa = cohen_kappa_score(a, b, labels=list(mc.VERDICTS))
            if math.isnan(kappa):
                continue
            weighted, weight, defined = weighted + len(shared) * kappa, weight + len(shared), defined + 1
        result[r] = (
            replicated,
            weighted / weight if weight else math.nan,
            defined,
            majority,
            matches,
            matches / majority if majority else math.nan,
        )
    return result


@pytest.mark.parametrize("seed", range(20))
def test_rater_agreement_matches_its_definitions_on_random_data(seed):
    rng = np.random.default_rng(seed)
    raters = [f"r{k}" for k in range(rng.integers(2, 7))]
    unit, verdict, rater = [], [], []
    for u in range(rng.integers(1, 40)):
        k = int(rng.integers(1, len(raters) + 1))
        for r in rng.choice(raters, size=k, replace=False):
            unit.append(u)
            rater.append(str(r))
            verdict.append(str(rng.choice(mc.VERDICTS, p=[0.5, 0.4, 0.1])))
    got = {row.rater: tuple(row)[1:] for row in mc.rater_agreement(unit=unit, verdict=verdict, rater=rater)}
    expected = brute_force(unit, verdict, rater)
    assert set(got) == set(expected)
    for r, numbers in expected.items():
        assert got[r] == pytest.approx(numbers, nan_ok=True), r


def test_mean_kappa_is_weighted_by_shared_pairs_from_pairwise_cohens_kappa():
    unit = [1, 1, 2, 2, 3, 3, 4, 4, 4]
    verdict = [E, E, N, E, N, N, E, E, E]
    rater = ["a", "b", "a", "b", "a", "b", "a", "c", "b"]
    pairs = {(p.rater_a, p.rater_b): p for p in mc.pairwise_cohens_kappa(unit=unit, verdict=verdict, rater=rater)}
    rows = {row.rater: row for row in mc.rater_agreement(unit=unit, verdict=verdict, rater=rater)}
    ab, ac = pairs["a", "b"], pairs["a", "c"]
    assert math.isnan(ac.kappa)  # one shared pair: undefined, left out of the mean
    assert rows["a"].mean_kappa == pytest.approx(ab.kappa) and rows["a"].kappa_raters == 1
    bc = pairs["b", "c"]
    assert (bc.units, math.isnan(bc.kappa)) == (1, True)


def test_no_rows_and_no_replication():
    assert mc.rater_agreement(unit=[], verdict=[], rater=[]) == []
    (row,) = mc.rater_agreement(unit=[1, 2], verdict=[E, U], rater=["a", "a"])
    assert (row.replicated_verdicts, row.kappa_raters, row.majority_units, row.majority_matches) == (0, 0, 0, 0)
    assert math.isnan(row.mean_kappa) and math.isnan(row.majority_share)


def test_a_rater_with_two_verdicts_on_one_pair_is_an_error():
    with pytest.raises(ValueError, match="same rater on the same unit"):
        mc.rater_agreement(unit=[1, 1], verdict=[E, N], rater=["a", "a"])


def test_with_two_others_a_majority_needs_both():
    unit = [u for u in range(6) for _ in range(3)]
    rater = ["a", "b", "c"] * 6
    verdict = [E, E, E, N, N, E, E, N, N, N, N, N, U, U, E, E, E, N]
    rows = mc.rater_agreement(unit=unit, verdict=verdict, rater=rater)
    assert [row.kappa_raters for row in rows] == [2, 2, 2]
    assert sum(row.majority_units for row in rows) == sum(
        1
        for u in range(6)
        for r in range(3)
        if max(Counter(verdict[3 * u + o] for o in range(3) if o != r).values()) == 2
    )
