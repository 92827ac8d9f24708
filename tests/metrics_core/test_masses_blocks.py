"""The exact class totals, summed a block of affected cells at a time, are the one (cells, 4) array's
sums over every cell to the bit."""

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import masses


@pytest.mark.parametrize("scheme", mc.SCHEMES)
@pytest.mark.parametrize("weighted", [False, True])
def test_class_totals_by_blocks_are_the_whole_sum(scheme, weighted):
    rng = np.random.default_rng(11)
    n = 5 * masses.CELL_BLOCK + 123  # cells in several blocks, the last one short
    base = rng.integers(0, n // 3, n)
    exp = np.where(rng.random(n) < 0.3, rng.integers(0, n, n), base)
    pop = mc.population_from_labels(base, exp, rng.lognormal(size=n) if weighted else None)
    terms = masses.cell_class_terms(
        scheme,
        sets=pop.cell_sets,
        affected=pop.cell_affected(),
        cell_size=pop.cell_size,
        weight=pop.cell_weight,
        weight_sq=pop.cell_weight_sq,
    )
    assert len(terms) > 2 * masses.CELL_BLOCK
    unaffected = ~pop.cell_affected()
    assert np.count_nonzero(~unaffected) > 2 * masses.CELL_BLOCK and unaffected.any()
    assert not terms[unaffected].any()  # what lets the totals skip them
    assert masses.class_totals(pop, scheme).tolist() == (terms.sum(axis=0) / pop.total_weight).tolist()
    vantage = rng.random(n) < 0.5
    assert np.isfinite(masses.class_totals(pop, scheme, vantage)).all()


@pytest.mark.parametrize("vantage", [False, True])
def test_the_totals_of_several_schemes_in_one_pass_are_each_schemes_own(vantage):
    """The estimates take their scheme's totals and the precision ones in one pass over the cells:
    each is the bit-for-bit total of that scheme alone, on a fresh population (nothing cached)."""
    rng = np.random.default_rng(12)
    n = 3 * masses.CELL_BLOCK + 77
    base = rng.integers(0, n // 3, n)
    exp = np.where(rng.random(n) < 0.3, rng.integers(0, n, n), base)
    weights, mask = rng.lognormal(size=n), (rng.random(n) < 0.5 if vantage else None)

    def population():
        return mc.population_from_labels(base, exp, weights)

    together = masses.class_totals_of_schemes(population(), ("stratified", "precision", "stratified"), mask)
    assert list(together) == ["stratified", "precision"]
    for scheme in ("stratified", "precision"):
        alone = masses.class_totals(population(), scheme, mask)
        assert together[scheme].tolist() == alone.tolist()
    assert together["stratified"].tolist() != together["precision"].tolist()
