"""The signed-in user's own account: their API tokens (list, make, revoke).

Roles: every signed-in user, for their own tokens only (another user's token id is 404);
anonymous users go to the sign-in page. A new token's key is shown once, in the answer to
the form that made it, and is never stored.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views import View

from raterapp.access import user_roles
from raterapp.forms import ApiTokenForm
from raterapp.models import ApiToken
from raterapp.selectors.api_tokens import api_tokens_of
from raterapp.services.accounts.api_tokens import api_token_create, api_token_revoke

from .form_errors import service_errors


class ApiTokensPageView(LoginRequiredMixin, View):
    def get(self, request):
        return self._render(request, ApiTokenForm(initial={"ttl_days": settings.API_TOKEN_TTL_DAYS}))

    def post(self, request):
        form = ApiTokenForm(request.POST)
        if not form.is_valid():
            return self._render(request, form, status=400)
        try:
            token, key = api_token_create(actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            service_errors(form, exc)
            return self._render(request, form, status=400)
        return self._render(request, ApiTokenForm(initial={"ttl_days": settings.API_TOKEN_TTL_DAYS}), new=(token, key))

    def _render(self, request, form, *, new=None, status=200):
        context = {
            "nav_roles": dict.fromkeys(user_roles(request.user), True),
            "nav_active": "tokens",
            "form": form,
            "tokens": api_tokens_of(user=request.user),
            "now": timezone.now(),
            "new_token": new[0] if new else None,
            "new_key": new[1] if new else None,
        }
        response = render(request, "raterapp/accounts/tokens.html", context, status=status)
        if new:
            response["Cache-Control"] = "no-store"  # the key must not stay in any cache
        return response


class ApiTokenRevokePageView(LoginRequiredMixin, View):
    def get(self, request, token_id: int):
        return redirect("api-tokens-page")  # revoking is the list's button (a POST)

    def post(self, request, token_id: int):
        try:
            token = ApiToken.objects.get(pk=token_id, user=request.user)
        except ApiToken.DoesNotExist:
            raise Http404("No such token.") from None
        api_token_revoke(actor=request.user, token=token)
        return redirect("api-tokens-page")
