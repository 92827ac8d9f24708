import numpy as np
import pytest

from metrics_core import (
    PAIR_CLASSES,
    PairSample,
    SampleError,
    impact_metrics,
    jaccard_contributions,
    pair_classes_of,
    pairs_for_judgement,
    population_from_labels,
    sample_pairs,
)

# Base {0,1,2},{3}; Exp {0,1},{2,3}: every class occurs.
POP = population_from_labels([0, 0, 0, 1], [0, 0, 1, 1], [1.0, 2.0, 3.0, 4.0])


def rng(seed=0):
    return np.random.default_rng(seed)


def test_pair_classes_follow_the_clusterings():
    i = [0, 0, 0, 2, 3, 3]
    j = [0, 1, 2, 3, 2, 0]
    names = [PAIR_CLASSES[c] if c >= 0 else None for c in pair_classes_of(POP, i, j)]
    assert names == ["self", "intersection", "split", "merge", "merge", None]


def test_pairs_of_unaffected_vantage_items_are_outside_the_population():
    pop = population_from_labels([0, 0, 1, 1], [0, 0, 1, 2])
    assert pair_classes_of(pop, [0, 0, 2], [0, 1, 3]).tolist() == [-1, -1, 1]


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_same_seed_same_sample(scheme):
    first = sample_pairs(POP, n_draws=500, scheme=scheme, rng=rng(7))
    second = sample_pairs(POP, n_draws=500, scheme=scheme, rng=rng(7))
    for column in ("i", "j", "pair_class", "stratum", "draws"):
        assert np.array_equal(getattr(first, column), getattr(second, column))
    assert first.n_draws == 500


def test_stratified_allocates_the_diff_share():
    sample = sample_pairs(POP, n_draws=1000, scheme="stratified", diff_share=0.3, rng=rng())
    diff = np.isin(sample.pair_class, [1, 2])
    assert sample.draws[diff].sum() == 300
    assert sample.draws[~diff].sum() == 700
    assert set(sample.stratum[diff]) == {1} and set(sample.stratum[~diff]) == {2}


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"n_draws": 0}, "n_draws must be a positive integer"),
        ({"n_draws": 10, "scheme": "random"}, "scheme must be one of"),
        ({"n_draws": 10, "scheme": "stratified", "diff_share": 1.0}, "diff_share must be strictly between"),
    ],
)
def test_bad_arguments(kwargs, error):
    with pytest.raises(ValueError, match=error):
        sample_pairs(POP, rng=rng(), **kwargs)


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        sample_pairs(POP, n_draws=10, rng=42)


def test_nothing_affected_is_a_clear_error():
    with pytest.raises(ValueError, match="no item is affected"):
        sample_pairs(population_from_labels([1, 1, 2], [5, 5, 6]), n_draws=10, rng=rng())


def test_pairs_for_judgement_are_distinct_unordered_non_self_in_random_order():
    sample = sample_pairs(POP, n_draws=2000, rng=rng())
    a, b = pairs_for_judgement(sample, rng=rng(1))
    assert (a < b).all()
    assert len(set(zip(a.tolist(), b.tolist()))) == len(a)
    expected = {(min(i, j), max(i, j)) for i, j in zip(sample.i.tolist(), sample.j.tolist()) if i != j}
    assert set(zip(a.tolist(), b.tolist())) == expected
    orders = {tuple(zip(*pairs_for_judgement(sample, rng=rng(seed)))) for seed in range(5)}
    assert len(orders) > 1


def test_jaccard_contributions_sum_to_the_jaccard_distance():
    jd = impact_metrics(POP).metrics["JaccardDistance"]
    for scheme in ("jaccard", "stratified", "precision"):
        sample = sample_pairs(POP, n_draws=3000, scheme=scheme, rng=rng())
        contributions = jaccard_contributions(POP, sample)
        stable = np.isin(sample.pair_class, [0, 3])
        assert contributions[stable].sum() == 0.0
        assert contributions.sum() == pytest.approx(jd, rel=1e-12)


def test_jaccard_contributions_estimate_split_distance_under_every_scheme():
    split_distance = impact_metrics(POP).metrics["SplitDistance"]
    for scheme in ("jaccard", "precision"):
        sample = sample_pairs(POP, n_draws=200_000, scheme=scheme, rng=rng(3))
        contributions = jaccard_contributions(POP, sample)
        assert contributions[sample.pair_class == 1].sum() == pytest.approx(split_distance, rel=0.02)


class TestFromColumns:
    def test_round_trip(self):
        sample = sample_pairs(POP, n_draws=300, scheme="stratified", rng=rng())
        rebuilt = PairSample.from_columns(
            POP,
            scheme="stratified",
            i=sample.i,
            j=sample.j,
            draws=sample.draws,
            pair_class=[PAIR_CLASSES[c] for c in sample.pair_class],
            stratum=sample.stratum,
        )
        assert np.array_equal(rebuilt.pair_class, sample.pair_class)
        assert np.array_equal(rebuilt.stratum, sample.stratum)
        assert rebuilt.n_draws == 300

    @pytest.mark.parametrize(
        "columns, row, problem",
        [
            ({"i": [0, 9], "j": [0, 1], "draws": [1, 1]}, 1, "i is not an item"),
            ({"i": [0, 0], "j": [1, 1], "draws": [1, 2]}, 1, "duplicate pair"),
            ({"i": [0, 0], "j": [1, 2], "draws": [1, 0]}, 1, "draws must be at least 1"),
            ({"i": [0, 3], "j": [1, 1], "draws": [1, 1]}, 1, "j is not in Base(i)"),
            ({"i": [0, 0], "j": [1, 2], "draws": [1, 1], "pair_class": ["intersection", "merge"]}, 1, "pair_class does not match"),
            ({"i": [0, 0], "j": [1, 2], "draws": [1, 1], "pair_class": ["intersection", "splits"]}, 1, "pair_class must be one of"),
        ],
    )
    def test_errors_name_the_row(self, columns, row, problem):
        with pytest.raises(SampleError) as caught:
            PairSample.from_columns(POP, scheme="jaccard", **columns)
        assert caught.value.row == row
        assert problem in caught.value.problem

    def test_stratum_must_match_the_scheme(self):
        with pytest.raises(SampleError, match="stratum does not match scheme stratified"):
            PairSample.from_columns(POP, scheme="stratified", i=[0], j=[2], draws=[1], stratum=["stable"])
