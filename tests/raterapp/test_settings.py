"""The settings module read from the environment, as production and ``cp .env.example .env`` give it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.raterapp.helpers.settings import env_example, settings_loaded

ROOT = Path(__file__).resolve().parents[2]
READ = re.compile(r'env\.\w+\(\s*"([A-Z][A-Z0-9_]*)"')


def test_env_example_lists_every_setting_the_settings_read():
    read = set(READ.findall((ROOT / "raterapp" / "settings.py").read_text()))
    assert "DATABASE_URL" in read and "RATER_AUTO_PAUSE" in read  # the pattern finds them
    assert sorted(read - env_example().keys()) == []
    assert sorted(env_example().keys() - read) == []


def test_empty_variables_read_as_unset(tmp_path):
    loaded = settings_loaded(
        {"SECRET_KEY": "k", "DATABASE_URL": "", "CELERY_BROKER_URL": "", "MEDIA_ROOT": "", "REDIS_URL": "redis://cache:6379/3",
         "CONN_MAX_AGE": "", "LEASE_SECONDS": "", "DATA_LOCATIONS": "", "HTTPS": ""},
        "DATABASES", "CELERY_BROKER_URL", "MEDIA_ROOT", "LEASE_SECONDS", "DATA_LOCATIONS", "SESSION_COOKIE_SECURE",
        tmp_path=tmp_path,
    )
    database = loaded["DATABASES"]["default"]
    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert database["NAME"] == str(tmp_path / "data" / "db.sqlite3")
    assert database["CONN_MAX_AGE"] == 60
    assert loaded["CELERY_BROKER_URL"] == "redis://cache:6379/3"
    assert loaded["MEDIA_ROOT"] == str(tmp_path / "data" / "media")
    assert loaded["LEASE_SECONDS"] == 120
    assert loaded["DATA_LOCATIONS"] == []
    assert loaded["SESSION_COOKIE_SECURE"] is False


def test_env_example_copied_unchanged_loads_with_compose_s_additions(tmp_path):
    compose = {"DATABASE_URL": "postgres://rater:rater@db:5432/rater", "REDIS_URL": "redis://redis:6379/0",
               "SECRET_KEY_FILE": str(tmp_path / "data" / "secret_key")}
    loaded = settings_loaded(
        {**env_example(), **compose}, "DEBUG", "CELERY_BROKER_URL", "SECRET_KEY", "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "CONTENT_SECURITY_POLICY", tmp_path=tmp_path,
    )
    assert loaded["DEBUG"] is False
    assert loaded["CELERY_BROKER_URL"] == "redis://redis:6379/0"
    # The production shape runs behind a TLS proxy: Secure cookies, HSTS, https from the proxy's header.
    assert loaded["CSRF_COOKIE_SECURE"] is True
    assert loaded["SECURE_HSTS_SECONDS"] == 31_536_000
    assert loaded["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert loaded["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]["script-src"] == ["'self'"]
    assert len(loaded["SECRET_KEY"]) >= 50


def test_production_without_a_secret_key_refuses_to_start(tmp_path):
    with pytest.raises(RuntimeError, match="Set the SECRET_KEY environment variable"):
        settings_loaded({"DEBUG": "false", "SECRET_KEY": ""}, "SECRET_KEY", tmp_path=tmp_path)


def test_secret_key_file_is_created_once_then_kept(tmp_path):
    key_file = tmp_path / "keys" / "secret_key"
    first = settings_loaded({"SECRET_KEY_FILE": str(key_file)}, "SECRET_KEY", tmp_path=tmp_path)["SECRET_KEY"]
    second = settings_loaded({"SECRET_KEY_FILE": str(key_file)}, "SECRET_KEY", tmp_path=tmp_path)["SECRET_KEY"]
    assert first == second == key_file.read_text()
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in key_file.parent.iterdir()) == ["secret_key"]


@pytest.mark.parametrize(
    ("environment", "secure"),
    [({}, False), ({"HTTPS": "true"}, True), ({"HTTPS": "true", "SESSION_COOKIE_SECURE": "false"}, False)],
)
def test_cookies_are_secure_when_https_is_configured(tmp_path, environment, secure):
    loaded = settings_loaded({"SECRET_KEY": "k", **environment}, "SESSION_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER", tmp_path=tmp_path)
    assert loaded["SESSION_COOKIE_SECURE"] is secure
    assert loaded["SECURE_PROXY_SSL_HEADER"] == (["HTTP_X_FORWARDED_PROTO", "https"] if "HTTPS" in environment else None)


def test_preparation_and_live_tasks_go_to_their_own_queues():
    from django.conf import settings

    import raterapp.settings as app_settings
    from raterapp.celery import app

    preparation = ("raterapp.experiment_prepare", "raterapp.sample_batch_draw")
    live = ("raterapp.estimates_refresh", "raterapp.derived_refresh", "raterapp.raters_auto_pause")
    queues = {name: app_settings.CELERY_TASK_ROUTES[name]["queue"] for name in preparation + live}
    assert queues == {**dict.fromkeys(preparation, "preparation"), **dict.fromkeys(live, "live")}
    for name in preparation + live:  # Celery routes by these settings (suffixed per pytest-xdist worker here)
        assert app.amqp.router.route({}, name)["queue"].name == settings.CELERY_TASK_ROUTES[name]["queue"]


@pytest.mark.parametrize(
    ("environment", "budget", "open_to"),
    [
        ({}, 0, "assigned"),
        (None, 0, "assigned"),  # .env.example as it is
        ({"NEW_EXPERIMENT_BUDGET": "unlimited", "NEW_EXPERIMENT_OPEN_TO": "all"}, None, "all"),
        ({"NEW_EXPERIMENT_BUDGET": "500"}, 500, "assigned"),
    ],
)
def test_new_experiments_are_closed_and_unfunded_unless_configured(tmp_path, environment, budget, open_to):
    environment = env_example() if environment is None else environment
    names = ("NEW_EXPERIMENT_BUDGET", "NEW_EXPERIMENT_OPEN_TO")
    loaded = settings_loaded({**environment, "SECRET_KEY": "k"}, *names, tmp_path=tmp_path)
    assert (loaded["NEW_EXPERIMENT_BUDGET"], loaded["NEW_EXPERIMENT_OPEN_TO"]) == (budget, open_to)


@pytest.mark.parametrize(
    ("name", "value"), [("NEW_EXPERIMENT_BUDGET", "-3"), ("NEW_EXPERIMENT_BUDGET", "lots"), ("NEW_EXPERIMENT_OPEN_TO", "x")]
)
def test_a_bad_new_experiment_setting_refuses_to_start_naming_it(tmp_path, name, value):
    with pytest.raises(RuntimeError, match=name):
        settings_loaded({"SECRET_KEY": "k", name: value}, name, tmp_path=tmp_path)


@pytest.mark.parametrize(
    ("environment", "hsts", "proxy", "forwarded_host"),
    [
        ({}, 0, None, False),  # development: no HSTS, no proxy header trusted
        ({"HTTPS": "true"}, 31_536_000, ["HTTP_X_FORWARDED_PROTO", "https"], False),
        ({"HTTPS": "true", "SECURE_HSTS_SECONDS": "600"}, 600, ["HTTP_X_FORWARDED_PROTO", "https"], False),
        ({"SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_SCHEME,https", "USE_X_FORWARDED_HOST": "true"}, 0,
         ["HTTP_X_FORWARDED_SCHEME", "https"], True),
    ],
)
def test_hsts_and_the_proxy_headers_come_from_the_environment(tmp_path, environment, hsts, proxy, forwarded_host):
    loaded = settings_loaded(
        {"SECRET_KEY": "k", **environment}, "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "USE_X_FORWARDED_HOST",
        tmp_path=tmp_path,
    )
    assert loaded == {"SECURE_HSTS_SECONDS": hsts, "SECURE_PROXY_SSL_HEADER": proxy, "USE_X_FORWARDED_HOST": forwarded_host}


def test_a_proxy_header_without_its_value_refuses_to_start(tmp_path):
    with pytest.raises(RuntimeError, match="SECURE_PROXY_SSL_HEADER is a header and a value"):
        settings_loaded({"SECRET_KEY": "k", "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO"}, "DEBUG", tmp_path=tmp_path)


def test_the_content_security_policy_comes_from_the_environment(tmp_path):
    names = ("CONTENT_SECURITY_POLICY", "CONTENT_SECURITY_POLICY_REPORT_ONLY")
    strict = settings_loaded({"SECRET_KEY": "k"}, *names, tmp_path=tmp_path)
    assert strict["CONTENT_SECURITY_POLICY_REPORT_ONLY"] is None
    directives = strict["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]
    assert directives["default-src"] == directives["script-src"] == directives["style-src"] == ["'self'"]
    assert directives["img-src"] == ["'self'", "data:", "https:", "http:"] and "report-uri" not in directives
    trial = settings_loaded(
        {"SECRET_KEY": "k", "CSP_REPORT_ONLY": "true", "CSP_IMG_SRC": "'self',https://img.example.org",
         "CSP_REPORT_URI": "https://reports.example.org/csp"}, *names, tmp_path=tmp_path,
    )
    assert trial["CONTENT_SECURITY_POLICY"] is None
    directives = trial["CONTENT_SECURITY_POLICY_REPORT_ONLY"]["DIRECTIVES"]
    assert directives["img-src"] == ["'self'", "https://img.example.org"]
    assert directives["report-uri"] == ["https://reports.example.org/csp"]


@pytest.mark.parametrize(("name", "value", "number"), [
    ("LEASE_SECONDS", "-1", "a whole number"), ("LEASE_SECONDS", "1.5", "a whole number"),
    ("EVENTS_LIFETIME_SECONDS", "nan", "a number"), ("ESTIMATES_DEBOUNCE_SECONDS", "inf", "a number"),
])  # fmt: skip
def test_a_duration_that_is_not_a_finite_number_of_seconds_refuses_to_start(tmp_path, name, value, number):
    with pytest.raises(RuntimeError, match=f"{name} must be {number} of seconds ≥ 0, got '{value}'"):
        settings_loaded({"SECRET_KEY": "k", name: value}, "DEBUG", tmp_path=tmp_path)


def test_durations_keep_the_type_of_their_default(tmp_path):
    loaded = settings_loaded(
        {"SECRET_KEY": "k", "LEASE_SECONDS": "90", "ESTIMATES_DEBOUNCE_SECONDS": "0"},
        "LEASE_SECONDS", "ESTIMATES_DEBOUNCE_SECONDS", "EVENTS_HEARTBEAT_SECONDS", tmp_path=tmp_path,
    )  # fmt: skip
    assert loaded == {"LEASE_SECONDS": 90, "ESTIMATES_DEBOUNCE_SECONDS": 0.0, "EVENTS_HEARTBEAT_SECONDS": 15.0}
    assert isinstance(loaded["LEASE_SECONDS"], int) and isinstance(loaded["ESTIMATES_DEBOUNCE_SECONDS"], float)
