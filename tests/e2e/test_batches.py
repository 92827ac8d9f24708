"""More draws, end to end with the real worker (PostgreSQL and Redis in CI): the owner asks for a
batch through the API, the worker appends it, raters judge the new pairs, and the worker's
estimates equal ``python -m metrics_core estimate`` on the batches the command line draws
(``sample --batch``), concatenated."""

from __future__ import annotations

import json

import numpy as np

from .conftest import wait_for
from .helpers import _cli, _client, _close, _judge_everything, _population, _user


def test_a_top_up_batch_through_the_api_equals_the_command_line_batches(celery_worker_process, tmp_path):
    truth = _population(tmp_path, np.random.default_rng(8))
    engineer, rater = _client(_user("eng", "engineer")), _client(_user("rat", "rater"))
    with open(tmp_path / "items.csv", "rb") as items, open(tmp_path / "catalogue.csv", "rb") as catalogue:
        created = engineer.post(
            "/api/experiments/",
            {"name": "batches", "n_draws": 200, "seed": 21, "items": items, "catalogue": catalogue},
            format="multipart",
        )
    assert created.status_code == 201, created.content
    experiment_id = created.json()["id"]
    api = f"/api/experiments/{experiment_id}/"
    wait_for(lambda: engineer.get(api).json()["status"] == "rating", what="the worker to prepare the experiment")
    first = _judge_everything(rater, experiment_id, truth)

    plan = engineer.get(api + "batches/plan/?draws=300")
    assert plan.status_code == 200 and plan.json()["verdicts"] >= 0
    asked = engineer.post(api + "batches/", {"draws": 300}, format="json")
    assert asked.status_code == 202, asked.content
    batches = wait_for(
        lambda: (b := engineer.get(api + "batches/").json()["batches"])[-1]["status"] == "done" and b,
        what="the worker to draw batch 1",
    )
    assert [(b["index"], b["draws"], b["status"]) for b in batches] == [(0, 200, "done"), (1, 300, "done")]
    assert batches[1]["new_tasks"] > 0  # the queue has new pairs...
    second = _judge_everything(rater, experiment_id, truth)
    assert second == batches[1]["new_tasks"]  # ...and only those: judged pairs are not asked again

    total = first + second
    final = wait_for(
        lambda: (s := engineer.get(api + "estimates/").json())["judgements"] == total and s,
        what="the snapshot of every verdict",
    )
    (tmp_path / "judgements.csv").write_bytes(engineer.get(api + "exports/judgements/?format=csv").content)
    for batch in (0, 1):
        _cli(tmp_path, "sample", "items.csv", "--pairs", str((200, 300)[batch]), "--seed", "21", "--batch", str(batch), "--out", f"pairs-{batch}.csv")
    lines = (tmp_path / "pairs-0.csv").read_text().splitlines() + (tmp_path / "pairs-1.csv").read_text().splitlines()[1:]
    (tmp_path / "pairs.csv").write_text("\n".join(lines) + "\n")
    expected = json.loads(_cli(tmp_path, "estimate", "items.csv", "pairs.csv", "judgements.csv", "--horizon", "200"))
    for name, estimate in final["estimates"].items():
        assert estimate["drawn_draws"] == expected["estimates"][name]["drawn_draws"], name
        for key, value in expected["estimates"][name].items():
            assert estimate[key] == _close(value), (name, key)
    # The app's own export of the grown sample is the same sample.
    (tmp_path / "app-pairs.csv").write_bytes(engineer.get(api + "exports/pairs/?format=csv").content)
    from_export = json.loads(_cli(tmp_path, "estimate", "items.csv", "app-pairs.csv", "judgements.csv", "--horizon", "200"))
    for name, estimate in from_export["estimates"].items():
        for key, value in estimate.items():
            assert expected["estimates"][name][key] == _close(value), (name, key)
