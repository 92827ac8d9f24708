"""The OpenAPI schema at ``/api/schema/``: drf-spectacular's view, one generation at a time."""

from __future__ import annotations

import threading

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView

_generating = threading.Lock()


class ApiSchemaView(SpectacularAPIView):
    """drf-spectacular's generator keeps the view it is describing on shared objects, so two
    requests generating the schema at once in one process (threads: the development server, a
    worker with ``WEB_THREADS`` above 1) break each other's: a 500, or a schema with dangling
    references (drf-spectacular issues #1123 and #1368). Here they take turns."""

    @extend_schema(exclude=True)  # the schema does not describe itself (SERVE_INCLUDE_SCHEMA)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def _get_schema_response(self, request):  # where the parent's get() generates the schema
        with _generating:
            return super()._get_schema_response(request)
