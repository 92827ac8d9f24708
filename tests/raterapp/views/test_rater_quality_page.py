"""The admins' page of an experiment's raters (Dawid–Skene sensitivity and specificity) and its
transitivity review; the rater-aware card on the experiment page."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from raterapp.models import RaterAwareEstimate
from raterapp.selectors.rater_aware import experiment_transitivity_get
from raterapp.services.refresh.rater_aware import rater_aware_refresh
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import judge_with_errors

ROLE_TABLE = [
    ("anonymous", 302),
    ("nobody", 403),
    ("rater", 403),
    ("engineer", 403),  # the owner too: the review names raters beside their verdicts
    ("other_engineer", 403),
    ("admin", 200),
    ("superuser", 200),
]


@pytest.fixture
def judged(users, settings, tmp_path):
    from tests.raterapp.prepared import experiment_prepared

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 30
    experiment = experiment_prepared(owner=users["engineer"], replication=3, n_draws=200, name="Dedup <b>v2</b>")
    raters = make_raters(3)
    judge_with_errors(experiment, raters)
    rater_aware_refresh(experiment_id=experiment.pk)
    return experiment, raters


@pytest.mark.parametrize(("who", "status"), ROLE_TABLE)
def test_role_table(sign_in, judged, who, status):
    experiment, _ = judged
    url = reverse("experiment-rater-quality", args=[experiment.pk])
    assert url == f"/experiments/{experiment.pk}/rater-quality/"
    before = RaterAwareEstimate.objects.count()
    response = sign_in(who).get(url)
    assert response.status_code == status
    if status == 302:
        assert response["Location"] == f"/login/?next={url}"
    elif status == 403:
        assert "This page is for admins" in response.content.decode()
    assert RaterAwareEstimate.objects.count() == before  # a read never computes


def test_a_missing_experiment_is_404(sign_in, judged):
    assert sign_in("admin").get(reverse("experiment-rater-quality", args=[judged[0].pk + 1000])).status_code == 404


def test_lists_every_inconsistent_triangle_with_verdicts_raters_and_explorer_links(sign_in, judged):
    experiment, raters = judged
    review = experiment_transitivity_get(experiment=experiment)
    assert review["inconsistent_triangles"] > 0
    content = sign_in("admin").get(reverse("experiment-rater-quality", args=[experiment.pk])).content.decode()
    assert content.count('<li class="rq-triangle" data-triangle>') == review["inconsistent_triangles"]
    assert f"({review['inconsistent_triangles']} of {review['closed_triangles']} closed)" in content
    for pair in review["triangles"][0]["pairs"]:
        assert f'href="{pair["explorer_url"]}"' in content
    assert "Dedup &lt;b&gt;v2&lt;/b&gt;" in content
    for rater in raters:
        row = re.search(rf'<tr data-rater="{rater.username}">(.*?)</tr>', content, re.S)
        assert row, f"no row for {rater.username}"
        fit = next(r for r in RaterAwareEstimate.objects.get().payload["raters"] if r["rater"] == rater.pk)
        assert f"{fit['sensitivity']:.3f}" in row.group(1) and f"{fit['specificity']:.3f}" in row.group(1)


@pytest.mark.parametrize(("who", "link"), [("engineer", False), ("admin", True)])
def test_the_experiment_page_shows_the_rater_aware_card_and_admins_the_review_link(sign_in, judged, who, link):
    experiment, _ = judged
    content = sign_in(who).get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert "Accounting for rater error" in content
    stored = RaterAwareEstimate.objects.get().payload["estimates"]["GoodSplitDistance"]["value"]
    assert re.search(r'data-metric="GoodSplitDistance">.*?data-rater-aware-value>' + f"{stored:.4f}", content, re.S)
    assert (reverse("experiment-rater-quality", args=[experiment.pk]) in content) is link
