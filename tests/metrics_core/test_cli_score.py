"""``python -m metrics_core score CATALOGUE PAIRS --out SCORES`` (metrics-cli.md, abcde-spec §15).

The built-in card similarity of every distinct pair of PAIRS, written as a SCORES file that
``read_scores_for_pairs`` (and so ``estimate --scores``) reads back for every row of PAIRS. On the
demo's Febrl 3 catalogue, true duplicates score clearly higher than other pairs.
"""

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from scipy.stats import rankdata

from metrics_core import card_similarity
from metrics_core.io import read_catalogue, read_pairs, read_scores, read_scores_for_pairs
from raterapp.services.demo import demo_files_write

from .cli_run import assert_refused, assert_same_one_shot, run, run_json, write

CATALOGUE = "item_id,title,description,image_url,url,colour,postcode\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's files (items, catalogue, ground truth) and each catalogue row's true entity."""
    paths = demo_files_write(folder=tmp_path_factory.mktemp("demo"))
    truth = pcsv.read_csv(
        paths["ground_truth"], convert_options=pcsv.ConvertOptions(column_types={"cluster_id": pa.string()})
    )
    return paths, truth["item_id"].to_numpy(zero_copy_only=False), truth["cluster_id"].to_numpy(zero_copy_only=False)


def auc(positive, negative):
    """The area under the ROC curve: the chance that a positive outscores a negative (ties count half)."""
    ranks = rankdata(np.concatenate([positive, negative]))
    return (ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2) / (len(positive) * len(negative))


def test_scores_every_distinct_pair_once(tmp_path):
    catalogue = write(
        tmp_path / "catalogue.csv",
        CATALOGUE
        + "a,Red wool jumper,Warm,http://x/1.jpg,http://x/1,red,2119\n"
        + "b,Red Wool Jumper!,warm,http://y/2.png,http://y/2,red,2119\n"
        + "c,Garden hose,20 m,,,green,3165\n",
    )
    pairs = write(
        tmp_path / "pairs.csv",
        "i,j,pair_class,stratum,draws,scheme\n"
        + "a,b,merge,all,1,jaccard\nb,a,merge,all,2,jaccard\nc,a,split,all,1,jaccard\nc,c,self,all,1,jaccard\n",
    )
    out = tmp_path / "scores.csv"
    assert run_json("score", catalogue, pairs, "--out", out) == {"pairs": 3, "out": str(out)}
    table = read_scores(out)
    assert list(zip(table.i.to_pylist(), table.j.to_pylist())) == [("a", "b"), ("c", "a"), ("c", "c")]
    assert table.score.tolist()[0] == 1.0 and table.score.tolist()[2] == 1.0  # the same text; an item with itself
    assert 0.0 <= table.score[1] < 0.3  # nothing alike but a spurious hashed 3-gram or two
    rows = read_pairs(pairs)
    assert read_scores_for_pairs(out, rows.i, rows.j, pairs_path=pairs).tolist() == [1.0, 1.0, table.score[1], 1.0]


def test_csv_and_parquet_give_the_same_scores(tmp_path, demo):
    paths, ids, _ = demo
    rng = np.random.default_rng(3)
    i, j = rng.choice(ids, 500), rng.choice(ids, 500)
    catalogue = pcsv.read_csv(
        paths["catalogue"],
        convert_options=pcsv.ConvertOptions(column_types={"soc_sec_id": pa.string(), "date_of_birth": pa.string()}),
    )
    pq.write_table(catalogue, tmp_path / "catalogue.parquet")
    pcsv.write_csv(pa.table({"i": i, "j": j}), tmp_path / "pairs.csv")
    pq.write_table(pa.table({"i": i, "j": j}), tmp_path / "pairs.parquet")
    outputs = []
    for kind in ("csv", "parquet"):
        source = paths["catalogue"] if kind == "csv" else tmp_path / "catalogue.parquet"
        out = tmp_path / f"scores.{kind}"
        run_json("score", source, tmp_path / f"pairs.{kind}", "--out", out)
        outputs.append(read_scores(out))
    assert outputs[0].i.to_pylist() == outputs[1].i.to_pylist()
    assert outputs[0].score.tolist() == outputs[1].score.tolist()


def test_true_duplicates_of_the_demo_score_higher_than_other_pairs(tmp_path, demo):
    """AUC ≥ 0.9 on Febrl 3: every pair of true duplicates against 50,000 uniform pairs of different
    entities, and among the pairs ``sample`` draws from the demo's clusterings (the pairs an
    experiment scores: most share a cluster, so they are alike by construction)."""
    paths, ids, entity = demo
    by_entity = {}
    for k, e in enumerate(entity):
        by_entity.setdefault(e, []).append(k)
    duplicates = [(m[a], m[b]) for m in by_entity.values() for a in range(len(m)) for b in range(a + 1, len(m))]
    rng = np.random.default_rng(11)
    uniform = rng.integers(0, len(ids), (50_000, 2))
    uniform = uniform[entity[uniform[:, 0]] != entity[uniform[:, 1]]]
    rows = np.concatenate([np.array(duplicates), uniform])
    pcsv.write_csv(pa.table({"i": ids[rows[:, 0]], "j": ids[rows[:, 1]]}), tmp_path / "pairs.csv")
    run_json("score", paths["catalogue"], tmp_path / "pairs.csv", "--out", tmp_path / "scores.parquet")
    score = read_scores_for_pairs(tmp_path / "scores.parquet", ids[rows[:, 0]], ids[rows[:, 1]])
    assert len(duplicates) > 6000
    assert auc(score[: len(duplicates)], score[len(duplicates) :]) >= 0.99

    assert run("sample", paths["items"], "--pairs", 20_000, "--seed", 1, "--out", tmp_path / "sample.csv").returncode == 0
    run_json("score", paths["catalogue"], tmp_path / "sample.csv", "--out", tmp_path / "sample_scores.csv")
    sample = read_pairs(tmp_path / "sample.csv")
    score = read_scores_for_pairs(tmp_path / "sample_scores.csv", sample.i, sample.j)
    position = {item: k for k, item in enumerate(ids)}
    same = np.array(
        [entity[position[a]] == entity[position[b]] for a, b in zip(sample.i.to_pylist(), sample.j.to_pylist())]
    )
    other = np.array([a != b for a, b in zip(sample.i.to_pylist(), sample.j.to_pylist())])
    duplicate, different = score[same & other], score[~same]
    assert len(duplicate) > 1000 and len(different) > 200
    assert auc(duplicate, different) >= 0.9


def test_the_score_is_the_public_function_of_the_catalogue(tmp_path, demo):
    paths, ids, _ = demo
    rng = np.random.default_rng(4)
    rows = rng.integers(0, len(ids), (2000, 2))
    pcsv.write_csv(pa.table({"i": ids[rows[:, 0]], "j": ids[rows[:, 1]]}), tmp_path / "pairs.csv")
    run_json("score", paths["catalogue"], tmp_path / "pairs.csv", "--out", tmp_path / "scores.csv")
    catalogue = read_catalogue(paths["catalogue"])
    expected = card_similarity(cards=catalogue.cards, attributes=catalogue.attributes, i=rows[:, 0], j=rows[:, 1])
    got = read_scores_for_pairs(tmp_path / "scores.csv", ids[rows[:, 0]], ids[rows[:, 1]])
    assert got.tolist() == expected.tolist()


def test_integer_item_ids_of_a_parquet_catalogue_match_pairs_in_csv(tmp_path):
    pq.write_table(pa.table({"item_id": [7, 40, 3], "title": ["alpha", "alpha", "omega"]}), tmp_path / "c.parquet")
    pairs = write(tmp_path / "p.csv", "i,j\n7,40\n3,7\n")
    run_json("score", tmp_path / "c.parquet", pairs, "--out", tmp_path / "s.csv")
    assert read_scores_for_pairs(tmp_path / "s.csv", ["40", "7"], ["7", "3"]).tolist()[0] == 1.0
    bad = write(tmp_path / "bad.csv", "i,j\n7,40\n007,3\n")
    assert_refused(
        run("score", tmp_path / "c.parquet", bad, "--out", tmp_path / "t.csv"),
        f"{bad}: line 3: i '007' is not an item_id of {tmp_path / 'c.parquet'}",
        tmp_path / "t.csv",
    )


@pytest.mark.parametrize(
    ("catalogue", "pairs", "problem"),
    [
        (
            CATALOGUE + "a,A,,,,,\nb,B,,,,,\n",
            "i,j\na,b\nb,zz\n",
            "{pairs}: line 3: j 'zz' is not an item_id of {catalogue}",
        ),
        (
            CATALOGUE + "a,A,,,,,\na,B,,,,,\n",
            "i,j\na,b\n",
            "{catalogue}: line 3: duplicate item_id 'a' (first on line 2)",
        ),
        ("item_id,name\na,A\n", "i,j\na,a\n", "{catalogue}: missing column 'title' (columns found: 'item_id', 'name')"),
        (CATALOGUE + ",A,,,,,\n", "i,j\na,a\n", "{catalogue}: line 2: empty item_id"),
        (CATALOGUE + "a,A,,,,,\n", "i\na\n", "{pairs}: missing column 'j' (columns found: 'i')"),
        (CATALOGUE + "a,A,,,,,\n", "i,j\n", "{pairs}: no data rows"),
        (CATALOGUE + "a,A,,,,,\n", "i,j\na,\n", "{pairs}: line 2: empty j"),
    ],
)
def test_bad_input_exits_2_naming_file_line_and_problem(tmp_path, catalogue, pairs, problem):
    catalogue_path = write(tmp_path / "catalogue.csv", catalogue)
    pairs_path = write(tmp_path / "pairs.csv", pairs)
    out = tmp_path / "scores.csv"
    done = run("score", catalogue_path, pairs_path, "--out", out)
    assert_refused(done, problem.format(catalogue=catalogue_path, pairs=pairs_path), out)


def test_a_bad_output_path_is_refused_before_any_reading(tmp_path):
    absent = tmp_path / "absent.csv"  # the output is checked first: the missing input is not reached
    assert_refused(
        run("score", absent, absent, "--out", tmp_path / "s.txt"),
        f"{tmp_path / 's.txt'}: unsupported file type: use a .csv or .parquet file",
    )
    folder = tmp_path / "none" / "s.csv"
    assert_refused(
        run("score", absent, absent, "--out", folder),
        f"{folder}: cannot write: folder {str(folder.parent)!r} does not exist",
    )
    assert_refused(
        run("score", absent, absent, "--out", tmp_path / "s.csv"), f"{absent}: file not found", tmp_path / "s.csv"
    )


def test_an_existing_output_is_left_alone_when_the_input_is_bad(tmp_path):
    out = write(tmp_path / "scores.csv", "i,j,score\nold,file,1\n")
    catalogue = write(tmp_path / "catalogue.csv", "item_id,title\na,A\n")
    pairs = write(tmp_path / "pairs.csv", "i,j\na,b\n")
    done = run("score", catalogue, pairs, "--out", out)
    assert done.returncode == 2 and done.stdout == ""
    assert out.read_text() == "i,j,score\nold,file,1\n"


def test_usage_errors_exit_2(tmp_path):
    done = run("score", tmp_path / "c.csv", tmp_path / "p.csv")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("metrics_core score: error: the following arguments are required: --out\n")
    done = run("--help")
    assert done.returncode == 0 and "score" in done.stdout


def test_the_summary_is_one_json_line(tmp_path):
    catalogue = write(tmp_path / "catalogue.csv", "item_id,title\na,A\nb,B\n")
    pairs = write(tmp_path / "pairs.csv", "i,j\na,b\n")
    done = run("score", catalogue, pairs, "--out", tmp_path / "s.parquet")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.count("\n") == 1 and json.loads(done.stdout) == {"pairs": 1, "out": str(tmp_path / "s.parquet")}


def test_a_one_shot_process_gives_the_same_scores_without_pandas(tmp_path, demo):
    paths, ids, _ = demo
    rows = np.random.default_rng(5).integers(0, len(ids), (500, 2))
    pcsv.write_csv(pa.table({"i": ids[rows[:, 0]], "j": ids[rows[:, 1]]}), tmp_path / "pairs.csv")
    out = tmp_path / "scores.parquet"
    assert_same_one_shot("score", paths["catalogue"], tmp_path / "pairs.csv", "--out", out, outputs=[out])
