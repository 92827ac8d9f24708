"""A new one-time link for a rater to choose a password (a forgotten one, a lost invitation)."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from raterapp.access import ADMIN, RATER, has_role, require_role
from raterapp.services.accounts.raters import password_set_path


def rater_password_link(*, actor, rater) -> str:
    """The path of a one-time link at which the rater chooses a new password, for an admin to
    pass on; it is shown once and not stored. It stops working once the password changes (so
    an earlier link does too) and after ``PASSWORD_RESET_TIMEOUT``. The current password keeps
    working until then."""
    require_role(actor, ADMIN, "Only admins make password links.")
    if not has_role(rater, RATER):
        raise ValidationError({"rater": f"{rater} is not a rater."})
    if not rater.is_active:
        raise ValidationError({"rater": "Reactivate the rater first: a deactivated rater cannot sign in."})
    return password_set_path(rater)
