"""Property-based tests of the model-assisted estimates (abcde-spec §15), over generated populations,
samples, verdicts (all unsure, nothing judged, several raters, gold-only pairs) and scores (constant,
any real scale, probabilities), in draw order: no exception; every interval holds its value and the
sequence holds the interval; ``score_lambda=0`` is the human-only estimate; the same inputs give the
same numbers."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import (
    batch_order_rng,
    draw_positions,
    estimate_quality,
    estimate_quality_assisted,
    labelled_prefix,
)
from tests.metrics_core.strategies import PROPERTY_EXAMPLES, affected, judgements, populations, samples, within

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
FIELDS = ("value", "stderr", "ci_low", "ci_high", "cs_low", "cs_high")


@st.composite
def scored_cases(draw):
    pop = draw(populations())
    if not affected(pop):
        return None
    sample = draw(samples(pop))
    judged = draw(judgements(pop, sample))
    kind = draw(st.sampled_from(["constant", "probability", "real"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    scores = {
        "constant": np.full(len(sample), 0.5),
        "probability": rng.uniform(size=len(sample)),
        "real": rng.normal(scale=100.0, size=len(sample)),
    }[kind]
    positions = draw_positions(sample, rng=batch_order_rng(seed=1, batch=0))
    verdicts = judged.verdicts()
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    resolved = np.isin(low * pop.n_items + high, verdicts.a * pop.n_items + verdicts.b)
    counts, _ = labelled_prefix(sample, positions, resolved)
    return pop, sample, verdicts, scores, counts


@PROPERTIES
@given(scored_cases())
def test_model_assisted_intervals_hold_their_values_and_lambda_zero_is_human_only(case):
    if case is None:
        return
    pop, sample, verdicts, scores, counts = case
    result = estimate_quality_assisted(pop, sample, verdicts, scores, labelled_draws=counts)
    for name, e in result.quality.estimates.items():
        if math.isnan(e.value) or math.isnan(e.stderr) and math.isnan(e.ci_low):
            continue
        assert within(e.ci_low, e.value, e.ci_high), (name, e)
        if not math.isnan(e.cs_low):
            assert within(e.cs_low, e.ci_low, e.ci_high) and within(e.ci_low, e.ci_high, e.cs_high), (name, e)
        saved = result.verdicts_saved[name]
        assert math.isnan(saved) or saved > 0, (name, saved)
    assert result.as_dict() == estimate_quality_assisted(pop, sample, verdicts, scores, labelled_draws=counts).as_dict()
    off = estimate_quality_assisted(pop, sample, verdicts, scores, labelled_draws=counts, score_lambda=0.0)
    human = estimate_quality(pop, sample, verdicts, labelled_draws=counts)
    for name, e in off.quality.estimates.items():
        for field in FIELDS:
            x, y = getattr(e, field), getattr(human[name], field)
            assert (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-9 * max(1.0, abs(y)), (name, field, x, y)
