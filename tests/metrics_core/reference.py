"""Brute-force reference implementations of the ABCDE definitions, for the tests only.

Everything here works on explicit Python sets of item positions and follows the papers line by
line, so that a reader can check each function against its equation:

* JDD = ``shared/papers/abcde-jaccard-decomposition.md``,
* MQM = ``shared/papers/abcde-more-quality-metrics.md``,
* spec = ``shared/docs/abcde-spec.md`` (sections 1-6).

It is deliberately slow (quadratic or worse in the cluster sizes) and never imports
``metrics_core``: the tests compare the package against these functions. Sums of floats use
``math.fsum`` so that the reference itself carries no accumulated rounding error.

Conventions: items are positions ``0..N-1``; ``Base(i)``, ``Exp(i)``, ``Ideal(i)`` are frozensets
of positions; pair classes and strata are the strings of the public API
(``"self", "split", "merge", "intersection"``; ``"all", "diff", "stable"``).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

NAN = float("nan")

IMPACT_METRIC_NAMES = (
    "JaccardDistance",
    "SplitDistance",
    "MergeDistance",
    "JaccardIndex",
    "AffectedJaccardIndex",
    "UnaffectedJaccardIndex",
    "AffectedWeightFraction",
    "SplitRate",
    "MergeRate",
    "WeightFractionOfBaseCluster",
)

QUALITY_METRIC_NAMES = (
    "GoodSplitDistance",
    "BadSplitDistance",
    "GoodMergeDistance",
    "BadMergeDistance",
    "GoodDistance",
    "BadDistance",
    "GoodMinusBadDistance",
    "AffectedGoodIndex",
    "AffectedBadIndex",
    "DeltaPrecision",
    "GoodSplitRate",
    "BadSplitRate",
    "GoodMergeRate",
    "BadMergeRate",
)
PRECISION_SCHEME_METRIC_NAMES = (
    "DeltaPrecision",
    "GoodSplitRate",
    "BadSplitRate",
    "GoodMergeRate",
    "BadMergeRate",
)


# --------------------------------------------------------------------------------------------
# Population (JDD §3; spec §1)
# --------------------------------------------------------------------------------------------
class RefPopulation:
    """Items ``T = {0..N-1}`` with weights and the clusters ``Base(i)``, ``Exp(i)`` as sets."""

    def __init__(self, base, exp, weights=None):
        self.base = list(base)
        self.exp = list(exp)
        if len(self.base) != len(self.exp):
            raise ValueError("base and exp differ in length")
        self.n = len(self.base)
        self.w = [1.0] * self.n if weights is None else [float(x) for x in weights]
        self.T = frozenset(range(self.n))
        self._base = [frozenset(j for j in self.T if self.base[j] == self.base[i]) for i in self.T]
        self._exp = [frozenset(j for j in self.T if self.exp[j] == self.exp[i]) for i in self.T]

    def Base(self, i):
        return self._base[i]

    def Exp(self, i):
        return self._exp[i]

    def U(self, i):
        """``Base(i) ∪ Exp(i)``."""
        return self._base[i] | self._exp[i]

    def weight(self, items):
        """``weight(I)``: the sum of the weights of the members of ``I``."""
        return math.fsum(self.w[j] for j in items)

    @property
    def W(self):
        """``weight(T)``."""
        return self.weight(self.T)

    def affected(self, i):
        """JDD eq 46: ``i`` is affected iff ``Base(i) != Exp(i)``."""
        return self._base[i] != self._exp[i]

    @property
    def affected_items(self):
        return frozenset(i for i in self.T if self.affected(i))

    def base_clusters(self):
        """Each Base cluster once, keyed by its label."""
        return {self.base[i]: self._base[i] for i in self.T}

    def exp_clusters(self):
        return {self.exp[i]: self._exp[i] for i in self.T}


# --------------------------------------------------------------------------------------------
# Pointwise impact metrics (JDD §4.1, §5.1; MQM eqs 11-12, 48; spec §2)
# --------------------------------------------------------------------------------------------
def split_distance(pop, i):
    """JDD eq 2."""
    return pop.weight(pop.Base(i) - pop.Exp(i)) / pop.weight(pop.U(i))


def merge_distance(pop, i):
    """JDD eq 3."""
    return pop.weight(pop.Exp(i) - pop.Base(i)) / pop.weight(pop.U(i))


def jaccard_distance(pop, i):
    """JDD eq 1 (the numerator written with both set differences, not as a sum of eqs 2-3)."""
    B, E = pop.Base(i), pop.Exp(i)
    return pop.weight((B | E) - (B & E)) / pop.weight(B | E)


def jaccard_index(pop, i):
    """JDD eq 37."""
    return pop.weight(pop.Base(i) & pop.Exp(i)) / pop.weight(pop.U(i))


def split_rate(pop, i):
    """MQM / spec §2: ``weight(Base(i) \\ Exp(i)) / weight(Base(i))``."""
    return pop.weight(pop.Base(i) - pop.Exp(i)) / pop.weight(pop.Base(i))


def merge_rate(pop, i):
    """MQM / spec §2: ``weight(Exp(i) \\ Base(i)) / weight(Exp(i))``."""
    return pop.weight(pop.Exp(i) - pop.Base(i)) / pop.weight(pop.Exp(i))


def weight_fraction_of_base_cluster(pop, i):
    """MQM eq 48."""
    return pop.w[i] / pop.weight(pop.Base(i))


POINTWISE_IMPACT = {
    "SplitDistance": split_distance,
    "MergeDistance": merge_distance,
    "JaccardDistance": jaccard_distance,
    "JaccardIndex": jaccard_index,
    "SplitRate": split_rate,
    "MergeRate": merge_rate,
    "WeightFractionOfBaseCluster": weight_fraction_of_base_cluster,
}


def lift(pop, f, items):
    """A pointwise metric lifted to a set ``I``: the weight-weighted mean over ``I`` (JDD §3)."""
    items = list(items)
    if not items:
        return NAN
    return math.fsum(pop.w[i] * f(pop, i) for i in items) / pop.weight(items)


def impact_per_item(pop):
    """``{metric: [value of item 0, item 1, ...]}`` plus ``"Affected"``."""
    out = {name: [f(pop, i) for i in range(pop.n)] for name, f in POINTWISE_IMPACT.items()}
    out["Affected"] = [pop.affected(i) for i in range(pop.n)]
    return out


def impact_of_set(pop, items):
    """The impact metrics of a set of items ``I`` as the API's ImpactTable defines them.

    Pointwise metrics are lifted as weighted means over ``I``;
    ``AffectedJaccardIndex(I) = Σ_{i∈I affected} w_i JI(i) / weight(I)`` (JDD eq 48 with ``I``
    for ``T``), ``UnaffectedJaccardIndex(I) = weight(I unaffected) / weight(I)`` (eq 52),
    ``AffectedWeightFraction(I) = weight(I affected) / weight(I)``,
    ``WeightFractionOfBaseCluster(I)`` = weighted mean over the affected items of ``I``
    (MQM eq 49), NaN when none.
    """
    items = frozenset(items)
    A = frozenset(i for i in items if pop.affected(i))
    wI = pop.weight(items)
    metrics = {
        "JaccardDistance": lift(pop, jaccard_distance, items),
        "SplitDistance": lift(pop, split_distance, items),
        "MergeDistance": lift(pop, merge_distance, items),
        "JaccardIndex": lift(pop, jaccard_index, items),
        "AffectedJaccardIndex": math.fsum(pop.w[i] * jaccard_index(pop, i) for i in A) / wI,
        "UnaffectedJaccardIndex": pop.weight(items - A) / wI,
        "AffectedWeightFraction": pop.weight(A) / wI,
        "SplitRate": lift(pop, split_rate, items),
        "MergeRate": lift(pop, merge_rate, items),
        "WeightFractionOfBaseCluster": lift(pop, weight_fraction_of_base_cluster, A),
    }
    return {
        "items": len(items),
        "affected_items": len(A),
        "weight": wI,
        "affected_weight": pop.weight(A),
        "metrics": metrics,
    }


def impact_overall(pop):
    """Overall impact metrics: JDD eqs 14-16, 43, 48, 52; MQM eq 49; spec §2."""
    return impact_of_set(pop, pop.T)


def impact_by_group(pop, groups):
    """``{group label: impact_of_set(items with that label)}``."""
    members = defaultdict(set)
    for i, g in enumerate(groups):
        members[g].add(i)
    return {g: impact_of_set(pop, items) for g, items in members.items()}


# --------------------------------------------------------------------------------------------
# Quality against a known Ideal clustering (JDD eqs 5-8, 41-42, 56-59, 64; ABCDE rates)
# --------------------------------------------------------------------------------------------
class RefGold:
    """``Ideal(i)``: the items with the same gold label as ``i`` (``i ≡ j`` iff same label)."""

    def __init__(self, gold):
        self.gold = list(gold)
        T = range(len(self.gold))
        self._ideal = [frozenset(j for j in T if self.gold[j] == self.gold[i]) for i in T]

    def Ideal(self, i):
        return self._ideal[i]

    def equivalent(self, i, j):
        return j in self._ideal[i]


def _sum_over(pop, js, i, pred):
    """``Σ_{j ∈ js} weight(j) / weight(Base(i) ∪ Exp(i)) · 1(pred(j))``."""
    wU = pop.weight(pop.U(i))
    return math.fsum(pop.w[j] / wU for j in js if pred(j))


def good_split_distance(pop, g, i):
    """JDD eq 5: split-off items that are NOT equivalent to ``i``."""
    return _sum_over(pop, pop.Base(i) - pop.Exp(i), i, lambda j: not g.equivalent(i, j))


def bad_split_distance(pop, g, i):
    """JDD eq 6."""
    return _sum_over(pop, pop.Base(i) - pop.Exp(i), i, lambda j: g.equivalent(i, j))


def good_merge_distance(pop, g, i):
    """JDD eq 7."""
    return _sum_over(pop, pop.Exp(i) - pop.Base(i), i, lambda j: g.equivalent(i, j))


def bad_merge_distance(pop, g, i):
    """JDD eq 8."""
    return _sum_over(pop, pop.Exp(i) - pop.Base(i), i, lambda j: not g.equivalent(i, j))


def good_index(pop, g, i):
    """JDD eq 41."""
    return _sum_over(pop, pop.Base(i) & pop.Exp(i), i, lambda j: g.equivalent(i, j))


def bad_index(pop, g, i):
    """JDD eq 42."""
    return _sum_over(pop, pop.Base(i) & pop.Exp(i), i, lambda j: not g.equivalent(i, j))


def precision_of(pop, g, cluster_of, i):
    """``Precision_C(i) = weight(C(i) ∩ Ideal(i)) / weight(C(i))``."""
    C = cluster_of(i)
    return pop.weight(C & g.Ideal(i)) / pop.weight(C)


def delta_precision(pop, g, i):
    """JDD eq 64, first line: ``Precision_Exp(i) − Precision_Base(i)``."""
    return precision_of(pop, g, pop.Exp, i) - precision_of(pop, g, pop.Base, i)


def good_split_rate(pop, g, i):
    """``weight((Base(i) \\ Exp(i)) \\ Ideal(i)) / weight(Base(i))``."""
    return pop.weight((pop.Base(i) - pop.Exp(i)) - g.Ideal(i)) / pop.weight(pop.Base(i))


def bad_split_rate(pop, g, i):
    """``weight((Base(i) \\ Exp(i)) ∩ Ideal(i)) / weight(Base(i))``."""
    return pop.weight((pop.Base(i) - pop.Exp(i)) & g.Ideal(i)) / pop.weight(pop.Base(i))


def good_merge_rate(pop, g, i):
    """``weight((Exp(i) \\ Base(i)) ∩ Ideal(i)) / weight(Exp(i))``."""
    return pop.weight((pop.Exp(i) - pop.Base(i)) & g.Ideal(i)) / pop.weight(pop.Exp(i))


def bad_merge_rate(pop, g, i):
    """``weight((Exp(i) \\ Base(i)) \\ Ideal(i)) / weight(Exp(i))``."""
    return pop.weight((pop.Exp(i) - pop.Base(i)) - g.Ideal(i)) / pop.weight(pop.Exp(i))


def quality_overall(pop, gold, items=None):
    """The 14 estimated metrics, exactly, as contributions of ``items`` (default ``T``).

    Each is ``Σ_{i ∈ items} weight(i)/weight(T) · metric(i)``: JDD eq 23 for the distances,
    eqs 11-12 for Good/BadDistance, eqs 56 and 59 for the Affected indices (sum over affected
    items only), eq 76 for ΔPrecision; the rates are lifted the same way (ABCDE).
    With ``items = T`` these are the overall metrics.
    """
    g = RefGold(gold)
    W = pop.W
    items = pop.T if items is None else frozenset(items)
    A = frozenset(i for i in items if pop.affected(i))

    def total(f, over):
        return math.fsum(pop.w[i] / W * f(pop, g, i) for i in over)

    gsd = total(good_split_distance, items)
    bsd = total(bad_split_distance, items)
    gmd = total(good_merge_distance, items)
    bmd = total(bad_merge_distance, items)
    return {
        "GoodSplitDistance": gsd,
        "BadSplitDistance": bsd,
        "GoodMergeDistance": gmd,
        "BadMergeDistance": bmd,
        "GoodDistance": total(lambda p, g_, i: good_split_distance(p, g_, i) + good_merge_distance(p, g_, i), items),
        "BadDistance": total(lambda p, g_, i: bad_split_distance(p, g_, i) + bad_merge_distance(p, g_, i), items),
        "GoodMinusBadDistance": total(
            lambda p, g_, i: good_split_distance(p, g_, i) + good_merge_distance(p, g_, i)
            - bad_split_distance(p, g_, i) - bad_merge_distance(p, g_, i),
            items,
        ),
        "AffectedGoodIndex": total(good_index, A),
        "AffectedBadIndex": total(bad_index, A),
        "DeltaPrecision": total(delta_precision, items),
        "GoodSplitRate": total(good_split_rate, items),
        "BadSplitRate": total(bad_split_rate, items),
        "GoodMergeRate": total(good_merge_rate, items),
        "BadMergeRate": total(bad_merge_rate, items),
    }


# --------------------------------------------------------------------------------------------
# The pair population (JDD §7; spec §3)
# --------------------------------------------------------------------------------------------
def pair_class(pop, i, j):
    """Class of the ordered pair ``(i, j)``, or None when ``j ∉ Base(i) ∪ Exp(i)``."""
    B, E = pop.Base(i), pop.Exp(i)
    if j == i:
        return "self"
    if j in B - E:
        return "split"
    if j in E - B:
        return "merge"
    if j in B & E:
        return "intersection"
    return None


def w_ij(pop, i, j):
    """JDD eq 26: ``weight(i)·weight(j) / (weight(T)·weight(Base(i) ∪ Exp(i)))``."""
    return pop.w[i] * pop.w[j] / (pop.W * pop.weight(pop.U(i)))


def a_i(pop, i):
    """JDD eq 67: ``weight(Base(i) ∪ Exp(i)) / weight(Exp(i))``."""
    return pop.weight(pop.U(i)) / pop.weight(pop.Exp(i))


def b_i(pop, i):
    """JDD eq 68: ``weight(Base(i) ∪ Exp(i)) / weight(Base(i))``."""
    return pop.weight(pop.U(i)) / pop.weight(pop.Base(i))


def l_ij(pop, i, j):
    """JDD eqs 92-94: the ΔPrecision label of a pair in the ``jaccard`` distribution."""
    cls = pair_class(pop, i, j)
    if cls == "merge":
        return a_i(pop, i)
    if cls == "split":
        return -b_i(pop, i)
    return a_i(pop, i) - b_i(pop, i)


def c_ij(pop, i, j):
    """Spec §4c: ``1/wE(i)`` merge, ``1/wB(i)`` split, ``|1/wE(i) − 1/wB(i)|`` self/intersection."""
    cls = pair_class(pop, i, j)
    inv_e, inv_b = 1.0 / pop.weight(pop.Exp(i)), 1.0 / pop.weight(pop.Base(i))
    if cls == "merge":
        return inv_e
    if cls == "split":
        return inv_b
    return abs(inv_e - inv_b)


def u_ij(pop, i, j):
    """Spec §4c / JDD eq 90: ``(w_i/W) · w_j · c_ij``."""
    return pop.w[i] / pop.W * pop.w[j] * c_ij(pop, i, j)


def precision_label(pop, i, j):
    """Spec §4c: +1 merge, −1 split, sign(1/wE(i) − 1/wB(i)) self/intersection."""
    cls = pair_class(pop, i, j)
    if cls == "merge":
        return 1.0
    if cls == "split":
        return -1.0
    d = 1.0 / pop.weight(pop.Exp(i)) - 1.0 / pop.weight(pop.Base(i))
    return float(np.sign(d))


def all_pairs(pop):
    """AllPairs of JDD §7: ``(i, j, class)`` for affected ``i`` and ``j ∈ Base(i) ∪ Exp(i)``."""
    return [(i, j, pair_class(pop, i, j)) for i in sorted(pop.affected_items) for j in sorted(pop.U(i))]


DIFF_CLASSES = ("split", "merge")
STABLE_CLASSES = ("self", "intersection")


def sampling_distribution(pop, scheme):
    """The sampling probability of every ordered pair, per stratum (spec §4, API notes).

    Returns ``{stratum: {(i, j): (probability, class)}}``; pairs of probability 0 are included
    with probability 0.0 (they exist in the pair population but must never be drawn).
    ``jaccard``: ``P ∝ w_ij`` over AllPairs (stratum "all"). ``stratified``: two independent
    distributions, "diff" ``∝ w_ij`` over split+merge pairs and "stable" ``∝ w_ij`` over
    self+intersection pairs of affected items. ``precision``: ``P ∝ u_ij`` (stratum "all").
    """
    pairs = all_pairs(pop)
    if scheme == "jaccard":
        groups = {"all": [(i, j, c, w_ij(pop, i, j)) for i, j, c in pairs]}
    elif scheme == "stratified":
        groups = {
            "diff": [(i, j, c, w_ij(pop, i, j)) for i, j, c in pairs if c in DIFF_CLASSES],
            "stable": [(i, j, c, w_ij(pop, i, j)) for i, j, c in pairs if c in STABLE_CLASSES],
        }
    elif scheme == "precision":
        groups = {"all": [(i, j, c, u_ij(pop, i, j)) for i, j, c in pairs]}
    else:
        raise ValueError(scheme)
    out = {}
    for stratum, rows in groups.items():
        total = math.fsum(r[3] for r in rows)
        out[stratum] = {(i, j): (wt / total, c) for i, j, c, wt in rows}
    return out


# --------------------------------------------------------------------------------------------
# Judgements, reweighting and estimates (spec §5-6; JDD §4.3, §5.2, §7, §8)
# --------------------------------------------------------------------------------------------
def pair_equivalence_values(verdict_rows):
    """Spec §5: ``{(a, b) with a < b: value}`` from rows ``(i, j, verdict)``.

    The value of a pair is the fraction of its non-unsure verdicts that say equivalent; a pair
    with only unsure verdicts has no value (it is absent). One verdict on ``(i, j)`` serves
    ``(j, i)`` too. Self pairs are ignored (they are always equivalent).
    """
    counts = defaultdict(lambda: [0, 0])  # [equivalent, not_equivalent]
    for i, j, verdict in verdict_rows:
        if i == j:
            continue
        if verdict not in ("equivalent", "not_equivalent", "unsure"):
            raise ValueError(verdict)
        key = (min(i, j), max(i, j))
        counts[key][0] += verdict == "equivalent"
        counts[key][1] += verdict == "not_equivalent"
    return {k: eq / (eq + ne) for k, (eq, ne) in counts.items() if eq + ne > 0}


@dataclass(frozen=True)
class RefEstimate:
    value: float
    stderr: float
    ci_low: float
    ci_high: float
    judged_draws: float
    drawn_draws: float
    interval: str  # "wilson", "normal", "exact" (a class total of 0) or "unspecified"


@dataclass(frozen=True)
class _Draws:
    """The sampled rows of one estimate: one row per ordered pair (and stratum)."""

    i: int
    j: int
    cls: str
    stratum: str
    draws: int
    e: float | None  # the pair's equivalence value (1.0 for self pairs), None when unjudged


def _ratio_mean(rows, x_of, v_of, q_of, iota_of=None):
    """Spec §6: ``m = Σ v x / Σ v`` over judged draws, and its standard error.

    The unit of the variance is the distinct unordered pair ``u`` within its stratum:
    ``SE(m)² = n/(n−1) · Σ_u v_u² k_u (x_u − m)² / (Σ_u v_u D_u)²``,
    ``k_u = D_u + (1 − q)·D_u·(D_u − 1)``, ``x_u`` the weighted mean value over the draws of ``u``.
    With an importance ``iota_of`` (metrics_core's rates, "ours") a draw weighs ``v·ι`` and
    ``v_u`` is the unit's mean weight per draw.
    Returns ``(m, se, n_eff, judged, drawn)``.
    """
    drawn = sum(r.draws for r in rows)
    units = defaultdict(lambda: {"D": 0, "W": 0.0, "sx": 0.0, "q": None})
    for r in rows:
        if r.e is None:
            continue
        u = units[(r.stratum, min(r.i, r.j), max(r.i, r.j))]
        weight = v_of(r) * (1.0 if iota_of is None else iota_of(r))
        u["D"] += r.draws
        u["W"] += r.draws * weight
        u["sx"] += r.draws * weight * x_of(r)
        u["q"] = q_of(r)
        u["class"] = (r.stratum, r.cls)
    n = sum(u["D"] for u in units.values())
    if n == 0:
        return NAN, NAN, NAN, 0, drawn
    total = math.fsum(u["W"] for u in units.values())
    m = math.fsum(u["sx"] for u in units.values()) / total
    v = {key: u["W"] / u["D"] for key, u in units.items()}
    k = {key: u["D"] + (1.0 - u["q"]) * u["D"] * (u["D"] - 1) for key, u in units.items()}
    # Spec §14: over several classes, the term of pairs missing together is centred at the
    # pair's class mean (``k_u = q D_u + (1 − q) D_u²`` split in its two parts).
    class_sx, class_w = defaultdict(float), defaultdict(float)
    for u in units.values():
        class_sx[u["class"]] += u["sx"]
        class_w[u["class"]] += u["W"]

    def spread(key, u):
        x, q, D = u["sx"] / u["W"], u["q"], u["D"]
        class_mean = class_sx[u["class"]] / class_w[u["class"]]
        return v[key] ** 2 * (q * D * (x - m) ** 2 + (1.0 - q) * D * D * (x - class_mean) ** 2)

    ss = math.fsum(spread(key, u) for key, u in units.items())
    se = math.sqrt(n / (n - 1) * ss / total**2) if n > 1 else NAN
    n_eff = total**2 / math.fsum(v[key] ** 2 * k[key] for key in units)
    return m, se, n_eff, n, drawn


def wilson_interval(p, n, z):
    """Wilson score interval for a proportion ``p`` on ``n`` (possibly non-integer) trials."""
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return centre - half, centre + half


def reference_estimates(pop, scheme, sample_rows, verdict_rows, *, confidence=0.95, vantage=None):
    """Spec §5-6 estimates from a sample, written from the spec's tables.

    ``sample_rows``: ``(i, j, class, stratum, draws)``; ``verdict_rows``: ``(i, j, verdict)``;
    ``vantage``: optional set of items: only pairs whose vantage item ``i`` is in it are used,
    and the multipliers are that slice's exact class totals.
    Returns ``{metric: RefEstimate}``.
    """
    z = float(norm.ppf(0.5 + confidence / 2.0))
    values = pair_equivalence_values(verdict_rows)
    vantage = pop.T if vantage is None else frozenset(vantage)
    rows = []
    for i, j, cls, stratum, draws in sample_rows:
        if i not in vantage:
            continue
        e = 1.0 if i == j else values.get((min(i, j), max(i, j)))
        rows.append(_Draws(i, j, cls, stratum, int(draws), e))

    # §5: every class (per stratum) keeps its sampled share: judged draws weigh drawn/judged.
    drawn_c = defaultdict(int)
    judged_c = defaultdict(int)
    units_c = defaultdict(set)
    judged_units_c = defaultdict(set)
    for r in rows:
        key = (r.stratum, r.cls)
        unit = (min(r.i, r.j), max(r.i, r.j))
        drawn_c[key] += r.draws
        units_c[key].add(unit)
        if r.e is not None:
            judged_c[key] += r.draws
            judged_units_c[key].add(unit)

    def v_of(r):
        return drawn_c[(r.stratum, r.cls)] / judged_c[(r.stratum, r.cls)]

    def q_of(r):
        key = (r.stratum, r.cls)
        return len(judged_units_c[key]) / len(units_c[key])

    # Exact class totals of the vantage slice: Σ over its pairs of w_ij (resp. u_ij).
    A = [i for i in vantage if pop.affected(i)]
    W = pop.W
    SD = math.fsum(pop.w[i] / W * split_distance(pop, i) for i in vantage)
    MD = math.fsum(pop.w[i] / W * merge_distance(pop, i) for i in vantage)
    AJI = math.fsum(pop.w[i] / W * jaccard_index(pop, i) for i in A)
    SR = math.fsum(pop.w[i] / W * split_rate(pop, i) for i in vantage)
    MR = math.fsum(pop.w[i] / W * merge_rate(pop, i) for i in vantage)

    def of_classes(classes, strata=None):
        return [r for r in rows if r.cls in classes and (strata is None or r.stratum in strata)]

    out = {}

    def exact_zero(name, used):
        """A class of exact total 0 (no such pairs in the slice) is known exactly: 0 ± 0."""
        drawn = sum(r.draws for r in used)
        judged = sum(r.draws for r in used if r.e is not None)
        out[name] = RefEstimate(0.0, 0.0, 0.0, 0.0, judged, drawn, "exact")

    def indicator_pair(good, bad, used, x_good, mult, iota_of=None):
        """Good/Bad estimates of one class: ``x_bad = 1 − x_good``, one shared SE (spec §6)."""
        if mult == 0.0:
            exact_zero(good, used)
            exact_zero(bad, used)
            return
        m, se, n_eff, n, drawn = _ratio_mean(used, x_good, v_of, q_of, iota_of)
        if n > 0:
            lo, hi = wilson_interval(m, n_eff, z)
        else:
            # Not in the spec: with no judged draw the share is unknown, and the only honest
            # interval is all of [0, 1] (the estimate itself is undefined).
            lo, hi = 0.0, 1.0
        out[good] = RefEstimate(mult * m, mult * se, mult * lo, mult * hi, n, drawn, "wilson")
        out[bad] = RefEstimate(mult * (1 - m), mult * se, mult * (1 - hi), mult * (1 - lo), n, drawn, "wilson")

    def no_verdict(used):
        """Spec §14: self pairs are known, not judged: without a verdict ΔPrecision is unknown."""
        return not any(r.e is not None and r.i != r.j for r in used)

    def unknown(name, used):
        judged = sum(r.draws for r in used if r.e is not None)
        out[name] = RefEstimate(NAN, NAN, NAN, NAN, judged, sum(r.draws for r in used), "normal")

    def normal(name, used, x, mult):
        if mult == 0.0:
            return exact_zero(name, used)
        if no_verdict(used):
            return unknown(name, used)
        m, se, _, n, drawn = _ratio_mean(used, x, v_of, q_of)
        out[name] = RefEstimate(mult * m, mult * se, mult * (m - z * se), mult * (m + z * se), n, drawn, "normal")
        return out[name]

    def not_e(r):
        return 1.0 - r.e

    def is_e(r):
        return r.e

    if scheme in ("jaccard", "stratified"):
        stable_strata = ("all",) if scheme == "jaccard" else ("stable",)
        diff_strata = ("all",) if scheme == "jaccard" else ("diff",)
        # JDD §7 bullets; spec §6 table.
        indicator_pair("GoodSplitDistance", "BadSplitDistance", of_classes(("split",)), not_e, SD)
        indicator_pair("GoodMergeDistance", "BadMergeDistance", of_classes(("merge",)), is_e, MD)
        # Spec §14: self pairs are known, not judged. The index is the self pairs' exact total plus
        # the intersection pairs' total times the intersection's own share (its own interval).
        T_self = math.fsum(pop.w[i] / W * pop.w[i] / pop.weight(pop.U(i)) for i in A)
        T_inter = math.fsum(
            pop.w[i] / W * (pop.weight(pop.Base(i) & pop.Exp(i)) - pop.w[i]) / pop.weight(pop.U(i)) for i in A
        )
        indicator_pair(
            "AffectedGoodIndex", "AffectedBadIndex", of_classes(("intersection",), stable_strata), is_e, T_inter
        )
        good = out["AffectedGoodIndex"]
        out["AffectedGoodIndex"] = dataclasses.replace(
            good, value=good.value + T_self, ci_low=good.ci_low + T_self, ci_high=good.ci_high + T_self
        )
        for name, parts in (
            ("GoodDistance", ("GoodSplitDistance", "GoodMergeDistance")),
            ("BadDistance", ("BadSplitDistance", "BadMergeDistance")),
        ):
            a, b = out[parts[0]], out[parts[1]]
            out[name] = RefEstimate(
                a.value + b.value,
                math.hypot(a.stderr, b.stderr),
                NAN,
                NAN,
                a.judged_draws + b.judged_draws,
                a.drawn_draws + b.drawn_draws,
                "unspecified",
            )
        # Good and Bad of one class share one SE (spec §6): (Good − Bad) of a class has twice it.
        parts = [out[n] for n in ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance")]
        out["GoodMinusBadDistance"] = RefEstimate(
            parts[0].value - parts[1].value + parts[2].value - parts[3].value,
            2 * math.hypot(parts[0].stderr, parts[2].stderr),
            NAN,
            NAN,
            parts[0].judged_draws + parts[2].judged_draws,
            parts[0].drawn_draws + parts[2].drawn_draws,
            "unspecified",
        )

        def dp_x(r):  # JDD eqs 92-94: l_ij · 1(i ≡ j)
            return l_ij(pop, r.i, r.j) * r.e

        def wU(r):
            return pop.weight(pop.U(r.i))

        # Rates (metrics_core's "ours", a refinement of spec §6's importance weighting): within
        # the split (merge) draws, the share of not-equivalent (equivalent) draws weighted by the
        # importance ι = w(U)/w(Base(i)) (w(U)/w(Exp(i))), times the exact SplitRate (MergeRate),
        # since Σ over split pairs of w_ij·ι = SplitRate(T). A Wilson interval on the effective size.
        def split_iota(r):
            return wU(r) / pop.weight(pop.Base(r.i))

        def merge_iota(r):
            return wU(r) / pop.weight(pop.Exp(r.i))

        indicator_pair("GoodSplitRate", "BadSplitRate", of_classes(("split",), diff_strata), not_e, SR, split_iota)
        indicator_pair("GoodMergeRate", "BadMergeRate", of_classes(("merge",), diff_strata), is_e, MR, merge_iota)
        if scheme == "jaccard":
            total = SD + AJI + MD  # JDD §6: Σ w_ij over AllPairs
            normal("DeltaPrecision", rows, dp_x, total)
        else:
            # Each stratum estimated on its own and combined with its exact total (spec §4b).
            diff_rows = of_classes(DIFF_CLASSES, ("diff",))
            stable_rows = of_classes(STABLE_CLASSES, ("stable",))
            md, sd, _, nd, dd = _ratio_mean(diff_rows, dp_x, v_of, q_of) if SD + MD > 0 else (0, 0, 0, 0, 0)
            ms, ss, _, ns, ds = _ratio_mean(stable_rows, dp_x, v_of, q_of) if AJI > 0 else (0, 0, 0, 0, 0)
            value = (SD + MD) * md + AJI * ms
            se = math.hypot((SD + MD) * sd, AJI * ss)
            out["DeltaPrecision"] = RefEstimate(value, se, value - z * se, value + z * se, nd + ns, dd + ds, "normal")
            if no_verdict((diff_rows if SD + MD > 0 else []) + (stable_rows if AJI > 0 else [])) and SD + MD + AJI > 0:
                unknown("DeltaPrecision", diff_rows + stable_rows)
    elif scheme == "precision":
        U_total = math.fsum(u_ij(pop, i, j) for i, j, _ in all_pairs(pop) if i in vantage)

        def dp_label_x(r):
            return precision_label(pop, r.i, r.j) * r.e

        normal("DeltaPrecision", rows, dp_label_x, U_total)
        indicator_pair("GoodSplitRate", "BadSplitRate", of_classes(("split",)), not_e, SR)
        indicator_pair("GoodMergeRate", "BadMergeRate", of_classes(("merge",)), is_e, MR)
    else:
        raise ValueError(scheme)
    return out


# --------------------------------------------------------------------------------------------
# Random test populations (test data, not definitions)
# --------------------------------------------------------------------------------------------
def random_weights(rng, n, kind):
    """Positive weights: ``"unit"``, ``"mild"`` (0.5-2), ``"lognormal"`` or ``"extreme"``."""
    if kind == "unit":
        return np.ones(n)
    if kind == "mild":
        return rng.uniform(0.5, 2.0, n)
    if kind == "lognormal":
        return rng.lognormal(0.0, 1.0, n)
    if kind == "extreme":  # ratios up to 1e12 between items
        return 10.0 ** rng.uniform(-6.0, 6.0, n)
    raise ValueError(kind)


def random_labels(rng, n, n_clusters):
    return rng.integers(0, max(1, n_clusters), size=n)


def perturb(rng, labels, n_ops):
    """Random splits and merges of a clustering (returns new int labels)."""
    labels = np.asarray(labels).copy()
    next_label = int(labels.max()) + 1 if len(labels) else 0
    for _ in range(n_ops):
        clusters = np.unique(labels)
        if rng.random() < 0.5 and len(clusters) > 1:  # merge two clusters
            a, b = rng.choice(clusters, size=2, replace=False)
            labels[labels == b] = a
        else:  # split a cluster: move a random subset of it to a new label
            c = rng.choice(clusters)
            members = np.flatnonzero(labels == c)
            if len(members) > 1:
                moved = members[rng.random(len(members)) < 0.5]
                labels[moved] = next_label
                next_label += 1
    return labels


def random_case(seed):
    """One random small population for the brute-force cross-checks (acceptance point 2).

    ``N`` in 1..30; a random number of clusters; weights unit, mild, lognormal or with extreme
    ratios; string labels for odd seeds, ints for even ones; every 10th seed has nothing
    affected (Exp = Base relabelled), every 10th+5 has everything affected.
    Returns ``(base, exp, weights, gold, groups)`` with ``weights`` possibly None.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2 if seed % 10 == 5 else 1, 31))
    kind = ["unit", "mild", "lognormal", "extreme"][seed % 4]
    weights = None if (kind == "unit" and seed % 8 == 0) else random_weights(rng, n, kind)
    base = random_labels(rng, n, int(rng.integers(1, n + 1)))
    if seed % 10 == 0:
        exp = base.copy()  # nothing affected (relabelled below)
    elif seed % 10 == 5:
        exp = _everything_affected(rng, base)
    else:
        exp = perturb(rng, base, int(rng.integers(1, 6))) if rng.random() < 0.7 else random_labels(
            rng, n, int(rng.integers(1, n + 1))
        )
    # Relabel Exp so that equal labels never mean "same cluster" across the two clusterings.
    exp = np.array([1000 + 7 * int(x) for x in exp])
    gold = random_labels(rng, n, int(rng.integers(1, n + 1)))
    groups = rng.integers(0, 3, size=n)
    if seed % 2 == 1:
        base = np.array([f"b{x}" for x in base], dtype=object)
        exp = np.array([f"e-{x}" for x in exp], dtype=object)
        groups = np.array([f"slice{x}" for x in groups], dtype=object)
    return base, exp, weights, gold, groups


def _everything_affected(rng, base):
    """An Exp (N >= 2) in which no item keeps its Base cluster exactly.

    All singletons, except that the Base singletons (which all-singletons would leave alone)
    form one Exp cluster together, joined by one other item when there is only one of them.
    """
    n = len(base)
    exp = np.arange(n)
    sizes = {}
    for b in base:
        sizes[b] = sizes.get(b, 0) + 1
    singles = [i for i in range(n) if sizes[base[i]] == 1]
    if len(singles) == 1:
        singles.append(next(i for i in range(n) if i != singles[0]))
    for s in singles:
        exp[s] = n + 1
    return exp
