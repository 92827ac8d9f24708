"""``python -m metrics_core`` run as a subprocess, against the contract in metrics-cli.md.

The tiny example used throughout (unit weights unless said otherwise):
Base {a,b,c},{d}; Exp {a,b},{c,d}.

    item  Base(i)  Exp(i)  U=Base∪Exp  Split  Merge  JD    JI    SplitRate  MergeRate  w/w(Base)
    a     abc      ab      abc         1/3    0      1/3   2/3   1/3        0          1/3
    b     abc      ab      abc         1/3    0      1/3   2/3   1/3        0          1/3
    c     abc      cd      abcd        2/4    1/4    3/4   1/4   2/3        1/2        1/3
    d     d        cd      cd          0      1/2    1/2   1/2   0          1/2        1

Every item is affected. Means over the 4 items: SplitDistance 7/24, MergeDistance 3/16,
JaccardDistance 23/48, JaccardIndex = AffectedJaccardIndex 25/48, UnaffectedJaccardIndex 0,
AffectedWeightFraction 1, SplitRate 1/3, MergeRate 1/4, WeightFractionOfBaseCluster 1/2.

Pair classes (affected i, j in Base(i) ∪ Exp(i)): a: a self, b intersection, c split;
b: b self, a intersection, c split; c: c self, a and b split, d merge; d: d self, c merge.
"""

import json
import math

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from metrics_core import IMPACT_METRICS
from tests.metrics_core.cli_run import approx, assert_refused, assert_same_one_shot, read_table, run, run_json, write
from tests.metrics_core.helpers import TINY_JUDGEMENTS

TINY = "item_id,base_cluster,exp_cluster\na,B1,E1\nb,B1,E1\nc,B1,E2\nd,B2,E2\n"
TINY_METRICS = {
    "JaccardDistance": 23 / 48,
    "SplitDistance": 7 / 24,
    "MergeDistance": 3 / 16,
    "JaccardIndex": 25 / 48,
    "AffectedJaccardIndex": 25 / 48,
    "UnaffectedJaccardIndex": 0.0,
    "AffectedWeightFraction": 1.0,
    "SplitRate": 1 / 3,
    "MergeRate": 1 / 4,
    "WeightFractionOfBaseCluster": 1 / 2,
}
TINY_CLASSES = {
    ("a", "a"): "self", ("a", "b"): "intersection", ("a", "c"): "split",
    ("b", "b"): "self", ("b", "a"): "intersection", ("b", "c"): "split",
    ("c", "c"): "self", ("c", "a"): "split", ("c", "b"): "split", ("c", "d"): "merge",
    ("d", "d"): "self", ("d", "c"): "merge",
}

JACCARD_KEYS = [
    "GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance", "GoodDistance",
    "BadDistance", "GoodMinusBadDistance", "AffectedGoodIndex", "AffectedBadIndex", "DeltaPrecision", "GoodSplitRate",
    "BadSplitRate", "GoodMergeRate", "BadMergeRate",
]
PRECISION_KEYS = ["DeltaPrecision", "GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate"]
UNSUPPORTED = "unsupported file type: use a .csv or .parquet file"
DIFF_SHARE_ONLY_STRATIFIED = "--diff-share is only meaningful with --scheme stratified"
ESTIMATE_KEYS = [
    "value", "stderr", "ci_low", "ci_high", "judged_draws", "drawn_draws", "cs_low", "cs_high", "unsure_low", "unsure_high",
]
RANGE_KEYS = ["recall_base_low", "recall_base_high"]


def numbers_in(obj):
    if isinstance(obj, dict):
        for value in obj.values():
            yield from numbers_in(value)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield obj


@pytest.fixture
def tiny(tmp_path):
    return write(tmp_path / "items.csv", TINY)


# ---------------------------------------------------------------------------- impact


def test_impact_tiny_example(tiny):
    result = run_json("impact", tiny)
    assert list(result) == ["items", "affected_items", "total_weight", "dropped_items", "metrics"]
    assert (result["items"], result["affected_items"], result["total_weight"], result["dropped_items"]) == (4, 4, 4.0, 0)
    assert list(result["metrics"]) == list(IMPACT_METRICS)
    assert result["metrics"] == {name: approx(value) for name, value in TINY_METRICS.items()}


def test_a_one_shot_process_gives_the_same_impact_and_tables_without_pandas(tiny, tmp_path):
    per_item, per_cluster = tmp_path / "per_item.csv", tmp_path / "per_cluster.parquet"
    args = ("impact", tiny, "--per-item", per_item, "--per-cluster", per_cluster)
    assert_same_one_shot(*args, outputs=[per_item, per_cluster])
    assert_same_one_shot("impact", tmp_path / "absent.csv")  # a refusal: the same line on stderr


def test_impact_weighted_with_an_unaffected_item(tmp_path):
    # The tiny example plus e in {e} on both sides with weight 4, so W = 8 and e is unaffected
    # (JI(e) = 1, distances 0). Sums over a-d are as in the module docstring, divided by 8.
    items = write(tmp_path / "items.csv", "item_id,base_cluster,exp_cluster,weight\n"
                  "a,B1,E1,1\nb,B1,E1,1\nc,B1,E2,1\nd,B2,E2,1\ne,B3,E3,4\n")
    result = run_json("impact", items)
    assert (result["items"], result["affected_items"], result["total_weight"]) == (5, 4, 8.0)
    assert result["metrics"] == {
        "JaccardDistance": approx(23 / 96),
        "SplitDistance": approx(7 / 48),
        "MergeDistance": approx(3 / 32),
        "JaccardIndex": approx(73 / 96),
        "AffectedJaccardIndex": approx(25 / 96),  # (2/3 + 2/3 + 1/4 + 1/2) / 8
        "UnaffectedJaccardIndex": approx(1 / 2),
        "AffectedWeightFraction": approx(1 / 2),
        "SplitRate": approx(1 / 6),
        "MergeRate": approx(1 / 8),
        "WeightFractionOfBaseCluster": approx(1 / 2),  # over the affected items only
    }


def test_impact_with_nothing_affected_prints_null_not_nan(tmp_path):
    items = write(tmp_path / "items.csv", "item_id,base_cluster,exp_cluster\na,1,x\nb,1,x\n")
    done = run("impact", items)
    assert done.returncode == 0
    assert "NaN" not in done.stdout and "Infinity" not in done.stdout
    result = json.loads(done.stdout)
    assert result["metrics"]["WeightFractionOfBaseCluster"] is None
    assert result["metrics"]["JaccardDistance"] == 0.0 and result["affected_items"] == 0


def test_impact_per_item_and_per_cluster_tables(tiny, tmp_path):
    per_item, per_cluster = tmp_path / "per_item.csv", tmp_path / "per_cluster.parquet"
    result = run_json("impact", tiny, "--per-item", per_item, "--per-cluster", per_cluster)
    assert result["items"] == 4

    table = read_table(per_item)
    assert list(table) == [
        "item_id", "base_cluster", "exp_cluster", "weight", "affected", "JaccardDistance", "SplitDistance",
        "MergeDistance", "JaccardIndex", "SplitRate", "MergeRate", "WeightFractionOfBaseCluster",
    ]
    assert table["item_id"] == ["a", "b", "c", "d"]
    assert table["base_cluster"] == ["B1", "B1", "B1", "B2"]
    assert table["exp_cluster"] == ["E1", "E1", "E2", "E2"]
    assert table["weight"] == [1, 1, 1, 1]
    assert table["affected"] == [True, True, True, True]
    assert table["SplitDistance"] == [approx(1 / 3), approx(1 / 3), approx(1 / 2), 0]
    assert table["MergeDistance"] == [0, 0, approx(1 / 4), approx(1 / 2)]
    assert table["JaccardIndex"] == [approx(2 / 3), approx(2 / 3), approx(1 / 4), approx(1 / 2)]
    assert table["SplitRate"] == [approx(1 / 3), approx(1 / 3), approx(2 / 3), 0]
    assert table["MergeRate"] == [0, 0, approx(1 / 2), approx(1 / 2)]
    assert table["WeightFractionOfBaseCluster"] == [approx(1 / 3)] * 3 + [1]

    clusters = read_table(per_cluster)
    assert list(clusters) == ["clustering", "cluster_id", "items", "affected_items", "weight", *IMPACT_METRICS]
    rows = {(c, k): i for i, (c, k) in enumerate(zip(clusters["clustering"], clusters["cluster_id"]))}
    assert set(rows) == {("base", "B1"), ("base", "B2"), ("exp", "E1"), ("exp", "E2")}
    b1, e2 = rows["base", "B1"], rows["exp", "E2"]
    assert (clusters["items"][b1], clusters["affected_items"][b1], clusters["weight"][b1]) == (3, 3, 3.0)
    # B1 = {a, b, c}: mean of the per-item values above.
    assert clusters["JaccardDistance"][b1] == approx((1 / 3 + 1 / 3 + 3 / 4) / 3)
    assert clusters["SplitRate"][b1] == approx((1 / 3 + 1 / 3 + 2 / 3) / 3)
    # E2 = {c, d}.
    assert clusters["MergeDistance"][e2] == approx((1 / 4 + 1 / 2) / 2)
    assert clusters["WeightFractionOfBaseCluster"][e2] == approx((1 / 3 + 1) / 2)


def test_per_cluster_undefined_metric_is_null(tmp_path):
    items = write(tmp_path / "items.csv", "item_id,base_cluster,exp_cluster\na,1,x\nb,1,y\nc,2,z\n")
    out = tmp_path / "clusters.csv"
    run_json("impact", items, "--per-cluster", out)
    clusters = read_table(out)
    unaffected = clusters["cluster_id"].index("2")  # {c} in Base is {c} in Exp: nothing affected
    assert clusters["WeightFractionOfBaseCluster"][unaffected] is None


def test_per_cluster_table_with_integer_and_text_cluster_ids(tmp_path):
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"item_id": [1, 2, 3], "base_cluster": [10, 10, 20], "exp_cluster": ["x", "y", "y"]}), items)
    out = tmp_path / "clusters.parquet"
    run_json("impact", items, "--per-cluster", out)
    clusters = read_table(out)
    assert list(zip(clusters["clustering"], clusters["cluster_id"], clusters["items"])) == [
        ("base", "10", 2), ("base", "20", 1), ("exp", "x", 1), ("exp", "y", 2),
    ]


# ---------------------------------------------------------------------------- sample


def test_sample_jaccard_file(tiny, tmp_path):
    out = tmp_path / "pairs.csv"
    done = run("sample", tiny, "--pairs", 500, "--seed", 7, "--out", out)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    pairs = read_table(out)
    assert list(pairs) == ["i", "j", "pair_class", "stratum", "draws", "scheme", "batch", "positions"]  # §14
    assert sum(pairs["draws"]) == 500 and min(pairs["draws"]) >= 1
    keys = list(zip(pairs["i"], pairs["j"]))
    assert len(set(keys)) == len(keys)
    assert {key: cls for key, cls in zip(keys, pairs["pair_class"])} == {key: TINY_CLASSES[key] for key in keys}
    assert len(keys) == len(TINY_CLASSES)  # 500 draws hit all 12 pairs (each has P(i, j) >= 1/16: 1 / (W · weight(U)) for c)
    assert set(pairs["stratum"]) == {"all"} and set(pairs["scheme"]) == {"jaccard"}


def test_sample_is_reproducible_from_the_seed(tiny, tmp_path):
    first, again, other = tmp_path / "1.csv", tmp_path / "2.csv", tmp_path / "3.csv"
    for out, seed in ((first, 11), (again, 11), (other, 12)):
        assert run("sample", tiny, "--pairs", 300, "--seed", seed, "--out", out).returncode == 0
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes()


@pytest.mark.parametrize("share, diff_draws", [(None, 200), ("0.25", 100)])
def test_sample_stratified(tiny, tmp_path, share, diff_draws):
    out = tmp_path / "pairs.parquet"
    extra = [] if share is None else ["--diff-share", share]
    assert run("sample", tiny, "--pairs", 400, "--seed", 3, "--scheme", "stratified", *extra, "--out", out).returncode == 0
    pairs = read_table(out)
    assert set(pairs["scheme"]) == {"stratified"}
    for cls, stratum in zip(pairs["pair_class"], pairs["stratum"]):
        assert stratum == ("diff" if cls in ("split", "merge") else "stable")
    assert sum(d for d, s in zip(pairs["draws"], pairs["stratum"]) if s == "diff") == diff_draws
    assert sum(pairs["draws"]) == 400


def test_sample_precision(tiny, tmp_path):
    out = tmp_path / "pairs.csv"
    assert run("sample", tiny, "--pairs", 50, "--seed", 1, "--scheme", "precision", "--out", out).returncode == 0
    pairs = read_table(out)
    assert set(pairs["scheme"]) == {"precision"} and set(pairs["stratum"]) == {"all"}
    assert sum(pairs["draws"]) == 50
    assert all(TINY_CLASSES[key] == cls for key, cls in zip(zip(pairs["i"], pairs["j"]), pairs["pair_class"]))


# ---------------------------------------------------------------------------- estimate


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_estimate_keys_values_and_consistency(tiny, tmp_path, scheme):
    pairs, judgements = tmp_path / "pairs.csv", write(tmp_path / "judgements.csv", TINY_JUDGEMENTS)
    assert run("sample", tiny, "--pairs", 400, "--seed", 5, "--scheme", scheme, "--out", pairs).returncode == 0
    result = run_json("estimate", tiny, pairs, judgements)
    # sample writes the draw order: every pair is judged, so every draw is labelled (§14)
    assert list(result) == ["scheme", "confidence", "exact", "estimates", "derived", "labelled"]
    assert result.pop("labelled") == {"draws": 400, "waiting_verdicts": 0, "by_batch": [{"batch": 0, "prefix": 400, "draws": 400}]}
    assert all(e.pop("labelled_draws") == e["drawn_draws"] for e in result["estimates"].values())
    assert (result["scheme"], result["confidence"]) == (scheme, 0.95)
    assert result["exact"] == run_json("impact", tiny)["metrics"]
    estimates = result["estimates"]
    assert list(estimates) == (PRECISION_KEYS if scheme == "precision" else JACCARD_KEYS) + ["DeltaRecall", "IQ"]
    for name, estimate in estimates.items():
        # ΔRecall and IQ also carry the Recall_Base range they assume.
        assert list(estimate) == ESTIMATE_KEYS + (RANGE_KEYS if name in ("DeltaRecall", "IQ") else [])
        # 1e-12: the interval ends are computed separately from the value (rounding).
        assert estimate["ci_low"] - 1e-12 <= estimate["value"] <= estimate["ci_high"] + 1e-12
    assert all(math.isfinite(x) for x in numbers_in(result))

    table = read_table(pairs)
    drawn = {cls: sum(d for d, c in zip(table["draws"], table["pair_class"]) if c == cls) for cls in TINY_CLASSES.values()}
    exact = result["exact"]
    # Every pair is judged (Ideal {a,b},{c,d}): all splits good, all merges good, all stable pairs good.
    assert estimates["GoodSplitRate"] == {
        "value": approx(exact["SplitRate"]), "stderr": 0.0, "ci_low": estimates["GoodSplitRate"]["ci_low"],
        "ci_high": approx(exact["SplitRate"]), "judged_draws": drawn["split"], "drawn_draws": drawn["split"],
        "cs_low": estimates["GoodSplitRate"]["cs_low"], "cs_high": approx(exact["SplitRate"]),
        "unsure_low": approx(exact["SplitRate"]), "unsure_high": approx(exact["SplitRate"]),
    }
    # No verdict is unsure: the unsure range is the value; the sequence spans the interval.
    for name, estimate in estimates.items():
        assert estimate["unsure_low"] == estimate["value"] == estimate["unsure_high"], name
        assert estimate["cs_low"] <= estimate["ci_low"] + 1e-12 and estimate["ci_high"] <= estimate["cs_high"] + 1e-12, name
    assert [estimates[name][k] for name in ("DeltaRecall", "IQ") for k in RANGE_KEYS] == [0.4, 0.8] * 2
    assert estimates["BadSplitRate"]["value"] == 0.0
    assert estimates["GoodMergeRate"]["value"] == approx(exact["MergeRate"])
    assert estimates["GoodSplitRate"]["value"] + estimates["BadSplitRate"]["value"] == approx(exact["SplitRate"])
    if scheme == "precision":
        return
    assert estimates["GoodSplitDistance"]["value"] + estimates["BadSplitDistance"]["value"] == approx(exact["SplitDistance"])
    assert estimates["GoodMergeDistance"]["value"] + estimates["BadMergeDistance"]["value"] == approx(exact["MergeDistance"])
    assert estimates["AffectedGoodIndex"]["value"] + estimates["AffectedBadIndex"]["value"] == approx(
        exact["AffectedJaccardIndex"]
    )
    assert estimates["GoodDistance"]["value"] == approx(exact["JaccardDistance"])
    assert estimates["BadDistance"]["value"] == 0.0
    assert (estimates["GoodMergeDistance"]["judged_draws"], estimates["GoodMergeDistance"]["drawn_draws"]) == (
        drawn["merge"], drawn["merge"],
    )


def test_estimate_with_nothing_judged_prints_nulls(tiny, tmp_path):
    pairs, judgements = tmp_path / "pairs.csv", write(tmp_path / "judgements.csv", "i,j,verdict\n")
    assert run("sample", tiny, "--pairs", 100, "--seed", 2, "--out", pairs).returncode == 0
    done = run("estimate", tiny, pairs, judgements, "--confidence", "0.9")
    assert done.returncode == 0 and "NaN" not in done.stdout
    result = json.loads(done.stdout)
    assert result["confidence"] == 0.9
    split = result["estimates"]["GoodSplitDistance"]
    assert (split["value"], split["stderr"], split["judged_draws"]) == (None, None, 0)
    assert split["drawn_draws"] == sum(d for d, c in zip(*map(read_table(pairs).get, ("draws", "pair_class"))) if c == "split")


def test_estimate_with_parquet_inputs(tmp_path):
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"item_id": [1, 2, 3, 4], "base_cluster": [1, 1, 1, 2], "exp_cluster": [1, 1, 2, 2]}), items)
    pairs = tmp_path / "pairs.parquet"
    assert run("sample", items, "--pairs", 100, "--seed", 9, "--out", pairs).returncode == 0
    judgements = tmp_path / "judgements.parquet"
    verdicts = ["equivalent", "not_equivalent", "not_equivalent", "equivalent"]
    pq.write_table(pa.table({"i": [1, 3, 2, 4], "j": [2, 1, 3, 3], "verdict": verdicts}), judgements)
    result = run_json("estimate", items, pairs, judgements)
    assert result["estimates"]["BadSplitDistance"]["value"] == 0.0
    assert result["estimates"]["GoodSplitDistance"]["value"] == approx(7 / 24)


def test_ids_with_leading_zeros_survive_sample_and_estimate(tmp_path):
    # "007", "07" and "7" are three items; a number-guessing reader would merge them.
    items = write(tmp_path / "items.csv", "item_id,base_cluster,exp_cluster\n007,1,1\n07,1,1\n7,1,2\n0,2,2\n")
    pairs = tmp_path / "pairs.csv"
    assert run("sample", items, "--pairs", 300, "--seed", 4, "--out", pairs).returncode == 0
    as_text = pcsv.ConvertOptions(column_types={"i": pa.string(), "j": pa.string()})
    table = pcsv.read_csv(pairs, convert_options=as_text).to_pydict()
    tiny_name = {"a": "007", "b": "07", "c": "7", "d": "0"}
    expected = {(tiny_name[i], tiny_name[j]): cls for (i, j), cls in TINY_CLASSES.items()}
    assert dict(zip(zip(table["i"], table["j"]), table["pair_class"])) == expected
    judgements = write(tmp_path / "judgements.csv", "i,j,verdict\n007,07,equivalent\n7,007,not_equivalent\n"
                       "7,07,not_equivalent\n0,7,equivalent\n")
    result = run_json("estimate", items, pairs, judgements)
    assert result["estimates"]["GoodSplitDistance"]["value"] == approx(result["exact"]["SplitDistance"])
    assert result["estimates"]["GoodMergeDistance"]["value"] == approx(result["exact"]["MergeDistance"])


# ---------------------------------------------------------------------------- bad input: exit 2


def test_impact_refuses_duplicate_ids_and_writes_nothing(tmp_path):
    items = write(tmp_path / "items.csv", "item_id,base_cluster,exp_cluster\na,1,1\nb,1,2\na,2,2\n")
    per_item, per_cluster = tmp_path / "pi.csv", tmp_path / "pc.parquet"
    done = run("impact", items, "--per-item", per_item, "--per-cluster", per_cluster)
    assert_refused(done, f"{items}: line 4: duplicate item_id 'a' (first on line 2)", per_item, per_cluster)


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("items.csv", "item_id,base_cluster,exp_cluster,weight\na,1,1,1\nb,1,2,-3\n", "line 3: weight '-3' must be greater than 0"),
        ("items.csv", "item_id,base_cluster,exp_cluster,weight\na,1,1,x\n", "line 2: weight 'x' is not a number"),
        ("items.csv", "item_id,cluster\na,1\n", "missing column 'base_cluster', 'exp_cluster' (columns found: 'item_id', 'cluster')"),
        ("items.csv", "item_id,base_cluster,exp_cluster\na,1,1\n,1,2\n", "line 3: empty item_id"),
        ("items.csv", "item_id,base_cluster,exp_cluster\na,1,1\nb,1\n", "line 3: expected 3 columns, got 2"),
        ("items.csv", "item_id,base_cluster,exp_cluster\n", "no data rows"),
        ("items.csv", "", "empty file"),
        (
            "items.parquet",
            "PAR1 not really",
            "not a readable Parquet file (Parquet magic bytes not found in footer."
            " Either the file is corrupted or this is not a parquet file.)",
        ),
        ("items.json", "{}", "unsupported file type: use a .csv or .parquet file"),
    ],
)
def test_impact_refuses_bad_items(tmp_path, name, content, problem):
    items = write(tmp_path / name, content)
    per_item = tmp_path / "per_item.csv"
    assert_refused(run("impact", items, "--per-item", per_item), f"{items}: {problem}", per_item)


def test_impact_refuses_missing_file_and_bad_output_paths(tiny, tmp_path):
    missing = tmp_path / "missing.csv"
    assert_refused(run("impact", missing), f"{missing}: file not found")
    bad_out = tmp_path / "per_item.txt"
    assert_refused(run("impact", tiny, "--per-item", bad_out), f"{bad_out}: {UNSUPPORTED}", bad_out)
    same = tmp_path / "tables.csv"
    assert_refused(
        run("impact", tiny, "--per-item", same, "--per-cluster", same),
        f"{same}: --per-item and --per-cluster name the same file",
        same,
    )
    nowhere = tmp_path / "no_such_folder" / "per_item.csv"
    assert_refused(
        run("impact", tiny, "--per-cluster", nowhere),
        f"{nowhere}: cannot write: folder '{nowhere.parent}' does not exist",
    )


def test_sample_refuses_bad_input_and_writes_nothing(tmp_path):
    out = tmp_path / "pairs.csv"
    same = write(tmp_path / "same.csv", "item_id,base_cluster,exp_cluster\na,1,x\nb,1,x\n")
    assert_refused(
        run("sample", same, "--pairs", 10, "--seed", 1, "--out", out),
        f"{same}: no item is affected (Base and Exp are identical): nothing to sample",
        out,
    )
    dup = write(tmp_path / "dup.csv", "item_id,base_cluster,exp_cluster\na,1,x\na,1,y\n")
    assert_refused(
        run("sample", dup, "--pairs", 10, "--seed", 1, "--out", out),
        f"{dup}: line 3: duplicate item_id 'a' (first on line 2)",
        out,
    )
    tiny = write(tmp_path / "items.csv", TINY)
    bad_out = tmp_path / "pairs.tsv"
    assert_refused(run("sample", tiny, "--pairs", 10, "--seed", 1, "--out", bad_out), f"{bad_out}: {UNSUPPORTED}", bad_out)


@pytest.mark.parametrize(
    "options, message",
    [
        (["--pairs", "10", "--seed", "1", "--diff-share", "0.3"], DIFF_SHARE_ONLY_STRATIFIED),
        (["--pairs", "10", "--seed", "1", "--scheme", "precision", "--diff-share", "0.3"], DIFF_SHARE_ONLY_STRATIFIED),
        (
            ["--pairs", "10", "--seed", "1", "--scheme", "stratified", "--diff-share", "1"],
            "argument --diff-share: must be strictly between 0 and 1, got '1'",
        ),
        (["--pairs", "0", "--seed", "1"], "argument --pairs: must be a positive integer, got '0'"),
        (["--pairs", "x", "--seed", "1"], "argument --pairs: not a valid int: 'x'"),
        (["--pairs", "10", "--seed", "-1"], "argument --seed: must be a non-negative integer, got '-1'"),
        (["--pairs", "10"], "the following arguments are required: --seed"),
        (["--pairs", "10", "--seed", "1", "--scheme", "random"], "argument --scheme: invalid choice: 'random' (choose from "),
    ],
)
def test_sample_usage_errors(tiny, tmp_path, options, message):
    out = tmp_path / "pairs.csv"
    done = run("sample", tiny, *options, "--out", out)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("usage: metrics_core sample ")
    # The last line is argparse's; how it lists choices varies across Python versions.
    assert done.stderr.splitlines()[-1].startswith(f"metrics_core sample: error: {message}")
    assert not out.exists()


@pytest.fixture
def sampled(tmp_path):
    """The tiny items, a jaccard sample of them and complete judgements."""
    items = write(tmp_path / "items.csv", TINY)
    judgements = write(tmp_path / "judgements.csv", TINY_JUDGEMENTS)
    return items, judgements


PAIRS_HEADER = "i,j,pair_class,stratum,draws,scheme\n"


@pytest.mark.parametrize(
    "pairs, problem",
    [
        ("a,c,split,all,2,jaccard\nzz,a,split,all,1,jaccard\n", "line 3: i 'zz' is not an item_id of {items}"),
        ("a,c,split,all,2,jaccard\na,q,split,all,1,jaccard\n", "line 3: j 'q' is not an item_id of {items}"),
        (
            "a,c,split,all,2,jaccard\na,d,split,all,1,jaccard\n",
            "line 3: pair ('a', 'd'): j is not in Base(i) ∪ Exp(i) of an affected item i",
        ),
        ("a,c,merge,all,2,jaccard\n", "line 2: pair ('a', 'c'): pair_class does not match the clusterings"),
        ("a,c,split,diff,2,jaccard\n", "line 2: pair ('a', 'c'): stratum does not match scheme jaccard"),
        # A repeated pair is allowed (concatenated batches), but each of its rows is checked.
        ("a,c,split,all,2,jaccard\na,c,merge,all,1,jaccard\n", "line 3: pair ('a', 'c'): pair_class does not match the clusterings"),
        ("a,c,split,all,2,jaccard\nc,d,merge,all,1,precision\n", "line 3: scheme 'precision' differs from 'jaccard' on the first row"),
        ("a,c,split,all,two,jaccard\n", "line 2: draws 'two' is not an integer"),
        ("", "no data rows"),
    ],
)
def test_estimate_refuses_bad_pairs(sampled, tmp_path, pairs, problem):
    items, judgements = sampled
    pairs_path = write(tmp_path / "pairs.csv", PAIRS_HEADER + pairs)
    done = run("estimate", items, pairs_path, judgements)
    assert_refused(done, f"{pairs_path}: {problem.format(items=items)}")


@pytest.mark.parametrize(
    "judgements, problem",
    [
        ("i,j,verdict\na,b,equivalent\nb,nobody,unsure\n", "line 3: j 'nobody' is not an item_id of {items}"),
        ("i,j,verdict\na,b,maybe\n", "line 2: verdict 'maybe' is not one of equivalent, not_equivalent, unsure"),
        ("i,j\na,b\n", "missing column 'verdict' (columns found: 'i', 'j')"),
    ],
)
def test_estimate_refuses_bad_judgements(sampled, tmp_path, judgements, problem):
    items, _ = sampled
    pairs = write(tmp_path / "pairs.csv", PAIRS_HEADER + "a,c,split,all,2,jaccard\n")
    judgements_path = write(tmp_path / "bad_judgements.csv", judgements)
    assert_refused(run("estimate", items, pairs, judgements_path), f"{judgements_path}: {problem.format(items=items)}")


def test_estimate_refuses_bad_items_and_confidence(sampled, tmp_path):
    _, judgements = sampled
    pairs = write(tmp_path / "pairs.csv", PAIRS_HEADER + "a,c,split,all,2,jaccard\n")
    items = write(tmp_path / "dup.csv", "item_id,base_cluster,exp_cluster\na,1,1\na,1,2\n")
    assert_refused(run("estimate", items, pairs, judgements), f"{items}: line 3: duplicate item_id 'a' (first on line 2)")
    done = run("estimate", sampled[0], pairs, judgements, "--confidence", "95")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("metrics_core estimate: error: argument --confidence: must be strictly between 0 and 1, got '95'\n")


def test_no_subcommand_is_a_usage_error():
    done = run()
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("metrics_core: error: the following arguments are required: {impact,sample,estimate,compare,score}\n")
