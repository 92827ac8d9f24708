"""Readers for a gold clustering and for the absolute-quality experiment (one clustering, Exp all singletons)."""

import numpy as np
import pyarrow as pa
import pytest

from metrics_core.io import InputError, read_clustering_against_singletons, read_gold_labels


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_gold_labels_follow_the_items_order_and_ignore_other_items(tmp_path):
    gold = write(tmp_path, "gold.csv", "item_id,cluster_id\nc,y\na,x\nz,q\nb,x\n")
    labels = read_gold_labels(gold, pa.array(["a", "b", "c"]))
    assert labels.to_pylist() == ["x", "x", "y"]


def test_an_item_without_gold_is_named(tmp_path):
    gold = write(tmp_path, "gold.csv", "item_id,cluster_id\na,x\n")
    with pytest.raises(InputError) as raised:
        read_gold_labels(gold, pa.array(["a", "b", "c"]))
    assert str(raised.value) == f"{gold}: no ground-truth cluster for item_id 'b' (2 of 3 items lack one)"


def test_a_gold_file_is_validated_like_any_clustering(tmp_path):
    gold = write(tmp_path, "gold.csv", "item_id,cluster_id\na,x\na,y\n")
    with pytest.raises(InputError, match="line 3: duplicate item_id 'a'"):
        read_gold_labels(gold, pa.array(["a"]))


def test_one_clustering_against_singletons(tmp_path):
    clustering = write(tmp_path, "c.csv", "item_id,cluster_id\na,1\nb,1\nc,2\n")
    weights = write(tmp_path, "w.csv", "item_id,weight\nc,3\nb,2\na,1\n")
    items = read_clustering_against_singletons(clustering, weights)
    assert items.exp_cluster.to_pylist() == ["a", "b", "c"]
    assert items.weight.tolist() == [1.0, 2.0, 3.0]
    population = items.to_population()
    assert len(population.exp_labels) == 3 and not population.cell_affected()[population.cell][2]
    assert np.array_equal(read_clustering_against_singletons(clustering).weight, np.ones(3))


def test_missing_weight_is_named(tmp_path):
    clustering = write(tmp_path, "c.csv", "item_id,cluster_id\na,1\nb,1\n")
    weights = write(tmp_path, "w.csv", "item_id,weight\na,1\n")
    with pytest.raises(InputError, match="no weight for item_id 'b'"):
        read_clustering_against_singletons(clustering, weights)
