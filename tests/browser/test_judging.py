"""A rater judges pairs in real headless Chromium, with the keyboard only.

Checked against the database: every verdict is stored exactly once (none lost, none counted
twice), an undone verdict is kept aside and its pair answered afresh, a report sets its pair
aside. Untrusted card text stays inert, and the page says clearly when nothing is left.
"""

from __future__ import annotations

import re

import pytest

from raterapp.models import Judgement, PairReport, PairTask, RaterProfile, RetractedJudgement
from tests.browser.helpers import (
    JUDGE,
    LAPTOP,
    PHONE,
    VERDICT_OF_KEY,
    _open_page,
    _sign_in,
    _task_on_screen,
    _wait_for_other_task,
)
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

KEYS = ["1", "2", "3", "e", "n", "u", "2", "1"]


def _titles(page) -> tuple[str, str]:
    return (
        page.locator("[data-card='left'] .item-card__title").inner_text(),
        page.locator("[data-card='right'] .item-card__title").inner_text(),
    )


def test_rater_judges_twenty_pairs_with_the_keyboard_and_undoes_one(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    experiment = rating_experiment
    assert experiment.tasks.count() >= 25
    problems: list[str] = []
    context, page = _open_page(browser, live_server, problems)

    # Home sends a rater to their list of experiments; the judging page is one Enter away.
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    row = page.locator(f"[data-experiment='{experiment.pk}']")
    assert row.locator("[data-remaining]").inner_text() == str(experiment.tasks.count())
    assert row.locator("[data-mine]").inner_text() == "0"
    page.screenshot(path=str(screenshots_dir / "rate-home-1280x800.png"), full_page=True)
    start = row.get_by_role("link", name=re.compile(r"^Start rating"))
    start.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/rate/{experiment.pk}/$"))
    page.evaluate("window.__notReloaded = true")

    task = _task_on_screen(page)
    assert page.get_by_role("heading", name=experiment.question).is_visible()
    assert page.get_by_role("region", name="Item A").is_visible()
    assert page.get_by_role("region", name="Item B").is_visible()
    for name in ("Equivalent", "Not equivalent", "Unsure"):
        assert page.get_by_role("button", name=name, exact=True).is_enabled()
    # Links open in a new tab, without giving the item's site a handle on this page.
    links = page.locator(".item-card a")
    assert links.count() == 2
    for index in range(2):
        assert links.nth(index).get_attribute("target") == "_blank"
        assert links.nth(index).get_attribute("rel") == "noopener noreferrer"
        assert links.nth(index).get_attribute("href").startswith("https://crm.example/customers/")

    # H shows and hides the guidelines.
    guidelines = page.locator("[data-guidelines-text]")
    assert guidelines.is_hidden()
    page.keyboard.press("h")
    assert guidelines.is_visible()
    page.keyboard.press("h")
    assert guidelines.is_hidden()

    expected: dict[int, str] = {}
    comments: dict[int, str] = {}
    reported: dict[int, str] = {}
    undone: dict[int, str] = {}
    shot = False
    while len(expected) < 20:
        if len(expected) == 2 and not shot:
            page.wait_for_function(
                "[...document.querySelectorAll('.item-card__media img')].every((img) => img.complete)"
            )
            page.screenshot(path=str(screenshots_dir / "judging-1280x800.png"))
            page.set_viewport_size(PHONE)
            page.screenshot(path=str(screenshots_dir / "judging-390x844.png"))
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            page.screenshot(path=str(screenshots_dir / "judging-390x844-scrolled.png"))
            page.evaluate("window.scrollTo(0, 0)")
            page.set_viewport_size(LAPTOP)
            shot = True
        if len(expected) == 3 and not comments:
            # C writes a comment; its letters (e, n, u, 1, ...) are text, not answers; Esc leaves it.
            comments[task] = "seen twice: 1 number differs, unsure"
            page.keyboard.press("c")
            page.keyboard.type(comments[task])
            page.keyboard.press("Escape")
            assert _task_on_screen(page) == task
        if len(expected) == 5 and not reported:
            # F reports the pair as broken: ↓ chooses "Unreadable", Enter sends it.
            page.keyboard.press("f")
            page.keyboard.press("ArrowDown")
            page.screenshot(path=str(screenshots_dir / "judging-report-1280x800.png"), full_page=True)
            page.keyboard.press("Enter")
            reported[task] = "unreadable"
            task = _wait_for_other_task(page, task)
            continue
        key = KEYS[len(expected) % len(KEYS)]
        expected[task] = VERDICT_OF_KEY[key]
        before = _titles(page)
        page.keyboard.press(key)
        following = _wait_for_other_task(page, task)
        if len(expected) == 10 and not undone:
            # Backspace on the next pair brings the last one back, same sides, to answer again.
            page.keyboard.press("Backspace")
            page.wait_for_function(f"{JUDGE}.dataset.task === '{task}'")
            assert _titles(page) == before
            assert page.locator("[data-previous]").inner_text().startswith("You had answered")
            page.locator("[data-status]").filter(has_text="Undone").wait_for()
            undone[task] = expected[task]
            expected[task] = "unsure" if expected[task] != "unsure" else "equivalent"
            page.keyboard.press("u" if expected[task] == "unsure" else "e")
            assert _wait_for_other_task(page, task) == following  # back to the pair it was on
        task = following

    # Every verdict reaches the database exactly once.
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == 20, timeout=20, what="20 verdicts saved")
    page.locator("[data-progress='session']").filter(has_text=re.compile(r"^20$")).wait_for()
    judgements = Judgement.objects.filter(rater=rater)
    assert {j.task_id: j.verdict for j in judgements} == expected
    assert judgements.values("task").distinct().count() == 20
    assert len({j.client_id for j in judgements}) == 20
    (comment_task,) = comments
    assert judgements.get(task_id=comment_task).comment == comments[comment_task]
    retracted = RetractedJudgement.objects.filter(rater=rater)
    assert [(r.task_id, r.verdict) for r in retracted] == list(undone.items())
    assert {(r.task_id, r.reason) for r in PairReport.objects.filter(rater=rater)} == set(reported.items())
    assert not set(reported) & set(expected)
    for task_id, verdicts in PairTask.objects.filter(pk__in=expected).values_list("pk", "verdicts"):
        assert verdicts == 1, task_id
    assert page.evaluate("window.__notReloaded") is True
    assert problems == []
    context.close()


def test_untrusted_card_text_stays_inert(browser, live_server, rating_experiment, rater, screenshots_dir):
    rating_experiment.items.update(
        title="<script>alert(1)</script>",
        description='<img src=x onerror="alert(2)"> <b>not bold</b>',
        url="javascript:alert(3)",
        image_url="javascript:alert(4)",
        attributes={"<i>key</i>": "<a href='javascript:alert(5)'>value</a>"},
    )
    problems: list[str] = []
    dialogs: list[str] = []
    context, page = _open_page(browser, live_server, problems, dialogs=dialogs)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    page.goto(f"{live_server.url}/rate/{rating_experiment.pk}/")
    _task_on_screen(page)

    cards = page.locator(".item-card")
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("img[src^='javascript']").count() == 0
    assert cards.locator("a").count() == 0 and cards.locator("img").count() == 0
    assert cards.locator("script, b, i").count() == 0
    titles = page.get_by_text("<script>alert(1)</script>", exact=True)
    assert titles.count() == 2 and titles.first.is_visible()
    assert page.get_by_text("<a href='javascript:alert(5)'>value</a>", exact=True).first.is_visible()
    assert cards.first.get_by_text("javascript:alert(3)", exact=True).is_visible()  # shown as text, not a link
    assert cards.first.get_by_text("Picture not shown: not a web address").is_visible()
    page.screenshot(path=str(screenshots_dir / "judging-untrusted-1280x800.png"))
    task = _task_on_screen(page)
    page.keyboard.press("1")  # answering renders the next pair the same way
    _wait_for_other_task(page, task)
    assert page.locator("a[href^='javascript'], img[src^='javascript']").count() == 0
    assert dialogs == []
    assert problems == []
    context.close()


def test_end_screen_when_the_queue_is_empty(browser, live_server, rating_experiment, rater, screenshots_dir):
    for task in rating_experiment.tasks.all():
        PairTask.objects.filter(pk=task.pk).update(verdicts=task.wanted)
    problems: list[str] = []
    context, page = _open_page(browser, live_server, problems)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    page.goto(f"{live_server.url}/rate/{rating_experiment.pk}/")

    end = page.locator("[data-end]")
    end.wait_for(state="visible")
    assert page.get_by_role("heading", name="No pairs left for you").is_visible()
    back = end.get_by_role("link", name="Back to the experiments")
    assert back.get_attribute("href") == "/rate/"
    assert page.locator("[data-workspace]").is_hidden()
    assert page.locator("[data-progress='remaining']").inner_text() == "0"
    page.screenshot(path=str(screenshots_dir / "judging-end-1280x800.png"))
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots_dir / "judging-end-390x844.png"))
    assert problems == []
    context.close()


def test_end_screen_when_the_daily_quota_is_reached(browser, live_server, rating_experiment, rater):
    RaterProfile.objects.create(user=rater, daily_quota=2)
    problems: list[str] = []
    context, page = _open_page(browser, live_server, problems)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    page.goto(f"{live_server.url}/rate/{rating_experiment.pk}/")
    task = _task_on_screen(page)
    assert page.locator("[data-progress='today']").inner_text() == "0 of 2"
    page.keyboard.press("1")
    _wait_for_other_task(page, task)
    page.keyboard.press("2")
    page.get_by_role("heading", name="Daily quota reached").wait_for()
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == 2, timeout=10, what="2 verdicts saved")
    # Backspace on the end screen brings the last pair back; answering it ends again.
    page.keyboard.press("Backspace")
    _task_on_screen(page)
    page.keyboard.press("3")
    page.get_by_role("heading", name="Daily quota reached").wait_for()
    wait_for(lambda: RetractedJudgement.objects.filter(rater=rater).count() == 1, timeout=10, what="the undo")
    wait_for(
        lambda: (
            sorted(Judgement.objects.filter(rater=rater).values_list("verdict", flat=True)) == ["equivalent", "unsure"]
        ),
        timeout=10,
        what="the new answer saved",
    )
    assert problems == []
    context.close()


def test_a_lost_connection_neither_loses_nor_doubles_a_verdict(
    browser, live_server, rating_experiment, rater, settings
):
    settings.LEASE_SECONDS = 15  # the page renews its leases every 5 s
    problems: list[str] = []
    context, page = _open_page(browser, live_server, problems)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    client_ids: list[str] = []

    def flaky(route):
        client_ids.append(route.request.post_data_json["client_id"])
        if len(client_ids) == 1:
            route.abort("internetdisconnected")  # never reaches the server
        elif len(client_ids) == 2:
            route.fetch()  # the server records the verdict...
            route.abort("connectionreset")  # ...and its answer is lost
        else:
            route.continue_()

    page.route("**/api/judgements/", flaky)
    page.goto(f"{live_server.url}/rate/{rating_experiment.pk}/")
    first = _task_on_screen(page)
    page.keyboard.press("1")
    second = _wait_for_other_task(page, first)  # the page moves on while the verdict retries
    page.locator("[data-status]").filter(has_text="Saved").wait_for()
    page.keyboard.press("2")
    _wait_for_other_task(page, second)
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == 2, timeout=15, what="2 verdicts saved")
    page.wait_for_function(f"{JUDGE}.querySelector('[data-progress=session]').textContent === '2'")

    assert len(client_ids) == 4 and len(set(client_ids[:3])) == 1 and client_ids[3] != client_ids[0]
    assert {j.task_id: j.verdict for j in Judgement.objects.filter(rater=rater)} == {
        first: "equivalent",
        second: "not_equivalent",
    }
    assert str(Judgement.objects.get(task_id=first).client_id) == client_ids[0]

    # While the page is open it keeps the leases on the pairs it holds.
    with page.expect_request("**/api/leases/renew/", timeout=10_000) as renewal:
        pass
    held = renewal.value.post_data_json["tasks"]
    assert int(page.evaluate(f"{JUDGE}.dataset.task")) in held and len(held) == 2
    assert problems == []
    context.close()
