import math

import numpy as np
import pytest

from metrics_core import (
    group_contribution,
    impact_metrics,
    impact_per_base_cluster,
    impact_per_exp_cluster,
    population_from_labels,
)


def test_a_group_contribution_is_metric_times_weight_over_total():
    assert group_contribution(metric=0.5, weight=2.0, total_weight=8.0) == 0.125
    assert isinstance(group_contribution(metric=0.5, weight=2, total_weight=8), float)
    assert group_contribution(metric=[0.5, 0.25], weight=[2.0, 4.0], total_weight=8).tolist() == [0.125, 0.125]
    assert math.isnan(group_contribution(metric=float("nan"), weight=1.0, total_weight=2.0))


@pytest.mark.parametrize("table", [impact_per_base_cluster, impact_per_exp_cluster])
def test_the_clusters_of_a_clustering_add_up_to_the_overall_metric(table):
    rng = np.random.default_rng(3)
    base, exp = rng.integers(0, 40, 500), rng.integers(0, 30, 500)
    population = population_from_labels(base, exp, rng.uniform(0.5, 2.0, 500))
    groups = table(population)
    overall = impact_metrics(population)
    for name in ("JaccardDistance", "SplitDistance", "MergeDistance"):
        shares = group_contribution(metric=groups.metrics[name], weight=groups.weight, total_weight=overall.total_weight)
        assert shares.sum() == pytest.approx(overall.metrics[name], rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"metric": 0.5, "weight": 1.0, "total_weight": 0.0}, "total_weight must be a positive finite number"),
        ({"metric": 0.5, "weight": 1.0, "total_weight": float("inf")}, "total_weight must be a positive finite number"),
        ({"metric": 0.5, "weight": 1.0, "total_weight": True}, "total_weight must be a positive number"),
        ({"metric": 0.5, "weight": 1.0, "total_weight": "8"}, "total_weight must be a positive number"),
        ({"metric": 0.5, "weight": -1.0, "total_weight": 8.0}, "weight must be ≥ 0"),
        ({"metric": "high", "weight": 1.0, "total_weight": 8.0}, "metric must be numeric"),
        ({"metric": [0.1, 0.2], "weight": [1.0, 2.0, 3.0], "total_weight": 8.0}, "metric and weight must have matching shapes"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        group_contribution(**kwargs)
