"""A new install, following only README's deploy section ("Running it in production") from what a
fresh clone holds (the repository's tracked files, copied): the image's build steps, ``.env`` from
``.env.example``, the web service's own command from docker-compose.yml (migrations on an empty
database, then gunicorn with uvicorn workers, DEBUG=false), then the section's ``manage.py
user_create`` commands for the first admin and engineer, with the web service's environment as
``docker compose exec web`` has it. Each then signs in through the login form and reaches their
pages. Nothing said how to make the first users (issue 34: ``createsuperuser`` worked, by guessing).

Only the container world's names change: the database is a new one on the tests' PostgreSQL, Redis
the tests', the data volume and the static files a temporary folder, the published port a free one.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from importlib.util import cache_from_source
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from .processes import Session, assert_logs_clean, free_port, http_status, wait_until
from .shape import ROOT, Substitutions, base_environment, compose_read, dockerfile_read, env_file_read

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.REDIS_URL or not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="the production shape runs on PostgreSQL and Redis (CI sets DATABASE_URL and REDIS_URL)",
    ),
]
COMPOSE_DATABASE_URL = "postgres://rater:rater@db:5432/rater"
COMPOSE_REDIS_URL = "redis://redis:6379/0"
PASSWORDS = {"admin": "first admin's passphrase 1", "engineer": "first engineer's passphrase 2"}
# What each of the first users opens once signed in (a page of their role, and the API).
LANDING = {"admin": ("/console/", "/api/audit/"), "engineer": ("/experiments/", "/api/experiments/")}


def _clone(folder: Path) -> Path:
    """The repository's tracked files as they are in the working tree."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    return folder


def _deploy_section(clone: Path) -> tuple[str, list[str]]:
    """README's deploy section and the lines of its code blocks."""
    readme = (clone / "README.md").read_text()
    section = readme.split("\n## Running it in production\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    return section, [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def _user_create_argv(line: str) -> list[str]:
    """``manage.py user_create ...`` of a README line (after any pipe and ``docker compose exec``),
    reading the password from stdin as a script would."""
    argv = shlex.split(line.split("|")[-1])
    argv = argv[argv.index("manage.py") + 1 :]
    return argv if "--password-stdin" in argv else [*argv, "--password-stdin"]


@pytest.fixture
def database_url():
    """A new, empty database on the tests' PostgreSQL (dropped at the end)."""
    db = connection.settings_dict
    name = f"{db['NAME']}_install"[:63]
    admin = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"], "dbname": "postgres"}
    if db["PASSWORD"]:
        admin["password"] = db["PASSWORD"]
    with psycopg.connect(**admin, autocommit=True) as server:
        server.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        server.execute(f'CREATE DATABASE "{name}"')
    user = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    yield f"postgres://{user}@{admin['host']}:{admin['port']}/{name}"
    with psycopg.connect(**admin, autocommit=True) as server:
        server.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_first_admin_and_engineer_made_as_readme_says_sign_in_to_production(tmp_path, database_url):
    clone = _clone(tmp_path / "clone")
    section, lines = _deploy_section(clone)
    assert "cp .env.example .env && docker compose up --build" in lines[0], lines
    shutil.copy(clone / ".env.example", clone / ".env")
    data_dir, static_root, logs = tmp_path / "data", tmp_path / "staticfiles", {}
    data_dir.mkdir()  # the data volume

    # The image's build steps (the package installs aside: the tests' .venv stands for them).
    image = dockerfile_read(clone / "Dockerfile")
    paths = [("/app/staticfiles", str(static_root)), ("/data", str(data_dir))]
    build_env = {**base_environment(), **{key: Substitutions(paths)(value) for key, value in image.env.items()}}
    for command in image.run:
        if not command.startswith(("pip install", "useradd")):
            result = subprocess.run(["sh", "-c", command], cwd=clone, env=build_env, capture_output=True, text=True)
            assert result.returncode == 0, f"RUN {command}\n{result.stdout}\n{result.stderr}"
    # The image's processes never write bytecode (PYTHONDONTWRITEBYTECODE): the build compiled ours.
    assert image.env.get("PYTHONDONTWRITEBYTECODE") == "1", image.env
    sources = [path for package in ("metrics_core", "raterapp") for path in (clone / package).rglob("*.py")]
    uncompiled = [str(path.relative_to(clone)) for path in sources if not Path(cache_from_source(str(path))).exists()]
    assert sources and not uncompiled, f"{len(uncompiled)} of {len(sources)} modules uncompiled: {uncompiled[:3]}"

    # docker compose up: the web service (migrations on the empty database, then gunicorn).
    port = free_port()
    subs = Substitutions([
        (COMPOSE_DATABASE_URL, database_url), (COMPOSE_REDIS_URL, settings.REDIS_URL),
        ("--bind 0.0.0.0:8000", f"--bind 127.0.0.1:{port}"), *paths,
    ])  # fmt: skip
    web = compose_read(clone / "docker-compose.yml")["services"]["web"]
    environment = {**image.env, **env_file_read(clone / ".env"), **web["environment"]}
    env = {**base_environment(), **{key: subs(str(value)) for key, value in environment.items()}}
    assert env["DEBUG"] == "false" and not env.get("SECRET_KEY"), env  # the key: SECRET_KEY_FILE, made at the start
    which = subprocess.run(
        [sys.executable, "-c", "import raterapp; print(raterapp.__file__)"], cwd=clone, env=env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert which.stdout.strip() == str(clone / "raterapp" / "__init__.py")  # the clone's code, not the tests'

    base = f"http://127.0.0.1:{port}"
    with open(tmp_path / "web.log", "w") as log:
        server = subprocess.Popen(
            shlex.split(subs(web["command"])), cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(
            lambda: http_status(f"{base}/login/") == 200, timeout=300, what="the web service",
            alive=lambda: server.poll() is None,
        )  # fmt: skip

        # docker compose exec web python manage.py user_create ..., as the section shows it.
        made = {}
        for line in (line for line in lines if "manage.py user_create" in line):
            argv = _user_create_argv(line)
            role = argv[argv.index("--role") + 1]
            result = subprocess.run(
                ["python", "manage.py", *argv], cwd=clone, env=env, input=f"{PASSWORDS[role]}\n",
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            logs[f"$ {shlex.join(argv)}"] = result.stdout + result.stderr
            assert result.returncode == 0, result.stdout + result.stderr
            assert result.stdout == f"Created {role} {argv[1]!r}: they sign in at /login/.\n"
            made[role] = argv[1]
        assert set(made) == {"admin", "engineer"}, lines

        # Each signs in through the login form and reaches the pages of their role.
        for role, username in made.items():
            person = Session(base, username, PASSWORDS[role])
            for path in LANDING[role]:
                status, body = person.get(path)
                assert status == 200, (role, path, status, body[:500])
                assert b'name="password"' not in body, (role, path)  # not the sign-in page again
        refused = subprocess.run(
            ["python", "manage.py", *_user_create_argv(next(line for line in lines if "user_create" in line))],
            cwd=clone, env=env, input="another passphrase 3\n", capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert refused.returncode == 1 and "exists already" in refused.stderr, refused.stderr
        Session(base, made["admin"], PASSWORDS["admin"])  # the password is the first one still
        assert http_status(f"{base}/api/experiments/") == 401  # an API call without credentials
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    logs["web (migrate, gunicorn)"] = (tmp_path / "web.log").read_text()
    assert_logs_clean(logs, what="the install")
