"""How a response tells a client that it used a deprecated name (RFC 9745): a ``Deprecation``
header with the date the name was deprecated, a ``Link`` to the API documentation (where the
schema marks the name deprecated), and the same in words in the body's ``warnings``."""

from __future__ import annotations

from datetime import UTC, datetime

from django.urls import reverse
from rest_framework.response import Response

# The gold clustering became the ground-truth clustering (gold: the gold questions only).
GROUND_TRUTH_RENAMED = datetime(2026, 11, 26, tzinfo=UTC)


def deprecation_flag(response: Response, *, request, since: datetime, warnings: list[str]) -> Response:
    """``response`` (a JSON object) flagged deprecated ``since``, with ``warnings`` in its body."""
    response.data["warnings"] = warnings
    response["Deprecation"] = f"@{int(since.timestamp())}"
    response["Link"] = f'<{request.build_absolute_uri(reverse("api-docs"))}>; rel="deprecation"; type="text/html"'
    return response
