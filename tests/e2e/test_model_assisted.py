"""Model-assisted estimates (abcde-spec §15) with the real worker, on the demo's data: the worker
scores every drawn pair with the built-in card similarity, the team's uploaded scores replace it for
the pairs they cover, and the stored model-assisted estimates equal ``python -m metrics_core
estimate --scores`` on the experiment's exports."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from raterapp.models import PairTask
from raterapp.services.demo import demo_files_write, demo_truth

from .conftest import wait_for
from .helpers import _cli, _client, _close, _user

VERDICTS = 160  # of a queue of a few hundred pairs: most drawn pairs stay unjudged, their score counts


def _rows(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.slow
def test_the_workers_model_assisted_estimates_equal_the_command_line_on_the_exports(celery_worker_process, tmp_path):
    paths, truth = demo_files_write(folder=tmp_path), demo_truth()
    engineer, rater = _client(_user("eng", "engineer")), _client(_user("rat", "rater"))
    with open(paths["items"], "rb") as items, open(paths["catalogue"], "rb") as catalogue:
        created = engineer.post(
            "/api/experiments/",
            {"name": "assisted", "scheme": "stratified", "n_draws": 500, "seed": 7, "items": items, "catalogue": catalogue},
            format="multipart",
        )
    assert created.status_code == 201, created.content
    experiment_id = created.json()["id"]
    url = f"/api/experiments/{experiment_id}"
    detail = wait_for(
        lambda: (d := engineer.get(f"{url}/").json())["status"] in ("rating", "failed") and d,
        what="the worker to prepare the experiment",
    )
    assert detail["status"] == "rating", detail

    built_in = _rows(engineer.get(f"{url}/exports/scores/?format=csv"))
    assert built_in and {row["score_source"] for row in built_in} == {"built_in"}  # the worker scored every pair
    assert len({float(row["score"]) for row in built_in}) > 10
    ours = {(row["i"], row["j"]): (0.9 if truth[row["i"]] == truth[row["j"]] else 0.2) for row in built_in[::3]}
    lines = "".join(f"{j},{i},{score}\n" for (i, j), score in ours.items())  # either order names a pair
    upload = SimpleUploadedFile("model.csv", ("i,j,score\n" + lines).encode())
    uploaded = engineer.post(f"{url}/scores/", {"scores": upload}, format="multipart")
    assert uploaded.status_code == 200, uploaded.content
    assert uploaded.json()["scored_pairs"] == len(ours)

    for judged in range(VERDICTS):
        pair = rater.post(f"{url}/next-pair/").json()["pair"]
        assert pair is not None, f"the queue ran out after {judged} verdicts"
        task = PairTask.objects.select_related("item_a", "item_b").get(pk=pair["task"])
        same = truth[task.item_a.item_id] == truth[task.item_b.item_id]
        verdict = "unsure" if judged % 23 == 4 else ("equivalent" if same else "not_equivalent")
        answer = {"task": task.pk, "verdict": verdict, "client_id": str(uuid.uuid4())}
        assert rater.post("/api/judgements/", answer, format="json").status_code == 201
    snapshot = wait_for(
        lambda: (s := engineer.get(f"{url}/estimates/").json())["judgements"] == VERDICTS and s,
        what=f"the worker's snapshot of {VERDICTS} verdicts",
    )
    assisted = snapshot["model_assisted"]
    assert any(row["rule"] != "none" and row["lambda"] > 0 for row in assisted["classes"]), assisted["classes"]

    for kind in ("pairs", "judgements", "scores"):
        (tmp_path / f"{kind}.csv").write_bytes(engineer.get(f"{url}/exports/{kind}/?format=csv").content)
    exported = _rows(engineer.get(f"{url}/exports/scores/?format=csv"))
    for row in exported:  # the uploaded score where the team gave one, the built-in one elsewhere
        key = (row["i"], row["j"]) if (row["i"], row["j"]) in ours else (row["j"], row["i"])
        assert row["score_source"] == ("uploaded" if key in ours else "built_in"), row
        if key in ours:
            assert float(row["score"]) == ours[key]
    assert sum(row["score_source"] == "uploaded" for row in exported) == len(ours)

    cli = json.loads(
        _cli(tmp_path, "estimate", "items.csv", "pairs.csv", "judgements.csv", "--scores", "scores.csv", "--seed", "7")
    )
    assert len(cli["model_assisted"]["classes"]) == len(assisted["classes"])
    for theirs, stored in zip(cli["model_assisted"]["classes"], assisted["classes"], strict=True):
        _same(theirs, stored, "class")
    for name, estimate in snapshot["estimates"].items():  # the human-only ones (ΔRecall and IQ come later)
        _same(cli["estimates"][name], estimate, name)
    for name, estimate in assisted["estimates"].items():
        _same(cli["model_assisted"]["estimates"][name], estimate, f"model-assisted {name}")
    # ΔRecall and IQ: the worker's, a moment later, with the experiment's seed, as the command line's.
    derived = wait_for(
        lambda: (d := engineer.get(f"{url}/derived/")).status_code == 200 and d.json()["judgements"] == VERDICTS and d.json(),
        what="the worker's ΔRecall and IQ of every verdict",
    )
    assert set(derived["model_assisted"]["estimates"]) == {"DeltaRecall", "IQ"}
    for name in ("DeltaRecall", "IQ"):
        _same(cli["estimates"][name], derived["estimates"][name], name)
        _same(cli["model_assisted"]["estimates"][name], derived["model_assisted"]["estimates"][name], f"model-assisted {name}")


def _same(theirs: dict, stored: dict, what: str) -> None:
    for key, value in stored.items():
        assert theirs[key] == (_close(value) if isinstance(value, float) else value), (what, key)
