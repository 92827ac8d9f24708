"""The Dask engine end to end: an engineer creates an experiment from a Parquet location through
the API, the real Celery worker prepares it on a Dask scheduler reached by address (a LocalCluster
serving TCP, as DASK_SCHEDULER_ADDRESS in production), a rater judges every pair, and the worker's
estimates equal metrics_core's on the whole population."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

import metrics_core as mc
from raterapp.models import PairTask
from raterapp.services.accounts.api_tokens import api_token_create
from tests.metrics_core.dask_run import write_parts

from .conftest import wait_for


@pytest.fixture
def dask_scheduler(monkeypatch, settings, tmp_path):
    """A TCP Dask scheduler with two workers; the Celery worker started after this fixture uses it."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=":0"
    ) as cluster:
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.scheduler_address)
        settings.DATA_LOCATIONS = [str(tmp_path / "data") + "/"]
        yield cluster


def _client(name: str, role: str) -> APIClient:
    user = User.objects.create_user(name, password="pw")
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(actor=user)[1]}")
    return client


@pytest.mark.slow
def test_a_location_experiment_is_prepared_on_dask_by_the_worker(dask_scheduler, celery_worker_process, tmp_path):
    rng = np.random.default_rng(8)
    n = 300
    ideal = np.arange(n) // 3
    frame = pd.DataFrame(
        {
            "item_id": [f"d{k:04d}" for k in range(n)],
            "base_cluster": np.where(rng.random(n) < 0.3, ideal + 500, ideal // 2),
            "exp_cluster": np.where(rng.random(n) < 0.5, ideal + 900, ideal // 2),
            "weight": rng.uniform(0.5, 2.0, n),
        }
    )
    folder = write_parts(frame, tmp_path / "data" / "items", 3)
    (tmp_path / "catalogue.csv").write_text("item_id,title\n" + "".join(f"{i},Item {i}\n" for i in frame["item_id"]))
    engineer, rater = _client("eng", "engineer"), _client("rat", "rater")
    with open(tmp_path / "catalogue.csv", "rb") as catalogue:
        created = engineer.post(
            "/api/experiments/",
            {"name": "dask", "n_draws": 150, "seed": 3, "items_location": str(folder), "catalogue": catalogue},
            format="multipart",
        )
    assert created.status_code == 201, created.content
    assert created.json()["engine"] == "dask"
    experiment_id = created.json()["id"]
    detail = wait_for(
        lambda: (d := engineer.get(f"/api/experiments/{experiment_id}/").json())["status"] in ("rating", "failed") and d,
        what="the worker to prepare the experiment on Dask",
    )
    assert detail["status"] == "rating", detail
    assert detail["items_count"] == n
    assert dask_scheduler.scheduler.transition_counter > 100, "the worker did not use the Dask scheduler"

    position = {item: k for k, item in enumerate(frame["item_id"])}
    judged = 0
    while (pair := rater.post(f"/api/experiments/{experiment_id}/next-pair/").json())["pair"] is not None:
        task = PairTask.objects.select_related("item_a", "item_b").get(pk=pair["pair"]["task"])
        same = ideal[position[task.item_a.item_id]] == ideal[position[task.item_b.item_id]]
        answer = {"task": task.pk, "verdict": "equivalent" if same else "not_equivalent", "client_id": str(uuid.uuid4())}
        assert rater.post("/api/judgements/", answer, format="json").status_code == 201
        judged += 1
    final = wait_for(
        lambda: (s := engineer.get(f"/api/experiments/{experiment_id}/estimates/")).status_code == 200
        and s.json()["judgements"] == judged
        and s.json(),
        what="the final snapshot",
    )
    pairs = pd.DataFrame(engineer.get(f"/api/experiments/{experiment_id}/exports/pairs/?format=json").json())
    population = mc.population_from_labels(frame["base_cluster"], frame["exp_cluster"], frame["weight"])
    sample = mc.PairSample.from_columns(
        population, scheme="jaccard", i=pairs["i"].map(position), j=pairs["j"].map(position), draws=pairs["draws"],
        pair_class=pairs["pair_class"], stratum=pairs["stratum"],
    )
    diff = sample.pair_class != 0
    a, b = sample.i[diff], sample.j[diff]
    verdicts = mc.verdicts_from_judgements(a, b, np.where(ideal[a] == ideal[b], "equivalent", "not_equivalent"))
    expected = mc.estimate_quality(population, sample, verdicts).as_dict()["estimates"]
    for name, estimate in expected.items():
        for key, value in estimate.items():
            assert final["estimates"][name][key] == (None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)), (name, key)
