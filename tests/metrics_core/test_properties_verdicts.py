"""Property-based tests of the verdict entry points: verdicts_from_judgements, agreement, transitivity.

Over generated judgements (tests/metrics_core/strategies.py: one rater or several, all unsure,
none, gold-only pairs): no exception; counts add up to the rows; coefficients are defined or nan.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import agreement_summary, rater_agreement, transitivity_report
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, affected, judgements, populations, samples, within

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)


@st.composite
def judged(draw):
    pop = draw(populations(max_items=12))
    if not affected(pop):
        return None
    return draw(judgements(pop, draw(samples(pop, max_draws=60))))


@PROPERTIES
@given(judged())
def test_verdict_counts_add_up_to_the_rows(rows):
    if rows is None:
        return
    v = rows.verdicts()
    assert np.all(v.a < v.b)
    assert int(v.equivalent.sum() + v.not_equivalent.sum() + v.unsure.sum()) == len(rows.i)
    assert len({(a, b) for a, b in zip(v.a.tolist(), v.b.tolist())}) == len(v)
    share = v.equivalent_share(v.a, v.b)
    assert np.all(np.isnan(share) | ((share >= 0) & (share <= 1)))


@PROPERTIES
@given(judged())
def test_agreement_is_defined_or_nan(rows):
    if rows is None:
        return
    unit = [f"{min(a, b)}-{max(a, b)}" for a, b in zip(rows.i.tolist(), rows.j.tolist())]
    keys = list(zip(unit, rows.rater.tolist()))
    if len(set(keys)) < len(keys):  # a documented refusal: one verdict per rater and unit
        with pytest.raises(ValueError, match="two verdicts of the same rater on the same unit"):
            agreement_summary(unit=unit, verdict=rows.verdict, rater=rows.rater)
        return
    summary = agreement_summary(unit=unit, verdict=rows.verdict, rater=rows.rater)
    assert summary.verdicts <= len(rows.i) and summary.replicated_pairs <= len(set(unit))
    for share in (summary.unanimous_share, summary.observed_agreement, summary.unsure_share):
        assert math.isnan(share) or within(0.0, share, 1.0)
    for coefficient in (summary.fleiss_kappa, summary.krippendorff_alpha, summary.gwet_ac1):
        assert math.isnan(coefficient) or coefficient <= 1.0 + 1e-12
    for pair in rater_agreement(unit=unit, verdict=rows.verdict, rater=rows.rater):
        assert pair.as_dict() if hasattr(pair, "as_dict") else pair


@PROPERTIES
@given(judged())
def test_transitivity_triangles_are_inconsistent_and_closed(rows):
    if rows is None:
        return
    report = transitivity_report(i=rows.i, j=rows.j, verdict=rows.verdict, rater=rows.rater)
    assert len(report.triangles) <= report.closed_triangles
    for triangle in report.triangles:
        verdicts = sorted(pair.verdict for pair in triangle.pairs)
        assert verdicts == ["equivalent", "equivalent", "not_equivalent"]
