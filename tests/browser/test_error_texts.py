"""The one reading of the API's refusals (static/raterapp/js/errors.js), run in Chromium as the
pages load it: a request that got no answer at all reads as words, never as "HTTP 0"."""

from __future__ import annotations

IMPORT = "import('/static/raterapp/js/errors.js')"


def error_text(page, result: dict, fallback: str | None = None) -> str:
    call = f"m.errorText(r, {fallback})" if fallback else "m.errorText(r)"
    return page.evaluate(f"(r) => {IMPORT}.then((m) => {call})", result)


def test_error_texts_read_the_refusal_or_say_the_server_was_not_reached(browser, live_server):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")

    assert error_text(page, {"status": 0, "data": None}) == (
        "the server could not be reached; check the connection and try again."
    )
    assert "0" not in error_text(page, {"status": 0, "data": None}, "(code) => `the server answered ${code}.`")
    assert error_text(page, {"status": 502, "data": None}) == "HTTP 502"
    assert error_text(page, {"status": 409, "data": {"detail": "Already judged."}}) == "Already judged."
    assert error_text(page, {"status": 400, "data": {"verdict": ["Not a choice."], "comment": ["Too long."]}}) == (
        "Not a choice. Too long."
    )
    context.close()
