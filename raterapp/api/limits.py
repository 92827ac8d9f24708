"""The API's parser and pagination with bounds (REST_FRAMEWORK settings name them): a module of
their own, since DRF imports them while its views, which raterapp.api.common imports, load."""

from __future__ import annotations

from django.conf import settings
from rest_framework import exceptions
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser; a body nested too deeply for Python's parser is a 400, not a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - nested too deeply.") from None


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=`` up to API_MAX_PAGE_SIZE rows a page."""

    @property
    def max_limit(self) -> int:  # type: ignore[override]  # DRF reads an attribute; this one follows the settings
        return settings.API_MAX_PAGE_SIZE
