"""Rater error in real headless Chromium: the rater-aware card beside the raw estimates on the
experiment page, and the admins' review of inconsistent triangles, whose pairs open in the pair
explorer. Screenshots at 1280 and 390 px for a person to look at."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.refresh.rater_aware import rater_aware_refresh
from tests.raterapp.factories import UserFactory, make_raters
from tests.raterapp.helpers.judging import judge_with_errors
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _user(name, role):
    user = UserFactory(username=name, roles=[role])
    user.set_password("pw")
    user.save()
    return user


def _open(browser, live_server, user, path):
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, user.username, "pw", path)
    return context, page, problems


def test_rater_aware_card_and_transitivity_review(browser, live_server, screenshots_dir, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 60
    owner, admin = _user("dana", "engineer"), _user("ada", "admin")
    experiment = experiment_prepared(owner=owner, replication=3, n_draws=200, name="Customer records, dedup v2")
    judge_with_errors(experiment, make_raters(3))
    estimates_refresh(experiment_id=experiment.pk)

    # The owner's page fills the card in without a reload once the worker has stored the fit.
    context, page, problems = _open(browser, live_server, owner, f"/experiments/{experiment.pk}/")
    section = page.locator("[data-rater-aware]")
    assert section.locator("[data-rater-aware-empty]").is_visible()
    assert section.locator("[data-rater-aware-value]").count() == 0
    rater_aware_refresh(experiment_id=experiment.pk)
    section.locator("[data-rater-aware-value]").first.wait_for(state="visible")
    assert section.locator("[data-rater-aware-empty]").is_hidden()
    api = APIClient()
    api.force_authenticate(admin)
    card = api.get(f"/api/experiments/{experiment.pk}/rater-aware/").json()
    review = api.get(f"/api/experiments/{experiment.pk}/transitivity/").json()
    assert review["inconsistent_triangles"] > 0

    # Beside the raw estimates, without the admins' review link; a reload renders the same.
    section.scroll_into_view_if_needed()
    for row in card["estimates"]:
        cells = section.locator(f"tr[data-metric='{row['metric']}'] td")
        assert cells.nth(0).inner_text() == (f"{row['raw_value']:.4f}" if row["raw_value"] is not None else "—")
        assert cells.nth(1).inner_text() == f"{row['value']:.4f}"
    line = section.locator("[data-transitivity-line]").inner_text()
    assert f"Inconsistent triangles: {review['inconsistent_triangles']} of {review['closed_triangles']} closed" in line
    assert section.get_by_role("link", name="Raters and transitivity review").count() == 0
    live_rows = section.locator("tbody").inner_text()
    page.reload()
    section.locator("tbody tr").first.wait_for(state="visible")
    assert section.locator("tbody").inner_text() == live_rows
    assert section.locator("[data-transitivity-line]").inner_text() == line
    settle(page)
    section.screenshot(path=str(screenshots_dir / "rater-aware-card-1280.png"))
    page.set_viewport_size(PHONE)
    settle(page)
    section.screenshot(path=str(screenshots_dir / "rater-aware-card-390.png"))
    context.close()
    assert problems == [], problems

    # An admin follows the card's link to the review and opens a triangle's pair in the explorer.
    context, page, problems = _open(browser, live_server, admin, f"/experiments/{experiment.pk}/")
    page.locator("[data-rater-aware]").get_by_role("link", name="Raters and transitivity review").click()
    page.wait_for_url(re.compile(rf"/experiments/{experiment.pk}/rater-quality/$"))
    assert page.get_by_role("heading", level=1).inner_text() == "Raters and transitivity"
    triangles = page.locator("[data-triangle]")
    assert triangles.count() == review["inconsistent_triangles"]
    first = review["triangles"][0]
    shown = triangles.first.inner_text()
    for pair in first["pairs"]:
        for vote in pair["votes"]:
            assert f"{vote['username']}: {vote['label'].lower()}" in shown
    assert page.locator("[data-raters-fit] tbody tr").count() == 3
    settle(page)
    page.screenshot(path=str(screenshots_dir / "transitivity-review-1280.png"), full_page=True)
    page.set_viewport_size(PHONE)
    settle(page)
    page.screenshot(path=str(screenshots_dir / "transitivity-review-390.png"), full_page=True)
    page.set_viewport_size(LAPTOP)
    pair = first["pairs"][0]
    triangles.first.get_by_role("link", name=f"{pair['a']} · {pair['b']}").click()
    page.wait_for_url(re.compile(rf"/experiments/{experiment.pk}/pairs/#pair-\d+$"))
    assert page.url.endswith(pair["explorer_url"])
    context.close()
    assert problems == [], problems
