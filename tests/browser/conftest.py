"""Real headless Chromium (Debian's package) against Django's live server, with a real Celery worker.

Playwright's own browser download does not work here, so the tests drive /usr/bin/chromium
(or CHROMIUM_PATH). When it is missing they say how to install it, and fail in CI (which runs
the whole suite) or are skipped elsewhere. Every test here carries the ``browser`` marker
(``make test-fast`` leaves them out).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from django.db import connections

from tests.e2e.conftest import celery_worker_process  # noqa: F401 - a fixture, used by the tests

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)


def chromium_required() -> None:
    """Fail (in CI) or skip (elsewhere) with how to install Chromium, when it is missing."""
    if Path(CHROMIUM).is_file():
        return
    message = (
        f"Chromium is not installed at {CHROMIUM}: the browser tests need it. "
        "Install it with `apt-get update && apt-get install -y chromium` (or set CHROMIUM_PATH)."
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def browser(monkeypatch):
    chromium_required()
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop marked as running in this thread, so Django
    # would refuse the test's own ORM calls; nothing here runs concurrently with them.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            # Queries made while Playwright runs use a connection of their own (asgiref's Local
            # follows the context); close it, or PostgreSQL cannot drop the test database.
            connections.close_all()


@pytest.fixture
def screenshots_dir():
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


# ---- The judging page: a rating-ready experiment with person records, and a rater. ----

PEOPLE = [
    # Base cluster 0 (positions 0-5): one person written six ways.
    ("Jane Smith", "Jane", "Smith", "12 Kent Street", "Deakin", "2600", "1971-03-02"),
    ("Jane Smyth", "Jane", "Smyth", "12 Kent St", "Deakin", "2600", "1971-03-02"),
    ("J. Smith", "J.", "Smith", "12 Kent Street", "Deakin", "2600", ""),
    ("Jane Smith-Brown", "Jane", "Smith-Brown", "12 Kent Street, Apt 4", "Deakin", "2600", "1971-03-02"),
    ("Janet Smith", "Janet", "Smith", "21 Kent Street", "Deakin", "2600", "1971-02-03"),
    ("Jayne Smith", "Jayne", "Smith", "12 Kent Street", "Deakin ACT", "2600", "1971-03-02"),
    # Base cluster 1 (positions 6-9).
    ("Oliver Nguyen", "Oliver", "Nguyen", "5 Banks Road", "Mosman", "2088", "1988-11-30"),
    ("Olivier Nguyen", "Olivier", "Nguyen", "5 Banks Rd", "Mosman", "2088", "1988-11-30"),
    ("Oliver Nguyen", "Oliver", "Nguyen", "7 Banks Road", "Mosman", "2088", "1989-11-30"),
    ("O. Nguyen", "O.", "Nguyen", "5 Banks Road", "Mosman", "2088", "1988-11-30"),
    # Base cluster 2 (positions 10-11).
    ("Priya Raman", "Priya", "Raman", "88 Ocean Parade", "Coogee", "2034", "1995-06-14"),
    ("Priya Ramen", "Priya", "Ramen", "88 Ocean Pde", "Coogee", "2034", "1995-06-14"),
]
PORTRAIT_COLOURS = ["#3b6fb6", "#2f8f6a", "#b8612e", "#7a4fb0", "#b33b5c", "#4d7a8c"]


@pytest.fixture
def rating_experiment(transactional_db, settings, tmp_path):
    """An experiment open for rating whose items look like person records, with pictures."""
    from raterapp.models import Item
    from tests.raterapp.factories import UserFactory
    from tests.raterapp.prepared import experiment_prepared

    settings.MEDIA_ROOT = tmp_path / "media"
    experiment = experiment_prepared(owner=UserFactory(roles=["engineer"]), name="Customer records, dedup v2")
    experiment.question = "Are these two records the same person?"
    experiment.guidelines = (
        "Equivalent: the same person, even with typos, initials or an old address.\n"
        "Not equivalent: different people, e.g. relatives living at the same address.\n"
        "Unsure: the records do not say enough. Use the comment to say why."
    )
    experiment.save()
    for item in Item.objects.filter(experiment=experiment):
        title, given, surname, street, suburb, postcode, born = PEOPLE[item.position]
        item.title = title
        source = ["web shop", "call centre", "loyalty card"][item.position % 3]
        item.description = f"Customer record from the {source} system."
        if item.position == 3:
            item.description += " " + "Notes from the call centre about a change of address and a new surname. " * 12
        item.image_url = f"https://img.example/{item.position}.svg"
        item.url = f"https://crm.example/customers/{1000 + item.position}"
        item.attributes = {
            "given_name": given,
            "surname": surname,
            "address": street,
            "suburb": suburb,
            "postcode": postcode,
            "date_of_birth": born or None,
        }
        item.save()
    return experiment


@pytest.fixture
def rater(transactional_db):
    from tests.raterapp.factories import UserFactory

    user = UserFactory(username="rita", roles=["rater"])
    user.set_password("pw-rita")
    user.save()
    return user


def portrait_svg(number: int) -> str:
    """A small placeholder portrait: a coloured card with a head and shoulders."""
    colour = PORTRAIT_COLOURS[number % len(PORTRAIT_COLOURS)]
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="160" viewBox="0 0 240 160">'
        f'<rect width="240" height="160" fill="{colour}" opacity=".18"/>'
        f'<circle cx="120" cy="62" r="30" fill="{colour}"/>'
        f'<path d="M60 160c0-38 27-60 60-60s60 22 60 60z" fill="{colour}"/></svg>'
    )


def serve_portraits(context) -> None:
    """Answer the items' picture requests (there is no network); picture 5 is missing (404)."""

    def handle(route):
        number = int(route.request.url.rsplit("/", 1)[1].split(".")[0])
        if number == 5:
            route.fulfill(status=404, body="not found")
        else:
            route.fulfill(status=200, content_type="image/svg+xml", body=portrait_svg(number))

    context.route("https://img.example/**", handle)


def record_problems(page, problems: list[str], *, expected=lambda url: False, expected_response=None) -> None:
    """Collect page errors, console errors and failed requests (except URLs ``expected`` to fail, or
    responses ``expected_response(response)`` accepts) into ``problems``, for a test to assert it
    stays empty."""
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            message.type == "error"
            and not message.text.startswith("Failed to load resource")  # reported with its URL below
            and problems.append(f"console: {message.text}")
        ),
    )
    page.on(
        "response",
        lambda response: (
            response.status >= 400
            and not response.url.endswith("/favicon.ico")
            and not expected(response.url)
            and not (expected_response and expected_response(response))
            and problems.append(f"HTTP {response.status}: {response.url}")
        ),
    )


SETTLE = """async () => {
  await Promise.all(document.getAnimations().map((animation) => animation.finished.catch(() => null)));
  const charts = window.Chart && Chart.instances ? Object.values(Chart.instances) : [];
  while (charts.some((chart) => Chart.animator.running(chart))) await new Promise(requestAnimationFrame);
  for (let frame = 0; frame < 2; frame++) await new Promise(requestAnimationFrame);
}"""


def settle(page) -> None:
    """Wait until the page's CSS animations and Chart.js animations have finished and it has been
    painted (instead of a fixed sleep before a screenshot or after a resize)."""
    page.evaluate(SETTLE)


def sign_in(page, live_server, username: str, password: str, path: str) -> None:
    """Sign in through the login form, which then lands on ``path``."""
    page.goto(f"{live_server.url}/login/?next={path}")
    page.get_by_label("User name", exact=True).fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Password", exact=True).press("Enter")
    page.wait_for_url(re.compile(rf"{re.escape(path)}$"))


def pages_visited(context, urls, *, prepare=lambda page: None, tabs=6, idle_ms=3000, linger_ms=0):
    """Load ``urls`` in ``tabs`` tabs at a time and give each page time to run its scripts: until
    the network is idle, or ``idle_ms`` for pages that poll or stream, then ``linger_ms`` more.
    ``prepare(page)`` runs once on each tab (e.g. :func:`record_problems`). Yields (url, response,
    page) as each finishes, before its tab moves on. The tabs wait side by side, not one after
    another, so a crawl costs about its slowest page per round."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    pages = [context.new_page() for _ in range(min(tabs, len(urls)))]
    for page in pages:
        prepare(page)
    for start in range(0, len(urls), len(pages)):
        round_ = list(zip(pages, urls[start : start + len(pages)]))
        responses = [page.goto(url, wait_until="commit") for page, url in round_]
        deadline = time.monotonic() + idle_ms / 1000
        for page, _ in round_:
            page.wait_for_load_state("load")
            try:
                page.wait_for_load_state("networkidle", timeout=max(1.0, (deadline - time.monotonic()) * 1000))
            except PlaywrightTimeoutError:  # a page that polls or streams never goes idle
                pass
        if linger_ms:
            pages[0].wait_for_timeout(linger_ms)
        for (page, url), response in zip(round_, responses):
            yield url, response, page
    for page in pages:
        page.close()
