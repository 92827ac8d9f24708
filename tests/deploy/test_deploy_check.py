"""`manage.py check --deploy` is clean under the compose settings: the web service's command
environment (the Dockerfile's ENV, .env.example copied unchanged as .env, the service's own
environment), with only the data volume moved to a temporary folder. The warnings it silences
are the ones settings.py justifies in writing, and only those."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .shape import ROOT, Substitutions, base_environment, compose_read, dockerfile_read, env_file_read

pytestmark = pytest.mark.slow
JUSTIFIED = {"security.W008", "security.W021"}  # settings.py: SSL redirect by the proxy, HSTS preload opt-in


def web_environment(tmp_path) -> dict[str, str]:
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    image, web = dockerfile_read(), compose_read()["services"]["web"]
    paths = Substitutions([("/app/staticfiles", str(tmp_path / "staticfiles")), ("/data", str(tmp_path / "data"))])
    environment = {**image.env, **env_file_read(tmp_path / ".env"), **web["environment"]}
    env = {**base_environment(), **{name: paths(str(value)) for name, value in environment.items()}}
    assert paths.unused() == []
    return env


def test_check_deploy_is_clean_under_the_compose_settings(tmp_path):
    env = web_environment(tmp_path)
    assert env["DEBUG"] == "false" and env["HTTPS"] == "true"
    result = subprocess.run(
        ["python", "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert re.search(rf"System check identified no issues \({len(JUSTIFIED)} silenced\)\.", output), output
    code = "import json, raterapp.settings as s; print(json.dumps(s.SILENCED_SYSTEM_CHECKS))"
    silenced = subprocess.run(["python", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert set(eval(silenced.stdout)) == JUSTIFIED  # noqa: S307 - our own JSON list
    settings_text = (ROOT / "raterapp" / "settings.py").read_text()
    for check in JUSTIFIED:
        assert re.search(rf"# {check.split('.')[1]}, \w", settings_text), f"{check} silenced without a reason"


def test_without_https_check_deploy_names_the_insecure_settings(tmp_path):
    """The check can fail: plain http in production is four warnings, none silenced."""
    env = {**web_environment(tmp_path), "HTTPS": "false", "SECURE_HSTS_SECONDS": "0"}
    result = subprocess.run(
        ["python", "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = set(re.findall(r"\(security\.(W\d+)\)", result.stdout + result.stderr))
    assert result.returncode != 0
    assert found == {"W004", "W008", "W012", "W016"}
