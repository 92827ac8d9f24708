"""The Django admin's experiment form: the fields services own (audit log, PairTask.wanted) are
read-only there, so a change there cannot skip them. (The app's admins only view experiments
there, raterapp/admin_permissions.py; superusers may change them.)"""

from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse

from raterapp.admin import SERVICE_OWNED_FIELDS
from raterapp.models import Experiment
from tests.raterapp.factories import ExperimentFactory


def test_the_fields_services_own_are_read_only_in_the_admin(sign_in, users, superuser):
    experiment = ExperimentFactory(owner=users["engineer"])
    request = RequestFactory().get("/")
    request.user = superuser
    model_admin = admin.site._registry[Experiment]
    form = model_admin.get_form(request, experiment)
    for name in ("replication", "gold_rate", "target_half_width", "open_to_all_raters", "seed"):
        assert name in SERVICE_OWNED_FIELDS
        assert name not in form.base_fields
    assert {"name", "description", "guidelines", "assigned_raters"} <= set(form.base_fields)

    page = sign_in("superuser").get(reverse("admin:raterapp_experiment_change", args=[experiment.pk]))
    assert page.status_code == 200
    content = page.content.decode()
    assert 'name="name"' in content and 'name="replication"' not in content and 'name="gold_rate"' not in content


def test_workspaces_question_versions_and_reused_verdicts_are_shown_read_only(sign_in, users, superuser):
    from raterapp.models import QuestionVersion, ReusedVerdict, Workspace

    experiment = ExperimentFactory(owner=users["engineer"])
    request = RequestFactory().get("/")
    request.user = superuser
    client = sign_in("superuser")
    for model in (Workspace, QuestionVersion, ReusedVerdict):
        model_admin = admin.site._registry[model]
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request) and not model_admin.has_delete_permission(request)
        meta = model._meta
        page = client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert page.status_code == 200
    page = client.get(reverse("admin:raterapp_workspace_changelist"))
    assert experiment.workspace.name in page.content.decode()
