"""check_head: the first rows of a file checked by the readers' own rules, every problem listed,
in bounded reading; its messages are the readers' messages."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics_core.io import InputError, check_head, read_items

HEADER = "item_id,base_cluster,exp_cluster,weight\n"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "body",
    [
        "a,B,E,1\nb,B,E,x\n",
        "a,B,E,1\na,B,E,1\n",
        "a,B,,1\n",
        "a,B,E,-1\n",
        "a,B,E\n",
        'a,"B\nB",E,1\nb,B,E,0\n',  # a line break inside a quoted field: lines still as an editor shows them
    ],
)
def test_a_head_reports_what_the_reader_reports(tmp_path, body):
    path = _write(tmp_path, "items.csv", HEADER + body)
    with pytest.raises(InputError) as caught:
        read_items(path)
    head = check_head(path, table="items")
    assert str(caught.value) in [str(problem) for problem in head.problems]


def test_every_column_problem_is_listed(tmp_path):
    path = _write(tmp_path, "items.csv", HEADER + "a,B,E,1\na,,E,x\n")
    assert [str(p).split(": ", 1)[1] for p in check_head(path, table="items").problems] == [
        "line 3: duplicate item_id 'a' (first on line 2)",
        "line 3: empty base_cluster",
        "line 3: weight 'x' is not a number",
    ]


def test_a_csv_head_reads_whole_records_within_its_bytes_and_rows(tmp_path):
    rows = "".join(f"i{k},B,E,1\n" for k in range(5000)) + "bad,B,E,x\n"
    path = _write(tmp_path, "items.csv", HEADER + rows)
    head = check_head(path, table="items", max_bytes=16 << 10)
    assert (head.problems, head.complete) == ((), False)
    assert 0 < head.source.n_rows < 5000 and head.item_ids[-1].as_py() == f"i{head.source.n_rows - 1}"
    head = check_head(path, table="items", rows=100)
    assert (head.problems, head.complete, head.source.n_rows) == ((), False, 100)
    assert [str(p) for p in check_head(path, table="items").problems] == [
        f"{path}: line 5002: weight 'x' is not a number"
    ]


def test_a_parquet_head_reads_its_first_rows(tmp_path):
    path = tmp_path / "base.parquet"
    pq.write_table(pa.table({"item_id": [f"i{k}" for k in range(50)] + ["i0"], "cluster_id": [1] * 51}), path)
    assert check_head(path, table="clustering", rows=50).problems == ()
    [problem] = check_head(path, table="clustering").problems
    assert str(problem) == f"{path}: row 51: duplicate item_id 'i0' (first on row 1)"


def test_a_header_of_one_column_with_semicolons_is_named_a_wrong_separator(tmp_path):
    path = _write(tmp_path, "items.csv", "item_id;base_cluster;exp_cluster\na;B;E\n")
    message = (
        f"{path}: missing column 'item_id', 'base_cluster', 'exp_cluster' (columns found: "
        "'item_id;base_cluster;exp_cluster'); the header is one column: the file seems separated by semicolons, "
        "not commas"
    )
    with pytest.raises(InputError, match="separated by semicolons"):
        read_items(path)
    assert [str(p) for p in check_head(path, table="items").problems] == [message]
    tabs = _write(tmp_path, "tabs.csv", "item_id\tbase_cluster\texp_cluster\na\tB\tE\n")
    assert "separated by tabs" in str(check_head(tabs, table="items").problems[0])
