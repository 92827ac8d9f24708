"""API tokens: the authentication of scripts, and the endpoints to make, list and revoke them.

``Authorization: Token <key>`` (raterapp/api/authentication.py): an unknown or revoked key, an
expired one and one of a deactivated user are refused (401 with ``WWW-Authenticate: Token`` and
the reason). Roles: every signed-in user lists, makes and revokes their own tokens
(``/api/tokens/``); a token cannot make tokens (a stolen key would otherwise outlive its expiry),
so making one needs a signed-in session. Admins also list and revoke any user's tokens
(``/api/users/<id>/tokens/``, and ``DELETE /api/tokens/<id>/`` of any token). Anonymous callers
401; another user's token 404.
"""

from __future__ import annotations

from typing import cast

from django.contrib.auth import get_user_model
from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import ADMIN, has_role
from raterapp.models import ApiToken
from raterapp.selectors.api_tokens import api_tokens_of
from raterapp.services.accounts.api_tokens import api_token_create, api_token_revoke, api_tokens_revoke_all

from .authentication import HashedTokenAuthentication
from .common import IsAdmin, validated

NOT_FOUND = OpenApiResponse(description="No such token or user, or not yours.")


class ApiTokenSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()

    class Meta:
        model = ApiToken
        fields: tuple[str, ...] = (
            "id",
            "name",
            "prefix",
            "created_at",
            "expires_at",
            "last_used_at",
            "revoked_at",
            "status",
        )

    def get_status(self, token) -> str:
        if token.revoked_at is not None:
            return "revoked"
        return "expired" if token.expires_at <= timezone.now() else "active"


class ApiTokenCreateSerializer(serializers.Serializer):
    """A field it does not know is a 400 naming it: ``{"days": 7}`` once made a token of the
    default lifetime without a word."""

    name = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    ttl_days = serializers.IntegerField(required=False, help_text="Days the token works (default API_TOKEN_TTL_DAYS).")

    def to_internal_value(self, data):
        known = ", ".join(self.fields)
        unknown = {
            name: [f"Not a field of a new token (those are: {known})."] for name in data if name not in self.fields
        }
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({**cast(dict, exc.detail), **unknown}) from None
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    key = serializers.CharField(help_text="The key: shown this once, never stored.")

    class Meta(ApiTokenSerializer.Meta):
        fields = (*ApiTokenSerializer.Meta.fields, "key")


class ApiTokensApi(APIView):
    """Your tokens, newest first (GET), or a new one (POST: the answer carries the key, once).
    Roles: any signed-in user, for themselves; a request made with a token cannot make one."""

    @extend_schema(responses={200: ApiTokenSerializer(many=True)})
    def get(self, request):
        return Response(ApiTokenSerializer(api_tokens_of(user=request.user), many=True).data)

    @extend_schema(request=ApiTokenCreateSerializer, responses={201: ApiTokenCreatedSerializer})
    def post(self, request):
        if isinstance(request.successful_authenticator, HashedTokenAuthentication):
            raise exceptions.PermissionDenied("A token cannot make tokens: sign in to make one.")
        token, key = api_token_create(actor=request.user, **validated(ApiTokenCreateSerializer, request.data))
        token.key = key  # type: ignore[attr-defined]  # on this answer only
        return Response(ApiTokenCreatedSerializer(token).data, status=status.HTTP_201_CREATED)


class ApiTokenApi(APIView):
    """Revoke a token (DELETE): your own, or any user's for admins. Revoking twice is fine."""

    @extend_schema(responses={200: ApiTokenSerializer, 404: NOT_FOUND})
    def delete(self, request, token_id: int):
        token = _token_for(request.user, token_id)
        revoked = api_token_revoke(actor=request.user, token=token)
        return Response(ApiTokenSerializer(revoked).data)


class UserApiTokensApi(APIView):
    """A user's tokens (GET) or revoke them all (DELETE: how many were live). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: ApiTokenSerializer(many=True), 404: NOT_FOUND})
    def get(self, request, user_id: int):
        return Response(ApiTokenSerializer(api_tokens_of(user=_user(user_id)), many=True).data)

    @extend_schema(responses={200: OpenApiResponse(description='{"revoked": N}'), 404: NOT_FOUND})
    def delete(self, request, user_id: int):
        user = _user(user_id)
        return Response({"revoked": api_tokens_revoke_all(actor=request.user, user=user)})


def _token_for(user, token_id: int) -> ApiToken:
    tokens = ApiToken.objects.all() if has_role(user, ADMIN) else ApiToken.objects.filter(user=user)
    try:
        return tokens.get(pk=token_id)
    except ApiToken.DoesNotExist:
        raise Http404("No such token.") from None


def _user(user_id: int):
    try:
        return get_user_model().objects.get(pk=user_id)
    except get_user_model().DoesNotExist:
        raise Http404("No such user.") from None
