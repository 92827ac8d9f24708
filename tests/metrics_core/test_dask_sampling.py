"""Pair sampling on Dask (issue #8, part 2): the right distribution, the same sample everywhere.

* On populations small enough to enumerate every ordered pair, the draw counts of one large
  Dask sample pass the chi-square test of ``test_sampling_distribution`` against the pair
  probabilities of each scheme (fixed seed, p > 0.001), with classes and strata as enumerated.
* For a fixed seed the sample is identical for 1, 3 and 7 partitions (rows shuffled between
  the files), for 1 or 2 workers and on the synchronous scheduler, on which the other tests
  here run.
"""

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from dask.delayed import Delayed
from distributed import Future
from scipy.stats import chisquare

import metrics_core as mc
from metrics_core import dask_backend
from metrics_core.dask_backend.segments import shared
from tests.metrics_core import reference as ref
from tests.metrics_core.dask_run import items_frame, local_client, synchronous_scheduler, write_parts
from tests.metrics_core.helpers import N_DRAWS, P_MIN, POPULATIONS

SCHEMES = mc.SCHEMES




def observed(pairs):
    """``{stratum: {(i, j): (draws, class)}}`` from a PAIRS table."""
    out = defaultdict(dict)
    for i, j, c, s, d in pairs[["i", "j", "pair_class", "stratum", "draws"]].itertuples(index=False):
        assert (i, j) not in out[s], f"row {(i, j)} in stratum {s} appears twice"
        out[s][(int(i), int(j))] = (int(d), c)
    return out


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("name", sorted(POPULATIONS))
def test_pair_frequencies_match_sampling_probabilities(synchronous, tmp_path, name, scheme):
    base, exp, weights = POPULATIONS[name]
    folder = write_parts(items_frame(base, exp, weights), tmp_path / "items", 3)
    items = dask_backend.read_items(str(folder))
    pairs = dask_backend.sample_pairs(items, n_draws=N_DRAWS, scheme=scheme, rng=np.random.default_rng(7))
    assert list(pairs.columns) == list(dask_backend.PAIRS_COLUMNS)
    assert int(pairs["draws"].sum()) == N_DRAWS and (pairs["scheme"] == scheme).all()
    expected = ref.sampling_distribution(ref.RefPopulation(base, exp, weights), scheme)
    seen = observed(pairs)
    assert set(seen) <= set(expected)
    if scheme == "stratified":
        assert sum(d for d, _ in seen["diff"].values()) == round(0.5 * N_DRAWS)
    for stratum, dist in expected.items():
        got = seen.get(stratum, {})
        for key, (draws, cls) in got.items():
            assert key in dist, f"{scheme}: pair {key} is not in stratum {stratum}"
            assert cls == dist[key][1], f"{scheme}: pair {key} reported as {cls}, is {dist[key][1]}"
            assert dist[key][0] > 0, f"{scheme}: pair {key} has probability 0 but was drawn {draws} times"
        keys = [k for k, (p, _) in dist.items() if p > 0]
        f_obs = np.array([got.get(k, (0, None))[0] for k in keys], dtype=float)
        f_exp = np.array([dist[k][0] for k in keys]) * f_obs.sum()
        result = chisquare(f_obs, f_exp * (f_obs.sum() / f_exp.sum()))
        assert result.pvalue > P_MIN, f"{scheme}/{stratum}: chi-square p = {result.pvalue:.2g}"


def random_items(seed=11, n=400):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 60, n)
    exp = np.where(rng.random(n) < 0.25, rng.integers(0, 60, n), base)
    return items_frame(
        np.array([f"b{x}" for x in base]), exp + 1000, rng.uniform(0.5, 2.0, n), ids=[f"item{k}" for k in range(n)]
    )


def samples_of(folder, seed=5):
    """One sample of each scheme from the items in ``folder`` (cells built once)."""
    items = dask_backend.read_items(str(folder))
    return {
        scheme: dask_backend.sample_pairs(
            items, n_draws=3000, scheme=scheme, diff_share=0.3, rng=np.random.default_rng(seed)
        )
        for scheme in SCHEMES
    }


@pytest.mark.slow
def test_same_sample_for_any_partitioning_and_number_of_workers(client, tmp_path):
    frame = random_items()
    samples = {n_parts: samples_of(write_parts(frame, tmp_path / f"p{n_parts}", n_parts, seed=n_parts)) for n_parts in (1, 3, 7)}
    with local_client(1):
        samples["one worker"] = samples_of(tmp_path / "p3")
    with synchronous_scheduler():  # the scheduler of the other tests here
        samples["synchronous"] = samples_of(tmp_path / "p3")
        other_seed = samples_of(tmp_path / "p3", seed=6)
    for scheme in SCHEMES:
        for other in (3, 7, "one worker", "synchronous"):
            pd.testing.assert_frame_equal(samples[other][scheme], samples[1][scheme], check_exact=True, obj=f"{scheme}, {other}")
    for scheme in SCHEMES:
        assert not other_seed[scheme][["i", "j"]].equals(samples[1][scheme][["i", "j"]])


def test_data_is_scattered_to_the_cluster_only_when_the_cluster_computes(client):
    """A scheduler chosen in ``dask.config`` wins over the default client: its tasks could not read
    data scattered to the cluster's workers."""
    assert isinstance(shared(np.arange(3)), Future)
    with synchronous_scheduler():
        value = shared(np.arange(3))
        assert isinstance(value, Delayed) and value.compute().tolist() == [0, 1, 2]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sample_rows_are_pairs_of_the_population(synchronous, tmp_path, scheme):
    frame = random_items(seed=3)
    if scheme == "jaccard":  # 64-bit integer ids, beyond what a float holds exactly
        frame["item_id"] = np.random.default_rng(0).choice(np.iinfo(np.int64).max, len(frame), replace=False)
    items = dask_backend.read_items(str(write_parts(frame, tmp_path / "items", 4)))
    pairs = dask_backend.sample_pairs(items, n_draws=5000, scheme=scheme, rng=np.random.default_rng(1))
    pop = mc.population_from_labels(frame["base_cluster"], frame["exp_cluster"], frame["weight"])
    position = {item: k for k, item in enumerate(frame["item_id"])}
    # The in-memory backend takes the sample as it is: same columns, same classes and strata.
    sample = mc.PairSample.from_columns(
        pop,
        scheme=scheme,
        i=pairs["i"].map(position).to_numpy(),
        j=pairs["j"].map(position).to_numpy(),
        draws=pairs["draws"].to_numpy(),
        pair_class=pairs["pair_class"].to_numpy(),
        stratum=pairs["stratum"].to_numpy(),
    )
    assert sample.n_draws == 5000
    assert pairs.duplicated(["stratum", "i", "j"]).sum() == 0


def test_nothing_to_sample(synchronous, tmp_path):
    items = dask_backend.read_items(str(write_parts(items_frame([1, 1, 2], [3, 3, 4]), tmp_path / "x", 2)))
    with pytest.raises(ValueError, match="nothing to sample"):
        dask_backend.sample_pairs(items, n_draws=10, rng=np.random.default_rng(0))


def test_bad_arguments(synchronous, tmp_path):
    items = dask_backend.read_items(str(write_parts(items_frame([1, 1, 2], [3, 4, 4]), tmp_path / "x", 1)))
    with pytest.raises(ValueError):
        dask_backend.sample_pairs(items, n_draws=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        dask_backend.sample_pairs(items, n_draws=5, scheme="nope", rng=np.random.default_rng(0))
    with pytest.raises(TypeError):
        dask_backend.sample_pairs(items, n_draws=5, rng=0)
