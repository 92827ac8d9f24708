"""The console's audit log (issue 34): every kind the audit records, filtered by kind, who and
experiment, a page at a time, read through the selector ``GET /api/audit/`` reads; quota changes
with their reason; and the Django admin's name for the log."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from raterapp.models import AuditEntry, ExperimentBudget
from raterapp.services.accounts.api_tokens import api_token_create
from raterapp.services.accounts.raters import rater_assign, rater_pause, rater_quota_set
from raterapp.services.accounts.users import user_roles_set
from raterapp.services.experiments.budgets import budget_update
from tests.raterapp.factories import ExperimentFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/console/audit/"


@pytest.fixture
def logged(users):
    """Changes of several kinds, by two admins, in two experiments."""
    admin, rater = users["admin"], users["rater"]
    other_admin = UserFactory(username="grace", roles=["admin"])
    first, second = ExperimentFactory(name="Dedup v2"), ExperimentFactory(name="Merge v3")
    rater_quota_set(actor=admin, rater=rater, daily_quota=20, total_quota=None, reason="Trial week")
    rater_pause(actor=other_admin, rater=rater, reason="too fast")
    rater_assign(actor=admin, experiment=first, raters=[rater])
    rater_assign(actor=other_admin, experiment=second, raters=[rater])
    api_token_create(actor=admin, name="ci")
    user_roles_set(actor=admin, user=users["nobody"], roles=["engineer"], reason="new hire")
    budget = ExperimentBudget.objects.get(experiment=first)
    budget_update(budget=budget, actor=admin, changes={"max_verdicts": 300}, reason="Q4 plan", via="page")
    return {"admin": admin, "grace": other_admin, "first": first, "second": second}


def _kinds(response) -> list[str]:
    return [entry.action for entry in response.context["entries"].object_list]


def test_the_page_shows_every_kind_the_audit_records(sign_in, logged):
    response = sign_in("admin").get(URL)
    assert response.status_code == 200
    assert _kinds(response) == [
        "user.roles",
        "token.create",
        "rater.assign",
        "rater.assign",
        "rater.pause",
        "rater.quota",
    ]
    html = response.content.decode()
    for text in ("Quota changed", "Rater paused", "Assigned to an experiment", "API token created", "Roles changed"):
        assert text in html
    assert "Trial week" in html  # the quota's reason
    assert [change.reason for change in response.context["changes"]] == ["Q4 plan"]  # budgets still shown
    assert html.count("data-audit-row=") == 6


def test_the_page_filters_by_kind_who_and_experiment(sign_in, logged):
    client = sign_in("admin")
    assert _kinds(client.get(URL, {"kind": "rater.quota"})) == ["rater.quota"]
    by_grace = client.get(URL, {"actor": logged["grace"].pk})
    assert _kinds(by_grace) == ["rater.assign", "rater.pause"]
    assert list(by_grace.context["changes"]) == []  # grace changed no budget
    in_first = client.get(URL, {"experiment": logged["first"].pk})
    assert [(e.action, e.experiment_id) for e in in_first.context["entries"]] == [("rater.assign", logged["first"].pk)]
    assert [change.reason for change in in_first.context["changes"]] == ["Q4 plan"]
    assert _kinds(client.get(URL, {"kind": "rater.assign", "actor": logged["admin"].pk})) == ["rater.assign"]
    budgets_only = client.get(URL, {"kind": "budget"})
    assert "entries" not in budgets_only.context and "actions" not in budgets_only.context
    assert len(budgets_only.context["changes"]) == 1
    html = client.get(URL, {"kind": "rater.quota"}).content.decode()
    assert '<option value="rater.quota" selected>Quota changed</option>' in html


def test_an_unknown_filter_is_refused_beside_its_field(sign_in, logged):
    response = sign_in("admin").get(URL, {"kind": "nonsense", "experiment": 999999})
    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"kind", "experiment"}


def test_the_log_comes_a_page_at_a_time_keeping_the_filters(sign_in, users):
    admin, rater = users["admin"], users["rater"]
    for n in range(1, 56):
        rater_quota_set(actor=admin, rater=rater, daily_quota=n, total_quota=None, reason=f"step {n}")
    client = sign_in("admin")
    first = client.get(URL, {"kind": "rater.quota"})
    assert len(first.context["entries"].object_list) == 50 and first.context["entries"].paginator.count == 55
    assert 'href="?kind=rater.quota&amp;page=2" rel="next"' in first.content.decode()
    second = client.get(URL, {"kind": "rater.quota", "page": 2})
    assert [entry.reason for entry in second.context["entries"]] == [f"step {n}" for n in range(5, 0, -1)]


def test_the_page_and_the_api_list_the_same_entries(sign_in, logged, users):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(users["admin"])
    query = {"actor": logged["admin"].pk, "kind": "rater.assign"}
    page = sign_in("admin").get(URL, query)
    assert [e.pk for e in page.context["entries"]] == [
        row["id"] for row in api.get("/api/audit/", query).json()["results"]
    ]


def test_the_django_admin_names_the_log_in_plain_english():
    assert AuditEntry._meta.verbose_name_plural == "audit entries"
    assert admin.site._registry[AuditEntry].model._meta.verbose_name_plural == "audit entries"


@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("rater", 403), ("engineer", 403), ("admin", 200)])
def test_role_table_of_a_filtered_page(sign_in, who, status):
    assert sign_in(who).get(reverse("console-audit"), {"kind": "rater.quota"}).status_code == status


def test_a_quota_changed_in_the_django_admin_needs_a_reason_and_keeps_it(users):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from raterapp.models import RaterProfile

    root = get_user_model().objects.create_superuser("root", password="pw-root")
    profile, _ = RaterProfile.objects.get_or_create(user=users["rater"])
    browser = Client()
    browser.force_login(root)
    url = f"/admin/raterapp/raterprofile/{profile.pk}/change/"
    refused = browser.post(url, {"daily_quota": "7", "total_quota": "", "reason": ""})
    assert refused.status_code == 200 and "reason" in refused.context["adminform"].form.errors
    assert RaterProfile.objects.get(pk=profile.pk).daily_quota is None
    assert not AuditEntry.objects.exists()
    saved = browser.post(url, {"daily_quota": "7", "total_quota": "", "reason": "Trial week"})
    assert saved.status_code == 302
    assert RaterProfile.objects.get(pk=profile.pk).daily_quota == 7
    assert list(AuditEntry.objects.values_list("action", "field", "new_value", "reason")) == [
        ("rater.quota", "daily_quota", "7", "Trial week")
    ]
