"""What every API view shares: role permissions and CSV output (service errors: errors.py)."""

from __future__ import annotations

import csv
import io
import re

from rest_framework.permissions import BasePermission
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.views import APIView

from metrics_core.io import FORMULA_START
from raterapp.access import ADMIN, ENGINEER, RATER, user_roles

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


class _RolePermission(BasePermission):
    """Refuses (403) users without one of ``roles``; whether an id is theirs is access.py's 404."""

    roles: tuple[str, ...] = ()
    message = "Your role does not allow this."

    def has_permission(self, request, view) -> bool:
        return bool(user_roles(request.user) & set(self.roles))


class IsRater(_RolePermission):
    roles = (RATER,)


class IsEngineerOrAdmin(_RolePermission):
    roles = (ENGINEER, ADMIN)


class IsAdmin(_RolePermission):
    roles = (ADMIN,)


class CSVRenderer(BaseRenderer):
    """A list of flat rows (or one row) as CSV with a header; columns from the view's
    ``csv_fields`` when it has them (so an empty export still has its header)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        rows = [data] if isinstance(data, dict) else list(data or [])
        view = (renderer_context or {}).get("view")
        response = (renderer_context or {}).get("response")
        fields = getattr(view, "csv_fields", None)
        if fields is None or (response is not None and response.exception):
            fields = list(rows[0]) if rows else []
        rows = [{name: _formula_safe(value) for name, value in row.items()} for row in rows]
        out = io.StringIO()
        # CRLF (RFC 4180): the csv module quotes a field holding a line terminator's characters
        # only, so with "\n" alone a bare CR in a cell would split its row in spreadsheets.
        writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore", lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().encode(self.charset)


def _formula_safe(value):
    """Text that a spreadsheet would run as a formula, made inert with a leading quote (OWASP,
    CSV injection), in every column: item ids, slice labels and usernames come from uploads and
    people. Numbers stay as they are (``-0.5`` is not a formula), and so does text that only
    looks like one. Text already starting with quotes before such a character gets one more, so
    that the command line (metrics_core.io, ``unquote_spreadsheet_text``) reads back exactly the
    ids the app holds by removing one."""
    if isinstance(value, str) and value.lstrip("'")[:1] in FORMULA_START and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


class ExportApi(APIView):
    """A download in JSON or CSV (``?format=csv`` or ``Accept: text/csv``), named after ``export_name``."""

    renderer_classes = [JSONRenderer, CSVRenderer]
    permission_classes = [IsEngineerOrAdmin]
    export_name = "export"
    csv_fields: tuple[str, ...] = ()

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        renderer = getattr(request, "accepted_renderer", None)
        if response.status_code == 200 and renderer is not None:
            prefix = f"experiment-{kwargs['experiment_id']}-" if "experiment_id" in kwargs else ""
            name = f"{prefix}{self.export_name}.{renderer.format}"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
