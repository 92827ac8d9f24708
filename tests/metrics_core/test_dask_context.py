"""The SampleContext of a Dask sample equals the in-memory one, so estimates from a sample drawn
on Dask need no population in memory; and the rows of a sample's items come back whole."""

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import dask_backend
from metrics_core.dask_backend.context import items_rows, sample_context
from tests.metrics_core.dask_run import items_frame, write_parts


def random_frame(seed, n=600):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, n // 5, n)
    exp = np.where(rng.random(n) < 0.3, rng.integers(0, n // 4, n), base)
    ids = [f"id-{k:05d}" for k in rng.permutation(n)]
    return items_frame(base, exp, rng.lognormal(0, 0.5, n), ids=ids, shop=[f"s{k % 3}" for k in range(n)])


@pytest.mark.parametrize("scheme", mc.SCHEMES)
def test_context_of_a_dask_sample_equals_the_in_memory_one(synchronous, tmp_path, scheme):
    frame = random_frame(4)
    items = dask_backend.read_items(str(write_parts(frame, tmp_path / "items", 5)))
    pairs = dask_backend.sample_pairs(items, n_draws=3000, scheme=scheme, rng=np.random.default_rng(2))
    context = sample_context(items, pairs)

    pop = mc.population_from_labels(frame["base_cluster"], frame["exp_cluster"], frame["weight"])
    position = {item: k for k, item in enumerate(frame["item_id"])}
    sample = mc.PairSample.from_columns(
        pop, scheme=scheme, i=pairs["i"].map(position), j=pairs["j"].map(position), draws=pairs["draws"],
        pair_class=pairs["pair_class"], stratum=pairs["stratum"],
    )
    expected = mc.sample_context(pop, sample)
    for name in ("union", "base", "exp", "totals", "rate_totals"):
        np.testing.assert_allclose(getattr(context, name), getattr(expected, name), rtol=1e-12, atol=1e-15, err_msg=name)
    assert context.exact == pytest.approx(expected.exact, rel=1e-12)
    # Estimates from the Dask context are those from the population.
    rng = np.random.default_rng(0)
    x, y = mc.pairs_for_judgement(sample, rng=rng)
    verdicts = mc.verdicts_from_judgements(x, y, rng.choice(["equivalent", "not_equivalent", "unsure"], len(x)))
    from_dask = mc.estimate_quality(context, sample, verdicts).as_dict()["estimates"]
    from_memory = mc.estimate_quality(pop, sample, verdicts).as_dict()["estimates"]
    for name, estimate in from_memory.items():
        for key, value in estimate.items():
            assert from_dask[name][key] == pytest.approx(value, rel=1e-9, abs=1e-12), (name, key)


def test_items_rows_returns_every_column_of_the_wanted_items(synchronous, tmp_path):
    frame = random_frame(5, n=200)
    items = dask_backend.read_items(str(write_parts(frame, tmp_path / "items", 3)))
    wanted = ["id-00007", "id-00150", "id-00007", "id-00003"]
    rows = items_rows(items, wanted)
    assert rows["item_id"].tolist() == ["id-00003", "id-00007", "id-00150"]
    expected = frame.set_index("item_id").loc[rows["item_id"]]
    assert rows["base_cluster"].tolist() == expected["base_cluster"].tolist()
    assert rows["shop"].tolist() == expected["shop"].tolist()
    with pytest.raises(ValueError, match="1 item ids are not among the items, e.g. 'nope'"):
        items_rows(items, ["id-00003", "nope"])
