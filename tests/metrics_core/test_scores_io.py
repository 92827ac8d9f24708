"""SCORES files (metrics-cli.md, ``--scores``): read and written as the package's other tables are.

Columns ``i``, ``j``, ``score``; CSV or Parquet by extension; a pair matches in either order;
every problem is one line naming the file, the line (CSV) or row (Parquet) and the problem.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core.io import InputError, read_pairs, read_scores, read_scores_for_pairs, write_scores

from .cli_run import run, write

EXTENSIONS = ("csv", "parquet")
# Ids a CSV round trip could change: quotes before a formula's first character, commas, quotes,
# leading zeros, a leading minus, non-ASCII text.
AWKWARD_IDS = ["a", "'=x", "''@y", "=SUM(A1)", "-1", "007", "7", 'say "hi"', "x,y", "é ü", "'a", "+3"]


def message(exc_info):
    return str(exc_info.value)


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_a_written_file_reads_back_identical(tmp_path, extension):
    rng = np.random.default_rng(1)
    i = np.array(AWKWARD_IDS, dtype=object)
    j = np.roll(i, 1)
    score = np.concatenate([[0.0, -0.0, 5e-324, -1.7e308, 1.7e308, 1 / 3], rng.normal(size=len(i) - 6)])
    path = tmp_path / f"scores.{extension}"
    write_scores(path, i=i, j=j, score=score)
    table = read_scores(path)
    assert table.path == str(path) and len(table) == len(i)
    assert table.i.to_pylist() == i.tolist() and table.j.to_pylist() == j.tolist()
    assert table.score.dtype == np.float64 and table.score.tobytes() == score.tobytes()


def test_csv_and_parquet_files_of_the_same_scores_give_the_same_scores(tmp_path):
    i, j = ["a", "b", "c"], ["b", "c", "a"]
    for extension in EXTENSIONS:
        write_scores(tmp_path / f"s.{extension}", i=i, j=j, score=[0.5, 2.0, -3.0])
    got = [read_scores_for_pairs(tmp_path / f"s.{extension}", pa.array(j), pa.array(i)) for extension in EXTENSIONS]
    assert got[0].tolist() == got[1].tolist() == [0.5, 2.0, -3.0]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=6), st.text(min_size=1, max_size=6)),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(EXTENSIONS),
)
def test_any_distinct_text_pairs_read_back_as_written(pairs, extension):
    # Hypothesis reuses no pytest fixture: a folder of its own per example. NUL is refused in ids.
    distinct = {}
    for a, b in pairs:
        if "\x00" in a + b or frozenset((a, b)) in {frozenset(p) for p in distinct}:
            continue
        distinct[(a, b)] = float(len(distinct)) / 7
    if not distinct:
        return
    i, j = (np.array([p[k] for p in distinct], dtype=object) for k in (0, 1))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"scores.{extension}"
        write_scores(path, i=i, j=j, score=list(distinct.values()))
        table = read_scores(path)
        assert table.i.to_pylist() == i.tolist() and table.j.to_pylist() == j.tolist()
        assert table.score.tolist() == list(distinct.values())
        # Each pair found in the other order too.
        assert read_scores_for_pairs(path, j, i).tolist() == list(distinct.values())


def test_pairs_match_in_either_order_and_extra_scores_are_ignored(tmp_path):
    scores = write(tmp_path / "scores.csv", "i,j,score\na,b,0.25\nc,a,-2\nb,d,7\nx,y,1e3\n")
    got = read_scores_for_pairs(scores, ["b", "a", "a", "c", "d", "b"], ["a", "c", "b", "a", "b", "a"])
    assert got.dtype == np.float64
    assert got.tolist() == [0.25, -2.0, 0.25, -2.0, 7.0, 0.25]


def test_integer_ids_of_a_parquet_file_match_their_text_in_pairs(tmp_path):
    path = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"i": [7, 40], "j": [3, 7], "score": [0.5, 0.75]}), path)
    assert read_scores_for_pairs(path, pa.array(["3", "7"]), pa.array(["7", "40"])).tolist() == [0.5, 0.75]
    assert read_scores_for_pairs(path, np.array([3, 40]), np.array([7, 7])).tolist() == [0.5, 0.75]
    with pytest.raises(InputError) as refused:  # "007" is no integer's text, as elsewhere
        read_scores_for_pairs(path, pa.array(["3"]), pa.array(["007"]))
    assert message(refused) == f"{path}: no score for pair ('3', '007')"


def test_the_ids_of_a_sample_file_find_their_scores(tmp_path):
    """The ids as read_pairs reads them: a spreadsheet-safe export's quote removed in both files."""
    pairs = write(
        tmp_path / "pairs.csv",
        "i,j,pair_class,stratum,draws,scheme\n'=a,b,merge,all,2,jaccard\nb,'=a,merge,all,1,jaccard\nb,c,split,all,1,jaccard\n",
    )
    scores = write(tmp_path / "scores.csv", "i,j,score\n'=a,b,0.9\nc,b,0.1\n")
    table = read_pairs(pairs)
    assert read_scores_for_pairs(scores, table.i, table.j).tolist() == [0.9, 0.9, 0.1]


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ("a,b,0.5\nb,c,\n", "line 3: empty score"),
        ("a,b,0.5\nb,c,high\n", "line 3: score 'high' is not a number"),
        ("a,b,nan\n", "line 2: score 'nan' is not finite"),
        ("a,b,0.5\nb,c,-inf\n", "line 3: score '-inf' is not finite"),
        ("a,b,0.5\nb,c,1\nb,a,0.5\n", "line 4: duplicate pair ('b', 'a') (first on line 2)"),
        ("a,b,0.5\na,b,0.5\n", "line 3: duplicate pair ('a', 'b') (first on line 2)"),
        ("a,b,0.5\n,c,1\n", "line 3: empty i"),
        ("a,b,0.5\nb,c\n", "line 3: expected 3 columns, got 2"),
    ],
)
def test_a_bad_csv_row_is_named(tmp_path, rows, problem):
    scores = write(tmp_path / "scores.csv", "i,j,score\n" + rows)
    with pytest.raises(InputError) as refused:
        read_scores(scores)
    assert message(refused) == f"{scores}: {problem}"
    with pytest.raises(InputError) as refused:
        read_scores_for_pairs(scores, ["a"], ["b"])
    assert message(refused) == f"{scores}: {problem}"


@pytest.mark.parametrize(
    ("score", "problem"),
    [
        ([0.5, None], "row 2: missing score (null)"),
        ([0.5, float("nan")], "row 2: score nan is not finite"),
        ([float("inf"), 0.5], "row 1: score inf is not finite"),
    ],
)
def test_a_bad_parquet_row_is_named(tmp_path, score, problem):
    scores = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"i": ["a", "b"], "j": ["b", "c"], "score": pa.array(score, type=pa.float64())}), scores)
    with pytest.raises(InputError) as refused:
        read_scores(scores)
    assert message(refused) == f"{scores}: {problem}"


def test_missing_columns_and_files_are_named(tmp_path):
    no_score = write(tmp_path / "s.csv", "i,j,value\na,b,1\n")
    with pytest.raises(InputError) as refused:
        read_scores(no_score)
    assert message(refused) == f"{no_score}: missing column 'score' (columns found: 'i', 'j', 'value')"
    header_only = write(tmp_path / "h.csv", "i,j,score\n")
    with pytest.raises(InputError) as refused:
        read_scores(header_only)
    assert message(refused) == f"{header_only}: no data rows"
    with pytest.raises(InputError) as refused:
        read_scores(tmp_path / "absent.csv")
    assert message(refused) == f"{tmp_path / 'absent.csv'}: file not found"
    with pytest.raises(InputError) as refused:
        read_scores(write(tmp_path / "s.txt", "i,j,score\n"))
    assert message(refused) == f"{tmp_path / 's.txt'}: unsupported file type: use a .csv or .parquet file"


def test_a_pair_without_a_score_is_named_with_its_line_of_pairs(tmp_path):
    scores = write(tmp_path / "scores.csv", "i,j,score\na,b,0.5\n")
    pairs = write(tmp_path / "pairs.csv", "i,j\na,b\nb,a\nc,a\nd,e\n")
    with pytest.raises(InputError) as refused:
        read_scores_for_pairs(scores, ["a", "b", "c", "d"], ["b", "a", "a", "e"], pairs_path=pairs)
    assert message(refused) == f"{scores}: no score for pair ('c', 'a') (on line 4 of {pairs}); 2 of 4 pairs have none"
    with pytest.raises(InputError) as refused:
        read_scores_for_pairs(scores, ["a", "b"], ["b", "b"])
    assert message(refused) == f"{scores}: no score for pair ('b', 'b')"  # a self pair needs its row too
    assert refused.value.path == str(scores)
    parquet_pairs = tmp_path / "pairs.parquet"
    pq.write_table(pa.table({"i": ["a", "c"], "j": ["b", "a"]}), parquet_pairs)
    with pytest.raises(InputError) as refused:
        read_scores_for_pairs(scores, ["a", "c"], ["b", "a"], pairs_path=parquet_pairs)
    assert message(refused) == f"{scores}: no score for pair ('c', 'a') (on row 2 of {parquet_pairs})"
    with pytest.raises(ValueError, match="i and j differ in length"):
        read_scores_for_pairs(scores, ["a", "c"], ["b"])
    # Some rows of the file only (say, all but its self pairs): each pair named by its own line.
    with pytest.raises(InputError) as refused:
        read_scores_for_pairs(scores, ["c", "d"], ["a", "e"], pairs_path=pairs, pair_rows=np.array([2, 3]))
    assert message(refused) == f"{scores}: no score for pair ('c', 'a') (on line 4 of {pairs}); 2 of 2 pairs have none"


def test_the_writer_writes_all_or_nothing(tmp_path):
    path = write(tmp_path / "scores.csv", "i,j,score\nold,file,1\n")
    with pytest.raises(ValueError, match="score nan at position 1 is not finite"):
        write_scores(path, i=["a", "b"], j=["b", "c"], score=[0.5, float("nan")])
    with pytest.raises(ValueError, match="one length"):
        write_scores(path, i=["a", "b"], j=["b"], score=[0.5, 1.0])
    assert path.read_text() == "i,j,score\nold,file,1\n"
    with pytest.raises(InputError) as refused:
        write_scores(tmp_path / "no" / "scores.csv", i=["a"], j=["b"], score=[1.0])
    assert (
        message(refused)
        == f"{tmp_path / 'no' / 'scores.csv'}: cannot write: folder {str(tmp_path / 'no')!r} does not exist"
    )
    assert sorted(os.listdir(tmp_path)) == ["scores.csv"]  # no temporary file left
    write_scores(path, i=pa.array(["a"]), j=pa.array(["b"]), score=np.array([0.125]))
    assert pcsv.read_csv(path).to_pydict() == {"i": ["a"], "j": ["b"], "score": [0.125]}


def test_lookups_agree_with_a_dictionary_on_many_pairs(tmp_path):
    """Not timed: the vectorised join against a plain dictionary, on pairs in both orders and repeated."""
    rng = np.random.default_rng(5)
    n_items, n_scores = 3000, 40_000
    a, b = rng.integers(0, n_items, n_scores), rng.integers(0, n_items, n_scores)
    key = np.minimum(a, b) * n_items + np.maximum(a, b)
    _, first = np.unique(key, return_index=True)
    a, b = a[first], b[first]
    score = rng.normal(size=len(a))
    ids = np.array([f"item-{k:05d}" for k in range(n_items)], dtype=object)
    path = tmp_path / "scores.parquet"
    write_scores(path, i=ids[a], j=ids[b], score=score)
    wanted = rng.integers(0, len(a), 100_000)
    flip = rng.random(len(wanted)) < 0.5
    first_ids = np.where(flip, ids[b[wanted]], ids[a[wanted]])
    second_ids = np.where(flip, ids[a[wanted]], ids[b[wanted]])
    reference = {frozenset((x, y)): s for x, y, s in zip(ids[a], ids[b], score)}
    expected = [reference[frozenset((x, y))] for x, y in zip(first_ids, second_ids)]
    assert read_scores_for_pairs(path, first_ids, second_ids).tolist() == expected


def test_the_command_line_tables_module_reads_scores_written_by_score(tmp_path):
    catalogue = write(tmp_path / "c.csv", "item_id,title\na,Alpha\nb,Alpha\nc,Gamma\n")
    pairs = write(tmp_path / "p.csv", "i,j\na,b\nb,a\nc,c\n")
    done = run("score", catalogue, pairs, "--out", tmp_path / "s.csv")
    assert done.returncode == 0, done.stderr
    assert read_scores_for_pairs(tmp_path / "s.csv", ["b", "a", "c"], ["a", "b", "c"]).tolist() == [1.0, 1.0, 1.0]
