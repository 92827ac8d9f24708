"""``manage.py user_create``: the first admin and engineer of an install, made on the server."""

import io

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from raterapp.access import user_roles
from raterapp.models import AuditEntry, RaterProfile

pytestmark = pytest.mark.django_db


def _streams(*, stdin: str = "", tty: bool = False):
    out = io.StringIO()
    stream = io.StringIO(stdin)
    stream.isatty = lambda: tty
    return out, stream


def run(monkeypatch, *args, stdin: str = "") -> str:
    out, stream = _streams(stdin=stdin)
    monkeypatch.setattr("sys.stdin", stream)
    call_command("user_create", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("role", ["admin", "engineer", "rater"])
def test_a_user_is_made_with_the_role_and_the_password_from_stdin(monkeypatch, role):
    said = run(monkeypatch, "ada", "--role", role, "--password-stdin", stdin="a long passphrase 7\n")
    user = User.objects.get(username="ada")
    assert said == f"Created {role} 'ada': they sign in at /login/.\n"
    assert user_roles(user) == {role}
    assert not user.is_superuser and not user.is_staff
    assert authenticate(username="ada", password="a long passphrase 7") == user
    assert RaterProfile.objects.filter(user=user).exists() == (role == "rater")
    entry = AuditEntry.objects.get(subject_id=user.pk)
    assert (entry.actor, entry.action, entry.field, entry.old_value, entry.new_value) == (
        None, AuditEntry.Action.ROLES, "roles", "", role,
    )  # fmt: skip


def test_the_password_is_asked_twice_at_a_terminal(monkeypatch):
    answers = iter(["a long passphrase 7", "a long passphrase 7"])
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))
    out, stream = _streams(tty=True)
    monkeypatch.setattr("sys.stdin", stream)
    call_command("user_create", "ada", "--role", "engineer", stdout=out)
    assert authenticate(username="ada", password="a long passphrase 7").username == "ada"


def test_two_different_passwords_at_the_terminal_make_no_user(monkeypatch):
    answers = iter(["a long passphrase 7", "a long passphrase 8"])
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))
    out, stream = _streams(tty=True)
    monkeypatch.setattr("sys.stdin", stream)
    with pytest.raises(CommandError, match="^The passwords differ.$"):
        call_command("user_create", "ada", "--role", "engineer", stdout=out)
    assert not User.objects.exists()


def test_without_a_terminal_or_stdin_it_says_how(monkeypatch):
    with pytest.raises(CommandError, match="pass --password-stdin"):
        run(monkeypatch, "ada", "--role", "admin")
    assert not User.objects.exists()


def test_an_existing_user_is_refused_and_left_as_it_was(monkeypatch):
    run(monkeypatch, "ada", "--role", "admin", "--password-stdin", stdin="a long passphrase 7\n")
    before = User.objects.values().get(username="ada")
    with pytest.raises(CommandError, match="^A user named 'Ada' exists already.$"):
        run(monkeypatch, "Ada", "--role", "rater", "--password-stdin", stdin="another passphrase 9\n")
    assert User.objects.values().get() == before
    assert user_roles(User.objects.get()) == {"admin"}
    assert AuditEntry.objects.count() == 1


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["ada", "--role", "admin", "--password-stdin"], "\n", "No password on standard input."),
        (["ada", "--role", "admin", "--password-stdin"], "short\n", "This password is too short"),
        (["ada", "--role", "admin", "--password-stdin"], "password123\n", "This password is too common."),
        (["ada lovelace", "--role", "admin", "--password-stdin"], "a long passphrase 7\n", "Enter a valid username"),
    ],
)
def test_a_bad_password_or_user_name_makes_no_user(monkeypatch, args, stdin, message):
    with pytest.raises(CommandError, match=message):
        run(monkeypatch, *args, stdin=stdin)
    assert not User.objects.exists() and not AuditEntry.objects.exists()


def test_an_unknown_role_is_refused_by_the_parser(monkeypatch):
    with pytest.raises(CommandError, match="invalid choice: 'boss'"):
        run(monkeypatch, "ada", "--role", "boss", "--password-stdin", stdin="a long passphrase 7\n")
    assert not User.objects.exists()


def test_token_create_for_a_missing_user_points_to_user_create():
    """`token_create engineer` on a new install said only "No user named 'engineer'"."""
    with pytest.raises(CommandError, match="^No user named 'engineer': make one with manage.py user_create.$"):
        call_command("token_create", "engineer")
