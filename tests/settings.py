"""Test settings: the app's settings, with fast password hashing and a fixed secret.

The database comes from ``DATABASE_URL`` like in production: CI sets it to the real
PostgreSQL (and ``REDIS_URL`` to the real Redis); without it, tests run on SQLite.
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret")

from raterapp.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Under pytest-xdist (make test-fast), each worker process has its own test database (pytest-django
# adds the suffix), and here its own uploads folder, cache keys and Celery queues, so that two
# workers never read each other's files, debounce keys or tasks.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
MEDIA_ROOT = DATA_DIR / ("test-media" + (f"-{XDIST_WORKER}" if XDIST_WORKER else ""))  # noqa: F405
if XDIST_WORKER:
    for _cache in CACHES.values():  # noqa: F405
        _cache["KEY_PREFIX"] = XDIST_WORKER
    CELERY_TASK_DEFAULT_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}-{XDIST_WORKER}"  # noqa: F405
    REDIS_CHANNEL_PREFIX = f"{XDIST_WORKER}:"
    CELERY_TASK_ROUTES = {  # noqa: F405
        name: {"queue": f"{route['queue']}-{XDIST_WORKER}"}
        for name, route in CELERY_TASK_ROUTES.items()  # noqa: F405
    }
WHITENOISE_USE_FINDERS = WHITENOISE_AUTOREFRESH = True

# A file, not memory, so that a Celery worker process in the end-to-end tests shares it.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-db.sqlite3")}  # noqa: F405

# Pages use {% static %}; the manifest storage of production needs collectstatic first.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405

# The suite signs in and calls the API far more often than any person: the lockout and the API
# rates are tested on their own (tests/raterapp/test_limits.py) with these set back.
LOGIN_FAILURE_LIMIT = 1_000_000
REST_FRAMEWORK = {  # noqa: F405
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {scope: "1000000/min" for scope in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]},  # noqa: F405
}

# Most of the suite is about judging, not about who may judge or how much: its experiments open
# to every rater with no budget limit. The production defaults (open to assigned raters, a budget
# of 0) are tested with these set back (tests/raterapp/services/test_new_experiment_defaults.py).
NEW_EXPERIMENT_OPEN_TO = "all"
NEW_EXPERIMENT_BUDGET = None


# Playwright's page.wait_for_function polls a predicate it evaluates from a string, which the
# policy's script-src refuses without 'unsafe-eval'. The browser tests allow it; every other
# directive stays, so inline scripts and styles still show up as console errors there, and
# tests/browser/test_csp.py checks the pages under the production policy itself.
CONTENT_SECURITY_POLICY = {  # noqa: F405
    **CONTENT_SECURITY_POLICY,  # noqa: F405
    "DIRECTIVES": {
        **CONTENT_SECURITY_POLICY["DIRECTIVES"],  # noqa: F405
        "script-src": [*CONTENT_SECURITY_POLICY["DIRECTIVES"]["script-src"], "'unsafe-eval'"],  # noqa: F405
    },
}
