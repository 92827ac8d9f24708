"""Item and cluster ids keep their type: integers are checked and matched as integers, and every
answer is the one reading them as text gives (``metrics_core.io.integer_text``, ``id_positions``).

CSV cells are text: a CSV column is integers only when every cell is the canonical decimal of an
int64, so that ``"007"`` and ``"7"`` stay two ids and an id's text is recovered exactly.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from metrics_core.io import (
    InputError,
    read_clustering_against_singletons,
    read_clusterings,
    read_gold_labels,
    read_items,
    read_truth_and_prediction,
)
from metrics_core.io.id_positions import matched_positions, positions_among
from metrics_core.io.integer_text import canonical_integers


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write_csv(name, header, rows):
    with open(name, "w") as f:
        f.write(header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows))
    return name


def write_parquet(name, columns):
    pq.write_table(pa.table(columns), name)
    return name


def error_text(read, *args):
    with pytest.raises(InputError) as caught:
        read(*args)
    return str(caught.value)


# ---------------------------------------------------------------------------- canonical text


@pytest.mark.parametrize(
    "cells, integers",
    [
        (["7", "-12", "0", "9223372036854775807", "-9223372036854775808"], True),
        (["7", "007"], False),
        (["7", "+7"], False),
        (["-0"], False),
        (["0x10"], False),  # Arrow parses hexadecimal
        (["4294967295", "0xFFFFFFFF"], False),  # as long as the decimal: only equality with it tells
        (["9223372036854775808"], False),
        ([" 7"], False),
        (["7.0"], False),
    ],
)
def test_text_is_integers_only_when_written_canonically(cells, integers):
    found = canonical_integers(pa.array(cells))
    assert (found is not None) == integers
    if integers:
        assert pc.cast(found, pa.string()).to_pylist() == cells


def test_csv_ids_and_labels_written_as_integers_are_read_as_integers():
    write_csv("items.csv", "item_id,base_cluster,exp_cluster,country", [(30, 1, 5, "fr"), (-2, 1, 6, "12")])
    items = read_items("items.csv")
    assert (items.ids.type, items.base_cluster.type, items.exp_cluster.type) == (pa.int64(),) * 3
    assert items.item_id.to_pylist() == ["30", "-2"]  # the text as written
    assert items.attributes["country"].to_pylist() == ["fr", "12"]  # attributes are text


def test_csv_ids_with_one_non_canonical_cell_stay_text():
    write_csv("items.csv", "item_id,base_cluster,exp_cluster", [("7", "01", "a"), ("007", "1", "a")])
    items = read_items("items.csv")
    assert items.ids.to_pylist() == ["7", "007"]
    assert items.base_cluster.to_pylist() == ["01", "1"]


def test_a_csv_file_and_a_parquet_file_of_the_same_integers_read_alike():
    rows = [(5, 10, 20, 1.5), (3, 10, 21, 1.0), (9, 11, 21, 2.0)]
    write_csv("items.csv", "item_id,base_cluster,exp_cluster,weight", rows)
    columns = dict(zip(("item_id", "base_cluster", "exp_cluster", "weight"), map(list, zip(*rows))))
    write_parquet("items.parquet", columns)
    from_csv, from_parquet = read_items("items.csv"), read_items("items.parquet")
    for name in ("ids", "base_cluster", "exp_cluster"):
        assert getattr(from_csv, name).equals(getattr(from_parquet, name))
    assert from_csv.weight.tolist() == from_parquet.weight.tolist()


# ---------------------------------------------------------------------------- duplicates


def test_duplicate_integer_ids_are_named_as_text_finds_them():
    write_csv("items.csv", "item_id,base_cluster,exp_cluster", [(7, 1, 1), (8, 1, 1), (7, 1, 1)])
    assert error_text(read_items, "items.csv") == "items.csv: line 4: duplicate item_id '7' (first on line 2)"
    write_parquet("items.parquet", {"item_id": [7, 8, 7], "base_cluster": [1] * 3, "exp_cluster": [1] * 3})
    assert error_text(read_items, "items.parquet") == "items.parquet: row 3: duplicate item_id '7' (first on row 1)"


def test_duplicate_ids_of_a_wide_range_are_found():
    ids = [2**62, -(2**61), 5, 2**62]
    write_parquet("truth.parquet", {"item_id": ids, "cluster_id": [1, 1, 2, 2]})
    write_parquet("pred.parquet", {"item_id": ids[:3], "cluster_id": [1, 1, 2]})
    message = error_text(read_truth_and_prediction, "truth.parquet", "pred.parquet")
    assert message == f"truth.parquet: row 4: duplicate item_id '{2**62}' (first on row 1)"


# ---------------------------------------------------------------------------- matching two files


def by_text(values, among):
    return positions_among(pc.cast(values, pa.string()), pc.cast(among, pa.string()))


@pytest.mark.parametrize("span", [1, 10**15])  # a direct table, and a hash of a wide range
def test_matched_positions_of_integers_are_those_of_their_text(span):
    rng = np.random.default_rng(span % 97)
    among = pa.array(rng.permutation(500).astype(np.int64) * span - 7)
    values = pa.array(np.concatenate([rng.choice(among.to_numpy(), 300), [-8, 500 * span, 2**62]]))
    assert matched_positions(values, among).tolist() == by_text(values, among).tolist()
    assert matched_positions(among, among).tolist() == list(range(500))


def test_integer_ids_match_text_ids_only_where_written_alike():
    assert matched_positions(pa.array([7, 8]), pa.array(["007", "7"])).tolist() == [1, -1]
    assert matched_positions(pa.array(["07", "8"]), pa.array([8, 7])).tolist() == [-1, 0]


def test_compare_files_match_integer_ids_in_another_order():
    write_parquet("truth.parquet", {"item_id": [4, 1, 2, 3], "cluster_id": [1, 1, 2, 2], "weight": [1.0, 2, 3, 4]})
    write_csv("pred.csv", "item_id,cluster_id", [(3, "x"), (9, "y"), (1, "y"), (4, "x")])
    items = read_truth_and_prediction("truth.parquet", "pred.csv")
    assert items.ids.to_pylist() == [4, 1, 3]  # the truth's order, item 2 and 9 dropped
    assert items.exp_cluster.to_pylist() == ["x", "y", "x"]
    assert (items.weight.tolist(), items.dropped_items) == ([1.0, 2.0, 4.0], 2)


def test_a_csv_id_written_with_leading_zeros_matches_no_integer_id():
    write_parquet("base.parquet", {"item_id": [7, 8], "cluster_id": [1, 1]})
    write_csv("exp.csv", "item_id,cluster_id", [("007", 1), ("8", 2)])
    items = read_clusterings("base.parquet", "exp.csv")
    assert (items.item_id.to_pylist(), items.dropped_items) == (["8"], 2)


def test_missing_weights_name_the_integer_id_as_text():
    write_parquet("base.parquet", {"item_id": [7, 8], "cluster_id": [1, 1]})
    write_parquet("exp.parquet", {"item_id": [8, 7], "cluster_id": [1, 2]})
    write_csv("weights.csv", "item_id,weight", [(7, 2.0)])
    assert error_text(read_clusterings, "base.parquet", "exp.parquet", "weights.csv") == (
        "weights.csv: no weight for item_id '8'"
    )
    write_csv("weights.csv", "item_id,weight", [(8, 3.0), (7, 2.0)])
    assert read_clusterings("base.parquet", "exp.parquet", "weights.csv").weight.tolist() == [2.0, 3.0]


def test_singletons_keep_text_ids_as_their_exp_labels():
    write_parquet("base.parquet", {"item_id": [7, 8], "cluster_id": [1, 1]})
    items = read_clustering_against_singletons("base.parquet")
    assert items.exp_cluster.to_pylist() == ["7", "8"]


def test_gold_labels_of_text_item_ids_from_an_integer_file():
    write_parquet("gold.parquet", {"item_id": [8, 7], "cluster_id": [2, 1]})
    assert read_gold_labels("gold.parquet", pa.array(["7", "8"])).to_pylist() == [1, 2]
    assert error_text(read_gold_labels, "gold.parquet", pa.array(["7", "007"])) == (
        "gold.parquet: no ground-truth cluster for item_id '007' (1 of 2 items lack one)"
    )
