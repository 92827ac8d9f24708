import math

import pytest

from metrics_core import PAIR_CLASSES
from raterapp.models import Experiment, ImpactGroup, PairTask, SampledPair, UploadedFile
from raterapp.services.refresh.estimates import estimate_snapshot_as_dict, estimates_refresh
from tests.raterapp.prepared import experiment_prepared
from tests.raterapp.services.files import tiny_files, upload


def url(experiment, tail=""):
    return f"/api/experiments/{experiment.pk}/{tail}"


def test_engineers_list_their_own_and_granted_experiments_admins_all(client_of, people, experiment):
    granted = experiment_prepared(owner=people["other"], name="granted")
    granted.shared_with.add(people["owner"])
    private = experiment_prepared(owner=people["other"], name="private")
    names = lambda role: [e["name"] for e in client_of(role).get("/api/experiments/").json()["results"]]  # noqa: E731
    assert names("owner") == ["granted", "prepared"]
    assert names("other") == ["private", "granted"]
    assert names("admin") == ["private", "granted", "prepared"]
    assert private.pk


def test_an_upload_creates_a_queued_experiment_owned_by_the_engineer(client_of, people):
    response = client_of("owner").post(
        "/api/experiments/",
        {"name": "My change", "n_draws": "50", "replication": "2", "seed": "3", **tiny_files()},
        format="multipart",
    )
    assert response.status_code == 201
    body = response.json()
    experiment = Experiment.objects.get(pk=body["id"])
    assert (body["name"], body["status"], body["owner"], body["n_draws"], body["replication"], body["seed"]) == (
        "My change", "queued", people["owner"].username, 50, 2, 3,
    )
    assert experiment.owner == people["owner"]
    assert sorted(experiment.files.values_list("kind", flat=True)) == ["catalogue", "items"]


@pytest.mark.parametrize(
    "fields, files, key",
    [
        ({"name": "x", "n_draws": "0"}, tiny_files, "n_draws"),
        ({"name": "x", "n_draws": "many"}, tiny_files, "n_draws"),
        ({"name": "x", "scheme": "best"}, tiny_files, "scheme"),
        ({"name": "x", "confidence": "1.5"}, tiny_files, "confidence"),
        ({"name": "x"}, lambda: tiny_files(catalogue=None), "files"),
        ({}, tiny_files, "name"),
    ],
)
def test_a_bad_upload_is_400_naming_the_field_and_creates_nothing(client_of, fields, files, key):
    response = client_of("owner").post("/api/experiments/", {**fields, **files()}, format="multipart")
    assert response.status_code == 400
    assert key in response.json()
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)


def test_json_is_not_an_upload(client_of):
    response = client_of("owner").post("/api/experiments/", {"name": "x"}, format="json")
    assert response.status_code == 415
    assert Experiment.objects.count() == 0


def test_detail_shows_status_progress_error_and_judging_progress(client_of, experiment):
    Experiment.objects.filter(pk=experiment.pk).update(status="failed", error="items.csv, row 3: no item_id")
    PairTask.objects.filter(pk=experiment.tasks.order_by("rank").first().pk).update(verdicts=1)
    body = client_of("owner").get(url(experiment)).json()
    tasks = experiment.tasks.count()
    assert (body["status"], body["progress"], body["error"]) == ("failed", 1.0, "items.csv, row 3: no item_id")
    assert body["judging"] == {"tasks": tasks, "verdicts": 1, "wanted": tasks, "done": False}


def test_impact_gives_the_overall_metrics_and_the_dimensions(client_of, experiment):
    for dimension, label in [("base", "b0"), ("exp", "e2"), ("colour", "red")]:
        ImpactGroup.objects.create(
            experiment=experiment, dimension=dimension, label=label, items=2, affected_items=1, weight=2.0,
            metrics={"JaccardDistance": 0.25},
        )
    body = client_of("owner").get(url(experiment, "impact/")).json()
    assert body == {"overall": experiment.impact, "dimensions": ["base", "colour", "exp"]}


def test_impact_groups_filter_by_dimension_and_paginate(client_of, experiment):
    for k in range(3):
        ImpactGroup.objects.create(
            experiment=experiment, dimension="base", label=f"b{k}", items=k + 1, affected_items=1, weight=float(k + 1),
            metrics={"JaccardDistance": k / 10},
        )
    ImpactGroup.objects.create(
        experiment=experiment, dimension="exp", label="e0", items=1, affected_items=0, weight=1.0, metrics={}
    )
    client = client_of("owner")
    body = client.get(url(experiment, "impact/groups/"), {"dimension": "base", "limit": 2}).json()
    assert body["count"] == 3
    assert [g["label"] for g in body["results"]] == ["b2", "b1"]
    assert body["results"][0] == {
        "dimension": "base", "label": "b2", "items": 3, "affected_items": 1, "weight": 3.0,
        "metrics": {"JaccardDistance": 0.2},
    }
    assert client.get(url(experiment, "impact/groups/")).json()["count"] == 4


def test_pairs_list_every_sampled_pair_with_ids_and_contributions(client_of, experiment):
    body = client_of("owner").get(url(experiment, "pairs/"), {"limit": 1000}).json()
    rows = body["results"]
    assert body["count"] == len(rows) == SampledPair.objects.filter(experiment=experiment).count()
    first = SampledPair.objects.filter(experiment=experiment).order_by("pk").select_related("vantage", "partner")[0]
    assert (rows[0]["i"], rows[0]["j"], rows[0]["draws"]) == (first.vantage.item_id, first.partner.item_id, first.draws)
    assert sum(r["draws"] for r in rows) == experiment.n_draws
    assert {r["pair_class"] for r in rows} <= set(PAIR_CLASSES)
    diff = [r for r in rows if r["pair_class"] in ("split", "merge")]
    assert math.isclose(sum(r["jaccard_contribution"] for r in diff), experiment.impact["metrics"]["JaccardDistance"])
    assert all(r["jaccard_contribution"] == 0 for r in rows if r not in diff)
    assert all((r["task"] is None) == (r["pair_class"] == "self") for r in rows)


def test_pairs_of_an_experiment_not_sampled_yet_are_empty(client_of, people):
    queued = Experiment.objects.create(name="q", owner=people["owner"])
    assert client_of("owner").get(url(queued, "pairs/")).json()["count"] == 0


def test_estimates_are_404_until_computed_then_the_latest_snapshot(client_of, experiment):
    client = client_of("owner")
    assert client.get(url(experiment, "estimates/")).json() == {"detail": "No estimates yet."}
    estimates_refresh(experiment_id=experiment.pk)
    latest = estimates_refresh(experiment_id=experiment.pk)
    body = client.get(url(experiment, "estimates/")).json()
    assert body["id"] == latest.pk
    published = estimate_snapshot_as_dict(latest)
    assert body.keys() == published.keys()
    assert {k: v for k, v in body.items() if k != "created_at"} == {
        k: v for k, v in published.items() if k != "created_at"
    }


def test_estimates_history_lists_snapshots_oldest_first(client_of, experiment):
    ids = [estimates_refresh(experiment_id=experiment.pk).pk for _ in range(3)]
    body = client_of("owner").get(url(experiment, "estimates/history/")).json()
    assert body["count"] == 3
    assert [s["id"] for s in body["results"]] == ids
    assert set(body["results"][0]["estimates"]) >= {"GoodSplitDistance", "DeltaPrecision"}


def test_an_upload_whose_first_rows_are_bad_is_400_listing_every_problem_and_creates_nothing(client_of, media):
    """Issue 34: checked in the request by the preparation's own rules, before the experiment exists."""
    items = "item_id,base_cluster,exp_cluster,weight\na,B1,E1,1\nb,,E1,heavy\nzz,B2,E2,1\n"
    files = {
        "base": upload("base.csv", "item_id;cluster_id\na;1\n"),
        "exp": upload("exp.csv", "item_id,cluster\na,1\n"),
        "catalogue": upload("catalogue.csv", "item_id,title\na,A\nb,B\n"),
    }
    response = client_of("owner").post(
        "/api/experiments/", {"name": "bad", "n_draws": "50", **files}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {
        "files": [
            "base: base.csv: missing column 'item_id', 'cluster_id' (columns found: 'item_id;cluster_id'); "
            "the header is one column: the file seems separated by semicolons, not commas",
            "exp: exp.csv: missing column 'cluster_id' (columns found: 'item_id', 'cluster')",
        ]
    }
    files = {"items": upload("items.csv", items), "catalogue": upload("catalogue.csv", "item_id,title\na,A\nb,B\n")}
    response = client_of("owner").post("/api/experiments/", {"name": "bad", **files}, format="multipart")
    assert (response.status_code, response.json()) == (400, {"files": [
        "items: items.csv: line 3: empty base_cluster",
        "items: items.csv: line 3: weight 'heavy' is not a number",
    ]})  # fmt: skip
    items = items.replace(",,E1,heavy", ",B1,E1,2")
    files = {"items": upload("items.csv", items), "catalogue": upload("catalogue.csv", "item_id,title\na,A\nb,B\n")}
    response = client_of("owner").post("/api/experiments/", {"name": "bad", **files}, format="multipart")
    assert (response.status_code, response.json()) == (
        400,
        {"files": ["catalogue: catalogue.csv: no row for item_id 'zz' of items.csv"]},
    )
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    assert not media.exists() or not any(media.rglob("*.*"))
