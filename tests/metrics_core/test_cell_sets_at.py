"""The set weights, stratum masses and affected flags of some cells, or computed a block of cells at a
time, are those of every cell computed at once, to the bit (the samples drawn from them are unchanged)."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core import masses
from metrics_core.population import cells_affected
from metrics_core.sampling import SCHEME_STRATA
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, populations

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)


def _fresh(pop: mc.Population) -> mc.Population:
    """The same population without its cached properties."""
    return dataclasses.replace(pop)


def _check_cells(pop: mc.Population, cells: np.ndarray) -> None:
    every = _fresh(pop).cell_sets
    for sets in (_fresh(pop).cell_sets_at(cells), pop.cell_sets_at(cells)):  # not computed, then cached
        assert list(sets) == list(every)
        for name, values in every.items():
            assert np.array_equal(sets[name], values[cells]), name
    for scheme, strata in SCHEME_STRATA.items():
        for classes in strata.values():
            whole = pop.cell_weight * masses.cell_stratum_factor(pop, scheme, classes)
            assert np.array_equal(masses.cell_stratum_masses(_fresh(pop), scheme, classes, cells), whole[cells])


@PROPERTIES
@given(populations(), st.data())
def test_the_sets_and_masses_of_some_cells_are_those_of_every_cell(pop, data):
    n_cells = len(pop.cell_weight)
    cells = np.array(data.draw(st.lists(st.integers(0, n_cells - 1), max_size=2 * n_cells)), dtype=np.int64)
    _check_cells(pop, cells)
    _check_cells(pop, np.flatnonzero(pop.cell_affected()))
    expected = cells_affected(
        base_size=pop.base_size[pop.cell_base], exp_size=pop.exp_size[pop.cell_exp], cell_size=pop.cell_size
    )
    assert np.array_equal(_fresh(pop).cell_affected(), expected)


def test_by_blocks_of_cells_the_same_as_at_once():
    rng = np.random.default_rng(5)
    n = 300_007  # several blocks of cells, the last one short
    base = rng.integers(0, n // 2, n)
    exp = np.where(rng.random(n) < 0.6, rng.integers(0, n, n), base)
    for weights in (None, rng.lognormal(size=n)):
        pop = mc.population_from_labels(base, exp, weights)
        assert len(pop.cell_weight) > 3 * (1 << 16)  # the population's blocks of cells
        _check_cells(pop, np.flatnonzero(pop.cell_affected()))
        expected = cells_affected(
            base_size=pop.base_size[pop.cell_base], exp_size=pop.exp_size[pop.cell_exp], cell_size=pop.cell_size
        )
        assert np.array_equal(pop.cell_affected(), expected)
