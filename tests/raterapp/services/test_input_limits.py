"""Issue 16's bad inputs: each ends ``failed`` or is refused at upload, naming the problem, and
leaves no rows."""

import os

import pytest
from django.core.exceptions import ValidationError

from raterapp.models import Experiment, Item, SampledPair, UploadedFile
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.services.files import CATALOGUE_CSV, ITEMS_CSV, experiment_made, parquet_bytes, tiny_files, upload

Status = Experiment.Status


def prepared(owner, files) -> Experiment:
    """Prepared without the request's check of the first rows, as a file bad further on would be."""
    experiment = experiment_made(owner=owner, name="limits", files=files, seed=7, n_draws=50, checked=False)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    return experiment


def refused(owner, files) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        experiment_made(owner=owner, name="limits", files=files, seed=7, n_draws=50)
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    return caught.value.message_dict["files"]


def assert_failed_without_rows(experiment: Experiment, message: str) -> None:
    assert experiment.status == Status.FAILED
    assert experiment.error == message
    assert not Item.objects.filter(experiment=experiment).exists()
    assert not SampledPair.objects.filter(experiment=experiment).exists()


def test_a_nul_in_a_title_fails_naming_file_and_line(engineer, media):
    catalogue = CATALOGUE_CSV.replace("Beta", "Be\x00ta")
    # A NUL in a CSV is refused at upload already, so the title comes in a Parquet catalogue.
    lines = [line.split(",") for line in catalogue.splitlines()]
    columns = {name: [row[k] for row in lines[1:]] for k, name in enumerate(lines[0])}
    experiment = prepared(engineer, tiny_files(catalogue=upload("catalogue.parquet", parquet_bytes(columns))))
    assert_failed_without_rows(experiment, "catalogue.parquet: row 2: title holds a NUL character (\\x00)")


def test_a_nul_in_an_item_id_fails_naming_file_and_row(engineer, media):
    items = parquet_bytes({"item_id": ["a", "b\x00", "c", "d"], "base_cluster": ["B1", "B1", "B1", "B2"],
                           "exp_cluster": ["E1", "E1", "E2", "E2"]})  # fmt: skip
    experiment = prepared(engineer, tiny_files(items=upload("items.parquet", items)))
    assert_failed_without_rows(experiment, "items.parquet: row 2: item_id holds a NUL character (\\x00)")


def test_a_nul_byte_in_a_csv_is_refused_at_upload(engineer, media):
    problems = refused(engineer, tiny_files(catalogue=upload("catalogue.csv", CATALOGUE_CSV.replace("Gamma", "G\x00"))))
    assert problems == ["catalogue: catalogue.csv: line 4: NUL byte (not a text CSV file)"]


def test_weights_whose_total_overflows_fail(engineer, media):
    items = ITEMS_CSV.replace("exp_cluster\n", "exp_cluster,weight\n").replace("\n", ",1e308\n")
    items = items.replace("weight,1e308\n", "weight\n")
    experiment = prepared(engineer, tiny_files(items=upload("items.csv", items)))
    assert_failed_without_rows(experiment, "items.csv: the weights add up to more than a float64 holds: scale them down")


def test_a_parquet_file_that_expands_past_the_limit_is_refused_at_upload(engineer, media, settings):
    settings.UPLOAD_MAX_EXPANDED_BYTES = 1_000_000
    n = 300_000  # 300k equal rows: a few KB compressed, megabytes expanded
    items = parquet_bytes({"item_id": ["a"] * n, "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n})
    assert len(items) < 100_000
    [problem] = refused(engineer, tiny_files(items=upload("items.parquet", items)))
    assert problem.startswith("items: items.parquet: expands to ")
    assert problem.endswith("bytes, more than the limit of 1,000,000 (UPLOAD_MAX_EXPANDED_BYTES)")


def test_too_many_rows_are_refused_at_upload(engineer, media, settings):
    settings.UPLOAD_MAX_ROWS = 3
    problems = refused(engineer, tiny_files())
    assert problems == [
        "catalogue: catalogue.csv: more than 3 rows (UPLOAD_MAX_ROWS)",
        "items: items.csv: more than 3 rows (UPLOAD_MAX_ROWS)",
    ]


def test_a_60_mb_garbage_file_is_refused_at_upload(engineer, media):
    garbage = os.urandom(60 * 1024 * 1024)
    problems = refused(engineer, tiny_files(items=upload("items.parquet", garbage), catalogue=upload("catalogue.csv", garbage)))
    assert problems[0].startswith("catalogue: catalogue.csv: line ") and problems[0].endswith("NUL byte (not a text CSV file)")
    assert problems[1] == "items: items.parquet: not a Parquet file (no PAR1 magic bytes)"


def test_an_upload_over_the_byte_limit_is_refused(engineer, media, settings):
    settings.UPLOAD_MAX_BYTES = 50
    problems = refused(engineer, tiny_files(items=None, base=upload("base.csv", "item_id,cluster_id\na,1\n"),
                                            exp=upload("exp.csv", "item_id,cluster_id\na,1\n")))  # fmt: skip
    size = len(CATALOGUE_CSV)
    assert problems == [f"catalogue: catalogue.csv: {size:,} bytes is more than the limit of 50 (UPLOAD_MAX_BYTES)"]


def test_a_1_mb_title_fails_naming_the_field_limit(engineer, media):
    catalogue = CATALOGUE_CSV.replace("Gamma", "x" * 1_000_000)
    experiment = prepared(engineer, tiny_files(catalogue=upload("catalogue.csv", catalogue)))
    assert_failed_without_rows(
        experiment, "catalogue.csv: line 4: title is 1,000,000 characters long, more than 10,000 (UPLOAD_MAX_FIELD_CHARS)"
    )
