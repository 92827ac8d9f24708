"""A CSV file and a Parquet file of the same data give the same results, for every command.

Integer ids are written as integers in Parquet and as their decimal text in CSV; text ids
(``"007"``, ``"a"``) are text in both. PAIRS, JUDGEMENTS and the per-item tables are written and
read in either format (by extension), ``sample --out pairs.parquet`` included, and the
outputs of either input are the same files.
"""

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from .cli_run import run, run_json

EXTENSIONS = ("csv", "parquet")


def write_both(folder, name, columns):
    """The table as ``name.csv`` and ``name.parquet``; returns their paths by extension."""
    table = pa.table(columns)
    paths = {extension: folder / f"{name}.{extension}" for extension in EXTENSIONS}
    pcsv.write_csv(table, paths["csv"])
    pq.write_table(table, paths["parquet"])
    return paths


def clusterings(n, seed, *, text_ids):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, n // 3, n)
    exp = np.where(rng.random(n) < 0.25, rng.integers(0, n // 3, n), base)
    ids = rng.permutation(n) * 7 - 50
    if text_ids:  # leading zeros: text that is no integer's, in both formats
        ids = np.array([f"0{k}" for k in ids], dtype=object)
        base = np.array([f"c{k}" for k in base], dtype=object)
    return ids, base, exp, rng.uniform(0.5, 2.0, n)


@pytest.fixture(params=["integer ids", "text ids"])
def items(request, tmp_path):
    ids, base, exp, weight = clusterings(600, 3, text_ids=request.param == "text ids")
    return write_both(tmp_path, "items", {"item_id": ids, "base_cluster": base, "exp_cluster": exp, "weight": weight})


def test_impact_and_its_tables(items, tmp_path):
    results, tables = [], []
    for extension in EXTENSIONS:
        per_item, per_cluster = tmp_path / f"item_{extension}.csv", tmp_path / f"cluster_{extension}.csv"
        results.append(run_json("impact", items[extension], "--per-item", per_item, "--per-cluster", per_cluster))
        tables.append((per_item.read_bytes(), per_cluster.read_bytes()))
    assert results[0] == results[1]
    assert tables[0] == tables[1]


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_sample_writes_the_same_pairs_in_either_format(items, tmp_path, scheme):
    written = {}
    for source in EXTENSIONS:
        for extension in EXTENSIONS:
            out = tmp_path / f"pairs_{source}.{extension}"
            done = run("sample", items[source], "--pairs", 400, "--seed", 5, "--scheme", scheme, "--out", out)
            assert (done.returncode, done.stderr) == (0, "")
            written[source, extension] = out
    assert written["csv", "csv"].read_bytes() == written["parquet", "csv"].read_bytes()
    from_parquet = pq.read_table(written["parquet", "parquet"])
    assert from_parquet.equals(pq.read_table(written["csv", "parquet"]))
    as_text = pcsv.ConvertOptions(column_types={name: pa.string() for name in ("i", "j", "positions")})
    from_csv = pcsv.read_csv(written["csv", "csv"], convert_options=as_text)
    assert from_parquet.schema.field("i").type == pa.string()  # ids are written as text, as before
    assert from_parquet.to_pydict() == from_csv.to_pydict()


def test_estimate_from_pairs_and_judgements_in_either_format(items, tmp_path):
    pairs_csv = tmp_path / "pairs.csv"
    assert run("sample", items["csv"], "--pairs", 300, "--seed", 8, "--out", pairs_csv).returncode == 0
    as_text = pcsv.ConvertOptions(column_types={name: pa.string() for name in ("i", "j", "positions")})
    sample = pcsv.read_csv(pairs_csv, convert_options=as_text)
    pairs = write_both(tmp_path, "pairs", {name: sample[name] for name in sample.column_names})
    judged = sample.filter(pa.compute.not_equal(sample["pair_class"], "self"))
    rng = np.random.default_rng(2)
    verdicts = rng.choice(["equivalent", "not_equivalent", "unsure"], judged.num_rows, p=[0.6, 0.35, 0.05])
    judgements = write_both(tmp_path, "judgements", {"i": judged["i"], "j": judged["j"], "verdict": verdicts})
    results = [
        run_json("estimate", items[a], pairs[b], judgements[c])
        for a in EXTENSIONS
        for b in EXTENSIONS
        for c in EXTENSIONS
    ]
    assert all(result == results[0] for result in results[1:])
    assert results[0]["estimates"]["GoodSplitDistance"]["judged_draws"] > 0


@pytest.mark.parametrize("text_ids", [False, True])
def test_compare(tmp_path, text_ids):
    ids, truth, pred, weight = clusterings(900, 4, text_ids=text_ids)
    order = np.random.default_rng(1).permutation(len(ids))[:850]  # another order, and items dropped
    truth_files = write_both(
        tmp_path, "truth", {"item_id": ids[:880], "cluster_id": truth[:880], "weight": weight[:880]}
    )
    pred_files = write_both(tmp_path, "pred", {"item_id": ids[order], "cluster_id": pred[order]})
    results = [run_json("compare", truth_files[a], pred_files[b]) for a in EXTENSIONS for b in EXTENSIONS]
    assert all(result == results[0] for result in results[1:])
    common = len(set(order.tolist()) & set(range(880)))
    assert results[0]["items"] == common
    assert results[0]["dropped_items"] == (880 - common) + (850 - common)
