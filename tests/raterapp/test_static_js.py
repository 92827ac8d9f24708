"""The pages' JavaScript keeps its shape: small modules (none over 400 lines, vendored files
aside) and one place that talks to the server (js/http.js is the only caller of fetch)."""

from __future__ import annotations

import re
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "static"
MAX_LINES = 400
FETCH_CALL = re.compile(r"(?<![\w.$])(?:window\.|globalThis\.|self\.)?fetch\s*\(")


def _modules() -> list[Path]:
    return sorted(p for p in STATIC.rglob("*.js") if "vendor" not in p.relative_to(STATIC).parts)


def test_there_are_modules_to_check():
    names = {p.name for p in _modules()}
    assert {"http.js", "errors.js", "announce.js", "dashboard.js", "pair_explorer.js", "raters_page.js"} <= names


def test_no_module_is_over_400_lines():
    sizes = {str(p.relative_to(STATIC)): len(p.read_text().splitlines()) for p in _modules()}
    assert {name: lines for name, lines in sizes.items() if lines > MAX_LINES} == {}


def test_only_http_js_calls_fetch():
    callers = [str(p.relative_to(STATIC)) for p in _modules() if FETCH_CALL.search(p.read_text())]
    assert callers == ["raterapp/js/http.js"]


def test_the_fetch_pattern_sees_the_ways_of_calling_it():
    for code in ("fetch(url)", "await fetch (url, {})", "window.fetch(url)", "x = globalThis.fetch(u)"):
        assert FETCH_CALL.search(code), code
    for code in ("prefetch(url)", "this.fetchDashboard()", "cache.fetch(url)", "if (window.fetch && ok)"):
        assert not FETCH_CALL.search(code), code
