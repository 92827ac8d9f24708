"""API tokens: made by their user (the key is returned once and only its SHA-256 is stored),
expiring after ``API_TOKEN_TTL_DAYS``, revoked by their owner or an admin.

A key is ``rt_`` and 43 random URL-safe characters (256 bits), so a hash without a salt is
enough: nothing guessable is hashed. Keys of DRF's former plain tokens (40 hex characters) were
hashed the same way by migration 0010 and work until they expire.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from functools import cache

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.utils import timezone

from raterapp.access import ADMIN, has_role, user_with_roles_from_row, user_with_roles_sql
from raterapp.db.fields import max_length_of
from raterapp.db.rows import column_count, columns, instance_from_row, table
from raterapp.models import ApiToken, AuditEntry
from raterapp.services.audit import audit_record

KEY_PREFIX = "rt_"
MAX_TTL_DAYS = 366
# How stale ``last_used_at`` may be: one write a minute per token, not one per request.
LAST_USED_RESOLUTION = timedelta(seconds=60)


def api_token_key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_create(*, actor, name: str = "", ttl_days: int | None = None) -> tuple[ApiToken, str]:
    """A new token of ``actor``; ``(token, key)``: the key is never stored nor shown again."""
    if actor is None or not actor.is_authenticated or not actor.is_active:
        raise PermissionDenied("Sign in to make a token.")
    name = (name or "").strip()
    if len(name) > max_length_of(ApiToken, "name"):
        raise ValidationError({"name": "At most 100 characters."})
    ttl_days = settings.API_TOKEN_TTL_DAYS if ttl_days is None else ttl_days
    if isinstance(ttl_days, bool) or not isinstance(ttl_days, int) or not 1 <= ttl_days <= MAX_TTL_DAYS:
        raise ValidationError({"ttl_days": f"Give a whole number of days from 1 to {MAX_TTL_DAYS}."})
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=actor,
            created_at=now,
            name=name,
            key_hash=api_token_key_hash(key),
            prefix=key[: len(KEY_PREFIX) + 6],
            expires_at=now + timedelta(days=ttl_days),
        )
        audit_record(
            actor=actor, action=AuditEntry.Action.TOKEN_CREATE, subject_id=actor.pk, field="token",
            new=f"{token.prefix}… until {token.expires_at:%Y-%m-%d %H:%M} UTC", reason=name,
        )  # fmt: skip
    return token, key


def api_token_authenticate(*, key: str) -> ApiToken | None:
    """The live token of ``key`` with its user (and the user's roles, read in the same query), or
    ``None`` (unknown, revoked). An expired token is returned as it is: the caller says why it
    refuses it."""
    with connection.cursor() as cursor:
        cursor.execute(_authenticate_sql(), [api_token_key_hash(key)])
        row = cursor.fetchone()
    if row is None:
        return None
    width = column_count(ApiToken)
    token = instance_from_row(ApiToken, row[:width])
    token.user = user_with_roles_from_row(row[width:])
    if token.expires_at > timezone.now():
        _last_used_touch(token)
    return token


@cache
def _authenticate_sql() -> str:
    tokens, users = table(ApiToken), table(get_user_model())
    return (
        f"SELECT {columns(ApiToken, 't')}, {user_with_roles_sql('u')}"
        f" FROM {tokens} t JOIN {users} u ON u.id = t.user_id WHERE t.key_hash = %s AND t.revoked_at IS NULL"
    )


def _last_used_touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def api_token_revoke(*, actor, token: ApiToken) -> ApiToken:
    """Revoke one token: its owner or an admin. Revoking a revoked token changes nothing."""
    if actor is None or not actor.is_authenticated or (actor.pk != token.user_id and not has_role(actor, ADMIN)):
        raise PermissionDenied("Only the token's owner or an admin revokes it.")
    with transaction.atomic():
        now = timezone.now()
        if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now, revoked_by=actor):
            audit_record(
                actor=actor, action=AuditEntry.Action.TOKEN_REVOKE, subject_id=token.user_id, field="token",
                old=f"{token.prefix}…",
            )  # fmt: skip
    token.refresh_from_db()
    return token


def api_tokens_revoke_all(*, actor, user) -> int:
    """Revoke every live token of ``user`` (admins, or the user themselves); how many."""
    if actor is None or not actor.is_authenticated or (actor.pk != user.pk and not has_role(actor, ADMIN)):
        raise PermissionDenied("Only the user or an admin revokes their tokens.")
    revoked = 0
    with transaction.atomic():
        for token in ApiToken.objects.select_for_update().filter(user=user, revoked_at__isnull=True):
            api_token_revoke(actor=actor, token=token)
            revoked += 1
    return revoked
