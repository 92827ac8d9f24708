"""Weights of extreme magnitude on the Dask engine (issue 32, item 5; metrics_core._validation).

As in memory (test_cli_weights.py): weights whose magnitude alone would underflow or overflow a
pair weight w_i·w_j / (W·weight(U)) are rescaled exactly by the same power of two, so every
result is that of the same ratios at ordinary magnitude, weights reported in the files' units;
weights spanning more than 2**200, and weights not positive and finite, are refused with the
in-memory reader's one-line message naming the file and the row.
"""

import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core import dask_backend
from metrics_core.io import InputError, read_items
from tests.metrics_core.cli_run import approx, assert_refused, run, run_json
from tests.metrics_core.dask_run import items_frame, local_client, write_parts

# test_cli_weights.py's six items: every class has several pairs.
BASE = ["B1", "B1", "B1", "B2", "B2", "B3"]
EXP = ["E1", "E1", "E2", "E2", "E3", "E3"]
RATIOS = np.array([1.0, 2.0, 3.0, 1.0, 5.0, 1.0])
SPAN = "2**200 (about 1.6e60)"
WHY = "the pair weights would underflow float64 at any scale"


def items_file(tmp_path, name, weights=None):
    """The six items as one Parquet file, in this order (both engines read it)."""
    path = tmp_path / f"{name}.parquet"
    items_frame(BASE, EXP, weights, ids=list("abcdef")).to_parquet(path, index=False)
    return path


def same_metrics(got, want):
    assert list(got) == list(want)
    for name, value in want.items():
        assert got[name] == approx(value) if not math.isnan(value) else math.isnan(got[name]), name


@pytest.mark.parametrize("weight", [1e-320, 5e-324, 1e300])
def test_equal_weights_of_any_magnitude_give_the_equal_weight_numbers_on_dask_and_in_memory(
    synchronous, tmp_path, weight
):
    extreme, equal = items_file(tmp_path, "extreme", [weight] * 6), items_file(tmp_path, "equal")
    on_dask = dask_backend.impact_metrics(dask_backend.read_items(str(extreme)))
    in_memory = mc.impact_metrics(read_items(extreme).to_population())
    want = mc.impact_metrics(read_items(equal).to_population()).metrics
    same_metrics(on_dask.metrics, want)
    same_metrics(in_memory.metrics, want)
    # The products of weights: the sums of squares under WeightFractionOfBaseCluster underflow
    # (1e-320) or overflow (1e300) unless the weights are rescaled first.
    assert want["WeightFractionOfBaseCluster"] > 0
    assert on_dask.metrics["WeightFractionOfBaseCluster"] == approx(want["WeightFractionOfBaseCluster"])
    assert on_dask.total_weight == in_memory.total_weight == 6 * weight  # in the file's units
    assert on_dask.affected_weight == in_memory.affected_weight


def test_dask_rescales_by_the_in_memory_power_of_two(synchronous, tmp_path):
    for scale in (1e-320, 1e-250, 1.0, 1e250, 1e305):
        weights = RATIOS * scale
        folder = str(write_parts(items_frame(BASE, EXP, weights), tmp_path / f"{scale}", 3))
        items = dask_backend.read_items(folder)
        assert items.weight_exponent == mc.population_from_labels(BASE, EXP, weights).weight_exponent
        # Opened without the checks (as the app's later preparation steps do), rescaled all the same.
        assert dask_backend.read_items(folder, validate=False).weight_exponent == items.weight_exponent
    assert items.weight_exponent != 0


def test_rescaled_results_keep_the_ratios_and_report_the_files_units(synchronous, tmp_path):
    frame = items_frame(BASE, EXP, RATIOS * 1e-250, ids=list("abcdef"), segment=["x", "y", "x", "y", "x", "y"])
    items = dask_backend.read_items(str(write_parts(frame, tmp_path / "scaled", 2)))
    plain = dask_backend.read_items(str(write_parts(frame.assign(weight=RATIOS), tmp_path / "plain", 2)))
    assert items.weight_exponent > 0 and plain.weight_exponent == 0
    same_metrics(dask_backend.impact_metrics(items).metrics, dask_backend.impact_metrics(plain).metrics)
    per_item = dask_backend.impact_per_item(items).compute().sort_values("item_id")
    plain_item = dask_backend.impact_per_item(plain).compute().sort_values("item_id")
    assert per_item["weight"].tolist() == (RATIOS * 1e-250).tolist()  # the very values of the file
    np.testing.assert_allclose(
        per_item["WeightFractionOfBaseCluster"], plain_item["WeightFractionOfBaseCluster"], rtol=1e-12
    )
    per_cluster = dask_backend.impact_per_cluster(items).compute()
    np.testing.assert_allclose(
        per_cluster["weight"] / 1e-250, dask_backend.impact_per_cluster(plain).compute()["weight"], rtol=1e-12
    )
    by_slice = dask_backend.impact_by_slice(items, "segment")
    np.testing.assert_allclose(
        by_slice.weight / 1e-250, dask_backend.impact_by_slice(plain, "segment").weight, rtol=1e-12
    )
    rows = dask_backend.items_rows(items, ["a", "e"])
    assert rows["weight"].tolist() == [1e-250, 5e-250]


def test_a_sample_of_tiny_weights_is_the_sample_of_their_ratios(synchronous, tmp_path):
    """Weights 2**-1070 (subnormal) rescale to 0.5 exactly: the very draws of unit weights. Without
    the rescaling their products vanish and the class masses with them."""
    results = []
    for name, weights in (("tiny", [2.0**-1070] * 6), ("unit", None)):
        items = dask_backend.read_items(str(write_parts(items_frame(BASE, EXP, weights), tmp_path / name, 2)))
        pairs = dask_backend.sample_pairs(items, n_draws=400, rng=np.random.default_rng(5))
        context = dask_backend.sample_context(items, pairs)
        results.append((pairs, context))
    (tiny, tiny_context), (unit, unit_context) = results
    pd.testing.assert_frame_equal(tiny, unit)
    assert set(tiny["pair_class"]) == {"self", "split", "merge", "intersection"}
    np.testing.assert_allclose(tiny_context.totals, unit_context.totals, rtol=1e-12)
    np.testing.assert_allclose(tiny_context.rate_totals, unit_context.rate_totals, rtol=1e-12)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1, 1, 1e308, 1, 1, 1], f"row 3: weight 1e+308 is more than {SPAN} times the weight 1.0 on row 1"),
        ([1, 1, 1, 1, 1e-320, 1], f"row 5: weight 1e-320 is less than the weight 1.0 on row 1 divided by {SPAN}"),
        ([1e-300, 1e300] * 3, f"row 1: weight 1e-300 is less than the weight 1e+300 on row 2 divided by {SPAN}"),
        ([1, 2, 1e-310, 1, 1, 1], f"row 3: weight 1e-310 is less than the weight 2.0 on row 2 divided by {SPAN}"),
    ],
)
def test_weights_spanning_too_wide_a_range_are_refused_on_both_engines_naming_the_row(
    client, tmp_path, weights, message
):
    path = items_file(tmp_path, "items", weights)
    want = f"{path}: {message}: {WHY}"
    with pytest.raises(InputError) as in_memory:
        read_items(path)
    with pytest.raises(InputError) as on_dask:
        dask_backend.read_items(str(path))
    assert str(in_memory.value) == str(on_dask.value) == want


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1.0, 1.0, 0.0, 1.0, -2.0, 1.0], "row 3: weight 0.0 must be greater than 0"),
        ([1, 1, 1, 1, 0, 1], "row 5: weight 0 must be greater than 0"),  # integers, quoted as such
        ([1.0, -np.inf, 1.0, 1.0, 1.0, 1.0], "row 2: weight -inf is not finite"),
        ([1e308] * 6, "the weights add up to more than a float64 holds: scale them down"),
    ],
)
def test_weights_not_positive_and_finite_are_refused_on_both_engines_alike(client, tmp_path, weights, message):
    path = tmp_path / "items.parquet"
    pd.DataFrame({"item_id": list("abcdef"), "base_cluster": BASE, "exp_cluster": EXP, "weight": weights}).to_parquet(
        path, index=False
    )
    with pytest.raises(InputError) as in_memory:
        read_items(path)
    with pytest.raises(InputError) as on_dask:
        dask_backend.read_items(str(path))
    assert str(in_memory.value) == str(on_dask.value) == f"{path}: {message}"


def test_a_dataset_of_several_files_names_the_item_instead_of_a_row(client, tmp_path):
    """Rows counted across a folder's files would be hard to find: the message names item ids."""
    folder = tmp_path / "items"
    folder.mkdir()
    for k, rows in enumerate(([1.0, 1.0, 1.0], [1.0, 2.0, 1e-310])):
        part = items_frame(BASE[3 * k : 3 * k + 3], EXP[3 * k : 3 * k + 3], rows, ids=list("abcdef")[3 * k : 3 * k + 3])
        part.to_parquet(folder / f"part.{k}.parquet", index=False)
    with pytest.raises(InputError) as err:
        dask_backend.read_items(str(folder))
    problem = f"weight 1e-310 is less than the weight 2.0 of item_id 'e' divided by {SPAN}: {WHY}"
    assert str(err.value) == f"{folder}: item_id 'f': {problem}"
    (folder / "part.1.parquet").unlink()
    items_frame(["B2"], ["E3"], [0], ids=["z"]).to_parquet(folder / "part.1.parquet", index=False)
    with pytest.raises(InputError) as err:
        dask_backend.read_items(str(folder))
    assert str(err.value) == f"{folder}: item_id 'z': weight 0.0 must be greater than 0"


@pytest.fixture(scope="module")
def scheduler():
    with local_client(2, protocol="tcp") as client:
        yield client.scheduler.address


@pytest.mark.slow
def test_the_dask_command_line_rescales_and_refuses_as_in_memory(tmp_path, scheduler):
    dask = ("--engine", "dask", "--scheduler", scheduler)
    tiny, equal = items_file(tmp_path, "tiny", [1e-320] * 6), items_file(tmp_path, "equal")
    got = run_json("impact", tiny, *dask)
    want = run_json("impact", equal)
    assert list(got["metrics"]) == list(want["metrics"])
    for name, value in want["metrics"].items():
        assert got["metrics"][name] == approx(value), name
    assert got["total_weight"] == 6e-320  # in the file's units
    wide = items_file(tmp_path, "wide", [1, 1, 1e308, 1, 1, 1])
    message = f"{wide}: row 3: weight 1e+308 is more than {SPAN} times the weight 1.0 on row 1: {WHY}"
    assert_refused(run("impact", wide), message)
    assert_refused(run("sample", wide, "--pairs", 10, "--seed", 1, *dask, "--out", tmp_path / "p.csv"), message)
