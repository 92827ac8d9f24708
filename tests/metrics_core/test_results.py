"""``Estimate``'s confidence sequence and unsure range: defaults, JSON, old snapshots, scaling."""

import dataclasses
import json
import math

import pytest

import metrics_core as mc
from metrics_core import Estimate, QualityEstimates
from metrics_core.derived.metrics import RangeEstimate


def test_old_constructions_and_snapshots_keep_working():
    old = Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500)
    assert all(math.isnan(x) for x in (old.cs_low, old.cs_high, old.unsure_low, old.unsure_high, old.cs_half_width))
    stored = {"value": 0.1, "stderr": 0.02, "ci_low": 0.06, "ci_high": 0.14, "judged_draws": 400, "drawn_draws": 500}
    back = Estimate.from_dict(stored)
    assert (back.value, back.ci_high, back.judged_draws) == (0.1, 0.14, 400)
    assert math.isnan(back.cs_low) and math.isnan(back.unsure_high)
    assert Estimate.from_dict(stored).as_dict() == stored | {"cs_low": None, "cs_high": None, "unsure_low": None, "unsure_high": None}


def test_round_trip_json_and_scaling():
    e = Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500,
                 cs_low=0.04, cs_high=0.17, unsure_low=0.08, unsure_high=0.13)
    data = e.as_dict()
    assert list(data) == ["value", "stderr", "ci_low", "ci_high", "judged_draws", "drawn_draws",
                          "cs_low", "cs_high", "unsure_low", "unsure_high"]
    assert Estimate.from_dict(json.loads(json.dumps(data))) == e
    assert e.cs_half_width == (0.17 - 0.04) / 2 and e.half_width == (0.14 - 0.06) / 2
    doubled = e.scaled(2.0)
    assert doubled == Estimate(value=0.2, stderr=0.04, ci_low=0.12, ci_high=0.28, judged_draws=400, drawn_draws=500,
                               cs_low=0.08, cs_high=0.34, unsure_low=0.16, unsure_high=0.26)
    q = QualityEstimates(scheme="jaccard", confidence=0.9, estimates={"GoodMinusBadDistance": e})
    assert QualityEstimates.from_dict(json.loads(json.dumps(q.as_dict()))) == q


def test_slices_scale_sequences_and_unsure_ranges():
    import numpy as np

    pop = mc.population_from_labels([0, 0, 0, 1, 1], [0, 0, 1, 1, 1])
    s = mc.sample_pairs(pop, n_draws=500, rng=np.random.default_rng(0))
    v = mc.verdicts_from_judgements([1, 0, 2, 2], [2, 2, 3, 4], ["not_equivalent", "unsure", "equivalent", "unsure"])
    for part in mc.estimate_quality_by_slice(pop, s, v, slice_of_item=[0, 0, 0, 1, 1], labels=["x", "y"]):
        factor = 1 / part.weight_fraction
        for name, e in part.contribution.estimates.items():
            m = part.metric[name]
            for field in ("cs_low", "cs_high", "unsure_low", "unsure_high"):
                assert getattr(m, field) == getattr(e, field) * factor or math.isnan(getattr(e, field)), (name, field)


@pytest.mark.parametrize(
    "result",
    [mc.Estimate, RangeEstimate, mc.QualityEstimates, mc.Decision, mc.Plan, mc.AgreementSummary, mc.ImpactMetrics],
    ids=lambda result: result.__name__,
)
def test_results_are_built_by_keyword_only(result):
    """Ten floats in a row are easy to swap unseen: every field of a result is keyword-only."""
    fields = dataclasses.fields(result)
    assert all(f.kw_only for f in fields)
    required = [f for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    with pytest.raises(TypeError, match="positional argument"):
        result(*[0] * len(required))
    built = result(**{f.name: 0 for f in required})
    assert [getattr(built, f.name) for f in required] == [0] * len(required)
