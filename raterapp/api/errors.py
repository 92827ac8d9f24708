"""One error path for the API: a service's refusal becomes an HTTP answer here, not in each view.

Services raise Django's ``ValidationError`` (400, keyed by field when they can say which),
``PermissionDenied`` (403) and ``raterapp.exceptions.StateConflict`` (409); DRF's own exceptions
and Django's ``Http404`` pass through DRF's handler as usual.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework.views import exception_handler

from raterapp.exceptions import StateConflict

from .common import Conflict, drf_validation_error


def api_exception_handler(exc, context):
    if isinstance(exc, ValidationError):
        exc = drf_validation_error(exc)
    elif isinstance(exc, StateConflict):
        exc = Conflict(str(exc))
    return exception_handler(exc, context)
