"""Searching the queries in ascending order finds what numpy's searchsorted finds in their order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core._layout import ordered_searchsorted
from tests.metrics_core.strategies import PROPERTY_EXAMPLES

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
NUMBERS = st.one_of(st.integers(-5, 5), st.floats(-10, 10, allow_nan=False))


@PROPERTIES
@given(st.lists(NUMBERS, max_size=40), st.lists(NUMBERS, max_size=40), st.sampled_from(["left", "right"]))
def test_ordered_searchsorted_is_numpys_searchsorted(values, queries, side):
    values, queries = np.sort(np.array(values, dtype=float)), np.array(queries, dtype=float)
    found = ordered_searchsorted(values, queries, side)
    assert found.dtype == np.intp
    assert np.array_equal(found, np.searchsorted(values, queries, side=side))
    integers = np.floor(queries).astype(np.int64)
    assert np.array_equal(
        ordered_searchsorted(np.floor(values).astype(np.int64), integers, side),
        np.searchsorted(np.floor(values).astype(np.int64), integers, side=side),
    )
