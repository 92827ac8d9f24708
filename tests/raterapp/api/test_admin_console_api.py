"""The admin console's API: archiving, password links, changing gold questions and resolving
reports, each answered with what changed (the role table is in test_roles.py)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.tokens import default_token_generator

from raterapp.models import Experiment, PairReport, PairTask
from raterapp.services.judging import assignment_next, pair_report_create
from raterapp.services.judging.gold import gold_pair_create

pytestmark = pytest.mark.django_db


def test_archive_and_unarchive_with_the_list_filter(client_of, experiment):
    owner = client_of("owner")
    url = f"/api/experiments/{experiment.pk}/"
    refused = owner.post(url + "archive/")
    assert refused.status_code == 400 and "archived" in refused.json()
    assert owner.post(url + "close/").status_code == 200
    archived = owner.post(url + "archive/").json()
    assert archived["id"] == experiment.pk and archived["archived_at"] is not None
    assert [e["id"] for e in owner.get("/api/experiments/").json()["results"]] == []
    assert [e["id"] for e in owner.get("/api/experiments/?archived=true").json()["results"]] == [experiment.pk]
    assert [e["id"] for e in owner.get("/api/experiments/?archived=all").json()["results"]] == [experiment.pk]
    assert owner.post(url + "unarchive/").json()["archived_at"] is None
    assert [e["id"] for e in owner.get("/api/experiments/").json()["results"]] == [experiment.pk]
    assert Experiment.objects.get(pk=experiment.pk).status == "done"


def test_a_password_link_is_answered_once_and_not_cached(client_of, people):
    response = client_of("admin").post(f"/api/raters/{people['rater'].pk}/password-link/")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["username"] == people["rater"].username
    token = re.fullmatch(r"http://testserver/accounts/set-password/[^/]+/([^/]+)/", body["set_password_url"]).group(1)
    assert default_token_generator.check_token(people["rater"], token)


def test_a_gold_question_is_corrected_retired_and_served_again(client_of, people, experiment):
    task = PairTask.objects.filter(experiment=experiment).first()
    gold = gold_pair_create(
        experiment=experiment, actor=people["admin"], item_a=task.item_a.item_id, item_b=task.item_b.item_id, answer="equivalent"
    )
    admin = client_of("admin")
    body = admin.patch(f"/api/gold-pairs/{gold.pk}/", {"answer": "not_equivalent", "retired": True}, format="json").json()
    assert (body["gold_answer"], body["retired"]) == ("not_equivalent", True)
    listed = admin.get(f"/api/experiments/{experiment.pk}/gold-pairs/").json()
    assert [(g["task"], g["answer"], g["retired_at"] is not None) for g in listed] == [(gold.pk, "not_equivalent", True)]
    assert admin.patch(f"/api/gold-pairs/{gold.pk}/", {"retired": False}, format="json").json()["retired"] is False
    refused = admin.patch(f"/api/gold-pairs/{gold.pk}/", {"answer": "unsure"}, format="json")
    assert refused.status_code == 400
    assert PairTask.objects.get(pk=gold.pk).gold_answer == "not_equivalent"


def test_a_report_is_resolved_as_gold(client_of, people, experiment):
    task = assignment_next(experiment=experiment, rater=people["rater"])
    report, _ = pair_report_create(task=task, rater=people["rater"], reason="missing_data")
    admin = client_of("admin")
    refused = admin.post(f"/api/reports/{report.pk}/resolve/", {"resolution": "gold", "note": "x"}, format="json")
    assert refused.status_code == 400 and "answer" in refused.json()
    body = admin.post(
        f"/api/reports/{report.pk}/resolve/",
        {"resolution": "gold", "answer": "equivalent", "note": "Same person, typo in the name."},
        format="json",
    ).json()
    assert (body["resolution"], body["resolved_by"], body["resolution_note"]) == (
        "gold",
        people["admin"].username,
        "Same person, typo in the name.",
    )
    gold = PairTask.objects.exclude(gold_answer="").get()
    assert (gold.item_a_id, gold.item_b_id, gold.gold_answer) == (task.item_a_id, task.item_b_id, "equivalent")
    assert PairReport.objects.get(pk=report.pk).resolved_at is not None
