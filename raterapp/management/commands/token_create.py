"""``manage.py token_create USERNAME [--days N] [--name TEXT]``: an API token for a user, made on
the server (the key is printed once; only its hash is stored)."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from raterapp.services.accounts.api_tokens import api_token_create


class Command(BaseCommand):
    help = "Make an API token for a user and print its key (shown this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--days", type=int, default=None, help="Days it works (default API_TOKEN_TTL_DAYS).")
        parser.add_argument("--name", default="made with manage.py token_create")

    def handle(self, *args, username, days, name, **options):
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user named {username!r}: make one with manage.py user_create.") from None
        try:
            token, key = api_token_create(actor=user, name=name, ttl_days=days)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        self.stderr.write(f"Token {token.prefix}… for {username}, until {token.expires_at:%Y-%m-%d %H:%M} UTC:")
        self.stdout.write(key)
