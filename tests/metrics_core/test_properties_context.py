"""Property-based tests of what the estimators read and what the tables lift: sample_context, jaccard
contributions, Exp clusters and group contributions, external measures per item, verdicts.

Over generated populations, samples and verdicts (tests/metrics_core/strategies.py: one item,
singletons, nothing affected, extreme but legal weights, gold-only pairs, several raters): a
``SampleContext`` gives the same estimates as its population; each sample row's share of
JaccardDistance is non-negative, zero for stable pairs, and the diff rows add up to it; the Exp
clusters' contributions add up to the overall metrics; per-item precision and recall average to
BCubed and swap when truth and prediction do; verdicts do not depend on the rows' order or on which
item of a pair came first (checked beside the context).
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from metrics_core import (
    PAIR_CLASSES,
    estimate_quality,
    external_measures,
    external_per_item,
    group_contribution,
    impact_metrics,
    impact_per_exp_cluster,
    jaccard_contributions,
    metrics_for_scheme,
    population_from_labels,
    sample_context,
    verdicts_from_judgements,
)
from tests.metrics_core.strategies import (
    PROPERTY_EXAMPLES,
    judged_samples,
    populations,
    truth_and_prediction,
    within,
)

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
DIFF = [PAIR_CLASSES.index("split"), PAIR_CLASSES.index("merge")]
SIGNED_EXTERNAL = {"AdjustedRandIndex", "NormalizedPivotedAccuracy"}


def close(x, y, rel=1e-9):
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= rel * max(1.0, abs(x), abs(y))


@PROPERTIES
@given(judged_samples(max_items=10, max_draws=40), st.data(), st.randoms(use_true_random=False))
def test_a_sample_context_estimates_as_its_population_and_contributions_add_up(case, data, random):
    pop, sample, judged = case
    check_verdicts(judged, random)
    verdicts = judged.verdicts()
    context = sample_context(pop, sample)
    assert np.array_equal(context.rows, np.arange(len(sample)))
    floor = np.maximum(context.base, context.exp) * (1 - 1e-12)  # weight(Base ∪ Exp), up to rounding
    assert np.all(context.union >= floor) and np.all(context.union <= (context.base + context.exp) * (1 + 1e-12))
    assert np.all(context.totals >= 0) and np.all(context.rate_totals >= 0)
    ours = estimate_quality(pop, sample, verdicts)
    assert tuple(ours.estimates) == metrics_for_scheme(sample.scheme)
    assert estimate_quality(context, sample, verdicts).as_dict() == ours.as_dict()
    # Each row's share of JaccardDistance(T): from the population or its context, the same.
    shares = jaccard_contributions(pop, sample)
    assert np.allclose(jaccard_contributions(context, sample), shares, rtol=1e-12, atol=0)
    diff = np.isin(sample.pair_class, DIFF)
    assert np.all(shares >= 0) and np.all(shares[~diff] == 0)
    jaccard_distance = impact_metrics(pop).metrics["JaccardDistance"]
    if diff.any():
        assert shares.sum() == pytest.approx(jaccard_distance, rel=1e-9, abs=1e-300)
    # A context of a slice of the vantage items: its rows are the sample's rows whose vantage item is in it.
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=pop.n_items, max_size=pop.n_items)))
    part = sample_context(pop, sample, vantage=mask)
    assert np.array_equal(part.rows, np.flatnonzero(mask[sample.i]))
    assert np.all(part.totals <= context.totals + 1e-12)  # shares of one: a subset's, up to rounding


@PROPERTIES
@given(populations(max_items=20))
# Found by Hypothesis: weights of 2**-1070 (reported in the given units, subnormal) made metric × weight
# underflow in group_contribution: the Exp clusters' JaccardDistance added up to 0.25, not 12/49.
@example(population_from_labels([0] * 7, [0] * 6 + [1], np.full(7, np.ldexp(1.0, -1070))))
def test_exp_clusters_contributions_add_up_to_the_overall_metrics(pop):
    overall = impact_metrics(pop)
    table = impact_per_exp_cluster(pop)
    assert len(table) == len(pop.exp_labels) and list(table.labels) == list(pop.exp_labels)
    assert int(table.items.sum()) == pop.n_items and int(table.affected_items.sum()) == overall.affected_items
    # Weights are reported in the given units: below 2**-1022 they keep fewer bits (2**-1074 apart).
    slack = len(table) * 2.0**-1074 / overall.total_weight
    assert table.weight.sum() == pytest.approx(overall.total_weight, rel=1e-9 + slack)
    for name in ("JaccardDistance", "SplitDistance", "MergeDistance", "SplitRate", "MergeRate"):
        parts = group_contribution(metric=table.metrics[name], weight=table.weight, total_weight=overall.total_weight)
        assert parts.shape == (len(table),) and np.all(parts >= 0)
        assert close(float(parts.sum()), overall.metrics[name], rel=1e-9 + slack), name
        for k in range(len(table)):  # a scalar group: a float, its term of the sum
            one = group_contribution(
                metric=float(table.metrics[name][k]), weight=float(table.weight[k]), total_weight=overall.total_weight
            )
            assert isinstance(one, float) and close(one, float(parts[k]), rel=1e-12)
            assert within(0.0, float(table.metrics[name][k]), 1.0)


@PROPERTIES
@given(truth_and_prediction())
# Found by Hypothesis (test_properties_population.py): one item 1.8e16 times the others' weight lost the
# truth's pair mass to rounding; PairwiseRecall was None but PairwiseF1 2.0 (the prediction's side alone).
@example(([0] * 6, [0, 0, 1, 0, 0, 0], np.array([7.90505033e-323] * 2 + [1.42404727e-306] + [7.90505033e-323] * 3)))
def test_per_item_precision_and_recall_average_to_bcubed_and_swap_with_the_roles(case):
    truth, pred, w = case
    per_item = external_per_item(truth, pred, weights=w)
    swapped = external_per_item(pred, truth, weights=w)
    measures = external_measures(truth, pred, weights=w)
    for name, value in measures.items():  # defined or None, and in range
        assert value is None or within(-1.0 if name in SIGNED_EXTERNAL else 0.0, value, 1.0), (name, value)
    weight = np.ones(len(truth)) if w is None else np.asarray(w, dtype=float)
    weight = weight / weight.max()  # the ratios, in range
    for name in ("Precision", "Recall", "JaccardDistance"):
        values = per_item[name]
        assert values.shape == (len(truth),) and np.all((values >= 0) & (values <= 1 + 1e-12)), name
    assert np.allclose(per_item["Precision"], swapped["Recall"], rtol=1e-12)
    assert np.allclose(per_item["Recall"], swapped["Precision"], rtol=1e-12)
    assert np.allclose(per_item["JaccardDistance"], swapped["JaccardDistance"], rtol=1e-12, atol=1e-15)
    for name, measure in (("Precision", "BCubedPrecision"), ("Recall", "BCubedRecall")):
        mean = float(np.sum(weight * per_item[name]) / np.sum(weight))
        assert mean == pytest.approx(measures[measure], rel=1e-9), name
    if len(set(zip(truth, pred))) == len(set(truth)) == len(set(pred)):  # the same clustering
        assert np.allclose(per_item["Precision"], 1.0) and np.allclose(per_item["JaccardDistance"], 0.0, atol=1e-12)


def check_verdicts(judged, random):
    """Verdicts do not depend on the rows' order or on which item of a pair came first; codes are names."""
    v = verdicts_from_judgements(judged.i, judged.j, judged.verdict)
    order = list(range(len(judged.i)))
    random.shuffle(order)
    flip = np.array([random.random() < 0.5 for _ in order], dtype=bool)
    i, j = judged.i[order], judged.j[order]
    other = verdicts_from_judgements(np.where(flip, j, i), np.where(flip, i, j), judged.verdict[order])
    for field in ("a", "b", "equivalent", "not_equivalent", "unsure"):
        assert np.array_equal(getattr(v, field), getattr(other, field)), field
    codes = verdicts_from_judgements(
        judged.i, judged.j, [("equivalent", "not_equivalent", "unsure").index(x) for x in judged.verdict]
    )
    assert np.array_equal(codes.equivalent, v.equivalent) and np.array_equal(codes.unsure, v.unsure)
