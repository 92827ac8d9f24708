"""Batches of one experiment (abcde-spec §10): streams, independence, concatenation, the command line.

Batch 0 is today's sample of a seed; batch b depends only on (seed, b); the union of batches
is one i.i.d. sample, so on populations small enough to enumerate every pair, the pair
frequencies of 1, 2 and 4 concatenated batches pass the chi-square test of
test_sampling_distribution against the pair probabilities.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

import metrics_core as mc
from tests.metrics_core import reference as ref
from tests.metrics_core.cli_run import run, run_json, write
from tests.metrics_core.helpers import POPULATIONS

FIELDS = ("i", "j", "pair_class", "stratum", "draws")


def population(name):
    base, exp, weights = POPULATIONS[name]
    return mc.population_from_labels(base, exp, np.asarray(weights, dtype=float)), ref.RefPopulation(base, exp, weights)


def same_sample(one, other):
    return one.scheme == other.scheme and all(np.array_equal(getattr(one, f), getattr(other, f)) for f in FIELDS)


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_batch_zero_is_todays_sample_and_batches_differ(scheme):
    pop, _ = population("mixed")
    draw = lambda rng: mc.sample_pairs(pop, n_draws=3000, scheme=scheme, rng=rng)  # noqa: E731
    today = draw(np.random.default_rng(11))
    assert same_sample(draw(mc.batch_rng(seed=11, batch=0)), today)
    batches = [draw(mc.batch_rng(seed=11, batch=b)) for b in range(1, 4)]
    for b, batch in enumerate(batches, start=1):
        assert same_sample(draw(mc.batch_rng(seed=11, batch=b)), batch)  # depends only on (seed, b)
        assert not same_sample(batch, today)
    assert not same_sample(batches[0], batches[1]) and not same_sample(batches[1], batches[2])
    assert not same_sample(draw(mc.batch_rng(seed=12, batch=1)), batches[0])


def test_batch_streams_are_the_spawned_children_and_order_streams_are_apart():
    assert mc.batch_rng(seed=5, batch=3).random(4).tolist() == np.random.default_rng(
        np.random.SeedSequence(5).spawn(4)[3]
    ).random(4).tolist()
    assert mc.batch_order_rng(seed=5, batch=0).random(3).tolist() == np.random.default_rng(6).random(3).tolist()
    firsts = {
        (kind, b): rng(seed=5, batch=b).random()
        for kind, rng in (("draws", mc.batch_rng), ("order", mc.batch_order_rng))
        for b in range(4)
    }
    assert len(set(firsts.values())) == len(firsts)  # eight different streams
    for bad in (-1, 1.5, True, None):
        with pytest.raises(ValueError, match="batch"):
            mc.batch_rng(seed=5, batch=bad)
    with pytest.raises(ValueError, match="seed"):
        mc.batch_order_rng(seed=-2, batch=0)


def chi_square_p(pop, rp, scheme, sample):
    """p-value of the sample's pair frequencies against the enumerated pair probabilities (stratum all)."""
    dist = ref.sampling_distribution(rp, scheme)["all"]
    counts = {}
    for i, j, d in zip(sample.i.tolist(), sample.j.tolist(), sample.draws.tolist()):
        counts[(i, j)] = counts.get((i, j), 0) + d
    assert set(counts) <= {k for k, (p, _) in dist.items() if p > 0}
    keys = [k for k, (p, _) in dist.items() if p > 0]
    f_obs = np.array([counts.get(k, 0) for k in keys], dtype=float)
    f_exp = np.array([dist[k][0] for k in keys]) * sample.n_draws
    return chisquare(f_obs, f_exp * f_obs.sum() / f_exp.sum()).pvalue


@pytest.mark.parametrize("scheme", ["jaccard", "precision"])
@pytest.mark.parametrize("name", ["mixed", "random"])
def test_concatenated_batches_are_one_sample_of_the_pair_distribution(name, scheme):
    pop, rp = population(name)
    batches = [
        mc.sample_pairs(pop, n_draws=40_000, scheme=scheme, rng=mc.batch_rng(seed=21, batch=b)) for b in range(4)
    ]
    for k in (1, 2, 4):
        union = mc.concatenate_samples(batches[:k])
        assert union.n_draws == 40_000 * k
        p = chi_square_p(pop, rp, scheme, union)
        assert p > 0.001, f"{k} batches: chi-square p = {p:.2g}"
    # The test sees dependence: one batch counted four times is no sample of 160 000 draws.
    assert chi_square_p(pop, rp, scheme, mc.concatenate_samples([batches[0]] * 4)) < 0.001


def test_concatenate_samples_sums_draws_in_first_seen_order():
    pop, _ = population("mixed")
    one = mc.sample_pairs(pop, n_draws=300, scheme="stratified", rng=mc.batch_rng(seed=2, batch=0), diff_share=0.4)
    two = mc.sample_pairs(pop, n_draws=200, scheme="stratified", rng=mc.batch_rng(seed=2, batch=1), diff_share=0.4)
    union = mc.concatenate_samples([one, two])
    expected = {}
    for s in (one, two):
        for row in zip(s.stratum.tolist(), s.i.tolist(), s.j.tolist(), s.pair_class.tolist(), s.draws.tolist()):
            key = row[:3]
            expected[key] = (row[3], expected.get(key, (0, 0))[1] + row[4])  # dicts keep first-seen order
    got = list(zip(union.stratum.tolist(), union.i.tolist(), union.j.tolist()))
    assert got == list(expected)
    assert union.pair_class.tolist() == [c for c, _ in expected.values()]
    assert union.draws.tolist() == [d for _, d in expected.values()]
    assert (union.scheme, union.diff_share, union.n_draws) == ("stratified", 0.4, 500)
    assert len(union) < len(one) + len(two)  # some pairs were drawn in both batches
    assert same_sample(mc.concatenate_samples([one]), one)

    with pytest.raises(ValueError, match="diff_share"):
        other = mc.sample_pairs(pop, n_draws=100, scheme="stratified", rng=np.random.default_rng(1), diff_share=0.5)
        mc.concatenate_samples([one, other])
    with pytest.raises(ValueError, match="scheme"):
        mc.concatenate_samples([one, mc.sample_pairs(pop, n_draws=100, rng=np.random.default_rng(1))])
    with pytest.raises(ValueError, match="at least one"):
        mc.concatenate_samples([])


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_estimates_over_concatenated_batches_are_those_of_the_merged_sample(scheme):
    pop, _ = population("random")
    batches = [mc.sample_pairs(pop, n_draws=150, scheme=scheme, rng=mc.batch_rng(seed=8, batch=b)) for b in range(3)]
    union = mc.concatenate_samples(batches)
    # The merged sample as a stored file would give it: every batch's rows, repeats summed on reading.
    column = lambda name: np.concatenate([getattr(b, name) for b in batches])  # noqa: E731
    merged = mc.PairSample.from_columns(
        pop, scheme=scheme, i=column("i"), j=column("j"), draws=column("draws"), diff_share=union.diff_share,
        repeated=True,
    )
    assert same_sample(merged, union)
    with pytest.raises(mc.SampleError, match="duplicate pair"):
        mc.PairSample.from_columns(pop, scheme=scheme, i=column("i"), j=column("j"), draws=column("draws"))
    a, b = mc.pairs_for_judgement(union, rng=np.random.default_rng(1))
    gold = np.asarray(POPULATIONS["random"][0])
    verdict = np.where(gold[a] % 2 == gold[b] % 2, "equivalent", "not_equivalent")
    verdict[::5] = "unsure"
    verdicts = mc.verdicts_from_judgements(a, b, verdict)
    assert mc.estimate_quality(pop, union, verdicts).as_dict() == mc.estimate_quality(pop, merged, verdicts).as_dict()
    # And the union's horizon defaults to all its draws.
    assert mc.estimate_quality(pop, union, verdicts).as_dict() == mc.estimate_quality(
        pop, union, verdicts, horizon=450
    ).as_dict()


# ---- command line ------------------------------------------------------------------------

TINY = "item_id,base_cluster,exp_cluster\na,B1,E1\nb,B1,E1\nc,B1,E2\nd,B2,E2\ne,B3,E3\nf,B3,E4\n"
JUDGEMENTS = "i,j,verdict\na,b,equivalent\nc,a,not_equivalent\nb,c,unsure\nd,c,equivalent\ne,f,not_equivalent\n"


def test_cli_batches_concatenate_into_one_estimate(tmp_path):
    items = write(tmp_path / "items.csv", TINY)
    paths = [tmp_path / f"batch{b}.csv" for b in range(3)]
    for b, path in enumerate(paths):
        extra = () if b == 0 else ("--batch", b)
        done = run("sample", items, "--pairs", 300, "--seed", 4, *extra, "--out", path)
        assert (done.returncode, done.stderr) == (0, "")
    default = tmp_path / "default.csv"
    assert run("sample", items, "--pairs", 300, "--seed", 4, "--batch", 0, "--out", default).returncode == 0
    assert default.read_text() == paths[0].read_text()
    # Without the draw-order columns: a sample judged in no particular order estimates from every draw.
    frames = [pd.read_csv(p).drop(columns=["batch", "positions"]) for p in paths]
    assert not frames[1].equals(frames[0]) and not frames[2].equals(frames[1])
    both = tmp_path / "both.csv"
    pd.concat(frames, ignore_index=True).to_csv(both, index=False)
    judgements = write(tmp_path / "judgements.csv", JUDGEMENTS)
    got = run_json("estimate", items, both, judgements, "--n-boot", 20)

    pop = mc.population_from_labels(["B1", "B1", "B1", "B2", "B3", "B3"], ["E1", "E1", "E2", "E2", "E3", "E4"])
    position = {name: k for k, name in enumerate("abcdef")}
    samples = [
        mc.PairSample.from_columns(
            pop, scheme="jaccard", i=f["i"].map(position), j=f["j"].map(position), draws=f["draws"],
        )
        for f in frames
    ]
    judged = pd.read_csv(judgements)
    verdicts = mc.verdicts_from_judgements(judged["i"].map(position), judged["j"].map(position), judged["verdict"])
    want = mc.estimate_quality(pop, mc.concatenate_samples(samples), verdicts).as_dict()["estimates"]
    assert {k: v for k, v in got["estimates"].items() if k in want} == want
    assert got["estimates"]["DeltaPrecision"]["drawn_draws"] == 900
    # The batch-1 sample is the API's batch 1 (its rows in draw order, the API's in sample order).
    api = mc.sample_pairs(pop, n_draws=300, rng=mc.batch_rng(seed=4, batch=1))
    file_rows = zip(frames[1]["i"].map(position), frames[1]["j"].map(position), frames[1]["draws"])
    assert {(i, j): d for i, j, d in file_rows} == {
        (int(i), int(j)): int(d) for i, j, d in zip(api.i, api.j, api.draws)
    }
    done = run("sample", items, "--pairs", 10, "--seed", 4, "--batch", -1, "--out", tmp_path / "x.csv")
    assert done.returncode == 2 and "--batch" in done.stderr


@pytest.fixture(scope="module")
def scheduler():
    from tests.metrics_core.dask_run import local_client

    with local_client(2, protocol="tcp") as client:
        yield client


def test_cli_batches_on_dask(tmp_path, scheduler):
    from metrics_core import dask_backend
    from tests.metrics_core.dask_run import items_frame, write_parts

    rng = np.random.default_rng(4)
    base = rng.integers(0, 30, 200)
    exp = np.where(rng.random(200) < 0.3, rng.integers(0, 30, 200), base)
    folder = write_parts(items_frame(base, exp + 100), tmp_path / "items", 2)
    outputs = {}
    for b in (0, 2):
        out = tmp_path / f"pairs{b}.parquet"
        args = ("sample", folder, "--pairs", 800, "--seed", 6, "--batch", b, "--engine", "dask")
        done = run(*args, "--scheduler", scheduler.scheduler.address, "--out", out)
        assert (done.returncode, done.stderr) == (0, "")
        # The sample's rows, in the library's order; the draw-order columns are test_cli_draw_order's.
        table = pd.read_parquet(out)
        assert (table["batch"] == b).all()
        outputs[b] = table.drop(columns=["batch", "positions"]).sort_values(["stratum", "i", "j"], ignore_index=True)
    items = dask_backend.read_items(str(folder))

    def library(rng):
        return dask_backend.sample_pairs(items, n_draws=800, rng=rng).sort_values(["stratum", "i", "j"], ignore_index=True)

    for b, table in outputs.items():
        pd.testing.assert_frame_equal(table, library(mc.batch_rng(seed=6, batch=b)), check_dtype=False)
    assert not outputs[0].equals(outputs[2])
    assert outputs[0].equals(library(np.random.default_rng(6)).astype(outputs[0].dtypes))
