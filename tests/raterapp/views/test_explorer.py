"""The pair explorer page of an experiment with a sample: the shell its script fills in."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from raterapp.models import ImpactGroup
from raterapp.services.preparation.impact_groups import impact_groups_build
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db


def test_the_page_carries_its_configuration_and_script(client, users, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    experiment = experiment_prepared(owner=users["engineer"], name="Dedup <v2>")
    _, groups = impact_groups_build(experiment=experiment, on_progress=lambda _: None)
    ImpactGroup.objects.bulk_create(groups)
    slice_metrics = groups[0].metrics
    ImpactGroup.objects.bulk_create(
        ImpactGroup(experiment=experiment, dimension="colour", label=label, items=6, affected_items=6, weight=weight, metrics=slice_metrics)
        for label, weight in (("blue", 5.0), ("red", 7.0))
    )
    client.force_login(users["engineer"])
    content = client.get(reverse("experiment-pairs", args=[experiment.pk])).content.decode()
    assert "Dedup &lt;v2&gt;" in content
    assert '<script type="module" src="/static/raterapp/js/pair_explorer.js"></script>' in content
    assert '<link rel="stylesheet" href="/static/raterapp/css/explorer.css">' in content
    config = json.loads(re.search(r'<script id="explorer-config" type="application/json">(.*?)</script>', content).group(1))
    pk = experiment.pk
    assert config == {
        "experiment": pk,
        "pageSize": 25,
        "verdictLabels": {"equivalent": "Equivalent", "not_equivalent": "Not equivalent", "unsure": "Unsure"},
        "slices": {"colour": ["red", "blue"]},  # heaviest first
        "urls": {
            "pairs": f"/api/experiments/{pk}/explorer/pairs/",
            "pair": f"/api/experiments/{pk}/explorer/pairs/0/",
            "clusters": f"/api/experiments/{pk}/explorer/clusters/",
        },
        "gold": None,  # engineers do not make gold questions
    }
    assert '<option value="colour">colour</option>' in content
    client.force_login(users["admin"])
    content = client.get(reverse("experiment-pairs", args=[experiment.pk])).content.decode()
    config = json.loads(re.search(r'<script id="explorer-config" type="application/json">(.*?)</script>', content).group(1))
    assert config["gold"] == {
        "create": f"/api/experiments/{pk}/gold-pairs/",
        "page": f"/console/gold/?experiment={pk}",
    }
    assert "No sampled pairs yet" not in content
