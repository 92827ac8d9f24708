"""The ground-truth clustering upload: ``ground_truth`` is its name; ``gold``, its old name, still
works for one release and the answer says it is deprecated (header, link, warnings, schema)."""

from datetime import UTC, datetime

import pytest

from raterapp.models import Experiment, UploadedFile
from tests.raterapp.services.files import tiny_files, upload

GROUND_TRUTH_CSV = "item_id,cluster_id\na,x\nb,x\nc,y\nd,y\n"
DEPRECATED_SINCE = f"@{int(datetime(2026, 11, 26, tzinfo=UTC).timestamp())}"


def post(client, **files):
    return client.post("/api/experiments/", {"name": "x", **tiny_files(**files)}, format="multipart")


def test_ground_truth_is_stored_as_the_ground_truth_clustering_with_no_deprecation(client_of):
    response = post(client_of("owner"), ground_truth=upload("truth.csv", GROUND_TRUTH_CSV))
    assert response.status_code == 201
    assert "Deprecation" not in response.headers and "Link" not in response.headers
    assert "warnings" not in response.json()
    experiment = Experiment.objects.get(pk=response.json()["id"])
    assert sorted(experiment.files.values_list("kind", "original_name")) == [
        ("catalogue", "catalogue.csv"), ("ground_truth", "truth.csv"), ("items", "items.csv"),
    ]  # fmt: skip


def test_gold_still_uploads_the_ground_truth_clustering_and_is_flagged_deprecated(client_of):
    response = post(client_of("owner"), gold=upload("gold.csv", GROUND_TRUTH_CSV))
    assert response.status_code == 201
    assert response.headers["Deprecation"] == DEPRECATED_SINCE
    assert response.headers["Link"] == '<http://testserver/api/docs/>; rel="deprecation"; type="text/html"'
    body = response.json()
    assert body["warnings"] == ["The upload field 'gold' is deprecated: send the file as 'ground_truth'."]
    assert body["status"] == "queued"
    experiment = Experiment.objects.get(pk=body["id"])
    assert experiment.files.get(kind=UploadedFile.Kind.GROUND_TRUTH).original_name == "gold.csv"
    assert not experiment.files.filter(kind="gold").exists()


def test_the_answer_is_the_same_experiment_either_way_but_for_the_warnings(client_of):
    new = post(client_of("owner"), ground_truth=upload("t.csv", GROUND_TRUTH_CSV)).json()
    old = post(client_of("owner"), gold=upload("t.csv", GROUND_TRUTH_CSV)).json()
    changing = {"id", "seed", "created_at", "updated_at", "workspace"}
    assert set(old) - set(new) == {"warnings"}
    assert {k: v for k, v in new.items() if k not in changing} == {
        k: v for k, v in old.items() if k not in changing | {"warnings"}
    }


def test_both_names_at_once_are_400_and_create_nothing(client_of):
    response = post(
        client_of("owner"), gold=upload("a.csv", GROUND_TRUTH_CSV), ground_truth=upload("b.csv", GROUND_TRUTH_CSV)
    )
    assert response.status_code == 400
    assert response.json()["gold"] == ["Give the file once, as ground_truth (gold is its old name)."]
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_the_schema_marks_gold_deprecated_and_documents_the_warnings(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    body = schema["paths"]["/api/experiments/"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    request = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]["properties"]
    assert request["gold"]["deprecated"] is True
    assert "deprecated" not in request["ground_truth"]
    answer = schema["paths"]["/api/experiments/"]["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    created = schema["components"]["schemas"][answer["$ref"].rsplit("/", 1)[1]]
    assert "warnings" in created["properties"] and "warnings" not in created["required"]
