"""What every API view shares: role permissions, the refusals their schemas name, views that
read one experiment, and CSV output (service errors: errors.py)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from metrics_core.io import FORMULA_START
from raterapp.access import (
    ADMIN,
    ENGINEER,
    RATER,
    access_experiment_for_engineer,
    access_experiment_for_owner,
    user_roles,
)

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


def not_found(what: str) -> OpenApiResponse:
    return OpenApiResponse(description=f"No such {what}, or not visible to you.")


def refused_unless(who: str) -> OpenApiResponse:
    """A 403: only ``who`` (the admins, the owner) may make this change."""
    return OpenApiResponse(description=f"Only {who}; nothing changed.")


EXPERIMENT_NOT_FOUND = not_found("experiment")
OWNER_ONLY = refused_unless("the owner or an admin may change the experiment")
ONLY_ADMINS = refused_unless("admins may do this")
FORMAT = OpenApiParameter("format", str, enum=["json", "csv"], description="Download format (default json).")


def download_responses(json_body, absent: OpenApiResponse = EXPERIMENT_NOT_FOUND) -> dict:
    """The schema's responses of an ``ExportApi`` view: ``json_body`` or CSV text; 404 ``absent``."""
    return {(200, "application/json"): json_body, (200, "text/csv"): OpenApiTypes.STR, 404: absent}


def change_schema(request, answer, *, status: int = 200, invalid: str, refused: OpenApiResponse):
    """The schema of a change: ``request`` in, ``answer`` out with ``status``; 400 when the
    request is ``invalid`` (the description says what makes it so), 403 ``refused``."""
    return extend_schema(
        request=request, responses={status: answer, 400: OpenApiResponse(description=invalid), 403: refused}
    )


def read_schema(body, not_found: OpenApiResponse = EXPERIMENT_NOT_FOUND):
    """The schema of an ``ExperimentReadApi`` view's ``get``: ``body`` (a serializer, or
    ``OpenApiTypes.OBJECT``), or 404 ``not_found``."""
    return extend_schema(responses={200: body, 404: not_found})


class ExperimentReadApi(APIView):
    """What ``read(experiment=...)`` returns for an experiment the user sees as an engineer (own
    or granted) or admin, through ``body_serializer`` (``many``) when there is one; 404 for an
    experiment not visible and, with ``missing``, when ``read`` returns None. Each view's own
    ``get`` (with its schema, :func:`read_schema`) answers with :meth:`answer`."""

    permission_classes = [IsEngineerOrAdmin]
    read: Callable[..., Any]  # the view's selector
    body_serializer: type[BaseSerializer] | None = None
    many = False
    missing = ""

    def answer(self, request, experiment_id: int) -> Response:
        return Response(self.body(access_experiment_for_engineer(request.user, experiment_id)))

    def body(self, experiment):
        found = self.read(experiment=experiment)
        if found is None and self.missing:
            raise NotFound(self.missing)
        return found if self.body_serializer is None else self.body_serializer(found, many=self.many).data


class ExperimentRowsApi(generics.ListAPIView):
    """A paginated list of the experiment's ``rows(experiment=...)``, for an experiment the user
    sees as an engineer (own or granted) or admin; 404 otherwise."""

    permission_classes = [IsEngineerOrAdmin]
    rows: Callable[..., Any]  # the view's selector

    def get_queryset(self):
        return self.rows(experiment=self.experiment())

    def experiment(self):
        return access_experiment_for_engineer(self.request.user, self.kwargs["experiment_id"])


def validated(serializer, data) -> dict:
    """``data`` (a request's body or query) as ``serializer`` reads it; a 400 naming each
    field that is not valid otherwise."""
    checked = serializer(data=data)
    checked.is_valid(raise_exception=True)
    return checked.validated_data


def owner_setting_put(request, experiment_id: int, serializer, change) -> Response:
    """The owner (or an admin) changes a setting of the experiment with ``change``; ``serializer``
    checks the request and shows the experiment changed."""
    experiment = access_experiment_for_owner(request.user, experiment_id)
    return Response(serializer(change(experiment=experiment, **validated(serializer, request.data))).data)


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
    csv_fields: tuple[str, ...] | None = ()  # None: the first row's keys

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        renderer = getattr(request, "accepted_renderer", None)
        if response.status_code == 200 and renderer is not None:
            prefix = f"experiment-{kwargs['experiment_id']}-" if "experiment_id" in kwargs else ""
            name = f"{prefix}{self.export_name}.{renderer.format}"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
