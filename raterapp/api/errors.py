"""One error path for the API: a service's refusal becomes an HTTP answer here, not in each view.

Services raise Django's ``ValidationError`` (400, keyed by field when they can say which),
``PermissionDenied`` (403, with the service's reason), ``raterapp.exceptions.StateConflict`` and
the judging services' ``JudgementRefused`` (409, with the reason in ``detail``); DRF's own
exceptions and Django's ``Http404`` pass through DRF's handler as usual. A database out of reach
(a restart, a failover, a terminated connection: Django's ``OperationalError`` or
``InterfaceError``) is 503 with ``Retry-After``: nothing of the request was stored, and it may be
sent again.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, ValidationError
from rest_framework import exceptions, status
from rest_framework.views import exception_handler

from raterapp.exceptions import DATABASE_OUT_OF_REACH, StateConflict
from raterapp.services.judging.errors import JudgementRefused

logger = logging.getLogger(__name__)
DATABASE_RETRY_AFTER_SECONDS = 5


class DatabaseUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The database is out of reach for a moment: nothing was stored; send the request again."
    default_code = "database_unavailable"


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


def drf_validation_error(exc: ValidationError) -> exceptions.ValidationError:
    """A Django ValidationError (keyed by field or not) as DRF's 400."""
    if hasattr(exc, "error_dict"):
        return exceptions.ValidationError(exc.message_dict)
    return exceptions.ValidationError({"non_field_errors": exc.messages})


def api_exception_handler(exc, context):
    if isinstance(exc, ValidationError):
        exc = drf_validation_error(exc)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc))
    elif isinstance(exc, (StateConflict, JudgementRefused)):
        exc = Conflict(str(exc))
    elif isinstance(exc, DATABASE_OUT_OF_REACH):
        request = context.get("request")
        logger.warning("%s: the database is out of reach: %s: %s", request and request.path, type(exc).__name__, exc)
        response = exception_handler(DatabaseUnavailable(), context)
        assert response is not None, "DRF answers every APIException"
        response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
        return response
    return exception_handler(exc, context)
