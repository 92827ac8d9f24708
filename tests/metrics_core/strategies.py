"""Hypothesis strategies shared by the property-based tests (tests/metrics_core/test_properties_*.py).

Small populations (1-30 items) with every edge the product meets: one item, one cluster, nothing
affected, singletons everywhere, unit weights, lognormal-like weights and legal weights of extreme
magnitude (1e-320 .. 1e300, spanning at most 2**200); verdicts with gold-only pairs, one rater,
all unsure, pairs left unjudged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from metrics_core import (
    SCHEMES,
    Estimate,
    PairSample,
    PairVerdicts,
    Population,
    pairs_for_judgement,
    population_from_labels,
    sample_pairs,
    verdicts_from_judgements,
)

PROPERTY_EXAMPLES = 500
VERDICT_WORDS = ("equivalent", "not_equivalent", "unsure")
# Interval ends are computed apart from the value: they may differ from it by rounding.
TOLERANCE = 1e-9


@st.composite
def weights(draw, n: int):
    """None (unit weights), moderate weights, or legal weights of extreme magnitude."""
    kind = draw(st.sampled_from(["unit", "moderate", "extreme"]))
    if kind == "unit":
        return None
    ratios = draw(st.lists(st.floats(1.0, 1e6 if kind == "moderate" else 1e40), min_size=n, max_size=n))
    if kind == "moderate":
        return np.array(ratios)
    exponent = draw(st.sampled_from([-1070, -1060, -700, -300, 0, 300, 700, 880]))  # max 2**1013 x 30 items
    return np.ldexp(np.array(ratios), exponent)


@st.composite
def populations(draw, max_items: int = 30) -> Population:
    n = draw(st.integers(1, max_items))
    clusters = draw(st.integers(1, n))
    base = draw(st.lists(st.integers(0, clusters - 1), min_size=n, max_size=n))
    exp_kind = draw(st.sampled_from(["free", "same", "singletons", "one"]))
    if exp_kind == "same":
        exp = list(base)
    elif exp_kind == "singletons":
        exp = list(range(n))
    elif exp_kind == "one":
        exp = [0] * n
    else:
        exp = draw(st.lists(st.integers(0, clusters - 1), min_size=n, max_size=n))
    return population_from_labels(base, exp, draw(weights(n)))


def affected(population: Population) -> bool:
    return bool(population.cell_affected().any())


@st.composite
def samples(draw, population: Population, max_draws: int = 200) -> PairSample:
    scheme = draw(st.sampled_from(SCHEMES))
    seed = draw(st.integers(0, 2**32 - 1))
    diff_share = draw(st.sampled_from([0.5, 0.01, 0.99]))
    return sample_pairs(
        population,
        n_draws=draw(st.integers(1, max_draws)),
        scheme=scheme,
        rng=np.random.default_rng(seed),
        diff_share=diff_share,
    )


@dataclass(frozen=True)
class Judgements:
    """One row per verdict: item positions, verdict word, rater."""

    i: np.ndarray
    j: np.ndarray
    verdict: np.ndarray
    rater: np.ndarray

    def verdicts(self) -> PairVerdicts:
        return verdicts_from_judgements(self.i, self.j, self.verdict)


@st.composite
def judgements(draw, population: Population, sample: PairSample) -> Judgements:
    """Verdicts on some of the sample's pairs, by 1-3 raters, plus gold-only pairs not in it."""
    a, b = pairs_for_judgement(sample, rng=np.random.default_rng(draw(st.integers(0, 2**16))))
    mode = draw(st.sampled_from(["mixed", "all_unsure", "none", "all_judged"]))
    raters = draw(st.integers(1, 3))
    rows: list[tuple[int, int, str, int]] = []
    for x, y in zip(a.tolist(), b.tolist()):
        if mode == "none":
            break
        for rater in range(raters):
            if mode == "all_unsure":
                word = "unsure"
            elif mode == "all_judged" and rater == 0:
                word = draw(st.sampled_from(VERDICT_WORDS[:2]))
            else:
                word = draw(st.sampled_from((*VERDICT_WORDS, None)))
            if word is not None:
                rows.append((x, y, word, rater) if draw(st.booleans()) else (y, x, word, rater))
    n = population.n_items
    if n > 1 and draw(st.booleans()):  # gold-only pairs: judged, never drawn
        for _ in range(draw(st.integers(1, 3))):
            x, y = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
            if x != y:
                rows.append((x, y, draw(st.sampled_from(VERDICT_WORDS)), 0))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Judgements(empty, empty, np.zeros(0, dtype=object), empty)
    i, j, verdict, rater = zip(*rows)
    return Judgements(np.array(i), np.array(j), np.array(verdict, dtype=object), np.array(rater))


def within(low: float, value: float, high: float) -> bool:
    """``low <= value <= high`` up to rounding, relative to the magnitudes involved."""
    scale = TOLERANCE * max(1.0, abs(low), abs(high))
    return low - scale <= value <= high + scale


def same_float(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


# --- Added for the property tests of the remaining entry points (issue 32, item 5) ---------------


def _partition(labels: list) -> list[int]:
    first: dict = {}
    return [first.setdefault(label, len(first)) for label in labels]


@st.composite
def affected_populations(draw, max_items: int = 30) -> Population:
    """Like :func:`populations`, with at least one affected item (every sampling entry point refuses the
    others) by construction rather than by filtering: when Exp came out equal to Base, one item moves
    out of its cluster (or, a singleton, joins its neighbour's). Also Exp = Base with one item moved."""
    n = draw(st.integers(2, max_items))
    clusters = draw(st.integers(1, n))
    base = draw(st.lists(st.integers(0, clusters - 1), min_size=n, max_size=n))
    exp_kind = draw(st.sampled_from(["free", "singletons", "one", "moved"]))
    if exp_kind == "singletons":
        exp = list(range(n))
    elif exp_kind == "one":
        exp = [0] * n
    elif exp_kind == "moved":
        exp = list(base)
    else:
        exp = draw(st.lists(st.integers(0, clusters - 1), min_size=n, max_size=n))
    if _partition(base) == _partition(exp):
        k = draw(st.integers(0, n - 1))
        if exp.count(exp[k]) > 1:
            exp[k] = max(exp) + 1
        else:
            exp[k] = exp[(k + 1) % n]
    return population_from_labels(base, exp, draw(weights(n)))


@st.composite
def judged_samples(draw, max_items: int = 12, max_draws: int = 60):
    """``(population, sample, judgements)`` of a population with affected items (every scheme and edge)."""
    pop = draw(affected_populations(max_items))
    sample = draw(samples(pop, max_draws=max_draws))
    return pop, sample, draw(judgements(pop, sample))


def given_weights(population: Population) -> np.ndarray:
    """The weights ``population`` was built from (ones for unit weights)."""
    if population.unit_weights:
        return np.ones(population.n_items)
    return np.asarray(population.given_weight(population.weight), dtype=float)


_SHARES = st.floats(0.0, 1.0)
_WIDTHS = st.one_of(st.just(0.0), st.floats(0.0, 1.0), st.floats(1e-12, 1e-6))


@st.composite
def estimates(draw, low: float = -1.0, high: float = 1.0) -> Estimate:
    """An :class:`Estimate` as the estimators report one: the interval about the value, the sequence about
    the interval, the unsure range about the value; or its undefined forms (nothing judged, no interval
    yet, no sequence or unsure range computed)."""
    judged = draw(st.integers(0, 10**5))
    drawn = judged + draw(st.integers(0, 10**5))
    kind = draw(st.sampled_from(["full", "full", "full", "no_sequence", "no_interval", "undefined"]))
    nan = math.nan
    if kind == "undefined":
        return Estimate(value=nan, stderr=nan, ci_low=nan, ci_high=nan, judged_draws=judged, drawn_draws=drawn)
    value = draw(st.floats(low, high))
    if kind == "no_interval":
        return Estimate(value=value, stderr=nan, ci_low=nan, ci_high=nan, judged_draws=judged, drawn_draws=drawn)
    ci_low, ci_high = value - draw(_WIDTHS), value + draw(_WIDTHS)
    stderr = (ci_high - ci_low) / 3.92
    if kind == "no_sequence":
        return Estimate(value=value, stderr=stderr, ci_low=ci_low, ci_high=ci_high, judged_draws=judged, drawn_draws=drawn)
    cs_low, cs_high = ci_low - draw(_WIDTHS), ci_high + draw(_WIDTHS)
    unsure_low, unsure_high = value - draw(_WIDTHS), value + draw(_WIDTHS)
    return Estimate(value=value, stderr=stderr, ci_low=ci_low, ci_high=ci_high, judged_draws=judged, drawn_draws=drawn, cs_low=cs_low, cs_high=cs_high, unsure_low=unsure_low, unsure_high=unsure_high)


@st.composite
def rater_tables(draw, max_units: int = 12, max_raters: int = 4):
    """A verdict table for the agreement and Dawid–Skene entry points: ``(unit, rater, verdict)`` columns,
    at most one verdict per rater and unit; one rater or several, all unsure, units nobody judged."""
    n_units = draw(st.integers(1, max_units))
    n_raters = draw(st.integers(1, max_raters))
    mode = draw(st.sampled_from(["mixed", "all_unsure", "all_sure", "unanimous"]))
    truth = draw(st.lists(st.sampled_from(VERDICT_WORDS[:2]), min_size=n_units, max_size=n_units))
    unit, rater, verdict = [], [], []
    for u in range(n_units):
        for r in range(n_raters):
            if not draw(st.booleans()) and mode != "unanimous":
                continue  # this rater did not judge this unit
            if mode == "all_unsure":
                word = "unsure"
            elif mode == "unanimous":
                word = truth[u]
            elif mode == "all_sure":
                word = draw(st.sampled_from(VERDICT_WORDS[:2]))
            else:
                word = draw(st.sampled_from(VERDICT_WORDS))
            unit.append(u)
            rater.append(f"r{r}")
            verdict.append(word)
    return n_units, np.array(unit, dtype=np.int64), np.array(rater, dtype=object), np.array(verdict, dtype=object)


def truth_and_prediction():
    """A ground truth and a prediction of 1 to 15 items in up to 5 clusters each, with weights."""
    return st.integers(1, 15).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            weights(n),
        )
    )
