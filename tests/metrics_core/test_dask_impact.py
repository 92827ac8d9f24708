"""The Dask backend's impact metrics against the in-memory backend (issue #8, part 1).

On random populations (``reference.random_case``: unit, mild, lognormal and extreme weights;
int and text cluster ids) written as Parquet parts, the Dask backend gives the in-memory metrics
to 1e-12 overall, per Base cluster, per Exp cluster, per slice and per item (on the synchronous
scheduler); and the same numbers, bit for bit, for 1, 3 or 7 partitions on a LocalCluster of 2
workers, and on the synchronous scheduler.
"""

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core import dask_backend
from metrics_core.io import InputError
from tests.metrics_core import reference as ref
from tests.metrics_core.dask_run import items_frame, synchronous_scheduler, write_parts

SEEDS = [s for s in range(1, 14) if s != 10]  # seed 10 has nothing affected: tested apart
REL = 1e-12


def case(seed):
    base, exp, weights, _, groups = ref.random_case(seed)
    frame = items_frame(base, exp, weights, segment=groups)
    return frame, mc.population_from_labels(base, exp, weights), groups


def close(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    np.testing.assert_allclose(got, want, rtol=REL, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_impact_equals_in_memory(synchronous, tmp_path, seed):
    frame, pop, groups = case(seed)
    items = dask_backend.read_items(str(write_parts(frame, tmp_path / "items", 3, seed)))
    got, want = dask_backend.impact_metrics(items), mc.impact_metrics(pop)
    assert (got.items, got.affected_items) == (want.items, want.affected_items)
    close(got.total_weight, want.total_weight)
    close(got.affected_weight, want.affected_weight)
    for name in mc.IMPACT_METRICS:
        close(got.metrics[name], want.metrics[name])

    per_cluster = dask_backend.impact_per_cluster(items).compute()
    assert list(per_cluster.columns) == list(dask_backend.PER_CLUSTER_COLUMNS)
    for side, table in (("base", mc.impact_per_base_cluster(pop)), ("exp", mc.impact_per_exp_cluster(pop))):
        rows = per_cluster[per_cluster["clustering"] == side].set_index("cluster_id")
        assert sorted(map(str, rows.index)) == sorted(map(str, table.labels))
        rows = rows.loc[list(table.labels)]
        assert rows["items"].tolist() == table.items.tolist()
        assert rows["affected_items"].tolist() == table.affected_items.tolist()
        close(rows["weight"], table.weight)
        for name in mc.IMPACT_METRICS:
            close(rows[name], table.metrics[name])

    slices = dask_backend.impact_by_slice(items, "segment")
    want_slices = mc.impact_by_group(pop, groups)
    order = [list(slices.labels).index(label) for label in want_slices.labels]
    assert sorted(slices.labels.tolist()) == sorted(want_slices.labels.tolist())
    assert slices.items[order].tolist() == want_slices.items.tolist()
    for name in mc.IMPACT_METRICS:
        close(slices.metrics[name][order], want_slices.metrics[name])

    per_item = dask_backend.impact_per_item(items).compute().set_index("item_id").sort_index()
    want_items = mc.impact_per_item(pop)
    assert per_item["affected"].tolist() == want_items["Affected"].tolist()
    for name in dask_backend.PER_ITEM_METRICS:
        close(per_item[name], want_items[name])


def test_impact_does_not_depend_on_the_partitioning(client, tmp_path):
    frame, _, _ = case(7)
    big = pd.concat([frame.assign(item_id=frame["item_id"] + 100 * k) for k in range(20)], ignore_index=True)
    def impact_of(folder):
        items = dask_backend.read_items(str(folder))
        per_cluster = dask_backend.impact_per_cluster(items).compute()
        per_cluster = per_cluster.sort_values(["clustering", "cluster_id"], ignore_index=True)
        return dask_backend.impact_metrics(items), per_cluster

    results = [impact_of(write_parts(big, tmp_path / f"p{n_parts}", n_parts, seed=n_parts)) for n_parts in (1, 3, 7)]
    with synchronous_scheduler():
        results.append(impact_of(tmp_path / "p3"))  # the scheduler of the tests above
    for metrics, per_cluster in results[1:]:
        assert metrics == results[0][0]  # exact sums: the same floats, not just close ones
        pd.testing.assert_frame_equal(per_cluster, results[0][1], check_exact=True)


def test_nothing_affected_and_unit_weights(synchronous, tmp_path):
    items = dask_backend.read_items(str(write_parts(items_frame([1, 1, 2], [5, 5, 6]), tmp_path / "x", 2)))
    m = dask_backend.impact_metrics(items)
    assert (m.items, m.affected_items, m.total_weight) == (3, 0, 3.0)
    assert m.metrics["JaccardDistance"] == 0.0 and m.metrics["UnaffectedJaccardIndex"] == 1.0
    assert np.isnan(m.metrics["WeightFractionOfBaseCluster"])


@pytest.mark.parametrize(
    ("frame", "problem"),
    [
        (items_frame([1, 1], [1, 2], [1.0, -2.0]), "weight -2.0 must be greater than 0"),  # the in-memory message
        (items_frame([1, 1], [1, 2], [1.0, np.inf]), "weight inf is not finite"),
        (items_frame([1, 1, 2], [1, 2, 2], ids=["a", "b", "a"]), "duplicate item_id 'a'"),
        (items_frame([1.0, None], [1, 2]), "item_id 1: missing base_cluster (null)"),
        (pd.DataFrame({"item_id": [1], "base_cluster": [1]}), "missing column 'exp_cluster'"),
    ],
)
def test_bad_items_name_the_item(client, tmp_path, frame, problem):
    folder = write_parts(frame, tmp_path / "bad", 1)
    with pytest.raises(InputError) as err:
        dask_backend.read_items(str(folder))
    assert problem in str(err.value)
