"""Signal receivers, connected in ``RaterappConfig.ready``."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.utils import timezone

SESSION_START_KEY = "signed_in_at"


@receiver(user_logged_in, dispatch_uid="raterapp-session-start")
def session_start_record(sender, request, user, **kwargs) -> None:
    """When this sign-in began: raters' pages count "judged this session" from it."""
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_START_KEY] = timezone.now().isoformat()
