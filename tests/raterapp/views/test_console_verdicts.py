"""The admin console's Verdicts page: its role table (GET and POST), a rater's verdicts in a range
voided with a reason (all of them, or one), a refused void changing nothing, and the audit log's
changes and voids of verdicts shown on the page."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from raterapp.models import AuditEntry, Judgement, RetractedJudgement
from raterapp.selectors.budgets import budget_ledger_mismatches_get
from raterapp.services.judging import assignment_next, judgement_change, judgement_submit
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db
LOCAL = "%Y-%m-%dT%H:%M"


@pytest.fixture
def verdicts(users, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    experiment = experiment_prepared(owner=users["engineer"], name="Dedup v2")
    made = []
    for _ in range(3):
        task = assignment_next(experiment=experiment, rater=users["rater"])
        made.append(judgement_submit(task=task, rater=users["rater"], verdict="equivalent", client_id=uuid.uuid4())[0])
    return made


def window(minutes=10):
    now = timezone.localtime()
    return {
        "since": (now - timedelta(minutes=minutes)).strftime(LOCAL),
        "until": (now + timedelta(minutes=1)).strftime(LOCAL),
    }


@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("rater", 403), ("engineer", 403), ("admin", 200)])
def test_role_table_of_the_page_and_its_void(sign_in, users, verdicts, who, status):
    client = sign_in(who)
    assert client.get(reverse("console-verdicts")).status_code == status
    assert client.get(reverse("console-verdicts"), {"rater": users["rater"].pk, **window()}).status_code == status
    if status != 200:
        data = {"rater": users["rater"].pk, **window(), "reason": "no"}
        assert client.post(reverse("console-verdicts"), data).status_code == status
        assert Judgement.objects.count() == 3 and not AuditEntry.objects.exists()


def test_an_admin_finds_and_voids_a_raters_verdicts_of_ten_minutes(sign_in, users, verdicts):
    client = sign_in("admin")
    page = client.get(reverse("console-verdicts"), {"rater": users["rater"].pk, **window()})
    assert 'data-verdicts-found="3"' in page.content.decode()
    response = client.post(reverse("console-verdicts"), {"rater": users["rater"].pk, **window(), "reason": "key burst"})
    assert response.status_code == 302
    assert not Judgement.objects.exists()
    assert sorted(RetractedJudgement.objects.values_list("voided_by", flat=True)) == [users["admin"].pk] * 3
    assert budget_ledger_mismatches_get() == []
    page = client.get(response["Location"]).content.decode()
    assert "3 verdicts of rater voided." in page
    assert 'data-verdict-audit="verdict.void"' in page and "key burst" in page


def test_one_verdict_voided_from_its_row(sign_in, users, verdicts):
    client = sign_in("admin")
    data = {"rater": users["rater"].pk, **window(), "reason": "wrong", "judgement": verdicts[1].pk}
    assert client.post(reverse("console-verdicts"), data).status_code == 302
    assert sorted(Judgement.objects.values_list("pk", flat=True)) == sorted([verdicts[0].pk, verdicts[2].pk])


def test_a_void_without_a_reason_is_refused_with_the_error_and_nothing_changes(sign_in, users, verdicts):
    response = sign_in("admin").post(
        reverse("console-verdicts"), {"rater": users["rater"].pk, **window(), "reason": ""}
    )
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert Judgement.objects.count() == 3 and not AuditEntry.objects.exists()


def test_a_raters_change_shows_in_the_audit_section(sign_in, users, verdicts):
    judgement_change(judgement_id=verdicts[0].pk, rater=users["rater"], verdict="not_equivalent")
    page = sign_in("admin").get(reverse("console-verdicts")).content.decode()
    assert 'data-verdict-audit="verdict.change"' in page and f"verdict #{verdicts[0].pk}" in page


def test_the_django_admin_shows_who_voided_a_verdict_and_cannot_change_it(sign_in, users, verdicts):
    client = sign_in("superuser")
    client.post(
        reverse("console-verdicts"),
        {"rater": users["rater"].pk, **window(), "reason": "r", "judgement": verdicts[0].pk},
    )
    retracted = RetractedJudgement.objects.get()
    page = client.get(reverse("admin:raterapp_retractedjudgement_change", args=[retracted.pk])).content.decode()
    assert 'name="voided_by"' not in page and "Voided by" in page
