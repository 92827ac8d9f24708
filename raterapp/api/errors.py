"""One error path for the API: a service's refusal becomes an HTTP answer here, not in each view.

Services raise Django's ``ValidationError`` (400, keyed by field when they can say which) and
``PermissionDenied`` (403); DRF's own exceptions and Django's ``Http404`` pass through DRF's
handler as usual.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework.views import exception_handler

from .common import drf_validation_error


def api_exception_handler(exc, context):
    if isinstance(exc, ValidationError):
        exc = drf_validation_error(exc)
    return exception_handler(exc, context)
