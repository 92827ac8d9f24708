"""The experiment page's card of reused verdicts (abcde-spec §11): a second experiment of the
workspace shows the pairs its workspace answered, the verdicts reused and what they saved."""

from __future__ import annotations

import pytest

from raterapp.models import Experiment, ExperimentBudget, Judgement, PairTask
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.factories import UserFactory
from tests.raterapp.services.files import experiment_made, tiny_files

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def _prepared(owner, name):
    experiment = experiment_made(owner=owner, name=name, files=tiny_files(), seed=7, n_draws=50, workspace="Shop")
    experiment_prepare(experiment_id=experiment.pk)
    return Experiment.objects.get(pk=experiment.pk)


def test_the_reuse_card_shows_pairs_verdicts_and_savings(browser, live_server, screenshots_dir, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    owner = UserFactory(username="wanda", roles=["engineer"])
    owner.set_password("pw-wanda")
    owner.save()
    rater = UserFactory(roles=["rater"])
    first = _prepared(owner, "Dedup v1")
    for k, task in enumerate(PairTask.objects.filter(experiment=first)):
        Judgement.objects.create(task=task, rater=rater, verdict="equivalent", client_id=f"00000000-0000-0000-0000-{k:012d}")
    second = _prepared(owner, "Dedup v2")
    ExperimentBudget.objects.update_or_create(experiment=second, defaults={"cost_per_verdict": "0.40"})
    pairs = PairTask.objects.filter(experiment=second).count()

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "wanda", "pw-wanda", f"/experiments/{second.pk}/")
    card = page.locator("#reuse")
    card.scroll_into_view_if_needed()
    assert card.locator("h2").inner_text() == "Reused verdicts"
    assert card.locator("[data-reuse-pairs]").inner_text() == str(pairs)
    assert card.locator("[data-reuse-verdicts]").inner_text() == str(pairs)
    assert card.locator("[data-reuse-saved]").inner_text() == f"{0.4 * pairs:.2f}"
    assert "Shop" in card.inner_text()
    settle(page)
    card.screenshot(path=str(screenshots_dir / "reuse-card-1280.png"))
    assert problems == [], problems
