"""Model-assisted ΔRecall and IQ (abcde-spec §7, §14, §15; metrics_core/derived/assisted.py): the identity
with the human-only ones at λ = 0, the bootstrap of the model-assisted estimator, the command line's
``model_assisted`` block, and a seeded coverage simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.derived import bootstrap
from metrics_core.derived.assisted import assisted_replicate_inputs, derived_metrics_assisted
from metrics_core.derived.bootstrap import replicate_inputs
from metrics_core.estimation import Draws, estimate_quality_assisted
from metrics_core.estimation.assist import Assist
from metrics_core.estimation.estimator import Estimator
from metrics_core.estimation.schemes import scheme_estimates
from tests.metrics_core.draw_order_simulation import DrawOrderRun, world
from tests.metrics_core.helpers import binomial_floor
from tests.metrics_core.model_assisted_simulation import judged_with_unsure_and_replicas, pair_scores, simulated_scores

FIELDS = (
    "value",
    "stderr",
    "ci_low",
    "ci_high",
    "cs_low",
    "cs_high",
    "unsure_low",
    "unsure_high",
    "recall_base_low",
    "recall_base_high",
)
NAMES = ("DeltaRecall", "IQ")
INPUTS = ("DeltaPrecision", "GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate")


@pytest.fixture(scope="module")
def lognormal():
    return world("lognormal")


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-12 * max(1.0, abs(y))


@pytest.mark.parametrize("scheme", ["jaccard", "stratified"])
def test_with_lambda_zero_delta_recall_and_iq_are_the_human_only_ones(lognormal, scheme):
    """``score_lambda=0``: every field of ΔRecall and IQ equals :func:`derived_metrics`' for the same seed,
    with unsure and replicated verdicts in a partial labelled prefix (30 verdicts: λ = 0 by the
    small-class rule anyway; 150 and 400: the calibration runs), over the Recall_Base range and at a
    given one; tuned, the same verdicts give other values and intervals (the identity is not a no-op)."""
    for seed in range(2):
        run_ = DrawOrderRun.draw(lognormal, scheme, 3000, seed)
        scores = pair_scores(lognormal, run_.sample, 2.0, seed)
        for tasks in (30, 150, 400):
            verdicts, counts = judged_with_unsure_and_replicas(run_, tasks, seed)
            assert counts.sum() < run_.sample.n_draws and verdicts.unsure.any()
            for recall_base in (None, 0.7):
                common = dict(n_boot=200, labelled_draws=counts, recall_base=recall_base)
                human = mc.derived_metrics(
                    lognormal.population, run_.sample, verdicts, rng=np.random.default_rng(seed), **common
                )
                zero = derived_metrics_assisted(
                    lognormal.population,
                    run_.sample,
                    verdicts,
                    scores,
                    rng=np.random.default_rng(seed),
                    score_lambda=0.0,
                    **common,
                )
                for name in NAMES:
                    for field in FIELDS:
                        x, y = getattr(zero[name], field), getattr(human[name], field)
                        assert same(x, y), (tasks, name, field, x, y)
                    assert zero.verdicts_saved[name] == 1.0 or math.isnan(human[name].stderr)
                assert zero.derived.undefined_replicates == human.undefined_replicates
                assert zero.derived.diagram.recall_base == human.diagram.recall_base
                if tasks == 400:
                    tuned = derived_metrics_assisted(
                        lognormal.population, run_.sample, verdicts, scores, rng=np.random.default_rng(seed), **common
                    )
                    # The inputs' SEs shrink; the diagram's may not (its slope differs at another point).
                    for name in NAMES:
                        assert tuned[name].value != human[name].value and tuned[name].stderr != human[name].stderr
                        assert tuned.verdicts_saved[name] != 1.0


def assisted_draws(w, scheme: str, seed: int, verdicts: int, kind: str, score_lambda=None):
    """The draws of a run judged in draw order, every drawn draw, and an Assist that served the estimates."""
    run_ = DrawOrderRun.draw(w, scheme, 4000, seed)
    judged, counts = run_.judged(verdicts)
    scores = simulated_scores(w, run_.sample, kind, 70 + seed)
    d = Draws.build(w.population, run_.sample, judged, None, counts)
    full = Draws.build(w.population, run_.sample, judged, None, None)
    assist = Assist(d, full, run_.sample, scores, score_lambda)
    scheme_estimates(Estimator(d, 1.96, 0.95, run_.sample.n_draws, points_only=True, assist=assist), scheme)
    quality = estimate_quality_assisted(
        w.population, run_.sample, judged, scores, labelled_draws=counts, score_lambda=score_lambda
    )
    return d, full, assist, quality


@pytest.mark.parametrize(
    ("scheme", "exact_draws"), [("jaccard", None), ("stratified", None), ("precision", None), ("jaccard", 100)]
)
def test_replicates_of_the_inputs_vary_around_the_model_assisted_estimates_with_their_se(
    lognormal, scheme, exact_draws, monkeypatch
):
    """The bootstrap resamples the model-assisted estimator: its replicates of the five inputs are
    centred at the model-assisted estimates and spread by their analytic SE (spec §15), well below the
    human-only SE with a good score; with λ = 0 they are the human bootstrap's, number for number.
    ``exact_draws``: categories of more draws are summed from their normal limit (as at 10^6 pairs)."""
    if exact_draws is not None:
        monkeypatch.setattr(bootstrap, "EXACT_DRAWS", exact_draws)
    d, full, assist, quality = assisted_draws(lognormal, scheme, 1, 300, "auc95")
    replicates = assisted_replicate_inputs(
        d, full, assist, scheme, n_boot=3000, rng=np.random.default_rng(0), within="stratum"
    )
    for name in ("DeltaPrecision", "GoodSplitRate", "GoodMergeRate"):
        e, values = quality[name], replicates[name]
        assert abs(np.nanmean(values) - e.value) < 0.15 * e.stderr, name
        assert np.nanstd(values) == pytest.approx(e.stderr, rel=0.15), name
        assert e.stderr < 0.85 * quality.human[name].stderr, name
    d, full, assist, _ = assisted_draws(lognormal, scheme, 1, 300, "auc95", score_lambda=0.0)
    zero = assisted_replicate_inputs(
        d, full, assist, scheme, n_boot=300, rng=np.random.default_rng(4), within="stratum"
    )
    human = replicate_inputs(d, scheme, n_boot=300, rng=np.random.default_rng(4))
    for name in INPUTS:
        np.testing.assert_array_equal(zero[name], human[name], err_msg=name)


def test_arguments_are_checked(lognormal):
    run_ = DrawOrderRun.draw(lognormal, "jaccard", 500, 0)
    verdicts, counts = run_.judged(50)
    scores = np.zeros(len(run_.sample))
    with pytest.raises(ValueError, match="score_lambda"):
        derived_metrics_assisted(
            lognormal.population, run_.sample, verdicts, scores, rng=np.random.default_rng(0), score_lambda=2.0
        )
    with pytest.raises(ValueError, match="scores"):
        derived_metrics_assisted(lognormal.population, run_.sample, verdicts, scores[:-1], rng=np.random.default_rng(0))
    other = Draws.build(lognormal.population, run_.sample, run_.judged(20)[0], None, counts)
    with pytest.raises(ValueError, match="verdicts"):
        derived_metrics_assisted(
            lognormal.population, run_.sample, verdicts, scores, rng=np.random.default_rng(0), draws=other
        )


# ------------------------------------------------------------------------------------------
# Coverage (seeded simulation)
# ------------------------------------------------------------------------------------------
COVERAGE_SEEDS = 75  # per scheme


def test_model_assisted_interval_covers_like_the_human_one_and_is_narrower_with_a_good_score():
    """75 samples per scheme (jaccard, stratified) of 4000 draws from the ~300-item population of
    draw_order_simulation (unit weights), judged in draw order from its Ideal clustering (200 verdicts),
    scored by the AUC-0.95 binormal score of model_assisted_simulation, 200 bootstrap replicates,
    95% intervals at the population's true Recall_Base(AffectedItems) (its ground truth's).

    The target is the diagram of the true rates and ΔPrecision at that Recall_Base (what both
    estimates converge to). Measured here (150 samples): ΔRecall covered 0.960 model-assisted, 0.907
    human-only; IQ 0.920 and 0.920; median width of the ΔRecall interval 0.55× the human-only one's
    (IQ 0.70×). Judged: ΔRecall not below 95% beyond a binomial bound (α = 0.001) nor below the
    human-only coverage, both metrics pooled not below 93%, and the ΔRecall interval narrower.
    """
    w = world("unit")
    truth = mc.truth_from_gold(w.population, w.ideal)
    recall_base = truth["RecallBase"]
    limit = mc.affected_item_diagram_from_metrics(
        w.truth, mc.impact_metrics(w.population).metrics, recall_base=recall_base
    )
    targets = {"DeltaRecall": limit.delta_recall, "IQ": limit.iq}
    covered = {(kind, name): 0 for kind in ("assisted", "human") for name in NAMES}
    ratios = {name: [] for name in NAMES}
    n = 0
    for scheme in ("jaccard", "stratified"):
        for seed in range(COVERAGE_SEEDS):
            run_ = DrawOrderRun.draw(w, scheme, 4000, seed)
            verdicts, counts = run_.judged(200)
            scores = simulated_scores(w, run_.sample, "auc95", 50_000 + seed)
            result = derived_metrics_assisted(
                w.population,
                run_.sample,
                verdicts,
                scores,
                rng=np.random.default_rng(seed),
                n_boot=200,
                labelled_draws=counts,
                recall_base=recall_base,
            )
            n += 1
            for name in NAMES:
                e, h = result[name], result.human[name]
                covered[("assisted", name)] += e.ci_low <= targets[name] <= e.ci_high
                covered[("human", name)] += h.ci_low <= targets[name] <= h.ci_high
                ratios[name].append((e.ci_high - e.ci_low) / (h.ci_high - h.ci_low))
    rates = {key: c / n for key, c in covered.items()}
    medians = {name: float(np.median(r)) for name, r in ratios.items()}
    print(f"\ncoverage {rates}; median width ratio {medians}")
    assert covered[("assisted", "DeltaRecall")] >= binomial_floor(n, 0.95), rates
    assert rates[("assisted", "DeltaRecall")] >= rates[("human", "DeltaRecall")] - 0.02, rates
    pooled = covered[("assisted", "DeltaRecall")] + covered[("assisted", "IQ")]
    human = covered[("human", "DeltaRecall")] + covered[("human", "IQ")]
    assert pooled >= binomial_floor(2 * n, 0.93) and pooled >= human - 0.02 * 2 * n, rates
    assert medians["DeltaRecall"] <= 0.7 and medians["IQ"] <= 0.85, medians
