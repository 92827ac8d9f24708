"""metrics_core.io.id_positions: integer item ids are found as integers, and exactly as text finds them.

Each case is checked against the lookup by text (the items' ids cast to text, the queries as read),
which is what ``ItemTable.positions_of`` did for every id before.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from metrics_core.io import ItemTable
from metrics_core.io.id_positions import DENSE_SPAN, integer_positions, integer_queries, positions_among


def items_with_ids(ids):
    n = len(ids)
    return ItemTable("items.parquet", ids, pa.array([1] * n), pa.array([1] * n), np.ones(n), {})


def by_text(ids, queries):
    """The reference: every id as text, looked up by hashing."""
    text = pc.cast(ids, pa.string())
    return positions_among(pc.cast(queries, pa.string()), text)


DENSE = pa.array([12, 7, 10, 0, -3], pa.int64())
SPARSE = pa.array([2**62, -(2**60), 5, 10**15], pa.int64())
QUERIES = ["7", "007", "-3", "-0", "0", "+7", " 7", "13", None, "12", "9223372036854775807"]


@pytest.mark.parametrize("ids", [DENSE, SPARSE, pa.array([3, 1], pa.uint8()), pa.array([2**64 - 1, 1], pa.uint64())])
@pytest.mark.parametrize("queries", [QUERIES, [q for q in QUERIES if q is None or q.strip("-").isdigit()]])
def test_integer_ids_are_found_as_text_finds_them(ids, queries):
    queries = pa.array(queries, pa.string())
    assert items_with_ids(ids).positions_of(queries).tolist() == by_text(ids, queries).tolist()


def test_integer_queries_of_integer_ids():
    items = items_with_ids(DENSE)
    assert items.positions_of(pa.array([7, 8, None, -3], pa.int32())).tolist() == [1, -1, -1, 4]
    assert items.positions_of(np.array([0, 12])).tolist() == [3, 0]
    assert items.positions_of(pa.array(["7", "10"]).dictionary_encode()).tolist() == [1, 2]


def test_text_that_is_written_as_no_integer_is_no_integer_id():
    ids, usable = integer_queries(pa.array(["5", "05", "-0", "0"]))
    assert (ids[usable].tolist(), usable.tolist()) == ([5, 0], [True, False, False, True])
    assert integer_queries(pa.array(["5", "x"])) is None  # looked up as text instead
    assert integer_queries(pa.array([1.0])) is None


def test_the_dense_table_and_the_hash_give_the_same_positions():
    rng = np.random.default_rng(0)
    dense = rng.permutation(1000) * 3 + 17  # span 3N: a direct table
    sparse = dense.astype(np.int64) * (DENSE_SPAN * 1000 + 1025)  # too wide a span: hashed
    for ids in (dense, sparse):
        wanted = np.concatenate(
            [rng.choice(ids, 300), ids.max() + rng.integers(1, 5, 10), ids.min() - 1 - np.arange(3)]
        )
        usable = rng.random(len(wanted)) < 0.9
        expected = [int(np.flatnonzero(ids == w)[0]) if ok and w in ids else -1 for w, ok in zip(wanted, usable)]
        assert integer_positions(ids, wanted, usable).tolist() == expected


def test_no_items():
    assert integer_positions(np.zeros(0, np.int64), np.array([1]), np.array([True])).tolist() == [-1]
