"""An engineer explores the sampled pairs in real headless Chromium: filters by class, sorts,
chooses a cluster, opens a pair (from a row and from the address), sees both item cards and
their Base and Exp clusters; hostile item text stays inert. Screenshots at 1280×800 and 390×844.
"""

from __future__ import annotations

import re
import uuid

import pytest

from raterapp.models import ImpactGroup, Item, PairTask, SampledPair
from raterapp.selectors.explorer import PairFilters, explorer_pairs_list
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.preparation.impact_groups import impact_groups_build
from tests.raterapp.factories import UserFactory

from .conftest import record_problems, serve_portraits

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
HOSTILE_TITLE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">Janet Smith'
HOSTILE_URL = "javascript:window.__pwned = 3"
EXPLORER = "document.getElementById('explorer')"
DETAIL = "document.querySelector('[data-detail]')"


@pytest.fixture
def explored(rating_experiment):
    """The judging page's person records with an engineer who can sign in, a few verdicts of
    two raters, the impact breakdown (clusters and a 'suburb' slice) and one hostile item."""
    experiment = rating_experiment
    engineer = experiment.owner
    engineer.username, engineer.is_active = "erin", True
    engineer.set_password("pw-erin")
    engineer.save()
    hostile = Item.objects.get(experiment=experiment, position=4)
    hostile.title = HOSTILE_TITLE
    hostile.url = HOSTILE_URL
    hostile.image_url = "javascript:window.__pwned = 4"
    hostile.description = '<b>not bold</b> <a href="javascript:window.__pwned = 5">click</a>'
    hostile.attributes = {**hostile.attributes, "<i>note</i>": "<script>window.__pwned = 6</script>"}
    hostile.save()
    _, groups = impact_groups_build(experiment=experiment, on_progress=lambda _: None)
    ImpactGroup.objects.bulk_create(groups)
    metrics = groups[0].metrics
    ImpactGroup.objects.bulk_create(
        ImpactGroup(experiment=experiment, dimension="suburb", label=label, items=n, affected_items=n, weight=n, metrics=metrics)
        for label, n in (("Deakin", 5), ("Mosman", 4), ("Coogee", 2), ("Deakin ACT", 1))
    )
    experiment.replication = 2
    experiment.save()
    PairTask.objects.filter(experiment=experiment).update(wanted=2)
    raters = [UserFactory(roles=["rater"], username=name) for name in ("rita", "ravi")]
    answers = [["equivalent", "not_equivalent", "unsure", "equivalent"], ["equivalent", "equivalent", "unsure"]]
    for rater, verdicts in zip(raters, answers, strict=True):
        for verdict in verdicts:
            task = assignment_next(experiment=experiment, rater=rater)
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4(), comment="looked twice")
    return experiment


def _open(browser, problems, dialogs):
    context = browser.new_context(viewport=LAPTOP)
    serve_portraits(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    record_problems(page, problems, expected=lambda url: url.startswith("https://img.example/5."))  # missing on purpose
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return context, page


def _sign_in(page, live_server):
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("User name", exact=True).fill("erin")
    page.get_by_label("Password", exact=True).fill("pw-erin")
    page.get_by_label("Password", exact=True).press("Enter")
    page.wait_for_url(re.compile(r"/experiments/$"))


def _wait_ready(page):
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready'")


def _row_ids(page) -> list[int]:
    return [int(v) for v in page.locator("[data-rows] tr").evaluate_all("rows => rows.map(r => r.dataset.pairId)")]


def _assert_listed(page, expected: set[int]):
    """The summary counts exactly ``expected``; the first page shows the first of them."""
    shown = _row_ids(page)
    assert page.locator("[data-summary]").inner_text().startswith(f"{len(expected)} pair")
    assert len(shown) == min(len(expected), 25)
    assert set(shown) <= expected


def _wait_images(page):
    page.wait_for_function("[...document.querySelectorAll('img')].every((img) => img.complete)")


def _sorted_by(page, button: str, column: str, values: dict) -> list[int]:
    """Sort by ``column``'s header ``button`` (largest first); the rows shown, checked against ``values``."""
    page.get_by_role("button", name=button).click()
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search.includes('ordering=-{column}')")
    assert page.locator(f"th[data-sort-col='{column}']").get_attribute("aria-sort") == "descending"
    shown = _row_ids(page)
    assert [values[pk] for pk in shown] == sorted((values[pk] for pk in shown), reverse=True)
    assert len({values[pk] for pk in shown}) > 1  # the order is not trivial
    return shown


def test_engineer_explores_pairs_and_hostile_items_stay_inert(browser, live_server, explored, screenshots_dir):
    experiment = explored
    problems: list[str] = []
    dialogs: list[str] = []
    context, page = _open(browser, problems, dialogs)
    _sign_in(page, live_server)
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/pairs/")
    _wait_ready(page)

    pairs = SampledPair.objects.filter(experiment=experiment).exclude(pair_class="self")
    total = pairs.count()
    assert page.get_by_role("heading", name="Pair explorer", exact=True).is_visible()
    assert page.locator("[data-summary]").inner_text() == f"{total} pairs; showing 1–{min(total, 25)}."
    assert len(_row_ids(page)) == min(total, 25)
    # The clusters that carry the change, largest share first.
    base_clusters = page.locator("[data-clusters='base'] .xp-cluster")
    base_clusters.first.wait_for()
    assert base_clusters.count() == 3
    assert base_clusters.first.locator(".xp-cluster__label").inner_text() == "b0"
    page.wait_for_function(f"{EXPLORER}.querySelector('.xp-share') !== null")  # shares of JD once the total is known
    _wait_images(page)
    page.screenshot(path=str(screenshots_dir / "explorer-1280x800.png"))

    # The next page continues where the first ended.
    first_page = _row_ids(page)
    page.get_by_role("button", name="Next →").click()
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search.includes('offset=25')")
    assert page.locator("[data-page]").inner_text() == f"Page 2 of {-(-total // 25)}"
    assert not set(_row_ids(page)) & set(first_page)
    assert page.locator("[data-summary]").inner_text() == f"{total} pairs; showing 26–{min(total, 50)}."

    # Filter by class: only split pairs are left, and the download link follows the filter.
    page.get_by_label("Class", exact=True).select_option("split")
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search.includes('pair_class=split')")
    splits = set(pairs.filter(pair_class="split").values_list("pk", flat=True))
    _assert_listed(page, splits)
    assert set(page.locator("[data-rows] .xp-badge--split, [data-rows] td:nth-child(2) .xp-badge").all_inner_texts()) == {"Split"}
    csv_link = page.get_by_role("link", name="CSV", exact=True)
    assert "pair_class=split" in csv_link.get_attribute("href") and "format=csv" in csv_link.get_attribute("href")

    # Sort by draws, most first: the header says so and the rows follow; then by the pairs' scores
    # (what the model-assisted estimates correct), highest first.
    _sorted_by(page, "Draws", "draws", dict(pairs.values_list("pk", "draws")))
    scores = dict(pairs.values_list("pk", "score"))
    shown = _sorted_by(page, "Score", "score", scores)
    assert page.locator("[data-rows] td[data-label='Score']").first.inner_text() == f"{scores[shown[0]]:.3f}"

    # Choosing a cluster lists the pairs with an item in it.
    page.get_by_label("Class", exact=True).select_option("")
    _wait_ready(page)
    base_clusters.nth(1).click()
    label = base_clusters.nth(1).get_attribute("data-label")
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search.includes('cluster={label}')")
    assert base_clusters.nth(1).get_attribute("aria-pressed") == "true"
    assert page.get_by_label("Cluster", exact=True).input_value() == label
    in_cluster = {
        p.pk
        for p in pairs.select_related("vantage", "partner")
        if label in (p.vantage.base_cluster, p.partner.base_cluster)
    }
    _assert_listed(page, in_cluster)
    page.get_by_role("button", name="Clear", exact=True).click()
    _wait_ready(page)

    # Search for the hostile item and open a pair of it from its row.
    hostile = Item.objects.get(experiment=experiment, position=4)
    page.get_by_label("Search", exact=True).fill(hostile.item_id)
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search.includes('q=')")
    with_hostile = set(pairs.filter(vantage=hostile).values_list("pk", flat=True)) | set(
        pairs.filter(partner=hostile).values_list("pk", flat=True)
    )
    _assert_listed(page, with_hostile)
    assert page.get_by_text(HOSTILE_TITLE, exact=True).first.is_visible()  # the title as text
    pair = pairs.filter(vantage=hostile, pair_class="split").select_related("partner").first()
    row_link = page.locator(f"[data-rows] a[href='#pair-{pair.pk}']")
    row_link.click()
    page.wait_for_function(f"{DETAIL}.open && {DETAIL}.dataset.state === 'ready'")
    assert page.evaluate("location.hash") == f"#pair-{pair.pk}"
    detail = page.locator("[data-detail]")
    assert detail.get_by_role("heading", name=f"Split pair {pair.pk}").is_visible()
    cards = detail.locator(".item-card")
    assert cards.count() == 2
    assert detail.get_by_text(f"{pair.score:.3f} (built-in card similarity)", exact=True).is_visible()
    assert cards.nth(0).locator(".item-card__title").inner_text() == HOSTILE_TITLE
    assert cards.nth(1).locator(".item-card__title").inner_text() == pair.partner.title
    # Hostile text is text: no script ran, nothing became a link, an image or markup.
    assert page.evaluate("window.__pwned") is None
    assert page.locator("a[href^='javascript'], img[src^='javascript']").count() == 0
    assert cards.nth(0).locator("a, img, script, b, i").count() == 0
    assert cards.nth(0).get_by_text(HOSTILE_URL, exact=True).is_visible()  # shown, not followed
    assert cards.nth(0).get_by_text("Picture not shown: not a web address").is_visible()
    assert cards.nth(1).locator("a").get_attribute("href") == pair.partner.url
    # Each item's Base and Exp clusters, from the population: b0 = items 0-5 (Exp splits it 3 / 3).
    vantage_base = detail.locator(".xp-item").nth(0).locator(".xp-cluster-members--base")
    assert vantage_base.locator("h4").inner_text() == "Base cluster b0"
    assert vantage_base.locator(".xp-member").count() == 6
    assert vantage_base.locator(".xp-member--shared").count() == 3  # items 3-5 are in its Exp cluster too
    assert vantage_base.locator(".xp-member").first.locator(".xp-badge--pair").inner_text() == "item i"
    assert detail.locator(".xp-item").nth(0).locator(".xp-cluster-members--exp h4").inner_text() == "Exp cluster e1"
    partner_base = detail.locator(".xp-item").nth(1).locator(".xp-cluster-members--base")
    assert partner_base.get_by_text("The same Base cluster as item i").is_visible()  # a split pair shares its Base cluster
    _wait_images(page)
    page.screenshot(path=str(screenshots_dir / "explorer-pair-1280x800.png"))
    detail.evaluate("(dialog) => { dialog.scrollTop = dialog.scrollHeight; }")
    page.screenshot(path=str(screenshots_dir / "explorer-pair-1280x800-clusters.png"))

    # Esc closes the panel, clears the address and gives the focus back to the row.
    page.keyboard.press("Escape")
    page.wait_for_function(f"!{DETAIL}.open && location.hash === ''")  # the close event comes a moment later
    assert page.evaluate("document.activeElement.getAttribute('href')") == f"#pair-{pair.pk}"

    # The address opens a pair on its own, at phone width too.
    page.set_viewport_size(PHONE)
    page.get_by_role("button", name="Clear", exact=True).click()
    _wait_ready(page)
    page.evaluate("window.scrollTo(0, 0)")
    _wait_images(page)
    page.screenshot(path=str(screenshots_dir / "explorer-390x844.png"))
    page.evaluate("document.getElementById('xp-pairs-heading').scrollIntoView()")
    page.screenshot(path=str(screenshots_dir / "explorer-390x844-table.png"))
    page.evaluate("document.getElementById('xp-clusters-heading').scrollIntoView()")
    page.screenshot(path=str(screenshots_dir / "explorer-390x844-clusters.png"))
    judged = SampledPair.objects.filter(experiment=experiment, task__verdicts=2).exclude(pair_class="self").first()
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/pairs/#pair-{judged.pk}")
    page.wait_for_function(f"{DETAIL}.open && {DETAIL}.dataset.state === 'ready'")
    verdicts = detail.locator(".xp-verdicts tbody tr")
    assert verdicts.count() == 2
    assert sorted(verdicts.locator("td:nth-child(2)").all_inner_texts()) == ["ravi", "rita"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    _wait_images(page)
    page.screenshot(path=str(screenshots_dir / "explorer-pair-390x844.png"))
    detail.locator(".xp-item").nth(0).locator(".xp-cluster-members--base").evaluate("(node) => node.scrollIntoView()")
    page.screenshot(path=str(screenshots_dir / "explorer-pair-390x844-clusters.png"))
    detail.evaluate("(dialog) => { dialog.scrollTop = dialog.scrollHeight; }")
    page.screenshot(path=str(screenshots_dir / "explorer-pair-390x844-verdicts.png"))
    detail.get_by_role("button", name="Close").click()
    page.wait_for_function(f"!{DETAIL}.open")

    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert problems == []
    context.close()


def test_filters_survive_a_reload_and_empty_results_say_so(browser, live_server, explored, screenshots_dir):
    problems: list[str] = []
    context, page = _open(browser, problems, [])
    _sign_in(page, live_server)
    page.goto(f"{live_server.url}/experiments/{explored.pk}/pairs/?verdict=mixed&pair_class=merge")
    _wait_ready(page)
    assert page.get_by_label("Verdict", exact=True).input_value() == "mixed"
    assert page.get_by_label("Class", exact=True).input_value() == "merge"
    assert page.get_by_label("Class", exact=True).locator("option:checked").inner_text() == "Merge"
    expected = explorer_pairs_list(experiment=explored, filters=PairFilters(pair_class="merge", verdict="mixed"))
    assert expected  # rita and ravi disagree on a merge pair
    assert set(_row_ids(page)) == {row["id"] for row in expected}
    # The slice value list follows the chosen attribute.
    page.get_by_label("Slice", exact=True).select_option("suburb")
    assert page.get_by_label("Slice value", exact=True).is_enabled()
    assert page.locator("#xp-values option").evaluate_all("o => o.map(x => x.value)") == ["Deakin", "Mosman", "Coogee", "Deakin ACT"]
    page.get_by_label("Search", exact=True).fill("no such item anywhere")
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search.includes('q=no')")
    empty = page.locator("[data-empty]")
    assert empty.is_visible()
    assert empty.get_by_role("heading", name="No pair matches these filters").is_visible()
    assert page.locator("[data-summary]").inner_text() == "No pairs matching the filters."
    page.screenshot(path=str(screenshots_dir / "explorer-empty-1280x800.png"))
    empty.get_by_role("button", name="Clear the filters").click()
    page.wait_for_function(f"{EXPLORER}.dataset.state === 'ready' && location.search === ''")
    assert page.locator("[data-empty]").is_hidden()
    assert problems == []
    context.close()
