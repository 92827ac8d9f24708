"""Which role a page is for: one mixin, set per section (rating, experiments, admin pages).

Anonymous visitors go to the sign-in page; anyone else signed in without the role gets the
section's friendly 403 page.
"""

from __future__ import annotations

from django.contrib.auth.mixins import LoginRequiredMixin
from django.shortcuts import render

from raterapp.access import ADMIN, ENGINEER, RATER, user_roles


class RolePageMixin(LoginRequiredMixin):
    page_roles: frozenset[str] = frozenset()
    forbidden_template = ""
    nav_active = ""

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        self.roles = user_roles(request.user)
        if not self.roles & self.page_roles:
            return render(request, self.forbidden_template, self.page_context(), status=403)
        return super().dispatch(request, *args, **kwargs)

    def page_context(self, **extra) -> dict:
        roles: set[str] = getattr(self, "roles", set())
        return {"nav_roles": {role: True for role in roles}, "nav_active": self.nav_active, **extra}


class RaterPageMixin(RolePageMixin):
    page_roles = frozenset({RATER})
    forbidden_template = "raterapp/rating/forbidden.html"
    nav_active = "rate"


class EngineerPageMixin(RolePageMixin):
    page_roles = frozenset({ENGINEER, ADMIN})
    forbidden_template = "raterapp/experiments/forbidden.html"
    nav_active = "experiments"


class AdminPageMixin(RolePageMixin):
    page_roles = frozenset({ADMIN})
    forbidden_template = "raterapp/admin/forbidden.html"
    nav_active = "overview"
