"""Verdict reuse (abcde-spec §11), end to end with the real worker (PostgreSQL and Redis in CI):
two experiments in one workspace whose diffs overlap. Once the first is judged, the second asks
raters only for its new pairs, its budget is charged for those only, and its estimates equal
``python -m metrics_core estimate`` on its own sample with the verdicts of both (its export).
The second's sample is drawn coupled to the first's, so most of its pairs are the first's. A
changed question reuses nothing."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from raterapp.models import BudgetLedgerEntry, ExperimentBudget, Judgement, PairTask
from raterapp.reuse_keys import pair_key

from .conftest import wait_for
from .helpers import _cli, _client, _close, _judge_everything, _population, _user


def _variant(tmp_path, rng) -> None:
    """items-2.csv: Exp with a fifth of the items moved to another Exp cluster (an overlapping diff)."""
    with open(tmp_path / "items.csv", newline="") as f:
        rows = list(csv.reader(f))
    for row in rows[1:]:
        if rng.random() < 0.2:
            row[2] = f"E{rng.integers(0, 15)}"
    with open(tmp_path / "items-2.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)


def _create(engineer, tmp_path, items_name, **fields):
    with open(tmp_path / items_name, "rb") as items, open(tmp_path / "catalogue.csv", "rb") as catalogue:
        created = engineer.post(
            "/api/experiments/", {**fields, "items": items, "catalogue": catalogue}, format="multipart"
        )
    assert created.status_code == 201, created.content
    experiment_id = created.json()["id"]
    wait_for(
        lambda: engineer.get(f"/api/experiments/{experiment_id}/").json()["status"] == "rating",
        what=f"the worker to prepare experiment {experiment_id}",
    )
    return experiment_id


def _keys(experiment_id) -> set[str]:
    rows = PairTask.objects.filter(experiment_id=experiment_id, gold_answer="")
    return {pair_key(a, b) for a, b in rows.values_list("item_a__item_id", "item_b__item_id")}


@pytest.mark.slow
def test_a_second_experiment_in_the_workspace_asks_only_for_new_pairs(celery_worker_process, tmp_path):
    truth = _population(tmp_path, np.random.default_rng(8))
    _variant(tmp_path, np.random.default_rng(9))
    engineer, rater = _client(_user("eng", "engineer")), _client(_user("rat", "rater"))
    common = {"n_draws": 200, "workspace": "shop"}

    first = _create(engineer, tmp_path, "items.csv", name="first", seed=21, **common)
    _judge_everything(rater, first, truth)

    second = _create(engineer, tmp_path, "items-2.csv", name="second", seed=22, **common)
    api = f"/api/experiments/{second}/"
    shared, new = _keys(first) & _keys(second), _keys(second) - _keys(first)
    assert shared and new
    reuse = wait_for(lambda: (r := engineer.get(api + "dashboard/").json()["reuse"])["pairs"] and r, what="reuse")
    assert (reuse["pairs"], reuse["verdicts"]) == (len(shared), len(shared))
    judged = _judge_everything(rater, second, truth)
    assert judged == len(new)  # raters were asked for the new pairs only
    assert set(Judgement.objects.filter(task__experiment_id=second).values_list("task__pair_key", flat=True)) == new
    assert ExperimentBudget.objects.get(experiment_id=second).spent == judged  # charged for new verdicts only
    assert sum(BudgetLedgerEntry.objects.filter(experiment_id=second).values_list("amount", flat=True)) == judged

    total = len(shared) + judged
    final = wait_for(
        lambda: (s := engineer.get(api + "estimates/").json())["judgements"] == total and s,
        what="the snapshot of every verdict, reused ones included",
    )
    (tmp_path / "judgements.csv").write_bytes(engineer.get(api + "exports/judgements/?format=csv").content)
    with open(tmp_path / "judgements.csv", newline="") as f:
        exported = list(csv.DictReader(f))
    assert sum(row["reused"] == "True" for row in exported) == len(shared)
    assert {row["source_experiment"] for row in exported if row["reused"] == "True"} == {str(first)}
    # The second's sample is coupled to the first's (metrics_core.sample_coupled, not the command
    # line's ordinary sample of its seed): its own export is the sample.
    (tmp_path / "pairs.csv").write_bytes(engineer.get(api + "exports/pairs/?format=csv").content)
    expected = json.loads(_cli(tmp_path, "estimate", "items-2.csv", "pairs.csv", "judgements.csv", "--horizon", "200"))
    for name, estimate in final["estimates"].items():
        for key, value in expected["estimates"][name].items():
            assert estimate[key] == _close(value), (name, key)

    # The same pairs under another question: nothing is reused.
    third = _create(
        engineer, tmp_path, "items-2.csv", name="third", seed=22, question="Are these the same product?", **common
    )
    assert PairTask.objects.filter(experiment_id=third, wanted=0).count() == 0
    assert engineer.get(f"/api/experiments/{third}/dashboard/").json()["reuse"]["pairs"] == 0
