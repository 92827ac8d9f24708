"""``python -m metrics_core compare TRUTH PRED`` run as a subprocess, against metrics-cli.md.

The example is the ECC article's (§3) and yandex cluster_metrics' sample: truth t1={a,b,c,d,e},
t2={f,g,h,i}; prediction c1={a,b,c,d,g}, c2={e,f,h,i}; published ECC 0.6125, category-averaged
BCubed precision 0.65125, recall 0.6525, F1 0.65187.
"""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from tests.metrics_core.cli_run import approx, assert_same_one_shot, run, run_json, write

CONTRACT_KEYS = [
    "BCubedPrecision", "BCubedRecall", "BCubedF1", "BCubedPrecisionByCategory", "BCubedRecallByCategory",
    "BCubedF1ByCategory", "ExpectedClusterCompleteness", "Purity", "InversePurity", "FMeasure",
    "PairwisePrecision", "PairwiseRecall", "PairwiseF1", "RandIndex", "AdjustedRandIndex", "FowlkesMallows",
    "NMI", "PivotedAccuracy", "NormalizedPivotedAccuracy", "NormalizedClusteringAccuracy",
]  # fmt: skip
TRUTH = "item_id,cluster_id\na,t1\nb,t1\nc,t1\nd,t1\ne,t1\nf,t2\ng,t2\nh,t2\ni,t2\n"
PRED = "item_id,cluster_id\na,c1\nb,c1\nc,c1\nd,c1\ne,c2\nf,c2\ng,c1\nh,c2\ni,c2\n"


@pytest.fixture
def files(tmp_path):
    return write(tmp_path / "truth.csv", TRUTH), write(tmp_path / "pred.csv", PRED)


def test_keys_and_values_on_the_ecc_article_example(files):
    result = run_json("compare", *files)
    assert list(result) == ["items", "dropped_items", "metrics"]
    assert (result["items"], result["dropped_items"]) == (9, 0)
    assert list(result["metrics"]) == CONTRACT_KEYS == list(mc.EXTERNAL_MEASURES)
    metrics = result["metrics"]
    assert metrics["ExpectedClusterCompleteness"] == approx(0.6125)
    assert metrics["BCubedPrecisionByCategory"] == approx(0.65125)
    assert metrics["BCubedRecallByCategory"] == approx(0.6525)
    assert round(metrics["BCubedF1ByCategory"], 5) == 0.65187
    # The same numbers as the library function.
    library = mc.external_measures(list("111112222"), list("111122122"))
    assert metrics == {name: approx(value) for name, value in library.items()}


def test_parquet_with_integer_cluster_ids(tmp_path):
    truth, pred = tmp_path / "truth.parquet", tmp_path / "pred.parquet"
    pq.write_table(pa.table({"item_id": list("abcdefghi"), "cluster_id": [1, 1, 1, 1, 1, 2, 2, 2, 2]}), truth)
    pq.write_table(pa.table({"item_id": list("abcdefghi"), "cluster_id": [7, 7, 7, 7, 8, 8, 7, 8, 8]}), pred)
    assert run_json("compare", truth, pred)["metrics"]["ExpectedClusterCompleteness"] == approx(0.6125)


def test_items_in_one_file_only_are_dropped_and_counted(tmp_path, files):
    truth = write(tmp_path / "truth2.csv", TRUTH + "only_truth,t9\n")
    pred = write(tmp_path / "pred2.csv", "item_id,cluster_id\nonly_pred,c9\n" + PRED.split("\n", 1)[1])
    result = run_json("compare", truth, pred)
    assert (result["items"], result["dropped_items"]) == (9, 2)
    assert result["metrics"] == run_json("compare", *files)["metrics"]


def test_weight_is_taken_from_truth_and_ignored_in_pred(tmp_path):
    # Item e weighs 3: BCubed precision of e is w(c2∩t1)/w(c2) = 3/6, ...; compare the library.
    truth = write(tmp_path / "truth.csv", "item_id,cluster_id,weight\n" + "".join(
        f"{x},{t},{3 if x == 'e' else 1}\n" for x, t in zip("abcdefghi", "111112222")))  # fmt: skip
    pred = write(tmp_path / "pred.csv", "item_id,cluster_id,weight\n" + "".join(
        f"{x},{c},100\n" for x, c in zip("abcdefghi", "111122122")))  # fmt: skip
    result = run_json("compare", truth, pred)
    weights = [3.0 if x == "e" else 1.0 for x in "abcdefghi"]
    library = mc.external_measures(list("111112222"), list("111122122"), weights=weights)
    assert result["metrics"] == {name: approx(value) for name, value in library.items()}
    assert result["metrics"]["BCubedPrecision"] != approx(mc.external_measures(list("111112222"), list("111122122"))["BCubedPrecision"])


def test_undefined_measures_are_null(tmp_path):
    # One common item: no pair to count, one cluster on each side.
    truth = write(tmp_path / "truth.csv", "item_id,cluster_id\na,1\nb,2\n")
    pred = write(tmp_path / "pred.csv", "item_id,cluster_id\na,x\n")
    done = run("compare", truth, pred)
    assert done.returncode == 0 and '"RandIndex": null' in done.stdout and "NaN" not in done.stdout
    result = json.loads(done.stdout)
    assert (result["items"], result["dropped_items"]) == (1, 1)
    nulls = {name for name, value in result["metrics"].items() if value is None}
    assert nulls == {
        "PairwisePrecision", "PairwiseRecall", "PairwiseF1", "RandIndex", "AdjustedRandIndex", "FowlkesMallows",
        "NMI", "NormalizedPivotedAccuracy", "NormalizedClusteringAccuracy",
    }  # fmt: skip


def test_unequal_cluster_counts_make_the_pivoted_accuracies_null(tmp_path):
    truth = write(tmp_path / "truth.csv", "item_id,cluster_id\na,1\nb,1\nc,2\nd,2\n")
    pred = write(tmp_path / "pred.csv", "item_id,cluster_id\na,x\nb,y\nc,z\nd,z\n")
    metrics = run_json("compare", truth, pred)["metrics"]
    assert [metrics[k] for k in ("PivotedAccuracy", "NormalizedPivotedAccuracy", "NormalizedClusteringAccuracy")] == [None] * 3
    assert metrics["BCubedPrecision"] == approx(1.0)


@pytest.mark.parametrize(
    ("which", "text", "message"),
    [
        ("truth", "item_id,cluster_id\na,1\nb,1\na,2\n", "line 4: duplicate item_id 'a' (first on line 2)"),
        ("pred", "item_id,cluster_id\na,1\nb,1\nb,2\n", "line 4: duplicate item_id 'b' (first on line 3)"),
        ("truth", "item_id,cluster_id,weight\na,1,1\nb,1,0\n", "line 3: weight '0' must be greater than 0"),
        ("truth", "item_id,cluster_id,weight\na,1,1\nb,1,heavy\n", "line 3: weight 'heavy' is not a number"),
        ("truth", "item_id,cluster_id\na,1\nb,\n", "line 3: empty cluster_id"),
        ("pred", "item_id,cluster\na,1\n", "missing column 'cluster_id' (columns found: 'item_id', 'cluster')"),
        ("pred", "item_id,cluster_id\nz,1\n", "no item_id in common with {truth}"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_file_place_problem(tmp_path, files, which, text, message):
    truth, pred = files
    bad = write(tmp_path / f"bad_{which}.csv", text)
    truth, pred = (bad, pred) if which == "truth" else (truth, bad)
    done = run("compare", truth, pred)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"metrics_core: error: {bad}: {message.format(truth=truth)}\n"


@pytest.mark.parametrize(("name", "problem"), [("missing.csv", "file not found"), ("truth.txt", "unsupported file type")])
def test_unreadable_files_exit_2(tmp_path, files, name, problem):
    path = tmp_path / name
    if name.endswith(".txt"):
        write(path, TRUTH)
    done = run("compare", path, files[1])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"metrics_core: error: {path}: {problem}") and done.stderr.count("\n") == 1


def test_missing_argument_is_a_usage_error(files):
    done = run("compare", files[0])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.endswith("metrics_core compare: error: the following arguments are required: PRED\n")


def test_a_one_shot_process_gives_the_same_measures_without_pandas(files):
    assert_same_one_shot("compare", *files)
