"""The synthetic coverage of test_model_assisted_coverage.py for the random, inverted and partly inverted
scores: a module of its own, so that the test runner spreads the simulations over its workers."""

import pytest

from tests.metrics_core.model_assisted_simulation import SCORE_KINDS, check_synthetic_coverage


@pytest.mark.slow
@pytest.mark.parametrize("kind", SCORE_KINDS[2:])
def test_intervals_cover_with_a_useless_or_inverted_score(kind):
    """As test_model_assisted_coverage.py's, for a random score (its widths: median ratio ≤ 1.02, 95th
    percentile ≤ 1.05), an inverted one (which the calibration turns round: merge distances ≤ 0.8 at
    400 verdicts) and one inverted in the merge class only."""
    check_synthetic_coverage(kind)
