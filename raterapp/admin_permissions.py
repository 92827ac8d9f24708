"""The Django admin for the app's ``admin`` role: members of the ``admin`` group may use it
(staff or not) and hold the permissions below, so the app's admins need no per-user
permissions. Every change there that matters goes through the services (``raterapp/admin.py``);
nothing may be deleted."""

from __future__ import annotations

from django.contrib.auth.forms import AuthenticationForm

from raterapp.access import ADMIN, has_role
from raterapp.services.accounts.login_limits import LockoutAdminAuthenticationForm

APP = "raterapp"
# Besides viewing every model of the app: what the Django admin's forms change through services.
CHANGEABLE = {"experimentbudget", "budgetpool", "raterprofile"}
ADDABLE = {"budgetpool"}


class AdminRoleBackend:
    """Permissions for the ``admin`` role; authenticates nobody (the other backends do)."""

    def authenticate(self, request, **credentials):
        return None

    def get_user(self, user_id):
        return None

    def has_perm(self, user, perm: str, obj=None) -> bool:
        if not (user.is_active and has_role(user, ADMIN)):
            return False
        app, _, codename = perm.partition(".")
        action, _, model = codename.partition("_")
        if app != APP:
            return False
        if action == "view":
            return True
        return (action == "change" and model in CHANGEABLE) or (action == "add" and model in ADDABLE)

    def has_module_perms(self, user, app_label: str) -> bool:
        return app_label == APP and user.is_active and has_role(user, ADMIN)


def admin_site_has_permission(request) -> bool:
    """The Django admin's door: active staff, as Django has it, and the app's admins."""
    user = request.user
    return user.is_active and (user.is_staff or has_role(user, ADMIN))


class AdminRoleLoginForm(LockoutAdminAuthenticationForm):
    """The Django admin's sign-in, open to the app's admins as to staff (lockouts as the app's)."""

    def confirm_login_allowed(self, user):
        if has_role(user, ADMIN):
            AuthenticationForm.confirm_login_allowed(self, user)  # active users only
        else:
            super().confirm_login_allowed(user)
