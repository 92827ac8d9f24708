"""Estimates from a SampleContext (what a backend without the population provides) are the
estimates from the population: the same numbers, with and without a slice."""

import numpy as np
import pytest

import metrics_core as mc
from tests.metrics_core.helpers import random_change


def judged(seed, scheme):
    rng = np.random.default_rng(seed)
    while True:
        base, exp, ideal, weights = random_change(rng, n_items=300)
        pop = mc.population_from_labels(base, exp, weights)
        if pop.cell_affected().any():
            break
    sample = mc.sample_pairs(pop, n_draws=1500, scheme=scheme, rng=rng)
    x, y = mc.pairs_for_judgement(sample, rng=rng)
    verdict = np.where(rng.random(len(x)) < 0.1, "unsure", np.where(ideal[x] == ideal[y], "equivalent", "not_equivalent"))
    keep = rng.random(len(x)) < 0.8  # some pairs unjudged
    return pop, sample, mc.verdicts_from_judgements(x[keep], y[keep], verdict[keep])


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_estimates_from_a_context_equal_those_from_the_population(scheme):
    for seed in range(4):
        pop, sample, verdicts = judged(seed, scheme)
        expected = mc.estimate_quality(pop, sample, verdicts, confidence=0.9).as_dict()
        context = mc.sample_context(pop, sample)
        assert mc.estimate_quality(context, sample, verdicts, confidence=0.9).as_dict() == expected
        mask = np.arange(pop.n_items) % 3 == 0
        sliced = mc.estimate_quality(pop, sample, verdicts, vantage=mask).as_dict()
        assert mc.estimate_quality(mc.sample_context(pop, sample, mask), sample, verdicts).as_dict() == sliced


def test_a_context_from_columns_gives_the_same_derived_metrics():
    pop, sample, verdicts = judged(9, "jaccard")
    context = mc.sample_context(pop, sample)
    rebuilt = mc.SampleContext.from_columns(
        union=context.union, base=context.base, exp=context.exp, totals=context.totals,
        rate_totals=context.rate_totals, exact=mc.impact_metrics(pop).metrics,
    )
    expected = mc.derived_metrics(pop, sample, verdicts, rng=np.random.default_rng(3), n_boot=100).as_dict()
    assert mc.derived_metrics(rebuilt, sample, verdicts, rng=np.random.default_rng(3), n_boot=100).as_dict() == expected


def test_a_context_is_checked():
    pop, sample, verdicts = judged(2, "jaccard")
    context = mc.sample_context(pop, sample)
    with pytest.raises(ValueError, match="one value per sample row"):
        mc.SampleContext.from_columns(union=context.union[:-1], base=context.base, exp=context.exp,
                                      totals=context.totals, rate_totals=context.rate_totals, exact=context.exact)
    with pytest.raises(ValueError, match="exact lacks JaccardDistance"):
        mc.SampleContext.from_columns(union=context.union, base=context.base, exp=context.exp, totals=context.totals,
                                      rate_totals=context.rate_totals, exact={"AffectedWeightFraction": 1.0,
                                                                              "WeightFractionOfBaseCluster": 0.5})
    with pytest.raises(ValueError, match="vantage needs the population"):
        mc.estimate_quality(context, sample, verdicts, vantage=np.ones(pop.n_items, dtype=bool))
    shorter = mc.PairSample(sample.scheme, sample.i[:5], sample.j[:5], sample.pair_class[:5], sample.stratum[:5],
                            sample.draws[:5])
    with pytest.raises(ValueError, match="the sample has 5"):
        mc.estimate_quality(context, shorter, verdicts)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_jaccard_contributions_from_a_context(scheme):
    pop, sample, _ = judged(5, scheme)
    expected = mc.jaccard_contributions(pop, sample)
    np.testing.assert_allclose(mc.jaccard_contributions(mc.sample_context(pop, sample), sample), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="every row"):
        mc.jaccard_contributions(mc.sample_context(pop, sample, np.arange(pop.n_items) % 2 == 0), sample)
