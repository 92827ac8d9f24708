"""What several metrics_core test modules share: the hand example of the estimates, the seeded
simulation populations with a known Ideal clustering and their verdicts, the populations small
enough to enumerate, and the brute-force truth of ΔRecall and IQ. Helpers live here, never in a
test module (``tests/test_test_imports.py``)."""

import math

import numpy as np

import metrics_core as mc
from tests.metrics_core import reference as ref

# The hand population of test_impact_reference / test_gold:
#   a=0 b=1 c=2 d=3 e=4, weights 1 1 2 4 8 (W = 16), Base {a,b,c}{d}{e}, Exp {a,b}{c,d}{e}.
#   SplitDistance(T) = 3/32, MergeDistance(T) = 7/48, AffectedJaccardIndex(T) = 25/96,
#   SplitRate(T) = 1/8, MergeRate(T) = 1/6; Σ w_ij over AllPairs = 3/32 + 25/96 + 7/48 = 1/2.
HAND_BASE = ["B1", "B1", "B1", "B2", "B3"]
HAND_EXP = ["E1", "E1", "E2", "E2", "E3"]
HAND_WEIGHTS = [1.0, 1.0, 2.0, 4.0, 8.0]
a, b, c, d = 0, 1, 2, 3

# Verdicts (raters may show a pair either way round):
#   {a,c}: equivalent + not_equivalent (two raters)     → value 1/2
#   {b,c}: unsure                                        → unjudged
#   {c,d}: equivalent                                    → value 1
#   {a,b}: not_equivalent, not_equivalent, unsure        → value 0 (unsure verdicts do not count)
HAND_VERDICTS = [
    (a, c, "equivalent"),
    (c, a, "not_equivalent"),
    (b, c, "unsure"),
    (d, c, "equivalent"),
    (a, b, "not_equivalent"),
    (b, a, "not_equivalent"),
    (a, b, "unsure"),
]


def hand_population():
    return mc.population_from_labels(HAND_BASE, HAND_EXP, HAND_WEIGHTS)


def verdicts_of(rows):
    i, j, v = zip(*rows)
    return mc.verdicts_from_judgements(np.array(i), np.array(j), np.array(v))


def estimates_of(pop, scheme, rows, verdict_rows, **kw):
    i, j, draws = (np.array(x) for x in zip(*rows))
    sample = mc.PairSample.from_columns(pop, scheme=scheme, i=i, j=j, draws=draws)
    return mc.estimate_quality(pop, sample, verdicts_of(verdict_rows), **kw).estimates


HAND_JACCARD_ROWS = [
    (a, c, 5), (c, a, 3), (b, c, 1), (c, b, 1),
    (c, d, 3), (d, c, 1),
    (a, a, 2), (d, d, 3),
    (a, b, 2), (b, a, 2),
]  # fmt: skip


# ---- simulated verdicts and populations with a known Ideal clustering ----------------------


def class_of_pairs(pop_base, pop_exp, x, y):
    """Class names of unordered pairs from cluster codes (symmetric; x != y)."""
    same_b, same_e = pop_base[x] == pop_base[y], pop_exp[x] == pop_exp[y]
    return np.where(same_b & same_e, "intersection", np.where(same_b, "split", "merge"))


def random_verdict_rows(
    rng, pop, gold, x, y, *, unsure_rate, replicate_rate=0.2, extra_unsure_rate=0.05, consistent=True
):
    """Judgement rows for the unordered pairs ``(x, y)``.

    Equivalent iff same gold label. A pair is unsure for all its raters with the class's rate;
    a share of pairs gets 2-3 raters (consistent verdicts unless ``consistent`` is False), and a
    few judged pairs also get one extra unsure verdict. Rows are shown in a random orientation.
    """
    x, y = np.asarray(x), np.asarray(y)
    cls = class_of_pairs(pop.base, pop.exp, x, y)
    rate = np.vectorize(unsure_rate.get)(cls) if len(cls) else np.zeros(0)
    unsure = rng.random(len(x)) < rate
    eq = np.asarray(gold)[x] == np.asarray(gold)[y]
    raters = 1 + (rng.random(len(x)) < replicate_rate) * (1 + (rng.random(len(x)) < 0.5))
    idx = np.repeat(np.arange(len(x)), raters)
    verdict = np.where(unsure[idx], "unsure", np.where(eq[idx], "equivalent", "not_equivalent")).astype(object)
    if not consistent:
        flip = (~unsure[idx]) & (rng.random(len(idx)) < 0.2)
        verdict[flip] = np.where(eq[idx][flip], "not_equivalent", "equivalent")
    extra = np.flatnonzero((~unsure) & (rng.random(len(x)) < extra_unsure_rate))
    idx = np.concatenate([idx, extra])
    verdict = np.concatenate([verdict, np.full(len(extra), "unsure", dtype=object)])
    swap = rng.random(len(idx)) < 0.5
    i = np.where(swap, y[idx], x[idx])
    j = np.where(swap, x[idx], y[idx])
    return i, j, verdict


UNSURE_RATE = {"split": 0.05, "merge": 0.30, "intersection": 0.10}


def simulation_population(seed=2024, n_items=300):
    """~300 items; Base and Exp derived from a known Ideal clustering.

    Base = Ideal with errors: some Ideal clusters split in two (under-merged), some pairs of
    Ideal clusters merged (over-merged). Exp = Base with changes: some of Base's split-up
    clusters merged back (good merges) and some unrelated clusters merged (bad merges); some
    over-merged clusters split along Ideal lines (good splits) and some pure clusters split at
    random (bad splits).
    """
    rng = np.random.default_rng(seed)
    sizes = []
    while sum(sizes) < n_items:
        sizes.append(int(min(1 + rng.geometric(0.12), 40)))
    ideal = np.repeat(np.arange(len(sizes)), sizes)
    n = len(ideal)
    k = len(sizes)
    base = ideal.copy()
    next_label = k
    multi = [cl for cl in range(k) if sizes[cl] >= 2]
    split_in_base = rng.choice(multi, size=len(multi) // 3, replace=False)
    halves = {}
    for cl in split_in_base:
        members = np.flatnonzero(ideal == cl)
        moved = members[rng.permutation(len(members))[: max(1, len(members) // 3)]]
        base[moved] = next_label
        halves[int(cl)] = next_label
        next_label += 1
    untouched = [cl for cl in range(k) if cl not in halves]
    order = rng.permutation(untouched)
    over_merged = []
    for x, y in zip(order[:12:2], order[1:12:2]):
        base[base == y] = x
        over_merged.append((int(x), int(y)))
    exp = base.copy()
    # Good merges: re-join half of the Base splits.
    for cl in list(halves)[: len(halves) // 2]:
        exp[base == halves[cl]] = cl
    # Good splits: undo half of the over-merges along Ideal lines.
    for _x, y in over_merged[: len(over_merged) // 2]:
        exp[ideal == y] = next_label
        next_label += 1
    # Bad merges: merge pairs of clusters of different Ideal clusters.
    pure = [int(cl) for cl in order[12:]]
    for x, y in zip(pure[:8:2], pure[1:8:2]):
        exp[base == y] = x
    # ... and merge the over-merged clusters that stay over-merged with another cluster, so that
    # affected items also have non-equivalent stable pairs (AffectedBadIndex > 0).
    for (x, _), other in zip(over_merged[len(over_merged) // 2 :], pure[8:]):
        exp[base == other] = x
    # Bad splits: split pure clusters at random.
    for cl in [cl for cl in order[20:] if sizes[cl] >= 4][:4]:
        members = np.flatnonzero(base == cl)
        exp[members[rng.random(len(members)) < 0.4]] = next_label
        next_label += 1
    weights = rng.lognormal(0.0, 0.5, n)
    return mc.population_from_labels(base, exp, weights), ideal


def random_change(rng, n_items=400):
    """Ideal, a Base with errors (split and over-merged Ideal clusters) and an Exp that changes Base.

    The change mixes random numbers of good merges (re-joining Base's split fragments), bad
    merges (joining unrelated clusters), good splits (undoing over-merges along Ideal lines)
    and bad splits (random parts of clusters), so that changes are recall-positive,
    recall-negative and about neutral. Half the populations have lognormal weights.
    """
    sizes = []
    while sum(sizes) < n_items:
        sizes.append(int(min(1 + rng.geometric(rng.uniform(0.1, 0.4)), 30)))
    ideal = np.repeat(np.arange(len(sizes)), sizes)
    base, next_label = ideal.copy(), len(sizes)
    fragments = []
    multi = [c for c in range(len(sizes)) if sizes[c] >= 2]
    for c in rng.choice(multi, size=int(len(multi) * rng.uniform(0.1, 0.5)), replace=False):
        members = np.flatnonzero(ideal == c)
        moved = members[rng.random(len(members)) < rng.uniform(0.2, 0.5)]
        if 0 < len(moved) < len(members):
            base[moved] = next_label
            fragments.append((int(c), next_label))
            next_label += 1
    labels = rng.permutation(np.unique(base))
    over = []
    for x, y in zip(labels[: 2 * int(len(labels) * rng.uniform(0.0, 0.15)) : 2], labels[1::2]):
        over.append(base == y)
        base[base == y] = x
    exp = base.copy()
    good_merges, bad_merges, good_splits, bad_splits = rng.integers(0, 12, size=4)
    for c, fragment in fragments[:good_merges]:
        exp[base == fragment] = exp[np.flatnonzero(ideal == c)[0]]
    pool = rng.permutation(np.unique(base))
    for x, y in zip(pool[: 2 * bad_merges : 2], pool[1 : 2 * bad_merges : 2]):
        exp[base == y] = exp[np.flatnonzero(base == x)[0]]
    for mask in over[:good_splits]:
        exp[mask] = next_label
        next_label += 1
    for c in rng.permutation(np.unique(base))[:bad_splits]:
        members = np.flatnonzero(base == c)
        moved = members[rng.random(len(members)) < rng.uniform(0.2, 0.6)]
        if 0 < len(moved) < len(members):
            exp[moved] = next_label
            next_label += 1
    weights = rng.lognormal(0.0, 0.5, len(ideal)) if rng.random() < 0.5 else np.ones(len(ideal))
    return base, exp, ideal, weights


def brute_force_truth(base, exp, ideal, w):
    """True ΔRecall(T) and IQ from N×N same-cluster matrices, and the true parameters of MQM §3.

    Recall_C(i) = weight(C(i) ∩ Ideal(i)) / weight(Ideal(i)) (MQM eq 2), lifted as a weighted
    mean; IQ = (JD(Base, Ideal) − JD(Exp, Ideal)) / JD(Base, Exp) (eqs 68-77). Also the true
    Recall_Base(AffectedItems) and Precision_Base(AffectedItems).
    """
    same = lambda labels: labels[:, None] == labels[None, :]  # noqa: E731
    b, e, i = same(base), same(exp), same(ideal)
    mean = lambda values, where=slice(None): float(np.dot(w[where], values[where]) / w[where].sum())  # noqa: E731
    recall = lambda c: ((c & i) @ w) / (i @ w)  # noqa: E731
    jaccard_distance = lambda c, d: 1.0 - ((c & d) @ w) / ((c | d) @ w)  # noqa: E731
    affected = ~(b == e).all(axis=1)
    delta_recall = mean(recall(e)) - mean(recall(b))
    iq = (mean(jaccard_distance(b, i)) - mean(jaccard_distance(e, i))) / mean(jaccard_distance(b, e))
    recall_base = mean(recall(b), affected)
    precision_base = mean(((b & i) @ w) / (b @ w), affected)
    return delta_recall, iq, min(recall_base, 1.0), min(precision_base, 1.0)


# ---- populations small enough to enumerate every ordered pair ------------------------------

N_DRAWS = 200_000
P_MIN = 0.001


def enumerable_populations():
    """``{name: (base, exp, weights)}``: small populations with every kind of pair."""
    rng = np.random.default_rng(20240917)
    pops = {
        # Base {0,1,2,3}{4,5}{6}; Exp {0,1}{2,3,4}{5}{6}: splits, merges, intersections, an
        # unaffected item.
        "mixed": (
            [0, 0, 0, 0, 1, 1, 2],
            [0, 0, 1, 1, 1, 2, 3],
            rng.uniform(0.5, 2.0, 7),
        ),
        # Item 0: weight(Base(0)) = weight({0,1}) = 3 = weight({0,2}) = weight(Exp(0)), so its
        # self pair has u = 0 and must never be drawn by the precision scheme. Items 3-5 add a
        # split of a three-item cluster.
        "precision_zero": (
            ["x", "x", "y", "z", "z", "z"],
            ["p", "q", "p", "r", "r", "s"],
            [1.0, 2.0, 2.0, 1.0, 1.5, 0.7],
        ),
    }
    # A random one, redrawn until its affected items see at least three different unions
    # Base(i) ∪ Exp(i) (otherwise 1/weight(U) would not be tested).
    while True:
        base = ref.perturb(rng, ref.random_labels(rng, 11, 4), 4)
        exp = ref.perturb(rng, base, 4)
        rp = ref.RefPopulation(base.tolist(), exp.tolist())
        if len({rp.U(i) for i in rp.affected_items}) >= 3:
            break
    pops["random"] = (base.tolist(), exp.tolist(), rng.uniform(0.5, 2.0, 11))
    return pops


POPULATIONS = enumerable_populations()


# ---- planning --------------------------------------------------------------------------------


def judge(sample, gold):
    a, b = mc.pairs_for_judgement(sample, rng=np.random.default_rng(0))
    return len(a), mc.verdicts_from_judgements(a, b, np.where(gold[a] == gold[b], "equivalent", "not_equivalent"))


def drawn_once(sample):
    """Non-self unordered pairs drawn exactly once (Good–Turing: n / this = draws per new pair)."""
    keep = sample.pair_class != mc.PAIR_CLASSES.index("self")
    low, high = np.minimum(sample.i[keep], sample.j[keep]), np.maximum(sample.i[keep], sample.j[keep])
    _, pair = np.unique(low * (sample.i.max() + 1) + high, return_inverse=True)
    return int((np.bincount(pair, weights=sample.draws[keep]) == 1).sum())


# ---- the tiny example of the command-line tests (tests/metrics_core/test_cli.py) -------------

# Ideal {a,b},{c,d}: every split pair is a good split, every merge pair a good merge.
TINY_JUDGEMENTS = "i,j,verdict\na,b,equivalent\nc,a,not_equivalent\nb,c,not_equivalent\nd,c,equivalent\n"


def binomial_floor(n: int, p: float, alpha: float = 0.001) -> int:
    """The largest k with P(Binomial(n, p) < k) ≤ alpha: fewer successes than k reject "rate ≥ p"."""
    cdf, k = 0.0, 0
    while cdf + math.comb(n, k) * p**k * (1 - p) ** (n - k) <= alpha:
        cdf += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        k += 1
    return k
