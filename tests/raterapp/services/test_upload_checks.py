"""Issue 34: uploads are checked before the experiment exists. The first rows of each file are
read by metrics_core's own rules in the request; each bad input is refused with the file, line
and problem, every problem listed at once, and nothing is created: no Experiment, no
UploadedFile, no file in the storage."""

import pytest
from django.core.exceptions import ValidationError

from metrics_core.io import HEAD_ROWS
from raterapp.models import Experiment, UploadedFile
from raterapp.services.experiments.upload_checks import upload_content_problems
from tests.raterapp.services.files import ITEMS_CSV, experiment_made, parquet_bytes, tiny_files, upload

WEIGHTED = "item_id,base_cluster,exp_cluster,weight\na,B1,E1,1\nb,B1,E1,heavy\nc,B1,E2,1\nd,B2,E2,x\n"
BAD = {
    "a missing column": (
        {"items": upload("items.csv", "item_id,base_cluster\na,B1\nb,B1\n")},
        ["items: items.csv: missing column 'exp_cluster' (columns found: 'item_id', 'base_cluster')"],
    ),
    "a non-numeric weight in the first rows": (
        {"items": upload("items.csv", WEIGHTED)},
        ["items: items.csv: line 3: weight 'heavy' is not a number"],
    ),
    "an unknown catalogue id": (
        {"items": upload("items.csv", ITEMS_CSV + "zz,B2,E2\n")},
        ["catalogue: catalogue.csv: no row for item_id 'zz' of items.csv"],
    ),
    "a semicolon-separated catalogue": (
        {"catalogue": upload("catalogue.csv", "item_id;title\na;Alpha\nb;Beta\nc;Gamma\nd;Delta\n")},
        [
            "catalogue: catalogue.csv: missing column 'item_id', 'title' (columns found: 'item_id;title'); "
            "the header is one column: the file seems separated by semicolons, not commas"
        ],
    ),
    "a clustering row with too few fields": (
        {"items": upload("items.csv", "item_id,base_cluster,exp_cluster\na,B1,E1\nb,B1\n")},
        ["items: items.csv: line 3: expected 3 columns, got 2"],
    ),
}


def _refused(files: dict, **parameters) -> dict:
    with pytest.raises(ValidationError) as caught:
        experiment_made(owner=parameters.pop("owner"), files=files, name="bad", **parameters)
    return caught.value.message_dict


@pytest.mark.parametrize("case", BAD)
def test_each_bad_input_is_refused_in_the_request_with_nothing_created(engineer, media, case):
    files, messages = BAD[case]
    assert _refused(tiny_files(**files), owner=engineer) == {"files": messages}
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    assert not media.exists() or not any(media.rglob("*.*"))


def test_every_problem_of_every_file_is_listed_at_once(engineer, media):
    items = "item_id,base_cluster,exp_cluster,weight\na,B1,E1,1\nb,,E1,heavy\nc,B1,E2,1\n"
    files = {
        "items": upload("items.csv", items),
        "catalogue": upload("catalogue.csv", "item_id;title\na;Alpha\n"),
    }
    problems = _refused(files, owner=engineer, diff_share=2)
    assert problems == {
        "diff_share": ["must be a number strictly between 0 and 1"],
        "files": [
            "catalogue: catalogue.csv: missing column 'item_id', 'title' (columns found: 'item_id;title'); "
            "the header is one column: the file seems separated by semicolons, not commas",
            "items: items.csv: line 3: empty base_cluster",
            "items: items.csv: line 3: weight 'heavy' is not a number",
        ],
    }
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)


def test_base_and_exp_ids_in_both_need_a_catalogue_row_and_a_weight(db):
    files = {
        "base": upload("base.csv", "item_id,cluster_id\na,1\nb,1\nq,2\n"),
        "exp": upload("exp.csv", "item_id,cluster_id\na,1\nb,2\nq,2\nr,3\n"),
        "weights": upload("weights.csv", "item_id,weight\na,1\nb,2\n"),
        "catalogue": upload("catalogue.csv", "item_id,title\na,A\nb,B\nr,R\n"),
    }
    assert upload_content_problems(files=files, kind="change") == [
        "weights: weights.csv: no weight for item_id 'q'",
        "catalogue: catalogue.csv: no row for item_id 'q' of base.csv",
    ]


def test_parquet_uploads_are_checked_by_row(db):
    items = parquet_bytes({"item_id": ["a", "b", "a"], "base_cluster": ["B", "B", "B"], "exp_cluster": [1.5, 2.5, 1.0]})
    problems = upload_content_problems(files=tiny_files(items=upload("items.parquet", items)), kind="change")
    assert problems == [
        "items: items.parquet: row 3: duplicate item_id 'a' (first on row 1)",
        "items: items.parquet: column 'exp_cluster' has type double; expected text or integers",
    ]


def test_only_the_first_rows_are_read_so_a_bad_row_past_them_is_left_to_the_preparation(db):
    n = HEAD_ROWS + 10
    rows = "".join(f"i{k},B{k % 7},E{k % 5},{'heavy' if k == n - 1 else 1}\n" for k in range(n))
    catalogue = "item_id,title\n" + "".join(f"i{k},t\n" for k in range(n))
    files = {
        "items": upload("items.csv", "item_id,base_cluster,exp_cluster,weight\n" + rows),
        "catalogue": upload("catalogue.csv", catalogue),
    }
    assert upload_content_problems(files=files, kind="change") == []
    # Within the first rows, the same file is refused.
    rows = rows.replace(",1\n", ",heavy\n", 1)
    files["items"] = upload("items.csv", "item_id,base_cluster,exp_cluster,weight\n" + rows)
    assert upload_content_problems(files=files, kind="change") == [
        "items: items.csv: line 2: weight 'heavy' is not a number"
    ]


def test_a_catalogue_longer_than_the_first_rows_is_not_searched_for_ids(db):
    """Its first rows need not hold the items' ids: the preparation reads it whole."""
    n = HEAD_ROWS + 10
    catalogue = "item_id,title\n" + "".join(f"x{k},t\n" for k in range(n)) + "a,A\nb,B\nc,C\nd,D\n"
    files = tiny_files(catalogue=upload("catalogue.csv", catalogue))
    assert upload_content_problems(files=files, kind="change") == []


def test_a_catalogue_with_a_repeated_id_and_a_reserved_column_lists_the_id_once(db):
    catalogue = "item_id,title,weight\na,A,1\na,B,2\nc,C,3\nd,D,4\n"
    assert upload_content_problems(files=tiny_files(catalogue=upload("catalogue.csv", catalogue)), kind="change") == [
        "catalogue: catalogue.csv: line 3: duplicate item_id 'a' (first on line 2)",
    ]
    catalogue = "item_id,title,weight\na,A,1\nb,B,2\nc,C,3\nd,D,4\n"
    assert upload_content_problems(files=tiny_files(catalogue=upload("catalogue.csv", catalogue)), kind="change") == [
        "catalogue: catalogue.csv: column 'weight' is reserved: rename it",
    ]


def test_ids_and_cluster_ids_too_long_for_the_database_are_refused(db):
    long = "x" * 256
    files = {
        "base": upload("base.csv", f"item_id,cluster_id\na,{long}\nb,1\n"),
        "exp": upload("exp.csv", f"item_id,cluster_id\na,1\n{long},2\n"),
        "catalogue": upload("catalogue.csv", "item_id,title\na,A\nb,B\n"),
    }
    assert upload_content_problems(files=files, kind="change") == [
        f"base: base.csv: base_cluster {'x' * 40!r}... is longer than 255 characters",
        f"exp: exp.csv: item_id {'x' * 40!r}... is longer than 255 characters",
    ]
