"""Property-based tests of raters who err (abcde-spec §13) and of Cohen's kappa.

Over generated verdict tables (tests/metrics_core/strategies.py: one rater or several, all unsure,
unanimous, units nobody judged, gold units, unit groups and weights) and judged samples (gold-only
pairs, gold answers, every scheme, extreme but legal weights): the Dawid–Skene fit gives
probabilities, keeps gold answers, leaves units without a sure verdict undefined and does not
depend on the rows' order or the raters' names; the rater-aware estimates hold their values in
their intervals, sequences and unsure ranges, Good + Bad of a class is its total, and the same seed
gives the same numbers; Cohen's kappa is symmetric, at most 1, and each pair's is the kappa of the
units both raters judged.
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from metrics_core import (
    cohens_kappa,
    estimate_quality,
    estimate_quality_rater_aware,
    fit_dawid_skene,
    impact_metrics,
    metrics_for_scheme,
    pairwise_cohens_kappa,
)
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, VERDICT_WORDS, judged_samples, rater_tables, within

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
MAX_ITER = 50
CLASS_TOTALS = {
    ("GoodSplitDistance", "BadSplitDistance"): "SplitDistance",
    ("GoodMergeDistance", "BadMergeDistance"): "MergeDistance",
}


@st.composite
def fit_cases(draw):
    n_units, unit, rater, verdict = draw(rater_tables())
    truth = None
    if draw(st.booleans()):
        truth = np.array(
            draw(st.lists(st.sampled_from([math.nan, math.nan, 0.0, 1.0]), min_size=n_units, max_size=n_units))
        )
    group = (
        None if draw(st.booleans()) else np.array(draw(st.lists(st.integers(0, 2), min_size=n_units, max_size=n_units)))
    )
    weight = None
    if draw(st.booleans()):
        weight = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n_units, max_size=n_units)))
    permutation = np.array(draw(st.permutations(range(len(unit)))), dtype=np.int64)
    return n_units, unit, rater, verdict, truth, group, weight, permutation


@PROPERTIES
@given(fit_cases())
# Found by Hypothesis: a unit_group (or unit_weight) longer than the judged units, for units nobody
# judged at the end, was refused ("need one value per unit") though truth of that length was not.
@example(
    (
        1,
        np.zeros(0, np.int64),
        np.zeros(0, object),
        np.zeros(0, object),
        None,
        np.array([0]),
        None,
        np.zeros(0, np.int64),
    )
)
def test_dawid_skene_gives_probabilities_keeps_gold_and_ignores_order_and_names(case):
    n_units, unit, rater, verdict, truth, group, weight, permutation = case
    # max_iter bounds the EM where the likelihood is flat (one rater: it never converges; see the report).
    fit = fit_dawid_skene(
        unit=unit, rater=rater, verdict=verdict, truth=truth, unit_group=group, unit_weight=weight, max_iter=MAX_ITER
    )
    assert fit.raters.tolist() == sorted(set(rater.tolist()))
    assert fit.iterations <= MAX_ITER and (fit.converged or fit.iterations == MAX_ITER)
    for values in (fit.sensitivity, fit.specificity):
        assert np.all((values >= 0) & (values <= 1))
    assert np.all(np.isnan(fit.prevalence) | ((fit.prevalence >= 0) & (fit.prevalence <= 1)))
    confusion = fit.confusion()
    assert confusion.shape == (len(fit.raters), 2, 2) and np.allclose(confusion.sum(axis=2), 1.0)
    counts = {r: (0, 0) for r in fit.raters.tolist()}
    for r, word in zip(rater.tolist(), verdict.tolist()):
        sure, unsure = counts[r]
        counts[r] = (sure + (word != "unsure"), unsure + (word == "unsure"))
    assert [counts[r] for r in fit.raters.tolist()] == list(
        zip(fit.sure_verdicts.tolist(), fit.unsure_verdicts.tolist())
    )
    # The posterior: the truth for gold units, undefined without a sure verdict of positive weight,
    # else a probability.
    posterior = fit.posterior
    known = np.zeros(len(posterior), dtype=bool) if truth is None else ~np.isnan(truth)
    sure_units = set(unit[verdict != "unsure"].tolist())
    for u in range(len(posterior)):
        if known[u]:
            assert posterior[u] == truth[u]
        elif u in sure_units and (weight is None or weight[u] > 0):
            assert 0.0 <= posterior[u] <= 1.0
        else:
            assert math.isnan(posterior[u])
    assert fit.log_likelihood <= 1e-9 and fit.iterations >= 0
    # The rows' order and the raters' names (renamed in the same order) change nothing.
    renamed = np.array(["z" + r for r in rater.tolist()], dtype=object)
    other = fit_dawid_skene(
        unit=unit[permutation],
        rater=renamed[permutation],
        verdict=verdict[permutation],
        truth=truth,
        unit_group=group,
        unit_weight=weight,
        max_iter=MAX_ITER,
    )
    assert other.raters.tolist() == ["z" + r for r in fit.raters.tolist()]
    for field in ("sensitivity", "specificity", "posterior", "prevalence"):
        np.testing.assert_allclose(getattr(other, field), getattr(fit, field), atol=1e-6, err_msg=field)
    # Two raters or more who agree on every unit: each unit's posterior says what they said.
    if len(fit.raters) >= 2 and len(unit) == n_units * len(fit.raters) and truth is None and weight is None:
        said = {u: word for u, word in zip(unit.tolist(), verdict.tolist())}
        unanimous = all(said[u] == word != "unsure" for u, word in zip(unit.tolist(), verdict.tolist()))
        if unanimous:
            assert [p > 0.5 for p in posterior.tolist()] == [said[u] == "equivalent" for u in range(n_units)]


@st.composite
def rater_cases(draw):
    pop, sample, judged = draw(judged_samples(max_items=8, max_draws=40))
    gold_i, gold_j, gold_answer = [], [], []
    if draw(st.booleans()):  # gold answers on some judged pairs and on pairs nobody judged
        candidates = list(zip(judged.i.tolist(), judged.j.tolist()))
        candidates += [(draw(st.integers(0, pop.n_items - 1)), draw(st.integers(0, pop.n_items - 1)))]
        seen = set()
        for x, y in candidates:
            key = (min(x, y), max(x, y))
            if x != y and key not in seen and draw(st.booleans()):
                seen.add(key)
                gold_i.append(x)
                gold_j.append(y)
                gold_answer.append(draw(st.sampled_from(VERDICT_WORDS[:2])))
    return (
        pop,
        sample,
        judged,
        (gold_i, gold_j, gold_answer),
        draw(st.sampled_from([2, 5])),
        draw(st.integers(0, 2**32 - 1)),
    )


@PROPERTIES
@given(rater_cases(), st.booleans())
def test_rater_aware_estimates_hold_their_values_and_repeat_with_the_seed(case, resample_raters):
    pop, sample, judged, (gold_i, gold_j, gold_answer), n_boot, seed = case

    def estimate():
        return estimate_quality_rater_aware(
            pop,
            sample,
            i=judged.i,
            j=judged.j,
            verdict=judged.verdict,
            rater=judged.rater,
            gold_i=gold_i,
            gold_j=gold_j,
            gold_answer=gold_answer,
            rng=np.random.default_rng(seed),
            n_boot=n_boot,
            resample_raters=resample_raters,
        )

    result = estimate()
    q = result.quality
    assert q.scheme == sample.scheme and tuple(q.estimates) == metrics_for_scheme(sample.scheme)
    assert 0 <= result.converged_replicates <= n_boot == result.n_boot
    posterior = result.model.posterior
    assert np.all(np.isnan(posterior) | ((posterior >= 0) & (posterior <= 1)))
    assert np.all(result.a <= result.b)
    unit_of = {(a, b): u for u, (a, b) in enumerate(zip(result.a.tolist(), result.b.tolist()))}
    for x, y, answer in zip(gold_i, gold_j, gold_answer):
        assert posterior[unit_of[(min(x, y), max(x, y))]] == (1.0 if answer == "equivalent" else 0.0)
    v = result.verdicts
    assert np.all(v.a < v.b) and np.all((v.equivalent >= 0) & (v.not_equivalent >= 0) & (v.unsure >= 0))
    for name, e in q.estimates.items():
        assert 0 <= e.judged_draws <= e.drawn_draws, (name, e)
        if math.isnan(e.value):
            continue
        bounds = [(e.ci_low, e.ci_high), (e.cs_low, e.cs_high)]
        if name != "DeltaPrecision":  # a share's value (unsure verdicts left out) lies between their decisions;
            bounds.append((e.unsure_low, e.unsure_high))  # a mean of labels of both signs need not
        for low, high in bounds:
            if not math.isnan(low):
                assert within(low, e.value, high), (name, e)
    exact = impact_metrics(pop).metrics
    for (good, bad), total in CLASS_TOTALS.items():
        if good in q and not (math.isnan(q[good].value) or math.isnan(q[bad].value)):
            assert q[good].value + q[bad].value == pytest.approx(exact[total], rel=1e-9, abs=1e-12), total
    # The point estimates are estimate_quality's on the posteriors.
    raw = estimate_quality(pop, sample, v)
    for name, e in q.estimates.items():
        assert (math.isnan(e.value) and math.isnan(raw[name].value)) or e.value == pytest.approx(
            raw[name].value, rel=1e-12, abs=1e-15
        ), name
    if result.model.converged:  # the same seed, the same numbers (an EM that runs to max_iter takes 0.4 s)
        assert estimate().as_dict() == result.as_dict()


@PROPERTIES
@given(
    st.integers(0, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from(VERDICT_WORDS), min_size=n, max_size=n),
            st.lists(st.sampled_from(VERDICT_WORDS), min_size=n, max_size=n),
            st.permutations(range(n)),
        )
    )
)
def test_cohens_kappa_is_symmetric_at_most_one_and_blind_to_the_units_order(case):
    a, b, order = case
    kappa = cohens_kappa(a=a, b=b)
    assert math.isnan(kappa) or kappa <= 1.0 + 1e-12
    assert (math.isnan(kappa) and math.isnan(cohens_kappa(a=b, b=a))) or math.isclose(
        kappa, cohens_kappa(a=b, b=a), abs_tol=1e-12
    )
    shuffled = cohens_kappa(a=[a[k] for k in order], b=[b[k] for k in order])
    assert (math.isnan(kappa) and math.isnan(shuffled)) or math.isclose(kappa, shuffled, abs_tol=1e-12)
    codes = cohens_kappa(a=[VERDICT_WORDS.index(x) for x in a], b=[VERDICT_WORDS.index(x) for x in b])
    assert (math.isnan(kappa) and math.isnan(codes)) or kappa == codes
    # Undefined exactly without units or when both raters always gave one and the same verdict.
    assert math.isnan(kappa) == (len(a) == 0 or len(set(a) | set(b)) == 1)
    itself = cohens_kappa(a=a, b=a)
    assert itself == 1.0 or (math.isnan(itself) and len(set(a)) <= 1)


@PROPERTIES
@given(rater_tables(max_units=10, max_raters=4))
def test_pairwise_kappa_is_each_pairs_kappa_on_the_units_they_share(table):
    _, unit, rater, verdict = table
    rows = pairwise_cohens_kappa(unit=unit, verdict=verdict, rater=rater)
    said = {(u, r): v for u, r, v in zip(unit.tolist(), rater.tolist(), verdict.tolist())}
    raters = sorted(set(rater.tolist()))
    expected = []
    for x, first in enumerate(raters):
        for second in raters[x + 1 :]:
            shared = sorted({u for u, r in said if r == first} & {u for u, r in said if r == second})
            if shared:
                expected.append((first, second, shared))
    assert [(row.rater_a, row.rater_b, row.units) for row in rows] == [(a, b, len(s)) for a, b, s in expected]
    for row, (first, second, shared) in zip(rows, expected):
        kappa = cohens_kappa(a=[said[(u, first)] for u in shared], b=[said[(u, second)] for u in shared])
        assert (math.isnan(row.kappa) and math.isnan(kappa)) or math.isclose(row.kappa, kappa, abs_tol=1e-12)
