"""``Authorization: Token <key>`` against the stored hashes of API tokens, with their expiry.

Its own module, importing no DRF view: DRF imports it from its settings while it loads
``rest_framework.views``.
"""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from raterapp.services.accounts.api_tokens import api_token_authenticate


class HashedTokenAuthentication(TokenAuthentication):
    """DRF's ``Token <key>`` header, checked against the stored hashes, with expiry."""

    def authenticate_credentials(self, key):
        token = api_token_authenticate(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        if token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("Token expired: make a new one.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token.user, token


class HashedTokenScheme(OpenApiAuthenticationExtension):
    target_class = HashedTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Token-based authentication with required prefix "Token"',
        }
