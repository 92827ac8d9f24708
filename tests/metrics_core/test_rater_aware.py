"""Raters who err (abcde-spec §13): the Dawid–Skene fit and the rater-aware estimates.

* The EM by hand and by its invariances; unsure verdicts and gold answers as the spec says.
* Fitted confusion matrices against known raters at 2,000 verdicts.
* The bootstrap's estimator against ``estimate_quality`` on the same posteriors, every scheme.
* With perfect raters the rater-aware estimates are the raw ones within 1e-6.
* The acceptance simulation (slow): a known Ideal clustering, five raters with sensitivity and
  specificity in [0.6, 0.98], replication 3 and 5% gold, 200 repetitions: at most half the raw
  estimates' absolute bias, and 95% intervals that cover the truth 92-98% of the time.
"""

import math

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.dawid_skene import fit_dawid_skene
from metrics_core.rater_aware import estimate_quality_rater_aware
from metrics_core.rater_units import RaterLayout, RaterUnits
from tests.metrics_core.helpers import simulation_population

from .rater_simulation import SENSITIVITY, SPECIFICITY, judged_experiment, raw_and_rater_aware, verdicts_on


@pytest.fixture(scope="module")
def population():
    return simulation_population()


# ------------------------------------------------------------------------------ the model


def test_perfect_raters_give_their_verdicts_as_posteriors():
    rng = np.random.default_rng(3)
    truth = (rng.random(300) < 0.4).astype(int)
    unit, rater, verdict = verdicts_on(rng, truth, np.ones(5), np.ones(5))
    fit = fit_dawid_skene(unit=unit, rater=rater, verdict=verdict)
    assert np.abs(fit.posterior - truth).max() < 1e-9
    assert np.all(fit.sensitivity > 1 - 1e-5) and np.all(fit.specificity > 1 - 1e-5)
    assert fit.converged and fit.raters.tolist() == [0, 1, 2, 3, 4]


def test_unsure_is_no_observation_and_is_counted_per_rater():
    unit = [0, 0, 0, 1, 1, 1, 2, 2]
    rater = ["a", "b", "c", "a", "b", "c", "a", "b"]
    sure = ["equivalent", "equivalent", "not_equivalent", "not_equivalent", "not_equivalent", "not_equivalent"]
    with_unsure = fit_dawid_skene(unit=unit, rater=rater, verdict=sure + ["unsure", "unsure"])
    without = fit_dawid_skene(unit=unit[:6], rater=rater[:6], verdict=sure)
    np.testing.assert_allclose(with_unsure.sensitivity, without.sensitivity, atol=1e-12)
    np.testing.assert_allclose(with_unsure.posterior[:2], without.posterior, atol=1e-12)
    assert math.isnan(with_unsure.posterior[2])  # only unsure verdicts: no posterior, like an unjudged pair
    assert with_unsure.unsure_verdicts.tolist() == [1, 1, 0]
    assert with_unsure.sure_verdicts.tolist() == [2, 2, 2]


def test_gold_answers_are_fixed_and_teach_the_matrices():
    # Ann and Bob tell the truth, Liar the opposite, on 60 pairs; 10 of them are gold, and on
    # gold pair 0 Ann and Bob are wrong for once: its posterior is still its gold answer.
    rng = np.random.default_rng(2)
    truth = (rng.random(60) < 0.5).astype(float)
    unit = np.repeat(np.arange(60), 3)
    rater = np.tile(["ann", "bob", "liar"], 60)
    says = np.where(rater == "liar", 1 - truth[unit], truth[unit])
    says[[0, 1]] = 1 - truth[0]
    gold = np.where(np.arange(60) < 10, truth, np.nan)
    verdict = np.where(says == 1, "equivalent", "not_equivalent")
    fit = fit_dawid_skene(unit=unit, rater=rater, verdict=verdict, truth=gold)
    np.testing.assert_array_equal(fit.posterior[:10], truth[:10])
    np.testing.assert_allclose(fit.posterior[10:], truth[10:], atol=0.01)
    assert fit.sensitivity[2] < 0.05 and fit.specificity[2] < 0.05
    assert min(fit.sensitivity[:2].min(), fit.specificity[:2].min()) > 0.95
    # Without gold the wrong answers on pair 0 are believed.
    assert fit_dawid_skene(unit=unit, rater=rater, verdict=verdict).posterior[0] == pytest.approx(
        1 - truth[0], abs=0.01
    )


def test_relabelling_raters_and_reordering_rows_change_nothing():
    rng = np.random.default_rng(8)
    unit, rater, verdict = verdicts_on(rng, (rng.random(200) < 0.5).astype(int))
    fit = fit_dawid_skene(unit=unit, rater=rater, verdict=verdict)
    order = rng.permutation(len(unit))
    names = np.array(["e", "d", "c", "b", "a"])  # reverses the sorted order of the raters
    again = fit_dawid_skene(unit=unit[order], rater=names[rater[order]], verdict=verdict[order])
    np.testing.assert_allclose(again.sensitivity[::-1], fit.sensitivity, atol=1e-8)
    np.testing.assert_allclose(again.specificity[::-1], fit.specificity, atol=1e-8)
    np.testing.assert_allclose(again.posterior, fit.posterior, atol=1e-8)
    confusion = fit.confusion()
    assert confusion.shape == (5, 2, 2)
    np.testing.assert_allclose(confusion.sum(axis=2), 1.0)


def test_bad_input_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match="verdict"):
        fit_dawid_skene(unit=[0], rater=["a"], verdict=["maybe"])
    with pytest.raises(ValueError, match="truth"):
        fit_dawid_skene(unit=[0], rater=["a"], verdict=["equivalent"], truth=[0.5])
    with pytest.raises(ValueError, match="same length"):
        fit_dawid_skene(unit=[0, 1], rater=["a"], verdict=["equivalent"])


def fitted_errors(n_verdicts, seeds):
    """Fitted minus true sensitivity and specificity (10 numbers) per seeded repetition:
    units half equivalent, replication 3, 5% of units gold."""
    errors = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        truth = (rng.random(n_verdicts // 3) < 0.5).astype(int)
        unit, rater, verdict = verdicts_on(rng, truth)
        gold = np.where(rng.random(len(truth)) < 0.05, truth, np.nan)
        fit = fit_dawid_skene(unit=unit, rater=rater, verdict=verdict, truth=gold)
        errors.append(np.r_[fit.sensitivity - SENSITIVITY, fit.specificity - SPECIFICITY])
    return np.array(errors)


def test_fitted_confusion_matrices_are_close_to_the_true_ones():
    # At 2,000 verdicts (400 a rater) a matrix entry has a sampling SE of about 0.03, so single
    # entries stray past 0.05 at times: the fit is unbiased and typically 0.02-0.03 off.
    errors = fitted_errors(2000, range(20))
    print(
        f"\n2,000 verdicts: mean |error| {np.abs(errors).mean():.4f}, largest bias {np.abs(errors.mean(0)).max():.4f}, "
        f"largest error {np.abs(errors).max():.4f}"
    )
    assert np.abs(errors).mean() <= 0.03
    assert np.abs(errors.mean(axis=0)).max() <= 0.02
    # At 2,000 verdicts per rater, every entry of every fit is within 0.05.
    errors = fitted_errors(10000, range(5))
    print(f"2,000 verdicts a rater: largest error {np.abs(errors).max():.4f}")
    assert np.abs(errors).max() <= 0.05


# ------------------------------------------------------------------------------ the estimates


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_bootstrap_estimator_equals_estimate_quality_on_the_posteriors(population, scheme):
    pop, ideal = population
    rng = np.random.default_rng(11)
    sample, (i, j, verdict, rater), (ga, gb, answer), _ = judged_experiment(rng, pop, ideal, draws=400, scheme=scheme)
    units = RaterUnits.build(sample, i, j, verdict, rater, ga, gb, answer)
    posterior = fit_dawid_skene(
        unit=units.data.unit,
        rater=units.data.rater,
        verdict=np.where(units.data.said == 1, 0, 1),
        truth=units.data.truth,
        unit_group=units.data.group,
    ).posterior
    context = mc.sample_context(pop, sample)
    want = mc.estimate_quality(context, sample, units.posterior_verdicts(posterior))
    layout = RaterLayout.build(context, sample, units.unit_of_row)
    got = layout.estimates(posterior[None, layout.unit], np.ones((1, len(layout.unit))))
    for name in mc.metrics_for_scheme(scheme):
        assert got[name][0] == pytest.approx(want[name].value, rel=1e-12, abs=1e-14), name


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_with_perfect_raters_the_estimates_are_the_raw_ones(population, scheme):
    pop, ideal = population
    rng = np.random.default_rng(21)
    perfect = {"sensitivity": np.ones(5), "specificity": np.ones(5)}
    raw, aware = raw_and_rater_aware(rng, pop, ideal, draws=500, scheme=scheme, n_boot=30, **perfect)
    for name in mc.metrics_for_scheme(scheme):
        for field in ("value", "unsure_low", "unsure_high"):
            assert getattr(aware.quality[name], field) == pytest.approx(getattr(raw[name], field), abs=1e-6), name
        assert aware.quality[name].judged_draws == raw[name].judged_draws
    # Every replicate agrees too: the interval is the sampling error of the pairs alone.
    assert aware.converged_replicates == 30
    np.testing.assert_allclose(aware.model.sensitivity, 1.0, atol=1e-5)


def test_intervals_hold_the_value_and_a_seed_reproduces_them(population):
    pop, ideal = population
    first = raw_and_rater_aware(np.random.default_rng(4), pop, ideal, draws=300, n_boot=40)[1]
    second = raw_and_rater_aware(np.random.default_rng(4), pop, ideal, draws=300, n_boot=40)[1]
    assert first.as_dict() == second.as_dict()
    for name, e in first.quality.estimates.items():
        assert e.ci_low <= e.value <= e.ci_high, name
        assert e.cs_low <= e.value <= e.cs_high, name
        assert e.stderr > 0, name
    d = first.as_dict()
    assert [r["rater"] for r in d["raters"]] == [0, 1, 2, 3, 4]
    assert d["model"] == "dawid-skene" and d["bootstrap_replicates"] == 40


def test_drawing_the_raters_again_widens_the_intervals_not_the_values(population):
    pop, ideal = population
    sample, (i, j, verdict, rater), _, _ = judged_experiment(
        np.random.default_rng(6), pop, ideal, draws=300, scheme="jaccard"
    )
    args = dict(i=i, j=j, verdict=verdict, rater=rater, n_boot=60)
    pairs_only = estimate_quality_rater_aware(pop, sample, rng=np.random.default_rng(1), **args).quality
    two_way = estimate_quality_rater_aware(
        pop, sample, rng=np.random.default_rng(1), resample_raters=True, **args
    ).quality
    wider = 0
    for name, e in two_way.estimates.items():
        assert e.value == pairs_only[name].value, name
        assert e.ci_low <= e.value <= e.ci_high, name
        wider += e.stderr > pairs_only[name].stderr
    assert wider >= len(two_way.estimates) - 2


def test_rater_aware_arguments_are_checked(population):
    pop, _ = population
    sample = mc.sample_pairs(pop, n_draws=20, rng=np.random.default_rng(0))
    args = dict(i=[0], j=[1], verdict=["equivalent"], rater=["a"], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_boot"):
        estimate_quality_rater_aware(pop, sample, n_boot=0, **args)
    with pytest.raises(ValueError, match="gold_answer"):
        estimate_quality_rater_aware(pop, sample, gold_i=[0], gold_j=[2], gold_answer=["yes"], **args)
    with pytest.raises(TypeError, match="rng"):
        estimate_quality_rater_aware(pop, sample, **{**args, "rng": 0})


# ------------------------------------------------------------------------------ acceptance

SIM_REPS = 200
SIM_DRAWS = 600
ACCEPTANCE = ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance", "DeltaPrecision")


@pytest.mark.slow
def test_rater_aware_estimates_halve_the_bias_and_cover_the_truth(population):
    pop, ideal = population
    truth = mc.quality_from_gold(pop, ideal)
    rng = np.random.default_rng(2026)
    raw_values = {name: [] for name in ACCEPTANCE}
    aware_values = {name: [] for name in ACCEPTANCE}
    covered = {name: [] for name in ACCEPTANCE}
    for _ in range(SIM_REPS):
        raw, aware = raw_and_rater_aware(rng, pop, ideal, draws=SIM_DRAWS, n_boot=100)
        for name in ACCEPTANCE:
            e = aware.quality[name]
            raw_values[name].append(raw[name].value)
            aware_values[name].append(e.value)
            covered[name].append(e.ci_low <= truth[name] <= e.ci_high)
    lines = [
        f"\n{SIM_REPS} repetitions of {SIM_DRAWS} draws, replication 3, 5% gold, 100 bootstrap replicates",
        f"{'metric':<20} {'truth':>8} {'raw bias':>9} {'aware bias':>10} {'MC SE':>7} {'coverage':>8}",
    ]
    failures = []
    for name in ACCEPTANCE:
        raw_bias = np.mean(raw_values[name]) - truth[name]
        aware_bias = np.mean(aware_values[name]) - truth[name]
        mc_se = np.std(aware_values[name], ddof=1) / math.sqrt(SIM_REPS)
        coverage = np.mean(covered[name])
        lines.append(
            f"{name:<20} {truth[name]:>8.4f} {raw_bias:>+9.4f} {aware_bias:>+10.4f} {mc_se:>7.4f} {coverage:>8.3f}"
        )
        if abs(aware_bias) > abs(raw_bias) / 2:
            failures.append(f"{name}: bias {aware_bias:+.4f} is more than half the raw {raw_bias:+.4f}")
        if not 0.92 <= coverage <= 0.98:
            failures.append(f"{name}: coverage {coverage:.3f} outside [0.92, 0.98]")
    print("\n".join(lines))
    assert not failures, "\n".join(failures)


def test_a_class_whose_verdicts_all_agree_keeps_a_bounded_sequence(population):
    """Every verdict agrees (all *not equivalent*): the pair-level SE is rounding (~1e-14), and a
    ratio of two roundings once widened a sequence to [−400, 406]."""
    pop, ideal = population
    sample, (i, j, verdict, rater), _, n_sampled = judged_experiment(
        np.random.default_rng(8), pop, ideal, draws=300, scheme="jaccard"
    )
    verdict = np.full(n_sampled, "not_equivalent", dtype=object)
    aware = estimate_quality_rater_aware(
        pop,
        sample,
        i=i[:n_sampled],
        j=j[:n_sampled],
        verdict=verdict,
        rater=rater[:n_sampled],
        rng=np.random.default_rng(2),
        n_boot=40,
    ).quality
    raw = mc.estimate_quality(pop, sample, mc.verdicts_from_judgements(i[:n_sampled], j[:n_sampled], verdict))
    for name, e in aware.estimates.items():
        assert e.cs_low <= e.value <= e.cs_high, name
        # no wider than the pair-level sequence plus the bootstrap's normal half-width
        assert e.cs_high - e.cs_low <= raw[name].cs_high - raw[name].cs_low + 4 * e.stderr + 1e-9, name


def test_drawing_the_raters_again_before_any_verdict_leaves_the_estimates_undefined():
    pop = mc.population_from_labels([0, 0, 1], [0, 1, 1])
    sample = mc.sample_pairs(pop, n_draws=20, rng=np.random.default_rng(0))
    fit = estimate_quality_rater_aware(
        pop, sample, i=[], j=[], verdict=[], rater=[], rng=np.random.default_rng(0), n_boot=5, resample_raters=True
    )
    assert math.isnan(fit.quality["GoodSplitDistance"].value) and fit.quality["GoodSplitDistance"].judged_draws == 0
