"""The whole loop through the API, against a real Celery worker (PostgreSQL and Redis in CI):
an engineer uploads, the worker prepares and samples, a rater judges every pair, the stored
estimates move with the verdicts and end equal to ``python -m metrics_core estimate`` on the
same files."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import numpy as np
import pytest

from raterapp.models import PairTask

from .conftest import ROOT, wait_for
from .helpers import _client, _population, _user


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["stratified"])
def test_upload_sample_judge_and_estimate_through_the_api(celery_worker_process, tmp_path, scheme):
    truth = _population(tmp_path, np.random.default_rng(5))
    engineer, rater = _client(_user("eng", "engineer")), _client(_user("rat", "rater"))

    with open(tmp_path / "items.csv", "rb") as items, open(tmp_path / "catalogue.csv", "rb") as catalogue:
        created = engineer.post(
            "/api/experiments/",
            {"name": "e2e", "scheme": scheme, "n_draws": 300, "seed": 11, "items": items, "catalogue": catalogue},
            format="multipart",
        )
    assert created.status_code == 201, created.content
    experiment_id = created.json()["id"]
    detail = wait_for(
        lambda: (d := engineer.get(f"/api/experiments/{experiment_id}/").json())["status"] in ("rating", "failed") and d,
        what="the worker to prepare the experiment",
    )
    assert detail["status"] == "rating", detail

    judged = 0
    values = []
    while (pair := rater.post(f"/api/experiments/{experiment_id}/next-pair/").json())["pair"] is not None:
        task = PairTask.objects.select_related("item_a", "item_b").get(pk=pair["pair"]["task"])
        same = truth[task.item_a.item_id] == truth[task.item_b.item_id]
        verdict = "unsure" if judged % 13 == 5 else ("equivalent" if same else "not_equivalent")
        answer = {"task": task.pk, "verdict": verdict, "client_id": str(uuid.uuid4())}
        assert rater.post("/api/judgements/", answer, format="json").status_code == 201
        judged += 1
        if judged in (5, 40):  # the stored estimates move as verdicts arrive
            snapshot = wait_for(
                lambda n=judged: (s := engineer.get(f"/api/experiments/{experiment_id}/estimates/")).status_code == 200
                and s.json()["judgements"] >= n
                and s.json(),
                what=f"a snapshot with {judged} judgements",
            )
            values.append(snapshot["estimates"]["GoodMergeDistance"]["value"])
    assert pair["reason"] == "queue_empty"
    assert judged == PairTask.objects.filter(experiment_id=experiment_id).count() > 40
    assert values[0] != values[1]

    final = wait_for(
        lambda: (s := engineer.get(f"/api/experiments/{experiment_id}/estimates/").json())["judgements"] == judged and s,
        what="the final snapshot",
    )
    for name, query in (("pairs", "pairs"), ("judgements", "judgements")):
        export = engineer.get(f"/api/experiments/{experiment_id}/exports/{query}/?format=csv")
        assert export.status_code == 200
        (tmp_path / f"{name}.csv").write_bytes(export.content)
    cli = subprocess.run(
        [sys.executable, "-m", "metrics_core", "estimate", "items.csv", "pairs.csv", "judgements.csv", "--seed", "11"],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert expected["scheme"] == scheme
    # The snapshot has the scheme's estimates; the worker adds ΔRecall and IQ a moment later,
    # with the experiment's seed, as the command line does with --seed.
    assert set(final["estimates"]) == set(expected["estimates"]) - {"DeltaRecall", "IQ"}
    for name in final["estimates"]:
        for key, value in expected["estimates"][name].items():
            assert final["estimates"][name][key] == (None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)), (name, key)
    derived = wait_for(
        lambda: (d := engineer.get(f"/api/experiments/{experiment_id}/derived/")).status_code == 200
        and d.json()["judgements"] == judged
        and d.json(),
        what="the worker's ΔRecall and IQ of every verdict",
    )
    for name in ("DeltaRecall", "IQ"):
        for key, value in expected["estimates"][name].items():
            assert derived["estimates"][name][key] == (None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)), (name, key)
