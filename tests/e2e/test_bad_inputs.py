"""Issue 16's bad inputs, end to end: uploaded through the API, prepared by a real Celery worker.
Each ends ``failed`` or is refused at upload (400), with a message naming the problem, and
leaves no rows (nor files)."""

from __future__ import annotations

import os

import pytest
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from metrics_core.io import HEAD_ROWS
from raterapp.models import Experiment, ImpactGroup, Item, PairTask, SampledPair, UploadedFile
from tests.raterapp.factories import UserFactory
from tests.raterapp.services.files import CATALOGUE_CSV, ITEMS_CSV, parquet_bytes, tiny_files, upload

from .conftest import wait_for

pytestmark = pytest.mark.slow
Status = Experiment.Status


def _catalogue_parquet(csv_text: str) -> bytes:
    lines = [line.split(",") for line in csv_text.splitlines()]
    return parquet_bytes({name: [row[k] for row in lines[1:]] for k, name in enumerate(lines[0])})


def _weighted(weight: str) -> str:
    lines = ITEMS_CSV.splitlines()
    return "\n".join([lines[0] + ",weight", *(line + f",{weight}" for line in lines[1:])]) + "\n"


# Found in the first rows, so refused in the request (issue 34): see the refusals' test below.
REFUSED_CONTENT = {
    "NUL in a title": (
        {"catalogue": upload("catalogue.parquet", _catalogue_parquet(CATALOGUE_CSV.replace("Beta", "Be\x00ta")))},
        "catalogue: catalogue.parquet: row 2: title holds a NUL character (\\x00)",
    ),
    "NUL in an id": (
        {"items": upload("items.parquet", parquet_bytes({"item_id": ["a", "b\x00", "c", "d"],
                                                          "base_cluster": ["B1", "B1", "B1", "B2"],
                                                          "exp_cluster": ["E1", "E1", "E2", "E2"]}))},
        "items: items.parquet: row 2: item_id holds a NUL character (\\x00)",
    ),  # fmt: skip
    "1e308 weights": (
        {"items": upload("items.csv", _weighted("1e308"))},
        "items: items.csv: the weights add up to more than a float64 holds: scale them down",
    ),
    "1 MB title": (
        {"catalogue": upload("catalogue.csv", CATALOGUE_CSV.replace("Gamma", "x" * 1_000_000))},
        "catalogue: catalogue.csv: line 4: title is 1,000,000 characters long, more than 10,000 (UPLOAD_MAX_FIELD_CHARS)",
    ),
}
N_PAST = HEAD_ROWS + 1000  # a bad row after the rows the request reads


def _bad_weight_past_the_head() -> dict:
    ids = [f"i{k}" for k in range(N_PAST)]
    rows = [f"{item},B{k % 50},E{k % 70},{'heavy' if k == N_PAST - 1 else 1}" for k, item in enumerate(ids)]
    return {
        "items": upload("items.csv", "item_id,base_cluster,exp_cluster,weight\n" + "\n".join(rows) + "\n"),
        "catalogue": upload("catalogue.csv", "item_id,title\n" + "\n".join(f"{i},{i}" for i in ids) + "\n"),
    }


FAILING = {
    "a non-numeric weight past the first rows": (
        _bad_weight_past_the_head(),
        f"items.csv: line {N_PAST + 1}: weight 'heavy' is not a number",
    ),
}


def _engineer_client() -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory(roles=["engineer"]))
    return client


def _post(client: APIClient, name: str, files: dict):
    return client.post("/api/experiments/", {"name": name, "n_draws": "50", "seed": "7", **files}, format="multipart")


def _rows_of(experiment_id: int) -> dict:
    return {model.__name__: model.objects.filter(experiment_id=experiment_id).count()
            for model in (Item, SampledPair, PairTask, ImpactGroup)}  # fmt: skip


def test_bad_content_ends_failed_naming_the_problem_with_no_rows_left(celery_worker_process):
    client = _engineer_client()
    created = {}
    for case, (files, _) in FAILING.items():
        response = _post(client, case, tiny_files(**files))
        assert response.status_code == 201, response.content
        created[case] = response.json()["id"]

    def all_ended():
        statuses = dict(Experiment.objects.filter(pk__in=created.values()).values_list("pk", "status"))
        return all(status in (Status.FAILED, Status.RATING) for status in statuses.values())

    wait_for(all_ended, timeout=120, what="the worker to prepare every bad upload")
    for case, (_, message) in FAILING.items():
        body = client.get(f"/api/experiments/{created[case]}/").json()
        print(f"\n{case}: {body['status']} at {body['error_step']}: {body['error']}")
        assert (body["status"], body["error"], body["error_step"]) == ("failed", message, "validating"), case
        assert _rows_of(created[case]) == {"Item": 0, "SampledPair": 0, "PairTask": 0, "ImpactGroup": 0}
        experiment = Experiment.objects.get(pk=created[case])
        assert (experiment.population_file, experiment.items_count, experiment.impact) == ("", None, None)
        assert not default_storage.exists(f"experiments/{experiment.pk}/population.parquet")


@pytest.mark.django_db
def test_bad_files_are_refused_at_upload_naming_the_problem_with_nothing_stored(settings):
    settings.UPLOAD_MAX_EXPANDED_BYTES = 1_000_000
    n = 300_000  # 300k equal rows: a few KB of Parquet, megabytes in memory
    expanding = parquet_bytes({"item_id": ["a"] * n, "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n})
    garbage = os.urandom(60 * 1024 * 1024)
    cases = {
        **{case: (files, [message], "") for case, (files, message) in REFUSED_CONTENT.items()},
        "a Parquet file that expands past the limit": (
            {"items": upload("items.parquet", expanding)},
            ["items: items.parquet: expands to "],
            "bytes, more than the limit of 1,000,000 (UPLOAD_MAX_EXPANDED_BYTES)",
        ),
        "a 60 MB garbage items file": (
            {"items": upload("items.parquet", garbage)},
            ["items: items.parquet: not a Parquet file (no PAR1 magic bytes)"],
            "",
        ),
        "a 60 MB garbage catalogue": (
            {"catalogue": upload("catalogue.csv", garbage)},
            ["catalogue: catalogue.csv: line "],
            "NUL byte (not a text CSV file)",
        ),
        "a NUL byte in a CSV title": (
            {"catalogue": upload("catalogue.csv", CATALOGUE_CSV.replace("Beta", "Be\x00ta"))},
            ["catalogue: catalogue.csv: line 3: NUL byte (not a text CSV file)"],
            "",
        ),
    }
    client = _engineer_client()
    stored_before = sorted(default_storage.listdir("")[0]) if default_storage.exists("") else []
    for case, (files, [start], end) in cases.items():
        response = _post(client, case, tiny_files(**files))
        assert response.status_code == 400, case
        [problem] = response.json()["files"]
        print(f"\n{case}: 400: {problem}")
        assert problem.startswith(start) and problem.endswith(end), (case, problem)
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    assert (sorted(default_storage.listdir("")[0]) if default_storage.exists("") else []) == stored_before
