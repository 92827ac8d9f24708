"""The answers no view gave: a refused request (403) is the app's own page, with its navigation,
never a bare one; under ``/api/`` every such answer (400, 404, 500) is JSON, as the API's others."""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults

from raterapp.access import user_roles


def permission_denied(request, exception=None):
    roles = user_roles(request.user) if hasattr(request, "user") else set()
    context = {"nav_roles": {role: True for role in roles}, "reason": str(exception or "")}
    return render(request, "403.html", context, status=403)


# ---- under /api/: JSON, as every other answer of the API (``{"detail": ...}``) -----------------


def _api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception=None):
    """400 that no view answered: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, too many fields, a
    suspicious header."""
    if _api(request):
        return JsonResponse({"detail": f"Bad request: {exception or 'the request could not be read'}."}, status=400)
    return defaults.bad_request(request, exception)


def page_not_found(request, exception=None):
    if _api(request):
        return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _api(request):
        return JsonResponse(
            {"detail": "Server error: the request failed on the server and was logged; try again later."}, status=500
        )
    return defaults.server_error(request)
