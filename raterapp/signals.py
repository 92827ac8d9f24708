"""Signal receivers, connected in ``RaterappConfig.ready``."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver
from django.utils import timezone

SESSION_START_KEY = "signed_in_at"


@receiver(user_logged_in, dispatch_uid="raterapp-session-start")
def session_start_record(sender, request, user, **kwargs) -> None:
    """When this sign-in began: raters' pages count "judged this session" from it."""
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_START_KEY] = timezone.now().isoformat()


@receiver(user_login_failed, dispatch_uid="raterapp-login-failed")
def login_failure_count(sender, credentials, request=None, **kwargs) -> None:
    """A wrong password counts towards the username's lockout (raterapp.services.accounts.login_limits)."""
    from raterapp.services.accounts.login_limits import login_failure_record

    login_failure_record(username=credentials.get("username", ""))


@receiver(user_logged_in, dispatch_uid="raterapp-login-failures-clear")
def login_failures_reset(sender, request, user, **kwargs) -> None:
    from raterapp.services.accounts.login_limits import login_failures_clear

    login_failures_clear(username=user.get_username())
