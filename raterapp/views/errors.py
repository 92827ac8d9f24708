"""The page for a refused request (403): the app's own, with its navigation, never a bare one."""

from __future__ import annotations

from django.shortcuts import render

from raterapp.access import user_roles


def permission_denied(request, exception=None):
    roles = user_roles(request.user) if hasattr(request, "user") else set()
    context = {"nav_roles": {role: True for role in roles}, "reason": str(exception or "")}
    return render(request, "403.html", context, status=403)
