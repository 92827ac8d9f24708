"""ΔRecall and IQ's bootstrap from a labelled prefix (abcde-spec §14 with §7).

A prefix is a simple random sample of the draws, and the point estimates reweight each class to
all its drawn draws. The replicates must vary around those estimates: resampling the prefix alone
centred ΔPrecision's replicates 1.4-2 SEs away from the estimate (the prefix's own class shares).
"""

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.derived.bootstrap import replicate_inputs
from metrics_core.estimation import Draws
from tests.metrics_core.draw_order_simulation import DrawOrderRun, world


@pytest.fixture(scope="module")
def lognormal():
    return world("lognormal")


@pytest.mark.parametrize("scheme", ["jaccard", "stratified"])
@pytest.mark.parametrize("seed", [3, 4])
def test_replicates_of_a_partial_prefix_vary_around_the_estimate(lognormal, scheme, seed):
    run = DrawOrderRun.draw(lognormal, scheme, 2000, seed)
    verdicts, counts = run.judged(150)
    assert counts.sum() < run.sample.draws.sum()  # a partial prefix
    draws = Draws.build(lognormal.population, run.sample, verdicts, None, counts)
    replicates = replicate_inputs(draws, scheme, n_boot=4000, rng=np.random.default_rng(0))["DeltaPrecision"]
    estimate = mc.estimate_quality(lognormal.population, run.sample, verdicts, labelled_draws=counts)["DeltaPrecision"]
    assert abs(np.nanmean(replicates) - estimate.value) < 0.15 * estimate.stderr
    assert np.nanstd(replicates) == pytest.approx(estimate.stderr, rel=0.15)


def test_a_complete_prefix_bootstraps_as_every_draw(lognormal):
    """Every pair judged: the same replicates as without a prefix (same generator)."""
    run = DrawOrderRun.draw(lognormal, "jaccard", 2000, 5)
    verdicts, counts = run.judged(len(run.a))
    assert np.array_equal(counts, run.sample.draws)
    with_prefix = Draws.build(lognormal.population, run.sample, verdicts, None, counts)
    without = Draws.build(lognormal.population, run.sample, verdicts, None, None)
    for name, values in replicate_inputs(with_prefix, "jaccard", n_boot=200, rng=np.random.default_rng(1)).items():
        other = replicate_inputs(without, "jaccard", n_boot=200, rng=np.random.default_rng(1))[name]
        np.testing.assert_allclose(values, other, rtol=0, atol=1e-12, err_msg=name)
