"""Every URL the project serves, walked from Django's URL resolver, so that tests which must
cover every endpoint (role tables, the schema, the no-write crawl) cannot miss a new one."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")
_REGEX_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")  # the admin's app index: (?P<app_label>auth|raterapp)


@dataclass(frozen=True)
class Route:
    path: str  # "/api/experiments/{experiment_id}/", OpenAPI style
    params: tuple[str, ...]
    name: str | None
    view_class: type | None  # None for a function view
    namespace: str

    @property
    def methods(self) -> tuple[str, ...]:
        """The HTTP methods the view answers (a function view: GET, all we may assume)."""
        if self.view_class is None:
            return ("get",)
        return tuple(m for m in HTTP_METHODS if hasattr(self.view_class, m))


def routes() -> list[Route]:
    return list(_walk(get_resolver().url_patterns, "", ""))


def api_routes() -> list[Route]:
    return [route for route in routes() if route.path.startswith("/api/")]


def shape(path: str) -> str:
    """A path with its query dropped and every placeholder as ``{}``: "/api/x/{e}/?a=1" → "/api/x/{}/"."""
    return re.sub(r"\{\w*\}", "{}", path.split("?", 1)[0])


def _walk(patterns, prefix: str, namespace: str):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}:{pattern.namespace}" if namespace and pattern.namespace else pattern.namespace or namespace
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern), inner or "")
        elif isinstance(pattern, URLPattern):
            route = _REGEX_GROUP.sub(r"<\1>", (prefix + str(pattern.pattern)).replace("^", "").replace("$", ""))
            if re.search(r"[()\\|*+?\[]", route):
                raise AssertionError(f"a regular-expression URL pattern the walk cannot fill: {route!r}")
            callback = pattern.callback
            view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
            yield Route(
                path="/" + _CONVERTER.sub(r"{\1}", route),
                params=tuple(_CONVERTER.findall(route)),
                name=pattern.name,
                view_class=view_class,
                namespace=namespace,
            )
