"""API tokens as their owners and admins see them (never the key: it is not stored)."""

from __future__ import annotations

from django.db.models import QuerySet

from raterapp.models import ApiToken


def api_tokens_of(*, user) -> QuerySet[ApiToken]:
    """Every token of ``user``, newest first, revoked and expired ones included."""
    return ApiToken.objects.filter(user=user).select_related("revoked_by")
