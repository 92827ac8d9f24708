"""The Wilson interval of metrics_core.proportions against scipy's, over a grid of cases."""

import itertools
from statistics import NormalDist

import pytest
from scipy.stats import binomtest

from metrics_core.proportions import proportion_interval, wilson_interval

TRIALS = (1, 2, 3, 7, 10, 50, 333, 10_000)
CONFIDENCES = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)


def cases():
    for n, confidence in itertools.product(TRIALS, CONFIDENCES):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1))):
            yield k, n, confidence


@pytest.mark.parametrize(("k", "n", "confidence"), list(cases()))
def test_wilson_interval_is_scipys(k, n, confidence):
    expected = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    low, high = wilson_interval(k / n, n, z)
    assert low == pytest.approx(expected.low, rel=1e-12, abs=1e-14)
    assert high == pytest.approx(expected.high, rel=1e-12, abs=1e-14)
    assert proportion_interval(k, n, confidence) == (low, high)
