"""Glossary terms as accessible tooltips in Chromium (issue 34): a metric's one-line definition
shows on hover, on keyboard focus and on tap, is tied to the term by aria-describedby, and stays
open (focus included) when the live table re-renders its rows; a refused decision rule no longer
leaves "Rule saved." on screen."""

from __future__ import annotations

import uuid

import pytest

from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

TERM = "[data-estimate='DeltaPrecision'] [data-term]"
LINE = "[data-snapshot-line]"


def _judge(experiment, rater, count):
    for k in range(count):
        task = assignment_next(experiment=experiment, rater=rater)
        verdict = ("equivalent", "not_equivalent", "unsure")[k % 3]
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
    estimates_refresh(experiment_id=experiment.pk)


def _tip_of(page, selector):
    """The tooltip the term names in aria-describedby, and whether it is shown."""
    return page.evaluate(
        """(selector) => {
            const term = document.querySelector(selector);
            const tip = term && document.getElementById(term.getAttribute("aria-describedby"));
            if (!tip) return null;
            const box = tip.getBoundingClientRect();
            return {text: tip.textContent, role: tip.getAttribute("role"), shown: !tip.hidden && box.width > 0,
                    focused: document.activeElement === term, inside: box.left >= 0 && box.right <= innerWidth};
        }""",
        selector,
    )


def test_glossary_terms_show_their_definition_on_hover_focus_and_tap_across_live_updates(
    browser, live_server, screenshots_dir
):
    owner = UserFactory(username="dana", roles=["engineer"])
    owner.set_password("pw")
    owner.save()
    experiment = experiment_prepared(owner=owner, scheme="precision", n_draws=300, name="Glossary tips")
    rater = UserFactory(roles=["rater"])
    _judge(experiment, rater, 12)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "dana", "pw", f"/experiments/{experiment.pk}/")
    page.locator(TERM).wait_for()
    assert page.locator(TERM).get_attribute("title") is None  # no native tooltip any more
    closed = _tip_of(page, TERM)
    assert closed["role"] == "tooltip" and not closed["shown"]
    assert closed["text"].startswith("Precision") or "precision" in closed["text"].lower()

    # Hover.
    page.locator(TERM).hover()
    assert _tip_of(page, TERM)["shown"]
    settle(page)
    page.screenshot(path=str(screenshots_dir / "glossary-tip-hover-1280.png"))
    page.mouse.move(5, 5)
    assert not _tip_of(page, TERM)["shown"]

    # Keyboard: Tab reaches the term, its definition shows; Escape hides it.
    page.locator("[data-estimates-block]").evaluate("(block) => block.setAttribute('tabindex', '-1')")
    page.locator("[data-estimates-block]").focus()
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement === document.querySelector(s)", TERM):
            break
    state = _tip_of(page, TERM)
    assert state["focused"] and state["shown"] and state["inside"]
    page.keyboard.press("Escape")
    assert not _tip_of(page, TERM)["shown"]
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    assert _tip_of(page, TERM)["shown"]

    # A live update replaces the table's rows: the definition stays open, the focus on the term.
    page.evaluate("(s) => { window.oldTerm = document.querySelector(s); }", TERM)
    _judge(experiment, rater, 9)
    page.wait_for_function("(line) => document.querySelector(line).textContent.startsWith('21 verdicts')", arg=LINE)
    page.wait_for_function("() => !window.oldTerm.isConnected")
    state = _tip_of(page, TERM)
    assert state["shown"] and state["focused"], state
    settle(page)
    page.screenshot(path=str(screenshots_dir / "glossary-tip-focus-after-update-1280.png"))

    # The decision rule: a save, then a value the browser refuses: "Rule saved." does not stay.
    page.get_by_text("Decision rule", exact=True).click()
    status = page.locator("[data-decision-status]")
    page.locator("#decision-margin").fill("0.01")
    page.get_by_role("button", name="Save the rule").click()
    page.wait_for_function("() => document.querySelector('[data-decision-status]').textContent === 'Rule saved.'")
    page.locator("#decision-margin").fill("2")
    assert status.inner_text() == ""  # an edit clears the last save's word
    page.get_by_role("button", name="Save the rule").click()
    text = status.inner_text()
    assert text.startswith("Not saved: Equivalence margin:") and "Rule saved" not in text, text
    experiment.refresh_from_db()
    assert experiment.equivalence_margin == 0.01
    context.close()

    # Tap, on a phone.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = phone.new_page()
    page.set_default_timeout(20_000)
    record_problems(page, problems)
    sign_in(page, live_server, "dana", "pw", f"/experiments/{experiment.pk}/")
    page.locator(TERM).scroll_into_view_if_needed()
    page.locator(TERM).tap()
    state = _tip_of(page, TERM)
    assert state["shown"] and state["inside"], state
    settle(page)
    page.screenshot(path=str(screenshots_dir / "glossary-tip-tap-390.png"))
    page.locator("h1").first.tap()
    assert not _tip_of(page, TERM)["shown"]
    phone.close()
    assert problems == [], problems
