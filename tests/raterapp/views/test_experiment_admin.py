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
