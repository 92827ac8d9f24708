"""An experiment prepared on Dask in real headless Chromium: its page says so, shows estimates
and ΔRecall from the stored sample context, slices say what they cannot estimate, and the pair
explorer shows clusters as far as the sample knows them. Screenshots for a person to look at."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

from raterapp.models import Experiment, SampledPair
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.preparation.pipeline import experiment_prepare
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from tests.metrics_core.dask_run import write_parts
from tests.raterapp.factories import UserFactory
from tests.raterapp.services.files import experiment_made, upload

from .conftest import record_problems, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_dask_experiment_page_and_its_pair_explorer(browser, live_server, screenshots_dir, settings, tmp_path):
    rng = np.random.default_rng(2)
    n = 360
    ideal = np.arange(n) // 3
    frame = pd.DataFrame(
        {
            "item_id": [f"sku-{k:05d}" for k in range(n)],
            "base_cluster": np.where(rng.random(n) < 0.3, ideal + 500, ideal // 2),
            "exp_cluster": np.where(rng.random(n) < 0.5, ideal + 900, ideal // 2),
            "weight": rng.uniform(0.5, 2.0, n),
            "market": [["DE", "FR", "UK"][k % 3] for k in range(n)],
        }
    )
    folder = write_parts(frame, tmp_path / "data" / "items", 3)
    settings.DATA_LOCATIONS = [str(tmp_path / "data") + "/"]
    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    owner = UserFactory(username="dora", roles=["engineer"])
    owner.set_password("pw")
    owner.save()
    catalogue = "item_id,title\n" + "".join(f"{i},Product {i}\n" for i in frame["item_id"])
    experiment = experiment_made(
        owner=owner, name="Catalogue dedup at scale", files={"catalogue": upload("catalogue.csv", catalogue)},
        items_location=str(folder), n_draws=500, seed=4,
    )
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.engine, experiment.status) == (Experiment.Engine.DASK, Experiment.Status.RATING)
    rater = UserFactory(roles=["rater"])
    position = {item: k for k, item in enumerate(frame["item_id"])}
    while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
        same = ideal[position[task.item_a.item_id]] == ideal[position[task.item_b.item_id]]
        judgement_submit(task=task, rater=rater, verdict="equivalent" if same else "not_equivalent", client_id=uuid.uuid4())
    estimates_refresh(experiment_id=experiment.pk)
    derived_refresh(experiment_id=experiment.pk)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "dora", "pw", f"/experiments/{experiment.pk}/")
    page.locator("[data-prepared-summary] > summary").click()  # the parameters, folded once prepared
    assert f"Dask: items at {folder}" in page.locator("main").inner_text()
    assert page.locator("[data-estimate='DeltaPrecision'] [data-cell='value']").inner_text() != "—"
    assert page.locator("[data-derived-estimate='DeltaRecall'] [data-cell='value']").inner_text() != "—"
    page.locator("[data-slice-attribute]").select_option("market")
    page.locator("[data-slices-rows] [data-slice='DE']").wait_for()
    assert "quality estimates per slice need the in-memory engine" in page.locator("[data-slices-status]").inner_text()
    page.screenshot(path=str(screenshots_dir / "dask-experiment-1280.png"), full_page=True)

    pair = SampledPair.objects.filter(experiment=experiment, pair_class="split").order_by("pk").first()
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/pairs/#pair-{pair.pk}")
    detail = page.locator("[data-detail]")
    vantage_base = detail.locator(".xp-item").nth(0).locator(".xp-cluster-members--base")
    vantage_base.wait_for()
    assert "Members in the sample only" in vantage_base.inner_text()
    assert pair.vantage.item_id in vantage_base.inner_text()
    page.screenshot(path=str(screenshots_dir / "dask-pair-explorer-1280.png"), full_page=False)
    context.close()
    assert problems == [], problems
