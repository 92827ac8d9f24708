"""``manage.py user_create USERNAME --role admin|engineer|rater [--password-stdin]``: a user made on
the server, such as the first admin and engineer of a new install. The password is asked for
(twice) or read from standard input; an existing user name is refused and left as it is."""

import getpass
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from raterapp.access import ROLES
from raterapp.services.accounts.users import user_create_on_server


class Command(BaseCommand):
    help = "Make a user with one role (admin, engineer or rater); the password is asked for or read from stdin."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=ROLES)
        parser.add_argument(
            "--password-stdin", action="store_true", help="read the password from the first line of standard input"
        )

    def handle(self, *args, username, role, password_stdin, **options):
        password = _password_from_stdin() if password_stdin else _password_asked(username)
        try:
            user_create_on_server(username=username, role=role, password=password)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(f"Created {role} {username!r}: they sign in at /login/.")


def _password_from_stdin() -> str:
    password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise CommandError("No password on standard input.")
    return password


def _password_asked(username: str) -> str:
    if not sys.stdin.isatty():
        raise CommandError("No terminal to ask for the password: pass --password-stdin and pipe it in.")
    password = getpass.getpass(f"Password for {username}: ")
    if password != getpass.getpass("The same again: "):
        raise CommandError("The passwords differ.")
    return password
