"""Ground-truth measures (``metrics_core.external``): published examples, brute force, constraints.

1. Every measure against the values its peers publish on their own examples (each test cites
   its source).
2. Every measure against a brute-force transcription of its definition on random small inputs
   (explicit loops over items, pairs and maps), and the unweighted ones against scikit-learn
   and scipy.
3. The formal constraints of Amigo et al. (2009) for BCubed, as property tests.
4. Undefined is None; the exact reductions of the cluster matching against scipy.

Papers: ``shared/papers/external-cluster-validity-measures.md`` (the external-validity chapter),
``shared/papers/clustering-quality-bcubed-ecc-article.txt`` (the ECC article),
``shared/papers/bcubed-formal-constraints-amigo2009.md`` (Amigo et al.).
"""

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment
from sklearn import metrics as skm

import metrics_core as mc
from metrics_core.external import assignment
from metrics_core.external.assignment import max_matching_total

M = mc.external_measures


def close(value, rel=1e-12):
    return pytest.approx(value, rel=rel, abs=1e-12)


def labels_from_confusion(matrix):
    """Truth and predicted labels whose confusion matrix (rows truth, columns prediction) is ``matrix``."""
    truth, pred = [], []
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            truth += [i] * count
            pred += [j] * count
    return truth, pred


# ------------------------------------------------------------------------------------------
# 1. Published examples


# The ECC article, §3 "Expected Cluster Completeness" example, and the README of yandex
# cluster_metrics (https://github.com/yandex/cluster_metrics), whose sample files encode it:
# truth t1={a,b,c,d,e}, t2={f,g,h,i}; clusters c1={a,b,c,d,g}, c2={e,f,h,i}.
ECC_TRUTH = list("111112222")
ECC_PRED = list("111122122")


def test_ecc_article_example_category_averaged_bcubed_and_ecc():
    # Published: "ECC 0.61250  BCP 0.65125  BCR 0.65250  BCF1 0.65187" (5 decimals).
    m = M(ECC_TRUTH, ECC_PRED)
    assert m["ExpectedClusterCompleteness"] == close(0.6125)
    assert m["BCubedPrecisionByCategory"] == close(0.65125)
    assert m["BCubedRecallByCategory"] == close(0.6525)
    assert round(m["BCubedF1ByCategory"], 5) == 0.65187


def test_ecc_article_example_per_category_values():
    # The article's intermediate values: BCP(t1) = 0.69, BCP(t2) = 0.6125, BCR(t1) = 0.68,
    # BCR(t2) = 0.625 (the means over each category's items), and ECC(t1) = 0.65. ECC(t1)
    # depends only on t1's cells and the cluster sizes, so with t2 broken into unary categories
    # (each u scoring R·P = 1/|c(u)|: g in c1 of 5 items, f, h, i in c2 of 4) the mean over the
    # five categories is (0.65 + 1/5 + 3/4) / 5.
    per_item = mc.external_per_item(ECC_TRUTH, ECC_PRED)
    t1 = np.array(ECC_TRUTH) == "1"
    assert per_item["Precision"][t1].mean() == close(0.69)
    assert per_item["Precision"][~t1].mean() == close(0.6125)
    assert per_item["Recall"][t1].mean() == close(0.68)
    assert per_item["Recall"][~t1].mean() == close(0.625)
    t1_only = [x if x == "1" else f"u{k}" for k, x in enumerate(ECC_TRUTH)]
    assert M(t1_only, ECC_PRED)["ExpectedClusterCompleteness"] == close((0.65 + 1 / 5 + 3 / 4) / 5)


def test_ecc_article_pairwise_example():
    # The ECC article, §2.1: 8 items in categories of 3, 3 and 2; over the 64 ordered pairs
    # (self pairs included) TP = 18, FP = 6, FN = 4, TN = 36, so P = 0.75, R = 0.82, F1 = 0.78.
    # A clustering with these counts: clusters of 4, 2 and 2 items (Σ size² = 24 = TP + FP) and
    # cells of 2, 1, 3 and 2 items (Σ cell² = 18 = TP).
    truth = ["A", "A", "A", "B", "B", "B", "C", "C"]
    pred = [2, 2, 1, 1, 1, 1, 3, 3]
    m = M(truth, pred)
    # Ours counts unordered pairs of distinct items: same cluster in the prediction 6 + 1 + 1 = 8,
    # in the truth 3 + 3 + 1 = 7.
    same_pred, same_truth, n = 8, 7, 8
    same_both = m["PairwisePrecision"] * same_pred
    assert same_both == close(5)
    assert m["PairwiseRecall"] == close(5 / 7)
    tp, fp, fn = 2 * same_both + n, 2 * (same_pred - same_both), 2 * (same_truth - same_both)
    assert (tp, fp, fn) == (close(18), close(6), close(4))
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert (round(precision, 2), round(recall, 2), round(2 * precision * recall / (precision + recall), 2)) == (
        0.75,
        0.82,
        0.78,
    )


# scikit-learn docstrings (scikit-learn 1.9, e.g.
# https://scikit-learn.org/stable/modules/generated/sklearn.metrics.adjusted_rand_score.html,
# .../sklearn.metrics.rand_score.html, .../sklearn.metrics.fowlkes_mallows_score.html,
# .../sklearn.metrics.normalized_mutual_info_score.html). Values as printed there.
SKLEARN_DOCSTRINGS = [
    ("AdjustedRandIndex", [0, 0, 1, 1], [0, 0, 1, 1], 1.0),
    ("AdjustedRandIndex", [0, 0, 1, 1], [1, 1, 0, 0], 1.0),
    ("AdjustedRandIndex", [0, 0, 1, 2], [0, 0, 1, 1], 0.57),
    ("AdjustedRandIndex", [0, 0, 1, 1], [0, 0, 1, 2], 0.57),
    ("AdjustedRandIndex", [0, 0, 0, 0], [0, 1, 2, 3], 0.0),
    ("AdjustedRandIndex", [0, 0, 1, 1], [0, 1, 0, 1], -0.5),
    ("RandIndex", [0, 0, 1, 1], [1, 1, 0, 0], 1.0),
    ("RandIndex", [0, 0, 1, 2], [0, 0, 1, 1], 0.83),
    ("FowlkesMallows", [0, 0, 1, 1], [0, 0, 1, 1], 1.0),
    ("FowlkesMallows", [0, 0, 1, 1], [1, 1, 0, 0], 1.0),
    ("FowlkesMallows", [0, 0, 0, 0], [0, 1, 2, 3], 0.0),
    ("NMI", [0, 0, 1, 1], [0, 0, 1, 1], 1.0),
    ("NMI", [0, 0, 1, 1], [1, 1, 0, 0], 1.0),
    ("NMI", [0, 0, 0, 0], [0, 1, 2, 3], 0.0),
]


@pytest.mark.parametrize(("name", "truth", "pred", "published"), SKLEARN_DOCSTRINGS)
def test_sklearn_docstring_examples(name, truth, pred, published):
    assert round(M(truth, pred)[name], 2) == published


@pytest.mark.parametrize(
    ("truth", "pred", "matrix"),
    [
        # sklearn.metrics.cluster.pair_confusion_matrix docstring: [[C00, C01], [C10, C11]] over
        # ordered pairs of distinct items (C11 true positives, C01 false positives, C10 false negatives).
        ([0, 0, 1, 1], [1, 1, 0, 0], [[8, 0], [0, 4]]),
        ([0, 0, 1, 2], [0, 0, 1, 1], [[8, 2], [0, 2]]),
    ],
)
def test_sklearn_pair_confusion_matrix_examples(truth, pred, matrix):
    (c00, c01), (c10, c11) = matrix
    m = M(truth, pred)
    assert m["PairwisePrecision"] == close(c11 / (c11 + c01))
    assert m["PairwiseRecall"] == close(c11 / (c11 + c10))
    assert m["RandIndex"] == close((c00 + c11) / (c00 + c01 + c10 + c11))


def test_sklearn_user_guide_adjusted_rand_examples():
    # https://scikit-learn.org/stable/modules/clustering.html#adjusted-rand-index:
    # 0.24... for these labels, the same after renaming, symmetric; -0.12... for the last pair
    # (doctest ELLIPSIS: the printed value starts with these digits).
    truth, pred = [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]
    assert repr(M(truth, pred)["AdjustedRandIndex"]).startswith("0.24")
    assert M(truth, [1, 1, 0, 0, 3, 3])["AdjustedRandIndex"] == close(M(truth, pred)["AdjustedRandIndex"])
    assert M(pred, truth)["AdjustedRandIndex"] == close(M(truth, pred)["AdjustedRandIndex"])
    assert M(truth, truth)["AdjustedRandIndex"] == 1.0
    assert repr(M([0, 1, 2, 0, 3, 4, 5, 1], [1, 1, 0, 0, 2, 2, 2, 2])["AdjustedRandIndex"]).startswith("-0.12")


# genieclust, genieclust/compare_partitions.pyx, docstring of compare_partitions
# (https://genieclust.gagolewski.com/, https://github.com/gagolews/genieclust):
# C = [[1, 10], [8, 2]] and, rounded to 2 decimals,
# {'ar': 0.49, 'r': 0.74, 'fm': 0.73, 'nmi': 0.41, 'npa': 0.71, 'nca': 0.71}.
GENIECLUST_X = [1, 1, 2, 1, 2, 2, 2, 2, 1, 1, 2, 1, 1, 1, 1, 2, 2, 1, 2, 1, 2]
GENIECLUST_Y = [2, 2, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 1]


def test_genieclust_compare_partitions_example():
    m = M(GENIECLUST_X, GENIECLUST_Y)
    published = {
        "AdjustedRandIndex": 0.49,
        "RandIndex": 0.74,
        "FowlkesMallows": 0.73,
        "NMI": 0.41,
        "NormalizedPivotedAccuracy": 0.71,
        "NormalizedClusteringAccuracy": 0.71,
    }
    assert {name: round(m[name], 2) for name in published} == published
    assert m["PivotedAccuracy"] == close(18 / 21)  # the pivots 10 and 8


def test_genieclust_normalizing_permutation_example():
    # genieclust normalizing_permutation docstring: for these x, y the confusion matrix is
    # [[1, 0, 4], [0, 6, 2], [0, 0, 1]] and the optimal column order is [2, 1, 0],
    # so the pivots are 4, 6 and 0 of 14 items.
    x = [1, 2, 1, 2, 2, 2, 3, 1, 2, 1, 2, 1, 2, 2]
    y = [3, 3, 3, 3, 2, 2, 3, 1, 2, 3, 2, 3, 2, 2]
    m = M(x, y)
    assert m["PivotedAccuracy"] == close(10 / 14)
    assert m["NormalizedPivotedAccuracy"] == close((3 * 10 / 14 - 1) / 2)


def test_external_validity_chapter_normalizing_permutation_note():
    # The external-validity chapter, note under "Normalised Clustering Accuracy": the row-
    # normalised matrix of C = [[12, 37, 1], [40, 0, 0], [0, 0, 30]] is best matched by the
    # columns (2, 1, 3): pivots 0.74, 1 and 1, so NCA = (0.74 + 1 + 1 − 1)/(3 − 1).
    truth, pred = labels_from_confusion([[12, 37, 1], [40, 0, 0], [0, 0, 30]])
    m = M(truth, pred)
    assert m["NormalizedClusteringAccuracy"] == close((37 / 50 + 1) / 2)
    assert m["PivotedAccuracy"] == close((37 + 40 + 30) / 120)


# Amigo et al. 2009, §4.5: the decreases of BCubed precision (rag bag) and recall (size vs
# quantity) in closed form, N_tot the number of items.
@pytest.mark.parametrize("n", [2, 3, 7])
def test_amigo_rag_bag_decreases_in_closed_form(n):
    clean = [("L", "clean")] * n
    noisy = [(f"u{k}", "noisy") for k in range(n)]
    base = clean + noisy + [("new", "alone")]
    in_clean = clean + noisy + [("new", "clean")]
    in_noisy = clean + noisy + [("new", "noisy")]
    total = len(base)

    def precision(items):
        truth, pred = zip(*items)
        return M(list(truth), list(pred))["BCubedPrecision"]

    assert precision(base) - precision(in_clean) == close(2 * n / (n + 1) / total)
    assert precision(base) - precision(in_noisy) == close(1 / total)


@pytest.mark.parametrize("n", [3, 4, 9])
def test_amigo_size_versus_quantity_decreases_in_closed_form(n):
    big = [("L", "big")] * (n + 1)
    pairs = [(f"L{k}", f"pair{k}") for k in range(n) for _ in range(2)]
    d = big + pairs
    fragmented = big + [(f"L{k}", f"half{k}-{h}") for k in range(n) for h in range(2)]
    one_out = [("L", "big")] * n + [("L", "out")] + pairs
    total = len(d)

    def recall(items):
        truth, pred = zip(*items)
        return M(list(truth), list(pred))["BCubedRecall"]

    assert recall(d) - recall(fragmented) == close(n / total)
    assert recall(d) - recall(one_out) == close(2 * n / (n + 1) / total)


# ------------------------------------------------------------------------------------------
# 2. Brute force on random inputs


def brute_force(truth, pred, weights):
    """Every measure from its definition, by explicit loops (slow; small inputs only)."""
    n = len(truth)
    w = list(weights)
    total = math.fsum(w)
    cats, clus = sorted(set(truth)), sorted(set(pred))

    def weight_of(members):
        return math.fsum(w[d] for d in members)

    cat = {t: [d for d in range(n) if truth[d] == t] for t in cats}
    clu = {c: [d for d in range(n) if pred[d] == c] for c in clus}
    both = {(t, c): [d for d in cat[t] if pred[d] == c] for t in cats for c in clus}
    prec = [weight_of(both[truth[d], pred[d]]) / weight_of(clu[pred[d]]) for d in range(n)]
    rec = [weight_of(both[truth[d], pred[d]]) / weight_of(cat[truth[d]]) for d in range(n)]
    out = {}
    out["BCubedPrecision"] = math.fsum(w[d] * prec[d] for d in range(n)) / total
    out["BCubedRecall"] = math.fsum(w[d] * rec[d] for d in range(n)) / total
    p_by = [math.fsum(w[d] * prec[d] for d in cat[t]) / weight_of(cat[t]) for t in cats]
    r_by = [math.fsum(w[d] * rec[d] for d in cat[t]) / weight_of(cat[t]) for t in cats]
    out["BCubedPrecisionByCategory"] = math.fsum(p_by) / len(cats)
    out["BCubedRecallByCategory"] = math.fsum(r_by) / len(cats)
    for suffix in ("", "ByCategory"):
        p, r = out[f"BCubedPrecision{suffix}"], out[f"BCubedRecall{suffix}"]
        out[f"BCubedF1{suffix}"] = 2 * p * r / (p + r)

    # ECC by its definition: the expectation over every map f: clusters -> categories.
    def p_of(c, t):
        return weight_of(both[t, c]) / weight_of(clu[c])

    def r_of(c, t):
        return weight_of(both[t, c]) / weight_of(cat[t])

    ecc = 0.0
    for f in itertools.product(cats, repeat=len(clus)):
        probability = math.prod(p_of(c, t) for c, t in zip(clus, f))
        if probability:
            cc = [max([r_of(c, t) for c, ft in zip(clus, f) if ft == t], default=0.0) for t in cats]
            ecc += probability * math.fsum(cc) / len(cats)
    out["ExpectedClusterCompleteness"] = ecc

    out["Purity"] = math.fsum(max(weight_of(both[t, c]) for t in cats) for c in clus) / total
    out["InversePurity"] = math.fsum(max(weight_of(both[t, c]) for c in clus) for t in cats) / total

    def f_of(t, c):
        p, r = p_of(c, t), r_of(c, t)
        return 2 * p * r / (p + r) if p + r else 0.0

    out["FMeasure"] = math.fsum(weight_of(cat[t]) / total * max(f_of(t, c) for c in clus) for t in cats)

    pairs = [(d, e) for d in range(n) for e in range(d + 1, n)]
    mass = {"both": 0.0, "truth": 0.0, "pred": 0.0, "all": 0.0}
    for d, e in pairs:
        pw = w[d] * w[e]
        same_t, same_c = truth[d] == truth[e], pred[d] == pred[e]
        mass["all"] += pw
        mass["truth"] += pw * same_t
        mass["pred"] += pw * same_c
        mass["both"] += pw * (same_t and same_c)
    mass["agree"] = math.fsum(
        w[d] * w[e] for d, e in pairs if (truth[d] == truth[e]) == (pred[d] == pred[e])
    )
    has_t = any(truth[d] == truth[e] for d, e in pairs)
    has_c = any(pred[d] == pred[e] for d, e in pairs)
    out["PairwisePrecision"] = mass["both"] / mass["pred"] if has_c else None
    out["PairwiseRecall"] = mass["both"] / mass["truth"] if has_t else None
    out["PairwiseF1"] = 2 * mass["both"] / (mass["truth"] + mass["pred"]) if has_t or has_c else None
    out["RandIndex"] = mass["agree"] / mass["all"] if pairs else None
    if has_t and has_c:
        out["FowlkesMallows"] = mass["both"] / math.sqrt(mass["truth"] * mass["pred"])
    else:
        out["FowlkesMallows"] = 0.0 if has_t or has_c else None

    p_joint = {k: weight_of(v) / total for k, v in both.items() if v}
    p_t = {t: weight_of(cat[t]) / total for t in cats}
    p_c = {c: weight_of(clu[c]) / total for c in clus}
    mi = math.fsum(p * math.log(p / (p_t[t] * p_c[c])) for (t, c), p in p_joint.items())
    h = math.fsum(-p * math.log(p) for p in p_t.values()) + math.fsum(-p * math.log(p) for p in p_c.values())
    out["NMI"] = None if len(cats) == len(clus) == 1 else mi / (h / 2)

    k = len(cats)
    out.update(PivotedAccuracy=None, NormalizedPivotedAccuracy=None, NormalizedClusteringAccuracy=None)
    if len(clus) == k:
        best = max(math.fsum(weight_of(both[t, c]) for t, c in zip(cats, perm)) for perm in itertools.permutations(clus))
        best_share = max(
            math.fsum(weight_of(both[t, c]) / weight_of(cat[t]) for t, c in zip(cats, perm))
            for perm in itertools.permutations(clus)
        )
        out["PivotedAccuracy"] = best / total
        if k > 1:
            out["NormalizedPivotedAccuracy"] = (best / total * k - 1) / (k - 1)
            out["NormalizedClusteringAccuracy"] = (best_share - 1) / (k - 1)
    return out


def adjusted_rand_by_pairs(truth, pred):
    """Hubert and Arabie's ARI from the pair counts (unweighted), None for 0/0."""
    pairs = list(itertools.combinations(range(len(truth)), 2))
    both = sum(truth[a] == truth[b] and pred[a] == pred[b] for a, b in pairs)
    same_t = sum(truth[a] == truth[b] for a, b in pairs)
    same_c = sum(pred[a] == pred[b] for a, b in pairs)
    expected = same_t * same_c / len(pairs) if pairs else 0
    top = (same_t + same_c) / 2
    return None if top == expected else (both - expected) / (top - expected)


def assert_measures_equal(got, want, names=mc.EXTERNAL_MEASURES, rel=1e-9):
    for name in names:
        if want[name] is None:
            assert got[name] is None, name
        else:
            assert got[name] == pytest.approx(want[name], rel=rel, abs=1e-12), name


small_case = st.integers(1, 9).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.0, 0.25]), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_case, st.booleans())
def test_every_measure_matches_its_definition(case, weighted):
    truth, pred, weights = case
    if not weighted:
        weights = [1.0] * len(truth)
    got = M(truth, pred, weights=weights if weighted else None)
    want = brute_force(truth, pred, weights)
    want["AdjustedRandIndex"] = adjusted_rand_by_pairs(truth, pred)  # ignores weights
    assert list(got) == list(mc.EXTERNAL_MEASURES)
    assert_measures_equal(got, want)


@settings(max_examples=300, deadline=None)
@given(small_case)
def test_unweighted_measures_match_scikit_learn(case):
    truth, pred, _ = case
    got = M(truth, pred)
    one_each = len(set(truth)) == len(set(pred)) == 1
    all_singletons = len(set(truth)) == len(set(pred)) == len(truth)
    # scikit-learn returns 1.0 for the 0/0 cases, which are None here (see the module docstring).
    if one_each or all_singletons:
        assert got["AdjustedRandIndex"] is None
    else:
        assert got["AdjustedRandIndex"] == pytest.approx(skm.adjusted_rand_score(truth, pred), abs=1e-12)
    if len(truth) > 1:
        assert got["RandIndex"] == pytest.approx(skm.rand_score(truth, pred), abs=1e-12)
    if got["FowlkesMallows"] is not None:
        assert got["FowlkesMallows"] == pytest.approx(skm.fowlkes_mallows_score(truth, pred), abs=1e-12)
    if one_each:
        assert got["NMI"] is None
    else:
        assert got["NMI"] == pytest.approx(skm.normalized_mutual_info_score(truth, pred), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(small_case)
def test_integer_weights_count_as_copies_for_item_based_measures(case):
    # Weight k is k copies of the item for everything that averages over items (pair measures
    # differ: copies of one item would form pairs among themselves).
    truth, pred, weights = case
    counts = [int(4 * x) for x in weights]
    copies_t = [t for t, k in zip(truth, counts) for _ in range(k)]
    copies_p = [p for p, k in zip(pred, counts) for _ in range(k)]
    item_based = [
        "BCubedPrecision", "BCubedRecall", "BCubedF1", "BCubedPrecisionByCategory", "BCubedRecallByCategory",
        "BCubedF1ByCategory", "ExpectedClusterCompleteness", "Purity", "InversePurity", "FMeasure", "NMI",
        "PivotedAccuracy", "NormalizedPivotedAccuracy", "NormalizedClusteringAccuracy",
    ]  # fmt: skip
    assert_measures_equal(M(truth, pred, weights=counts), M(copies_t, copies_p), item_based)


@settings(max_examples=150, deadline=None)
@given(small_case, st.randoms(use_true_random=False))
def test_relabelling_and_reordering_change_nothing_and_swapping_mirrors(case, random):
    truth, pred, weights = case
    base = M(truth, pred, weights=weights)
    order = list(range(len(truth)))
    random.shuffle(order)
    renamed_t = [f"t{truth[k] * 7 % 5}" for k in order]
    renamed_p = [(pred[k] + 11) * 3 for k in order]
    assert_measures_equal(M(renamed_t, renamed_p, weights=[weights[k] for k in order]), base)
    swapped = M(pred, truth, weights=weights)
    for a, b in [("BCubedPrecision", "BCubedRecall"), ("Purity", "InversePurity"), ("PairwisePrecision", "PairwiseRecall")]:
        assert swapped[a] == pytest.approx(base[b], rel=1e-12) if base[b] is not None else swapped[a] is None
    symmetric = ["BCubedF1", "PairwiseF1", "RandIndex", "AdjustedRandIndex", "FowlkesMallows", "NMI", "PivotedAccuracy"]
    assert_measures_equal(swapped, base, symmetric)


@settings(max_examples=100, deadline=None)
@given(small_case)
def test_bounds_and_perfect_prediction(case):
    truth, pred, weights = case
    for name, value in M(truth, pred, weights=weights).items():
        if value is not None:
            low = -1.0 if name == "AdjustedRandIndex" else 0.0
            assert low - 1e-12 <= value <= 1.0 + 1e-12, name
    perfect = M(truth, [f"c{t}" for t in truth], weights=weights)
    for name, value in perfect.items():
        assert value is None or value == pytest.approx(1.0, abs=1e-12), name


# ------------------------------------------------------------------------------------------
# 3. Amigo et al. (2009) formal constraints, §2 and §4.5: BCubed precision covers cluster
#    homogeneity and rag bag, BCubed recall cluster completeness and size vs quantity, and their
#    F1 all four. Each test adds the constraint's pattern (D1 worse, D2 better) to a random
#    distribution of other items, on fresh cluster ids.

rest_items = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12)


def bcubed_of(items, weights=None):
    truth, pred = zip(*items)
    m = M([str(t) for t in truth], [str(c) for c in pred], weights=weights)
    return m["BCubedPrecision"], m["BCubedRecall"], m["BCubedF1"]


@settings(max_examples=200, deadline=None)
@given(rest_items, st.integers(1, 4), st.integers(1, 4), st.integers(0, 6), st.integers(0, 6))
def test_cluster_homogeneity(rest, a, b, cat_i, cat_j):
    # One cluster mixing categories L_i and L_j (D1) is worse than it split by category (D2).
    if cat_i == cat_j:
        cat_j = cat_i + 1
    mixed = [(cat_i, "C")] * a + [(cat_j, "C")] * b
    split = [(cat_i, "C_i")] * a + [(cat_j, "C_j")] * b
    p1, r1, f1 = bcubed_of(rest + mixed)
    p2, r2, f2 = bcubed_of(rest + split)
    assert p1 < p2 and r1 == pytest.approx(r2, rel=1e-12) and f1 < f2


@settings(max_examples=200, deadline=None)
@given(rest_items, st.integers(1, 4), st.integers(1, 4), st.integers(0, 6))
def test_cluster_completeness(rest, a, b, category):
    # Two clusters holding only items of category L (D1) are worse than merged (D2).
    apart = [(category, "C1")] * a + [(category, "C2")] * b
    merged = [(category, "C12")] * (a + b)
    p1, r1, f1 = bcubed_of(rest + apart)
    p2, r2, f2 = bcubed_of(rest + merged)
    assert r1 < r2 and p1 == pytest.approx(p2, rel=1e-12) and f1 < f2


@settings(max_examples=200, deadline=None)
@given(rest_items, st.integers(2, 6), st.integers(0, 6))
def test_rag_bag(rest, n, category):
    # An item of a new category put into a clean cluster (D1) is worse than into a noisy cluster of
    # n unary categories (D2).
    clean = [(category, "clean")] * n
    noisy = [(f"unary{k}", "noisy") for k in range(n)]
    p1, r1, f1 = bcubed_of(rest + clean + noisy + [("newcat", "clean")])
    p2, r2, f2 = bcubed_of(rest + clean + noisy + [("newcat", "noisy")])
    assert p1 < p2 and r1 == pytest.approx(r2, rel=1e-12) and f1 < f2


@settings(max_examples=200, deadline=None)
@given(rest_items, st.integers(2, 6))
def test_cluster_size_versus_quantity(rest, n):
    # Breaking n binary categories into singletons (D1) is worse than taking one item out of a
    # cluster of n + 1 (D2).
    big = [("L", "big")] * (n + 1)
    binaries = [(f"L{k}", f"pair{k}") for k in range(n) for _ in range(2)]
    d1 = big + [(f"L{k}", f"half{k}-{h}") for k in range(n) for h in range(2)]
    d2 = [("L", "big")] * n + [("L", "out")] + binaries
    p1, r1, f1 = bcubed_of(rest + d1)
    p2, r2, f2 = bcubed_of(rest + d2)
    assert r1 < r2 and p1 == pytest.approx(p2, rel=1e-12) and f1 < f2


@settings(max_examples=100, deadline=None)
@given(rest_items, st.integers(1, 4), st.integers(1, 4), st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=30, max_size=30))
def test_weighted_bcubed_keeps_homogeneity_and_completeness(rest, a, b, weights):
    mixed = [(8, "C")] * a + [(9, "C")] * b
    split = [(8, "C8")] * a + [(9, "C9")] * b
    w = weights[: len(rest) + a + b]
    (p1, r1, _), (p2, r2, _) = bcubed_of(rest + mixed, w), bcubed_of(rest + split, w)
    assert p1 < p2 and r1 == pytest.approx(r2, rel=1e-12)
    apart = [(8, "C1")] * a + [(8, "C2")] * b
    merged = [(8, "C12")] * (a + b)
    (p1, r1, _), (p2, r2, _) = bcubed_of(rest + apart, w), bcubed_of(rest + merged, w)
    assert r1 < r2 and p1 == pytest.approx(p2, rel=1e-12)


# ------------------------------------------------------------------------------------------
# 4. Undefined values, per-item values, the cluster matching


def test_one_item_leaves_the_pair_measures_undefined():
    m = M(["a"], ["x"])
    undefined = {
        "PairwisePrecision", "PairwiseRecall", "PairwiseF1", "RandIndex", "AdjustedRandIndex", "FowlkesMallows",
        "NMI", "NormalizedPivotedAccuracy", "NormalizedClusteringAccuracy",
    }  # fmt: skip
    assert {name for name, value in m.items() if value is None} == undefined
    assert all(m[name] == 1.0 for name in mc.EXTERNAL_MEASURES if name not in undefined)


def test_all_singletons_on_both_sides():
    m = M([1, 2, 3], ["a", "b", "c"])
    assert [m[k] for k in ("PairwisePrecision", "PairwiseRecall", "PairwiseF1", "AdjustedRandIndex", "FowlkesMallows")] == [None] * 5
    assert (m["RandIndex"], m["NMI"], m["BCubedF1"], m["NormalizedClusteringAccuracy"]) == (1.0, 1.0, 1.0, 1.0)


def test_pivoted_accuracies_need_equal_cluster_counts():
    m = M([0, 0, 1, 1], [0, 0, 0, 1])
    assert m["PivotedAccuracy"] is not None
    m = M([0, 0, 1, 1], [0, 1, 2, 2])
    assert (m["PivotedAccuracy"], m["NormalizedPivotedAccuracy"], m["NormalizedClusteringAccuracy"]) == (None,) * 3


def test_per_item_values_and_their_means():
    weights = [1.0, 2.0, 1.0, 1.0, 3.0]
    truth, pred = ["a", "a", "a", "b", "b"], [1, 1, 2, 2, 2]
    per_item = mc.external_per_item(truth, pred, weights=weights)
    # Item 0: C = {0, 1} (w 3), T = {0, 1, 2} (w 4), C∩T = {0, 1} (w 3): P 1, R 3/4, JD 1 − 3/4.
    # Item 2: C = {2, 3, 4} (w 5), T = {0, 1, 2} (w 4), C∩T = {2} (w 1): P 1/5, R 1/4, JD 1 − 1/8.
    # Item 3: C (w 5), T = {3, 4} (w 4), C∩T = {3, 4} (w 4): P 4/5, R 1, JD 1 − 4/5.
    assert per_item["Precision"].tolist() == close([1, 1, 1 / 5, 4 / 5, 4 / 5])
    assert per_item["Recall"].tolist() == close([3 / 4, 3 / 4, 1 / 4, 1, 1])
    assert per_item["JaccardDistance"].tolist() == close([1 / 4, 1 / 4, 7 / 8, 1 / 5, 1 / 5])
    m = M(truth, pred, weights=weights)
    assert m["BCubedPrecision"] == close(np.dot(weights, per_item["Precision"]) / 8)
    assert m["BCubedRecall"] == close(np.dot(weights, per_item["Recall"]) / 8)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="truth_labels has 2, pred_labels has 1"):
        M([1, 2], [1])
    with pytest.raises(ValueError, match=r"weights\[1\]"):
        M([1, 2], [1, 1], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"pred_labels\[1\] is missing"):
        mc.external_per_item([1, 2], ["x", None])
    with pytest.raises(ValueError, match="truth_labels and pred_labels are empty"):
        M([], [])


def dense_optimum(row, col, value, n):
    matrix = np.zeros((n, n))
    matrix[row, col] = value
    r, c = linear_sum_assignment(matrix, maximize=True)
    return matrix[r, c].sum()


@pytest.mark.parametrize("seed", range(40))
def test_matching_reductions_and_blocks_match_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    density = rng.choice([0.02, 0.1, 0.5])
    # A planted diagonal (the typical case: most clusters have a clear partner) plus noise.
    cells = {(i, j): float(rng.integers(1, 5)) for i in range(n) for j in range(n) if rng.random() < density}
    for i in rng.permutation(n)[: n // 2]:
        cells[(i, (i * 7) % n)] = float(rng.integers(1, 30))
    keys = list(cells)
    row, col = np.array([k[0] for k in keys]), np.array([k[1] for k in keys])
    value = np.array([cells[k] for k in keys])
    if seed % 3 == 0:
        value = value * rng.random(len(value))  # real-valued, like the NCA shares
    assert max_matching_total(row, col, value, n) == pytest.approx(dense_optimum(row, col, value, n), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_matching_of_many_clusters_with_planted_partners_matches_scipy(seed):
    # Like a real comparison: most clusters keep a clear partner, some are small and noisy,
    # so the dominance rounds shrink the table and the rest falls into small blocks.
    rng = np.random.default_rng(seed)
    n = 2000
    partner = rng.permutation(n)
    cells = {(i, int(partner[i])): float(rng.integers(1, 12)) for i in range(n)}
    for _ in range(3 * n):
        cells[(int(rng.integers(n)), int(rng.integers(n)))] = float(rng.integers(1, 4))
    keys = list(cells)
    row, col = np.array([k[0] for k in keys]), np.array([k[1] for k in keys])
    value = np.array([cells[k] for k in keys])
    assert max_matching_total(row, col, value, n) == pytest.approx(dense_optimum(row, col, value, n), rel=1e-12)


def test_matching_too_large_for_the_dense_method_is_none_with_a_warning(monkeypatch):
    monkeypatch.setattr(assignment, "MAX_BLOCK_SIDE", 1)
    truth, pred = labels_from_confusion([[3, 2, 1], [2, 3, 1], [1, 2, 3]])
    with pytest.warns(RuntimeWarning, match="pivoted accuracies"):
        m = M(truth, pred)
    assert (m["PivotedAccuracy"], m["NormalizedPivotedAccuracy"], m["NormalizedClusteringAccuracy"]) == (None,) * 3
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert M(truth, pred)["PivotedAccuracy"] == close(9 / 18)
