"""What several end-to-end test modules share: the uploads of a population with a known Ideal
clustering, its users and their API clients, the command line, and a rater judging everything."""

from __future__ import annotations

import csv
import subprocess
import sys
import uuid

import numpy as np
import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from raterapp.models import PairTask
from raterapp.services.accounts.api_tokens import api_token_create

from .conftest import ROOT


def _population(tmp_path, rng):
    """60 items: Base and Exp derived from a known Ideal clustering; weights vary."""
    n = 60
    ideal = rng.integers(0, 15, n)
    base = np.where(rng.random(n) < 0.25, rng.integers(0, 15, n), ideal)
    exp = np.where(rng.random(n) < 0.25, rng.integers(0, 15, n), ideal)
    ids = [f"item-{k:03d}" for k in range(n)]
    with open(tmp_path / "items.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item_id", "base_cluster", "exp_cluster", "weight"])
        for k in range(n):
            writer.writerow([ids[k], f"B{base[k]}", f"E{exp[k]}", f"{rng.uniform(0.5, 3):.3f}"])
    with open(tmp_path / "catalogue.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item_id", "title", "description", "colour"])
        for k in range(n):
            writer.writerow([ids[k], f"Product {k}", f"<b>description</b> {k}", ["red", "blue"][k % 2]])
    return dict(zip(ids, ideal.tolist()))


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(actor=user)[1]}")
    return client


def _user(name: str, role: str) -> User:
    user = User.objects.create_user(name, password="pw")
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def _cli(tmp_path, *args):
    run = subprocess.run(
        [sys.executable, "-m", "metrics_core", *args],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return run.stdout


def _close(value):
    """Equal to rounding (the app sums in another order); undefined numbers (null) exactly."""
    return None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)


def _judge_everything(rater, experiment_id, truth):
    judged = 0
    while (pair := rater.post(f"/api/experiments/{experiment_id}/next-pair/").json())["pair"] is not None:
        task = PairTask.objects.select_related("item_a", "item_b").get(pk=pair["pair"]["task"])
        same = truth[task.item_a.item_id] == truth[task.item_b.item_id]
        verdict = "unsure" if judged % 17 == 3 else ("equivalent" if same else "not_equivalent")
        answer = {"task": task.pk, "verdict": verdict, "client_id": str(uuid.uuid4())}
        assert rater.post("/api/judgements/", answer, format="json").status_code == 201
        judged += 1
    return judged
