"""Rater ergonomics in real headless Chromium, checked against the database.

Keys typed faster than pairs arrive are queued, never dropped; undo steps back several
answers; differences are marked character by character; empty rows are left out; pictures
open larger; the session goal; the end screen's count; a paused page that carries on by
itself; and the phone layout (cards side by side, rows aligned, answers in reach).
"""

from __future__ import annotations

import re
import time

import pytest

from raterapp.models import ExperimentBudget, Item, Judgement, PairTask, RetractedJudgement
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
from tests.raterapp.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

# Every data-task the page shows, in order (a MutationObserver delivers changes in batches:
# each record's old value is the value the one before it set).
RECORD_SHOWN = """() => {
  const root = document.getElementById('judge');
  window.__shown = [root.dataset.task];
  window.__waited = false;
  new MutationObserver((records) => {
    const values = records.slice(1).map((r) => r.oldValue).concat([root.getAttribute('data-task')]);
    for (const v of values) if (v && v !== window.__shown[window.__shown.length - 1]) window.__shown.push(v);
  }).observe(root, { attributes: true, attributeFilter: ['data-task'], attributeOldValue: true });
  new MutationObserver(() => {
    if (root.querySelector('[data-status]').textContent.includes('waiting for the next pair')) window.__waited = true;
  }).observe(root.querySelector('[data-status]'), { childList: true, characterData: true, subtree: true });
}"""


def _open_judging(browser, live_server, experiment, problems, *, viewport=LAPTOP):
    context, page = _open_page(browser, live_server, problems)
    page.set_viewport_size(viewport)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    page.goto(f"{live_server.url}/rate/{experiment.pk}/")
    return context, page


def _budget(experiment, **changes):
    from raterapp.services.experiments.budgets import budget_update

    admin = UserFactory(roles=["admin"])
    budget, _ = ExperimentBudget.objects.get_or_create(experiment=experiment)
    budget_update(budget=budget, actor=admin, changes=changes, reason="browser test", via="api")


def _box(page, selector):
    return page.locator(selector).first.bounding_box()


def test_eight_verdicts_typed_50_ms_apart_are_all_stored_in_order_on_the_pairs_shown(
    browser, live_server, rating_experiment, rater
):
    problems: list[str] = []
    context, page = _open_judging(browser, live_server, rating_experiment, problems)

    def slow(route):  # under load: each next pair takes 250 ms, so keys come while it is on its way
        time.sleep(0.25)
        route.continue_()

    page.route("**/next-pair/", slow)
    _task_on_screen(page)
    page.evaluate(RECORD_SHOWN)
    keys = "12312312"
    page.keyboard.type(keys, delay=50)

    # The route answers only while Playwright runs, so wait in the page (not in Python) first.
    page.wait_for_function(
        f"window.__shown.length >= 9 && {JUDGE}.dataset.state === 'pair'"
        " && document.querySelector('[data-progress=session]').textContent === '8'",
        timeout=30_000,
    )
    shown = [int(task) for task in page.evaluate("window.__shown")]
    stored = list(Judgement.objects.filter(rater=rater).order_by("created_at", "pk").values_list("task", "verdict"))
    assert stored == list(zip(shown[:8], [VERDICT_OF_KEY[key] for key in keys], strict=True))
    assert len(set(shown[:9])) == 9  # each answer on its own pair, then a ninth on screen
    assert int(page.evaluate(f"{JUDGE}.dataset.task")) == shown[8]
    assert page.evaluate("window.__waited") is True  # keys did wait for pairs: the queue was used
    assert list(PairTask.objects.filter(pk__in=shown[:8]).values_list("verdicts", flat=True)) == [1] * 8
    assert problems == []
    context.close()


def test_undo_three_steps_then_reopen_an_answer_from_the_strip(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    problems: list[str] = []
    context, page = _open_judging(browser, live_server, rating_experiment, problems)
    answered: list[tuple[int, str]] = []
    task = _task_on_screen(page)
    for key in "12e3n":
        answered.append((task, VERDICT_OF_KEY[key]))
        page.keyboard.press(key)
        task = _wait_for_other_task(page, task)
    sixth = task
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == 5, timeout=15, what="5 verdicts saved")
    strip = page.locator("[data-history] button")
    assert strip.count() == 5
    assert [strip.nth(i).get_attribute("data-history-task") for i in range(5)] == [str(t) for t, _ in answered[::-1]]
    answers_at = _box(page, ".answers")

    for _ in range(3):
        page.keyboard.press("Backspace")
    page.wait_for_function(f"{JUDGE}.dataset.task === '{answered[2][0]}' && !{JUDGE}.querySelector('.answer').disabled")
    wait_for(lambda: RetractedJudgement.objects.filter(rater=rater).count() == 3, timeout=10, what="3 undos")
    assert page.locator("[data-previous]").inner_text() == "You had answered “Equivalent”. Answer again."
    assert page.locator(".answer--previous").inner_text().startswith("Equivalent")
    assert strip.count() == 2
    assert _box(page, ".answers") == answers_at  # undo does not move the answers
    page.screenshot(path=str(screenshots_dir / "judging-undo-1280x800.png"))
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots_dir / "judging-undo-390x844.png"))
    page.set_viewport_size(LAPTOP)

    # Answered again, the pairs come back in order, then the page is where it was.
    for expected_next in (answered[3][0], answered[4][0], sixth):
        current = int(page.evaluate(f"{JUDGE}.dataset.task"))
        page.keyboard.press("u")
        assert _wait_for_other_task(page, current) == expected_next
    # A click on the oldest answer in the strip reopens it.
    strip.filter(has_text=re.compile(r"^Equivalent")).last.click()
    page.wait_for_function(f"{JUDGE}.dataset.task === '{answered[0][0]}'")
    page.keyboard.press("2")
    assert _wait_for_other_task(page, answered[0][0]) == sixth

    wait_for(lambda: RetractedJudgement.objects.filter(rater=rater).count() == 4, timeout=10, what="4 undos")
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == 5, timeout=10, what="5 verdicts again")
    retracted = list(RetractedJudgement.objects.filter(rater=rater).order_by("pk").values_list("task", "verdict"))
    assert retracted == [answered[4], answered[3], answered[2], answered[0]]
    final = dict(Judgement.objects.filter(rater=rater).values_list("task", "verdict"))
    assert final == {
        answered[0][0]: "not_equivalent",
        answered[1][0]: answered[1][1],
        answered[2][0]: "unsure",
        answered[3][0]: "unsure",
        answered[4][0]: "unsure",
    }
    tasks = [t for t, _ in answered]
    assert list(PairTask.objects.filter(pk__in=tasks).values_list("verdicts", flat=True)) == [1] * 5
    assert problems == []
    context.close()


def _marked(page, side, selector):
    """The text of a card's field as (text, marked) runs, without the note for screen readers."""
    return page.evaluate(
        """([side, selector]) => [...document.querySelector(`[data-card='${side}'] ${selector}`).childNodes]
            .filter((n) => !(n.classList && n.classList.contains('visually-hidden')))
            .map((n) => [n.textContent, n.nodeName === 'MARK'])""",
        [side, selector],
    )


def test_the_highlight_marks_exactly_the_differing_characters_of_two_titles(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    letters = "abcdefghijkl"
    for item in Item.objects.filter(experiment=rating_experiment):
        item.title = f"Jane Sm{letters[item.position]}th"
        item.save()
    problems: list[str] = []
    context, page = _open_judging(browser, live_server, rating_experiment, problems)
    for _ in range(3):  # three pairs, each checked against its items in the database
        task = PairTask.objects.select_related("item_a", "item_b").get(pk=_task_on_screen(page))
        left, right = _marked(page, "left", ".item-card__title"), _marked(page, "right", ".item-card__title")
        titles = {task.item_a.title, task.item_b.title}
        assert {"".join(text for text, _ in left), "".join(text for text, _ in right)} == titles
        for runs, other in ((left, right), (right, left)):
            own = "".join(text for text, _ in runs)
            theirs = "".join(text for text, _ in other)
            assert runs == [["Jane Sm", False], [own[7], True], ["th", False]], (own, theirs)
        assert page.locator("[data-card='left'] .item-card__title .visually-hidden").text_content() == (
            " (differs from the other item)"
        )
        if _ == 0:
            page.screenshot(path=str(screenshots_dir / "judging-diff-1280x800.png"))
        page.keyboard.press("3")
        _wait_for_other_task(page, task.pk)
    # Descriptions and attribute values are marked the same way; equal values are not.
    description = _marked(page, "left", ".item-card__description")
    assert all(not marked for _, marked in description) or any(marked for _, marked in description)
    same = page.locator("[data-card='left'] .item-field:not(.differs) mark")
    assert same.count() == 0
    assert problems == []
    context.close()


def test_empty_rows_are_left_out_and_pictures_open_larger(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    Item.objects.filter(experiment=rating_experiment).update(url="")
    for item in Item.objects.filter(experiment=rating_experiment):
        item.attributes = {**item.attributes, "date_of_birth": None, "nickname": ""}
        item.save()
    problems: list[str] = []
    context, page = _open_judging(browser, live_server, rating_experiment, problems)
    _task_on_screen(page)
    cards = page.locator(".item-card")
    assert cards.locator(".item-card__link").count() == 0  # no item has a page: no link row
    assert page.get_by_text("No page to open").count() == 0
    assert cards.locator(".item-field__name").filter(has_text=re.compile("^(date_of_birth|nickname)$")).count() == 0
    assert cards.locator(".item-field").count() == 2 * 5

    # A click on a picture opens both, larger, in a dialog; Escape closes it and focus goes back.
    picture = page.get_by_role("button", name="Enlarge the picture of Item A (P)")
    picture.click()
    dialog = page.get_by_role("dialog", name="Pictures")
    dialog.wait_for(state="visible")
    assert dialog.locator("img").count() + dialog.get_by_text("No picture").count() == 2
    first = int(page.evaluate(f"{JUDGE}.dataset.task"))
    page.keyboard.press("1")  # keys do not answer behind the dialog
    page.screenshot(path=str(screenshots_dir / "judging-pictures-1280x800.png"))
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Enlarge the picture of Item A (P)"
    assert _task_on_screen(page) == first and Judgement.objects.filter(rater=rater).count() == 0
    page.keyboard.press("p")  # P opens it from the keyboard, and closes it
    dialog.wait_for(state="visible")
    page.keyboard.press("p")
    dialog.wait_for(state="hidden")

    # Pairs without pictures have no picture row at all.
    Item.objects.filter(experiment=rating_experiment).update(image_url="")
    task = _task_on_screen(page)
    page.keyboard.press("1")
    task = _wait_for_other_task(page, task)  # preloaded before the change
    page.keyboard.press("1")
    _wait_for_other_task(page, task)
    assert cards.locator(".item-card__media").count() == 0
    assert page.get_by_text("No picture").count() == 0
    page.keyboard.press("p")
    assert page.get_by_role("dialog", name="Pictures").is_hidden()
    assert problems == []
    context.close()


def test_session_goal_and_one_thank_you_with_the_right_count_at_the_end(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    _budget(rating_experiment, max_verdicts=3)
    problems: list[str] = []
    context, page = _open_judging(browser, live_server, rating_experiment, problems)
    _task_on_screen(page)
    goal = page.get_by_label("Session goal", exact=True)
    goal.fill("3")
    goal.press("Enter")
    goal.press("Escape")  # back to the page's keys
    assert page.locator("[data-goal-text]").inner_text() == "0 of 3"
    page.keyboard.type("12u", delay=50)
    end = page.locator("[data-end]")
    page.get_by_role("heading", name="Budget spent").wait_for()
    end.filter(has_text="You gave 3 verdicts in this session.").wait_for()
    assert page.locator("[data-progress='session']").inner_text() == "3"
    assert end.inner_text().count("Thank you") == 1
    assert page.locator("[data-goal-text]").inner_text() == "3 of 3: goal reached!"
    page.screenshot(path=str(screenshots_dir / "judging-end-budget-1280x800.png"))
    assert Judgement.objects.filter(rater=rater).count() == 3
    page.reload()
    page.get_by_role("heading", name="Budget spent").wait_for()
    assert page.get_by_label("Session goal", exact=True).input_value() == "3"  # kept in this browser
    assert problems == []
    context.close()


@pytest.mark.parametrize("pause", ["budget", "rater"])
def test_a_paused_page_carries_on_within_5_s_of_the_resume(
    browser, live_server, rating_experiment, rater, screenshots_dir, pause
):
    from raterapp.services.accounts.raters import rater_pause, rater_unpause

    admin = UserFactory(roles=["admin"])
    if pause == "budget":
        _budget(rating_experiment, paused=True)
    else:
        rater_pause(actor=admin, rater=rater, reason="a break")
    problems: list[str] = []
    context, page = _open_page(browser, live_server, problems)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    row = page.locator(f"[data-experiment='{rating_experiment.pk}']")
    title = "Paused" if pause == "budget" else "Your rating is paused"
    assert row.locator("[data-status] strong").inner_text() == title
    assert row.get_by_role("link", name=re.compile("^Start rating")).count() == 0
    page.screenshot(path=str(screenshots_dir / f"rate-home-{pause}-paused-1280x800.png"), full_page=True)
    row.get_by_role("link", name=re.compile("^Open and wait")).click()
    heading = "Rating paused" if pause == "budget" else "Your rating is paused"
    page.get_by_role("heading", name=heading).wait_for()
    assert "carries on by itself" in page.locator("[data-end-text]").inner_text()
    if pause == "budget":
        page.screenshot(path=str(screenshots_dir / "judging-paused-1280x800.png"))
        page.set_viewport_size(PHONE)
        page.screenshot(path=str(screenshots_dir / "judging-paused-390x844.png"))
    page.wait_for_timeout(2500)  # it has asked again at least once, still paused

    if pause == "budget":
        _budget(rating_experiment, paused=False)
    else:
        rater_unpause(actor=admin, rater=rater)
    resumed = time.monotonic()
    page.wait_for_function(f"{JUDGE}.dataset.state === 'pair'", timeout=5000)
    assert time.monotonic() - resumed < 5
    page.keyboard.press("1")
    wait_for(lambda: Judgement.objects.filter(rater=rater).count() == 1, timeout=10, what="a verdict after the resume")
    assert problems == []
    context.close()


def test_on_a_phone_the_cards_sit_side_by_side_rows_aligned_answers_in_reach(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    problems: list[str] = []
    context, page = _open_judging(browser, live_server, rating_experiment, problems, viewport=PHONE)
    task = _task_on_screen(page)
    page.wait_for_function("[...document.querySelectorAll('.item-card__media img')].every((img) => img.complete)")
    left, right = _box(page, "[data-card='left']"), _box(page, "[data-card='right']")
    assert left["y"] == right["y"] and left["x"] + left["width"] <= right["x"]
    assert right["x"] + right["width"] <= PHONE["width"]
    for selector in (".item-card__title", ".item-card__description", ".item-field:nth-child(3)", ".item-card__link"):
        assert _box(page, f"[data-card='left'] {selector}")["y"] == _box(page, f"[data-card='right'] {selector}")["y"]
    page.screenshot(path=str(screenshots_dir / "judging-phone-390x844.png"))
    for scroll in (0, 400, 10_000):
        page.evaluate(f"window.scrollTo(0, {scroll})")
        bar = _box(page, ".answers")
        assert 0 <= bar["y"] and bar["y"] + bar["height"] <= PHONE["height"], scroll
    page.screenshot(path=str(screenshots_dir / "judging-phone-390x844-scrolled.png"))
    # The status line keeps its distance from the comment box.
    page.keyboard.press("1")
    _wait_for_other_task(page, task)
    page.locator("[data-status]").filter(has_text="Saved").wait_for()
    page.evaluate("window.scrollTo(0, 10000)")
    status, comment = _box(page, "[data-status]"), _box(page, "[data-comment]")
    assert status["y"] + status["height"] + 8 <= comment["y"]
    assert problems == []
    context.close()


def test_the_rater_home_shows_by_itself_when_rating_is_possible_again(
    browser, live_server, rating_experiment, rater, screenshots_dir
):
    _budget(rating_experiment, paused=True)
    problems: list[str] = []
    context, page = _open_page(browser, live_server, problems)
    _sign_in(page, live_server, "rita", "pw-rita", lands_on=r"/rate/$")
    row = page.locator(f"[data-experiment='{rating_experiment.pk}']")
    assert row.locator("[data-status] strong").inner_text() == "Paused"
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots_dir / "rate-home-paused-390x844.png"))
    page.wait_for_timeout(4500)  # it has asked at least once: nothing changed, nothing reloaded
    assert row.locator("[data-status] strong").inner_text() == "Paused"
    _budget(rating_experiment, paused=False)
    resumed = time.monotonic()
    row.get_by_role("link", name=re.compile("^Start rating")).wait_for(timeout=10_000)
    assert time.monotonic() - resumed < 10
    assert row.locator("[data-status] strong").inner_text() == "Ready"
    assert problems == []
    context.close()
