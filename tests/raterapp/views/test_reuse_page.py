"""Verdict reuse on the pages (abcde-spec §11): the upload form's workspace and opt-out, and the
experiment page's card of what reuse gave (read without writing)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from raterapp.models import Experiment, ExperimentBudget, Judgement, PairTask, ReusedVerdict, Workspace
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.helpers.experiment_form import _post
from tests.raterapp.services.files import experiment_made, tiny_files

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("opt, expected", [({"reuse_verdicts": "on"}, True), ({}, False)])
def test_the_form_puts_the_experiment_in_the_named_workspace_and_takes_the_opt_out(client, users, settings, tmp_path, opt, expected):
    settings.MEDIA_ROOT = str(tmp_path)
    client.force_login(users["engineer"])
    response = _post(client, tiny_files(), workspace="  shop ", **opt)
    assert response.status_code == 302
    experiment = Experiment.objects.get()
    assert (experiment.workspace.name, experiment.reuse_verdicts) == ("shop", expected)


def test_the_new_experiment_form_offers_reuse_checked(client, users):
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-new")).content.decode()
    assert 'name="workspace"' in content
    assert 'name="reuse_verdicts"' in content and "checked" in content.split('name="reuse_verdicts"')[1].split(">")[0]


def _prepared(owner, **params):
    experiment = experiment_made(owner=owner, name="e", files=tiny_files(), seed=7, n_draws=50, workspace="shop", **params)
    experiment_prepare(experiment_id=experiment.pk)
    return Experiment.objects.get(pk=experiment.pk)


def test_the_page_shows_what_reuse_saved_and_reading_it_writes_nothing(client, users, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    first = _prepared(users["engineer"])
    for k, task in enumerate(PairTask.objects.filter(experiment=first)):
        Judgement.objects.create(task=task, rater=users["rater"], verdict="equivalent", client_id=f"00000000-0000-0000-0000-{k:012d}")
    second = _prepared(users["engineer"], replication=2)
    ExperimentBudget.objects.update_or_create(experiment=second, defaults={"cost_per_verdict": "1.50"})
    pairs = PairTask.objects.filter(experiment=second).count()
    assert ReusedVerdict.objects.filter(experiment=second).count() == pairs > 0
    counts = (ReusedVerdict.objects.count(), Workspace.objects.count(), Judgement.objects.count())

    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-detail", args=[second.pk])).content.decode()
    assert f"<dd data-reuse-pairs>{pairs}</dd>" in content
    assert f"<dd data-reuse-verdicts>{pairs}</dd>" in content
    assert f"<dd data-reuse-saved>{1.5 * pairs:.2f}</dd>" in content
    # The same data and question: the second's sample is coupled to the first's and keeps every draw.
    assert "data-reuse-coupled" in content and "50 of its 50 draws" in content
    reuse = client.get(reverse("api-experiment-dashboard", args=[second.pk])).json()["reuse"]
    assert reuse == {
        "enabled": True, "workspace": "shop", "pairs": pairs, "verdicts": pairs,
        "saved_verdicts": pairs, "saved": f"{1.5 * pairs:.2f}",
        "coupled_to": {"id": first.pk, "name": "e", "kept": 50, "draws": 50},
    }
    assert (ReusedVerdict.objects.count(), Workspace.objects.count(), Judgement.objects.count()) == counts


def test_the_page_of_an_experiment_that_opted_out_says_so(client, users, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    experiment = _prepared(users["engineer"], reuse_verdicts=False)
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert "data-reuse-off" in content and "data-reuse-pairs" not in content
