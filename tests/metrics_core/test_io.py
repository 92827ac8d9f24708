"""metrics_core.io: loading is all or nothing, errors name file, line/row and problem.

Every error test asserts the exact one-line message and the error's fields; data files
are written into ``tmp_path`` by the tests themselves.
"""

import errno
import os

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from metrics_core.io import (
    InputError,
    ItemTable,
    read_clusterings,
    read_items,
    read_judgements,
    read_pairs,
    write_table,
    write_tables,
)

ITEMS_HEADER = "item_id,base_cluster,exp_cluster"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Run in tmp_path so that file names in messages are short and as given."""
    monkeypatch.chdir(tmp_path)


def write_text(name, text):
    with open(name, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    return name


def write_parquet(name, columns):
    pq.write_table(pa.table(columns), name)
    return name


def error_of(read, *args):
    with pytest.raises(InputError) as caught:
        read(*args)
    return caught.value


# ---------------------------------------------------------------------------- round trips


def test_csv_items_keep_ids_as_text_and_attributes():
    write_text("items.csv", "item_id,base_cluster,exp_cluster,weight,country\n007,01,1,2.5,fr\n7,1,1,1e-3,\n")
    items = read_items("items.csv")
    assert items.path == "items.csv"
    assert items.item_id.to_pylist() == ["007", "7"]
    assert items.base_cluster.to_pylist() == ["01", "1"]
    assert items.exp_cluster.to_pylist() == [1, 1]  # canonical integers, as in Parquet (test_io_integer_ids.py)
    assert items.weight.dtype == np.float64 and items.weight.tolist() == [2.5, 0.001]
    assert {name: col.to_pylist() for name, col in items.attributes.items()} == {"country": ["fr", ""]}
    assert items.dropped_items == 0


def test_csv_items_without_weight_get_unit_weights():
    write_text("items.csv", f"{ITEMS_HEADER}\na,1,1\nb,1,2\n")
    assert read_items("items.csv").weight.tolist() == [1.0, 1.0]


def test_csv_weight_is_trimmed_before_parsing():
    write_text("items.csv", f"{ITEMS_HEADER},weight\na,1,1, 2 \n")
    assert read_items("items.csv").weight.tolist() == [2.0]


def test_parquet_items_cast_ids_to_text_and_keep_types():
    write_parquet(
        "items.parquet",
        {"item_id": [7, 8], "base_cluster": [1, 1], "exp_cluster": ["x", "y"], "weight": [1, 3], "score": [0.5, 1.5]},
    )
    items = read_items("items.parquet")
    assert items.item_id.type == pa.string() and items.item_id.to_pylist() == ["7", "8"]
    assert items.base_cluster.to_pylist() == [1, 1]
    assert items.exp_cluster.to_pylist() == ["x", "y"]
    assert items.weight.tolist() == [1.0, 3.0]
    assert items.attributes["score"].to_pylist() == [0.5, 1.5]


def test_parquet_dictionary_columns_are_decoded():
    write_parquet(
        "items.parquet",
        {
            "item_id": pa.array(["a", "b"]).dictionary_encode(),
            "base_cluster": pa.array(["p", "p"]).dictionary_encode(),
            "exp_cluster": ["x", "y"],
        },
    )
    items = read_items("items.parquet")
    assert (items.item_id.to_pylist(), items.base_cluster.to_pylist()) == (["a", "b"], ["p", "p"])


@pytest.mark.parametrize("extension", ["csv", "parquet"])
def test_write_then_read_round_trip(extension):
    name = f"items.{extension}"
    write_table(
        name,
        {
            "item_id": np.array(["007", "7", "a,b"], dtype=object),
            "base_cluster": pa.array(["1", "1", "2"]),
            "exp_cluster": ["1", "2", "2"],
            "weight": np.array([0.5, 1.0, 2.0]),
            "slice": np.array(["x", "y", 'quote"d'], dtype=object),
        },
    )
    items = read_items(name)
    assert items.item_id.to_pylist() == ["007", "7", "a,b"]
    # A Parquet file's text stays text; CSV's canonical integers are read as integers.
    as_read = (lambda *labels: list(labels)) if extension == "csv" else (lambda *labels: [str(k) for k in labels])
    assert items.base_cluster.to_pylist() == as_read(1, 1, 2)
    assert items.exp_cluster.to_pylist() == as_read(1, 2, 2)
    assert items.weight.tolist() == [0.5, 1.0, 2.0]
    assert items.attributes["slice"].to_pylist() == ["x", "y", 'quote"d']


@pytest.mark.parametrize("extension", ["csv", "parquet"])
def test_write_table_writes_undefined_numbers_as_null(extension):
    name = f"t.{extension}"
    write_table(name, {"k": ["a", "b", "c"], "x": np.array([1.5, np.nan, np.inf])})
    table = pq.read_table(name) if extension == "parquet" else pa.csv.read_csv(name)
    assert table.column("x").to_pylist() == [1.5, None, None]


# ---------------------------------------------------------------------------- file-level errors


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.csv", None, "missing.csv: file not found"),
        ("empty.csv", "", "empty.csv: empty file"),
        ("empty.parquet", "", "empty.parquet: empty file"),
        ("items.txt", f"{ITEMS_HEADER}\na,1,1\n", "items.txt: unsupported file type: use a .csv or .parquet file"),
        ("header_only.csv", f"{ITEMS_HEADER}\n", "header_only.csv: no data rows"),
        ("header_no_newline.csv", ITEMS_HEADER, "header_no_newline.csv: no data rows"),
        ("blank_lines.csv", "\n\n", "blank_lines.csv: no header row"),
        (
            "missing_column.csv",
            "item_id,base,exp_cluster\na,1,1\n",
            "missing_column.csv: missing column 'base_cluster' (columns found: 'item_id', 'base', 'exp_cluster')",
        ),
        (
            "two_missing.csv",
            "item_id\na\n",
            "two_missing.csv: missing column 'base_cluster', 'exp_cluster' (columns found: 'item_id')",
        ),
        ("dup_column.csv", f"{ITEMS_HEADER},item_id\na,1,1,b\n", "dup_column.csv: duplicate column 'item_id'"),
        (
            "junk.parquet",
            "hello",
            "junk.parquet: not a readable Parquet file (Parquet file size is 5 bytes, smaller than the minimum"
            " file footer (8 bytes))",
        ),
    ],
)
def test_file_level_errors(name, content, message):
    if content is not None:
        write_text(name, content)
    err = error_of(read_items, name)
    assert str(err) == message
    assert (err.path, err.row, err.line) == (name, None, None)


def test_folder_is_not_a_file(tmp_path):
    (tmp_path / "items.csv").mkdir()
    assert str(error_of(read_items, "items.csv")) == "items.csv: not a file"


def test_truncated_parquet_is_an_error():
    write_parquet("full.parquet", {"item_id": ["a", "b"], "base_cluster": ["1", "1"], "exp_cluster": ["1", "2"]})
    data = open("full.parquet", "rb").read()
    write_text("cut.parquet", data[: len(data) // 2])
    err = error_of(read_items, "cut.parquet")
    assert str(err) == (
        "cut.parquet: not a readable Parquet file (Parquet magic bytes not found in footer."
        " Either the file is corrupted or this is not a parquet file.)"
    )


@pytest.mark.parametrize(
    "failure",
    [
        pa.ArrowException("Unknown error: Failed to launch worker thread: Resource temporarily unavailable"),
        pa.ArrowMemoryError("malloc of size 8388608 failed"),
        OSError(errno.ENOMEM, "Cannot allocate memory"),
    ],
    ids=["no thread", "arrow out of memory", "system out of memory"],
)
def test_running_out_of_memory_while_reading_is_no_fault_of_the_file(monkeypatch, failure):
    """Under a memory cap (the preparation's RLIMIT_AS) Arrow may fail to start a thread: that is
    memory running out, which the preparation reports as such, not a file that cannot be read."""
    write_parquet("items.parquet", {"item_id": ["a", "b"], "base_cluster": ["1", "1"], "exp_cluster": ["1", "2"]})
    write_text("items.csv", f"{ITEMS_HEADER}\na,1,1\n")

    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(pq, "ParquetFile", fail)
    monkeypatch.setattr(pq, "read_schema", fail)
    monkeypatch.setattr(pcsv, "open_csv", fail)
    monkeypatch.setattr(pcsv, "read_csv", fail)
    for path in ("items.parquet", "items.csv"):
        with pytest.raises(MemoryError):
            read_items(path)


def test_a_file_arrow_cannot_read_is_still_named_with_its_problem(monkeypatch):
    write_parquet("items.parquet", {"item_id": ["a", "b"], "base_cluster": ["1", "1"], "exp_cluster": ["1", "2"]})

    def fail(*args, **kwargs):
        raise pa.ArrowInvalid("Couldn't deserialize thrift: TProtocolException: Invalid data")

    monkeypatch.setattr(pq, "ParquetFile", fail)
    assert str(error_of(read_items, "items.parquet")) == (
        "items.parquet: not a readable Parquet file (Couldn't deserialize thrift: TProtocolException: Invalid data)"
    )


def test_csv_file_named_parquet_is_an_error():
    write_text("items.parquet", f"{ITEMS_HEADER}\na,1,1\n")
    assert str(error_of(read_items, "items.parquet")).startswith("items.parquet: not a readable Parquet file (")


def test_parquet_with_no_rows_is_an_error():
    write_parquet(
        "none.parquet",
        {"item_id": pa.array([], pa.string()), "base_cluster": pa.array([], pa.int64()), "exp_cluster": pa.array([], pa.string())},
    )
    assert str(error_of(read_items, "none.parquet")) == "none.parquet: no data rows"


def test_parquet_column_of_wrong_type_is_an_error():
    write_parquet("f.parquet", {"item_id": ["a"], "base_cluster": [1.5], "exp_cluster": ["x"]})
    assert str(error_of(read_items, "f.parquet")) == (
        "f.parquet: column 'base_cluster' has type double; expected text or integers"
    )


def test_file_name_is_reported_as_given(tmp_path):
    write_text("items.csv", f"{ITEMS_HEADER}\na,1,1\na,1,1\n")
    err = error_of(read_items, "./items.csv")
    assert str(err) == "./items.csv: line 3: duplicate item_id 'a' (first on line 2)"
    assert err.path == "./items.csv"


# ---------------------------------------------------------------------------- row-level errors


@pytest.mark.parametrize(
    "rows, message, row, line",
    [
        ("a,1,1\nb,1\n", "line 3: expected 3 columns, got 2", 1, 3),
        ("a,1,1\nb,1,1,1\n", "line 3: expected 3 columns, got 4", 1, 3),
        ("a,1,1\nb,1,1\na,2,2\n", "line 4: duplicate item_id 'a' (first on line 2)", 2, 4),
        ("a,1,1\n,1,1\n", "line 3: empty item_id", 1, 3),
        ("a,1,1\nb,,1\n", "line 3: empty base_cluster", 1, 3),
        ("a,1,1\nb,1,\n", "line 3: empty exp_cluster", 1, 3),
        ('a,1,1\n"",1,1\n', "line 3: empty item_id", 1, 3),
    ],
)
def test_csv_row_errors(rows, message, row, line):
    write_text("items.csv", f"{ITEMS_HEADER}\n{rows}")
    err = error_of(read_items, "items.csv")
    assert str(err) == f"items.csv: {message}"
    assert (err.path, err.row, err.line) == ("items.csv", row, line)


@pytest.mark.parametrize(
    "value, problem",
    [
        ("abc", "weight 'abc' is not a number"),
        ("", "empty weight"),
        ("nan", "weight 'nan' is not finite"),
        ("inf", "weight 'inf' is not finite"),
        ("-inf", "weight '-inf' is not finite"),
        ("1e400", "weight '1e400' is not finite"),
        ("0", "weight '0' must be greater than 0"),
        ("-1.5", "weight '-1.5' must be greater than 0"),
        ("1,5", "weight '1,5' is not a number"),
    ],
)
def test_csv_weight_errors(value, problem):
    quoted = f'"{value}"' if "," in value else value
    write_text("w.csv", f"{ITEMS_HEADER},weight\na,1,1,1\nb,1,1,{quoted}\n")
    err = error_of(read_items, "w.csv")
    assert str(err) == f"w.csv: line 3: {problem}"
    assert (err.row, err.line, err.problem) == (1, 3, problem)


def test_csv_line_numbers_count_blank_lines_and_quoted_line_breaks():
    # Line 1 header, 2 a, 3 blank, 4-5 b (a cluster id with a line break), 6 blank, 7 duplicate a.
    write_text("items.csv", f'{ITEMS_HEADER}\na,1,1\n\nb,"1\n2",1\n\na,2,2\n')
    err = error_of(read_items, "items.csv")
    assert str(err) == "items.csv: line 7: duplicate item_id 'a' (first on line 2)"
    assert (err.row, err.line) == (2, 7)


def test_csv_line_numbers_with_crlf_and_lone_cr():
    write_text("crlf.csv", f"{ITEMS_HEADER}\r\na,1,1\r\nb,1,1\r\n,1,1\r\n")
    assert str(error_of(read_items, "crlf.csv")) == "crlf.csv: line 4: empty item_id"
    write_text("cr.csv", f"{ITEMS_HEADER}\ra,1,1\r\rb,1\r")
    assert str(error_of(read_items, "cr.csv")) == "cr.csv: line 4: expected 3 columns, got 2"


def test_csv_invalid_utf8_names_column_and_line():
    write_text("bad.csv", b"item_id,base_cluster,exp_cluster\na,1,1\nb,\xff,1\n")
    assert str(error_of(read_items, "bad.csv")) == "bad.csv: line 3: base_cluster is not valid UTF-8 text"


def test_csv_error_far_into_a_large_file():
    rows = "".join(f"id{k},{k % 7},{k % 5}\n" for k in range(200_000))
    write_text("big.csv", f"{ITEMS_HEADER}\n{rows}id17,1,1\n")
    assert str(error_of(read_items, "big.csv")) == "big.csv: line 200002: duplicate item_id 'id17' (first on line 19)"
    write_text("big_blank.csv", f"{ITEMS_HEADER}\n\n{rows}id3,1,1\n")
    assert str(error_of(read_items, "big_blank.csv")) == (
        "big_blank.csv: line 200003: duplicate item_id 'id3' (first on line 6)"
    )
    write_text("big_parse.csv", f"{ITEMS_HEADER}\n{rows}x,1\n")
    assert str(error_of(read_items, "big_parse.csv")) == "big_parse.csv: line 200002: expected 3 columns, got 2"


def parquet_items(ids=("7", "8"), base=(1, 2), **extra):
    return {"item_id": list(ids), "base_cluster": list(base), "exp_cluster": ["a", "b", "c"][: len(ids)], **extra}


@pytest.mark.parametrize(
    "columns, message, row",
    [
        (parquet_items(ids=["7", None]), "row 2: missing item_id (null)", 1),
        (parquet_items(ids=["7", ""]), "row 2: empty item_id", 1),
        (parquet_items(base=[1, None]), "row 2: missing base_cluster (null)", 1),
        (parquet_items(ids=[7, 8, 7], base=[1, 2, 3]), "row 3: duplicate item_id '7' (first on row 1)", 2),
        (parquet_items(weight=[1.0, float("nan")]), "row 2: weight nan is not finite", 1),
        (parquet_items(weight=[0, 1]), "row 1: weight 0 must be greater than 0", 0),
        (parquet_items(weight=[1.0, None]), "row 2: missing weight (null)", 1),
        (parquet_items(weight=["1", "x"]), "row 2: weight 'x' is not a number", 1),
    ],
)
def test_parquet_row_errors(columns, message, row):
    write_parquet("items.parquet", columns)
    err = error_of(read_items, "items.parquet")
    assert str(err) == f"items.parquet: {message}"
    assert (err.row, err.line) == (row, None)


def test_parquet_weight_of_wrong_type_is_an_error():
    write_parquet("w.parquet", {"item_id": ["7"], "base_cluster": [1], "exp_cluster": ["a"], "weight": [True]})
    assert str(error_of(read_items, "w.parquet")) == "w.parquet: column 'weight' has type bool; expected numbers"


def test_input_error_is_one_line_even_for_ids_with_line_breaks():
    write_text("items.csv", f'{ITEMS_HEADER}\n"a\nb",1,1\n"a\nb",1,1\n')
    err = error_of(read_items, "items.csv")
    assert str(err) == "items.csv: line 4: duplicate item_id 'a\\nb' (first on line 2)"
    assert "\n" not in str(err)


def test_input_error_fields_and_format():
    assert str(InputError("f.csv", "bad", row=3, line=5)) == "f.csv: line 5: bad"
    assert str(InputError("f.parquet", "bad", row=3)) == "f.parquet: row 4: bad"
    err = InputError("f.csv", "multi\nline")
    assert (str(err), err.problem, err.row, err.line) == ("f.csv: multi line", "multi line", None, None)
    assert isinstance(err, ValueError)


# ---------------------------------------------------------------------------- read_clusterings


def test_read_clusterings_keeps_common_items_and_counts_dropped():
    write_text("base.csv", "item_id,cluster_id\na,1\nb,1\nc,2\nd,2\n")
    write_text("exp.csv", "item_id,cluster_id,note\nd,x,n\nc,y,n\nb,y,n\nz,q,n\n")
    items = read_clusterings("base.csv", "exp.csv")
    assert items.item_id.to_pylist() == ["b", "c", "d"]
    assert items.base_cluster.to_pylist() == [1, 2, 2]  # canonical integers in CSV
    assert items.exp_cluster.to_pylist() == ["y", "y", "x"]
    assert items.weight.tolist() == [1.0, 1.0, 1.0]
    assert items.dropped_items == 2  # a only in Base, z only in Exp
    assert items.path == "base.csv"


def test_read_clusterings_with_weights_and_mixed_formats():
    write_parquet("base.parquet", {"item_id": [1, 2, 3], "cluster_id": [10, 10, 20]})
    write_text("exp.csv", "item_id,cluster_id\n3,b\n2,a\n1,a\n")
    write_text("w.csv", "item_id,weight\n1,0.5\n2,2\n3,4\n9,1\n")
    items = read_clusterings("base.parquet", "exp.csv", "w.csv")
    assert items.item_id.to_pylist() == ["1", "2", "3"]
    assert items.base_cluster.to_pylist() == [10, 10, 20]
    assert items.exp_cluster.to_pylist() == ["a", "a", "b"]
    assert items.weight.tolist() == [0.5, 2.0, 4.0]
    assert items.dropped_items == 0


def test_read_clusterings_errors():
    write_text("base.csv", "item_id,cluster_id\na,1\nb,1\n")
    write_text("exp.csv", "item_id,cluster_id\na,1\nb,2\n")
    write_text("w.csv", "item_id,weight\nb,2\n")
    assert str(error_of(read_clusterings, "base.csv", "exp.csv", "w.csv")) == "w.csv: no weight for item_id 'a'"
    write_text("w_bad.csv", "item_id,weight\na,1\nb,-2\n")
    assert str(error_of(read_clusterings, "base.csv", "exp.csv", "w_bad.csv")) == (
        "w_bad.csv: line 3: weight '-2' must be greater than 0"
    )
    write_text("dup.csv", "item_id,cluster_id\na,1\nb,2\nb,3\n")
    assert str(error_of(read_clusterings, "base.csv", "dup.csv")) == (
        "dup.csv: line 4: duplicate item_id 'b' (first on line 3)"
    )
    write_text("other.csv", "item_id,cluster_id\nx,1\n")
    assert str(error_of(read_clusterings, "base.csv", "other.csv")) == "other.csv: no item_id in common with base.csv"
    write_text("nocol.csv", "item_id,cluster\na,1\n")
    assert str(error_of(read_clusterings, "nocol.csv", "exp.csv")) == (
        "nocol.csv: missing column 'cluster_id' (columns found: 'item_id', 'cluster')"
    )


# ---------------------------------------------------------------------------- ItemTable


def make_items(ids, base=None, exp=None, weight=None):
    n = len(ids)
    return ItemTable(
        "x.csv",
        pa.array(ids, pa.string()),
        pa.array(base if base is not None else ["1"] * n),
        pa.array(exp if exp is not None else ["1"] * n),
        np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64),
        {},
    )


def test_positions_of_few_and_many_ids():
    items = make_items([f"id{k}" for k in range(10)])
    # Few ids (hash the ids, scan the items) ...
    assert items.positions_of(["id3", "nope", "id3", "id0"]).tolist() == [3, -1, 3, 0]
    # ... and as many ids as items (hash the items).
    many = [f"id{k}" for k in range(9, -1, -1)] + ["x", "id5"]
    assert items.positions_of(many).tolist() == list(range(9, -1, -1)) + [-1, 5]
    assert items.positions_of(pa.array(["id1", None])).tolist() == [1, -1]
    assert items.positions_of(np.array(["id2"])).dtype == np.int64


def test_positions_of_keeps_leading_zeros_distinct():
    items = make_items(["007", "7"])
    assert items.positions_of(pa.array([7])).tolist() == [1]
    assert items.positions_of(["7", "007", "07"]).tolist() == [1, 0, -1]


def test_to_population_uses_labels_and_weights():
    items = make_items(["a", "b", "c"], base=["B", "B", "C"], exp=["E", "F", "F"], weight=[1.0, 2.0, 3.0])
    pop = items.to_population()
    assert pop.n_items == 3 and pop.total_weight == 6.0
    assert sorted(pop.base_labels.tolist()) == ["B", "C"]
    assert pop.weight.tolist() == [1.0, 2.0, 3.0]
    unit = make_items(["a", "b"], base=["B", "B"], exp=["E", "F"]).to_population()
    assert unit.unit_weights


def test_to_population_with_integer_labels_from_parquet():
    write_parquet("items.parquet", {"item_id": [1, 2, 3], "base_cluster": [5, 5, 9], "exp_cluster": [5, 9, 9]})
    pop = read_items("items.parquet").to_population()
    assert sorted(pop.base_labels.tolist()) == [5, 9] and sorted(pop.exp_labels.tolist()) == [5, 9]


# ---------------------------------------------------------------------------- pairs and judgements

PAIRS_HEADER = "i,j,pair_class,stratum,draws,scheme"


def test_read_pairs_round_trip():
    rows = "a,b,split,diff,3,stratified\na,a,self,stable,1,stratified\nb,c,merge,diff,2,stratified\n"
    write_text("pairs.csv", f"{PAIRS_HEADER}\n{rows}")
    pairs = read_pairs("pairs.csv")
    assert (pairs.i.to_pylist(), pairs.j.to_pylist()) == (["a", "a", "b"], ["b", "a", "c"])
    assert pairs.pair_class.tolist() == [1, 0, 2]  # codes into PAIR_CLASSES
    assert pairs.stratum.tolist() == [1, 2, 1]  # codes into STRATA
    assert pairs.draws.tolist() == [3, 1, 2]
    assert pairs.scheme == "stratified"
    assert len(pairs) == 3


def test_read_pairs_parquet_with_integer_ids():
    write_parquet(
        "pairs.parquet",
        {
            "i": [1, 2], "j": [2, 1], "pair_class": ["merge", "merge"], "stratum": ["all", "all"],
            "draws": [1, 4], "scheme": ["precision"] * 2,
        },
    )
    pairs = read_pairs("pairs.parquet")
    assert (pairs.i.to_pylist(), pairs.draws.tolist(), pairs.scheme) == (["1", "2"], [1, 4], "precision")


@pytest.mark.parametrize(
    "rows, message",
    [
        ("a,b,splitt,all,1,jaccard\n", "line 2: pair_class 'splitt' is not one of self, split, merge, intersection"),
        ("a,b,split,al,1,jaccard\n", "line 2: stratum 'al' is not one of all, diff, stable"),
        ("a,b,split,all,0,jaccard\n", "line 2: draws '0' must be at least 1"),
        ("a,b,split,all,1.5,jaccard\n", "line 2: draws '1.5' is not an integer"),
        ("a,b,split,all,,jaccard\n", "line 2: empty draws"),
        ("a,b,split,all,1,jacard\n", "line 2: scheme 'jacard' is not one of jaccard, stratified, precision"),
        ("a,b,split,all,1,jaccard\nb,a,split,all,1,precision\n", "line 3: scheme 'precision' differs from 'jaccard' on the first row"),
        ("a,,split,all,1,jaccard\n", "line 2: empty j"),
    ],
)
def test_read_pairs_errors(rows, message):
    write_text("pairs.csv", f"{PAIRS_HEADER}\n{rows}")
    assert str(error_of(read_pairs, "pairs.csv")) == f"pairs.csv: {message}"


def test_read_pairs_keeps_repeated_pairs_unless_distinct_is_asked():
    """Concatenated batch files repeat a pair (metrics-cli.md): read as they are, summed downstream."""
    write_text("pairs.csv", f"{PAIRS_HEADER}\na,b,split,all,1,jaccard\nc,c,self,all,4,jaccard\na,b,split,all,2,jaccard\n")
    pairs = read_pairs("pairs.csv")
    assert (pairs.i.to_pylist(), pairs.j.to_pylist(), pairs.draws.tolist()) == (["a", "c", "a"], ["b", "c", "b"], [1, 4, 2])
    error = error_of(lambda path: read_pairs(path, distinct=True), "pairs.csv")
    assert str(error) == "pairs.csv: line 4: duplicate pair ('a', 'b') (first on line 2)"


def test_read_pairs_without_rows_is_an_error():
    write_text("pairs.csv", f"{PAIRS_HEADER}\n")
    assert str(error_of(read_pairs, "pairs.csv")) == "pairs.csv: no data rows"


def test_read_judgements_round_trip_and_self_pairs():
    write_text("j.csv", "i,j,verdict\na,b,equivalent\nb,a,unsure\na,a,not_equivalent\n")
    judgements = read_judgements("j.csv")
    assert (judgements.i.to_pylist(), judgements.j.to_pylist()) == (["a", "b", "a"], ["b", "a", "a"])
    assert judgements.verdict.tolist() == [0, 2, 1]  # codes into VERDICTS


def test_read_judgements_header_only_means_nothing_judged():
    write_text("j.csv", "i,j,verdict\n")
    assert len(read_judgements("j.csv")) == 0


def test_read_judgements_errors():
    write_text("j.csv", "i,j,verdict\na,b,equivalent\na,c,yes\n")
    assert str(error_of(read_judgements, "j.csv")) == (
        "j.csv: line 3: verdict 'yes' is not one of equivalent, not_equivalent, unsure"
    )
    write_text("j2.csv", "i,verdict\na,equivalent\n")
    assert str(error_of(read_judgements, "j2.csv")) == "j2.csv: missing column 'j' (columns found: 'i', 'verdict')"


# ---------------------------------------------------------------------------- atomic writes


def files_in(folder):
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("extension", ["csv", "parquet"])
def test_failed_write_leaves_no_file(tmp_path, extension):
    # Neither writer can store an interval column; the CSV writer fails after writing the header.
    unwritable = pa.array([pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval())
    with pytest.raises(pa.ArrowNotImplementedError):
        write_table(f"out.{extension}", {"ok": [1, 2], "bad": unwritable})
    assert files_in(tmp_path) == []


def test_failure_mid_write_leaves_no_file(tmp_path, monkeypatch):
    def write_half_then_fail(table, where):
        with open(where, "wb") as f:
            f.write(b"PAR1 half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", write_half_then_fail)
    write_text("out.parquet", "previous")
    err = error_of(write_table, "out.parquet", {"x": [1, 2]})
    assert str(err) == "out.parquet: cannot write: No space left on device"
    assert files_in(tmp_path) == ["out.parquet"]
    assert open("out.parquet").read() == "previous"


def test_failed_second_table_leaves_neither_file(tmp_path):
    write_text("first.csv", "old\n")
    with pytest.raises(pa.ArrowInvalid):
        write_tables({"first.csv": {"x": [1, 2]}, "second.csv": {"bad": pa.array([[1], [2]])}})
    assert files_in(tmp_path) == ["first.csv"]
    assert open("first.csv").read() == "old\n"


def test_write_table_refuses_unknown_extension_and_missing_folder(tmp_path):
    err = error_of(write_table, "out.txt", {"x": [1]})
    assert str(err) == "out.txt: unsupported file type: use a .csv or .parquet file"
    err = error_of(write_table, "nope/out.csv", {"x": [1]})
    assert str(err) == "nope/out.csv: cannot write: folder 'nope' does not exist"
    assert files_in(tmp_path) == []


def test_write_table_replaces_existing_file(tmp_path):
    write_text("out.csv", "old\n")
    write_table("out.csv", {"x": np.array([1, 2])})
    assert open("out.csv").read() == '"x"\n1\n2\n'
    assert files_in(tmp_path) == ["out.csv"]
