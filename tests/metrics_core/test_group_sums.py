"""metrics_core.group_sums: block-wise counts and sums equal numpy's bincount exactly, and the
population built with them equals the one built with bincount: its counts and cell weights bit for
bit, its cluster weights (sums of its cells' weights) to rounding."""

import numpy as np
import pytest

from metrics_core import population_from_labels
from metrics_core.group_sums import BLOCK, group_counts, group_sums


@pytest.mark.parametrize("n", [0, 1, 1000, 2 * BLOCK + 17])
def test_counts_and_sums_equal_bincount_bit_for_bit(n):
    rng = np.random.default_rng(n)
    codes = rng.integers(0, max(n // 3, 1), n).astype(np.int32)
    values = rng.lognormal(0.0, 3.0, n)  # magnitudes far apart: the order of the additions shows
    k = max(n // 3, 1) + 2
    assert np.array_equal(group_counts(codes, k), np.bincount(codes, minlength=k))
    assert np.array_equal(group_sums(codes, values, k), np.bincount(codes, weights=values, minlength=k))
    squared = np.bincount(codes, weights=values**2, minlength=k)
    assert np.array_equal(group_sums(codes, values, k, squared=True), squared)


@pytest.mark.parametrize("kind", ["dense", "wide", "text"])
def test_population_sizes_and_weights_are_bincounts_of_its_codes(kind):
    rng = np.random.default_rng(7)
    n, k = 5000, 1500
    base = rng.integers(0, k, n)
    exp = np.where(rng.random(n) < 0.2, rng.integers(0, k, n), base)
    if kind == "wide":
        base, exp = base * 10**12, exp * 10**12 - 1
    if kind == "text":
        base, exp = base.astype(str), exp.astype(str)
    weight = rng.uniform(0.5, 2.0, n)
    pop = population_from_labels(base, exp, weight)
    for codes, size, total in (
        (pop.base, pop.base_size, pop.base_weight),
        (pop.exp, pop.exp_size, pop.exp_weight),
        (pop.cell, pop.cell_size, pop.cell_weight),
    ):
        assert np.array_equal(size, np.bincount(codes, minlength=len(size)))
        # A cluster's weight adds its cells' weights (one pass over the items, not three): the
        # same sum in another order.
        np.testing.assert_allclose(total, np.bincount(codes, weights=weight, minlength=len(size)), rtol=1e-14, atol=0)
    assert np.array_equal(pop.cell_weight, np.bincount(pop.cell, weights=weight, minlength=len(pop.cell_size)))
    assert np.array_equal(pop.cell_weight_sq, np.bincount(pop.cell, weights=weight**2, minlength=len(pop.cell_size)))
    unit = population_from_labels(base, exp)
    assert np.array_equal(unit.cell_size, np.bincount(unit.cell, minlength=len(unit.cell_size)))
