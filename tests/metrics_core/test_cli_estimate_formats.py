"""``estimate`` gives the same output whichever format its inputs are in, and names the row of an unknown id.

The items have integer ids (looked up as integers) or text ids (hashed); PAIRS is two batches
concatenated (repeated pairs, two labelled prefixes); JUDGEMENTS leaves some pairs unjudged, has
several rows on some pairs, *unsure* rows, and pairs shown the other way round.
"""

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from tests.metrics_core.cli_run import run, run_json

FORMATS = ("csv", "parquet")


def write_table(path, columns):
    table = pa.table(columns)
    if path.suffix == ".csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


def as_text(values):
    return pa.array([str(v) for v in values], pa.string())


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Items, PAIRS and JUDGEMENTS in both formats, for integer and for text item ids."""
    folder = tmp_path_factory.mktemp("judged")
    rng = np.random.default_rng(37)
    n = 600
    base = rng.integers(0, 150, n)
    exp = np.where(rng.random(n) < 0.2, rng.integers(0, 150, n), base)
    weight = rng.uniform(0.5, 2.0, n)
    cases = {}
    for kind, ids in (("integer", rng.permutation(n) * 7 + 1000), ("text", [f"item-{k}" for k in rng.permutation(n)])):
        items = write_table(
            folder / f"items_{kind}.parquet",
            {"item_id": ids, "base_cluster": base, "exp_cluster": exp, "weight": weight},
        )
        batches = []
        for batch in (0, 1):
            out = folder / f"pairs_{kind}_{batch}.parquet"
            done = run("sample", items, "--pairs", 1500, "--seed", 5, "--batch", batch, "--out", out)
            assert done.returncode == 0, done.stderr
            batches.append(pq.read_table(out))
        pairs = pa.concat_tables(batches)
        i, j = (as_text(pairs[name].to_pylist()) for name in ("i", "j"))
        pairs = pairs.set_column(0, "i", i).set_column(1, "j", j)
        keep = [c != "self" and rng.random() < 0.9 for c in pairs["pair_class"].to_pylist()]
        ji, jj = np.array(i.to_pylist())[keep], np.array(j.to_pylist())[keep]
        swap = rng.random(len(ji)) < 0.5
        ji, jj = np.where(swap, jj, ji), np.where(swap, ji, jj)
        twice = rng.random(len(ji)) < 0.2  # a second rater on some pairs
        ji, jj = np.concatenate([ji, ji[twice]]), np.concatenate([jj, jj[twice]])
        verdict = rng.choice(["equivalent", "not_equivalent", "unsure"], size=len(ji), p=[0.6, 0.35, 0.05])
        order = rng.permutation(len(ji))
        judgements = {"i": ji[order].tolist(), "j": jj[order].tolist(), "verdict": verdict[order].tolist()}
        for fmt in FORMATS:
            write_table(folder / f"pairs_{kind}.{fmt}", dict(zip(pairs.column_names, pairs.columns)))
            write_table(folder / f"judgements_{kind}.{fmt}", judgements)
        cases[kind] = items
    return folder, cases


@pytest.mark.parametrize("kind", ["integer", "text"])
def test_csv_and_parquet_pairs_and_judgements_give_the_same_output(judged, kind):
    folder, cases = judged
    outputs = {
        (p, j): run("estimate", cases[kind], folder / f"pairs_{kind}.{p}", folder / f"judgements_{kind}.{j}")
        for p in FORMATS
        for j in FORMATS
    }
    first = outputs["csv", "csv"]
    assert (first.returncode, first.stderr) == (0, "")
    for done in outputs.values():
        assert (done.returncode, done.stderr, done.stdout) == (0, "", first.stdout)
    result = json.loads(first.stdout)
    assert [b["batch"] for b in result["labelled"]["by_batch"]] == [0, 1]
    assert result["labelled"]["waiting_verdicts"] > 0  # pairs left unjudged stop a prefix before some verdicts


def test_integer_and_text_ids_give_the_same_estimates(judged):
    folder, cases = judged
    results = [
        run_json("estimate", cases[kind], folder / f"pairs_{kind}.parquet", folder / f"judgements_{kind}.csv")
        for kind in ("integer", "text")
    ]
    # The two cases draw different samples (the ids differ, so do the rows' orders): both are estimated.
    assert all(r["labelled"]["draws"] > 0 for r in results)
    assert results[0]["exact"] == results[1]["exact"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "file, row, column, value",
    [("pairs", 3, "j", "007"), ("pairs", 5, "i", "99"), ("judgements", 2, "i", "+1007"), ("judgements", 4, "j", "x")],
)
def test_an_unknown_id_is_named_with_its_row(tmp_path, fmt, file, row, column, value):
    """Integer items: an id written otherwise than the items' own text ("007", "+1007") is no item's."""
    items = write_table(
        tmp_path / "items.parquet", {"item_id": [1007, 7, 1014], "base_cluster": [1, 1, 1], "exp_cluster": [1, 2, 2]}
    )
    pairs = {
        "i": ["1007"] * 6,
        "j": ["7"] * 6,
        "pair_class": ["split"] * 6,
        "stratum": ["all"] * 6,
        "draws": [1] * 6,
        "scheme": ["jaccard"] * 6,
    }
    judgements = {"i": ["1007"] * 5, "j": ["7"] * 5, "verdict": ["equivalent"] * 5}
    tables = {"pairs": pairs, "judgements": judgements}
    tables[file][column][row] = value
    paths = {name: write_table(tmp_path / f"{name}.{fmt}", columns) for name, columns in tables.items()}
    done = run("estimate", items, paths["pairs"], paths["judgements"])
    place = f"line {row + 2}" if fmt == "csv" else f"row {row + 1}"
    message = f"{paths[file]}: {place}: {column} {value!r} is not an item_id of {items}"
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"metrics_core: error: {message}\n")


def test_the_labelled_block_is_the_spec_s_counted_by_hand(judged):
    """abcde-spec §14 row by row: each batch's prefix stops at the first draw of a pair without a verdict;
    a verdict waits when its pair (either way round) has no draw in any batch's prefix."""
    folder, cases = judged
    pairs = pq.read_table(folder / "pairs_integer.parquet").to_pylist()
    judgements = pq.read_table(folder / "judgements_integer.parquet").to_pylist()
    judged_pairs = [frozenset((row["i"], row["j"])) for row in judgements]
    resolved = set(judged_pairs)
    positions = [[int(p) for p in row["positions"].split()] for row in pairs]
    by_batch, labelled = [], set()
    for batch in (0, 1):
        rows = [r for r, row in enumerate(pairs) if row["batch"] == batch]
        waiting = [
            min(positions[r])
            for r in rows
            if pairs[r]["pair_class"] != "self" and frozenset((pairs[r]["i"], pairs[r]["j"])) not in resolved
        ]
        draws = sum(pairs[r]["draws"] for r in rows)
        prefix = min(waiting, default=draws)
        by_batch.append({"batch": batch, "prefix": prefix, "draws": draws})
        labelled |= {frozenset((pairs[r]["i"], pairs[r]["j"])) for r in rows if min(positions[r]) < prefix}
    in_file = {frozenset((row["i"], row["j"])) for row in pairs}
    waiting_verdicts = sum(1 for pair in judged_pairs if pair in in_file and pair not in labelled)
    result = run_json("estimate", cases["integer"], folder / "pairs_integer.csv", folder / "judgements_integer.csv")
    assert result["labelled"] == {
        "draws": sum(b["prefix"] for b in by_batch),
        "waiting_verdicts": waiting_verdicts,
        "by_batch": by_batch,
    }
