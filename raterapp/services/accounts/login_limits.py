"""Sign-in lockout: after ``LOGIN_FAILURE_LIMIT`` wrong passwords for one username, every
sign-in as that user is refused (right password or not) for ``LOGIN_LOCKOUT_SECONDS``.

The counts live in the cache (Redis in production), so every web process sees them. The
lockout is checked by the authentication backend (the sign-in page, the admin's and any
other caller of ``authenticate``) and explained by the sign-in form.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection

from raterapp.access import user_with_roles_from_row, user_with_roles_sql
from raterapp.db.rows import table


def _key(username: str) -> str:
    return f"login-failures:{(username or '').strip().lower()}"


def login_locked_seconds(*, username: str) -> int:
    """Seconds left of the lockout of ``username`` (0 when it may sign in)."""
    until = cache.get(_key(username) + ":until")
    return max(0, int(until - time.time()) + 1) if until else 0


def login_failure_record(*, username: str) -> None:
    key, lockout = _key(username), settings.LOGIN_LOCKOUT_SECONDS
    cache.add(key, 0, timeout=lockout)
    try:
        failures = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, failures := 1, timeout=lockout)
    if failures >= settings.LOGIN_FAILURE_LIMIT and not login_locked_seconds(username=username):
        cache.set(key + ":until", time.time() + lockout, timeout=lockout)


def login_failures_clear(*, username: str) -> None:
    cache.delete(_key(username))


@functools.cache
def _session_user_sql() -> str:
    return f"SELECT {user_with_roles_sql('u')} FROM {table(get_user_model())} u WHERE u.id = %s"


class LockoutModelBackend(ModelBackend):
    """Django's backend, refusing a locked-out username before its password is checked."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get("username")
        if username and login_locked_seconds(username=username):
            raise PermissionDenied("locked out")
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_user(self, user_id):
        """The session's user with their roles, in one query."""
        try:
            user_id = get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        with connection.cursor() as cursor:
            cursor.execute(_session_user_sql(), [user_id])
            row = cursor.fetchone()
        if row is None:
            return None
        user = user_with_roles_from_row(row)
        return user if self.user_can_authenticate(user) else None


# What the mixin is mixed into, for the type checker; a plain mixin at run time.
if TYPE_CHECKING:
    _SignInForm = AuthenticationForm
else:
    _SignInForm = object


class _LockoutMessage(_SignInForm):
    """A sign-in form saying that (and how long) a username is locked out."""

    def clean(self):
        seconds = login_locked_seconds(username=self.cleaned_data.get("username") or "")
        if seconds:
            minutes = -(-seconds // 60)
            raise ValidationError(
                f"Too many failed sign-ins for this username: try again in {minutes} minute"
                f"{'s' if minutes != 1 else ''}.",
                code="locked_out",
            )
        return super().clean()


class LockoutAuthenticationForm(_LockoutMessage, AuthenticationForm):
    """The app's sign-in form."""


class LockoutAdminAuthenticationForm(_LockoutMessage, AdminAuthenticationForm):
    """The admin's sign-in form (staff only, as Django's)."""
