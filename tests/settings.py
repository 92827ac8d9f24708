"""Test settings: the app's settings, with fast password hashing and a fixed secret.

The database comes from ``DATABASE_URL`` like in production: CI sets it to the real
PostgreSQL (and ``REDIS_URL`` to the real Redis); without it, tests run on SQLite.
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret")

from raterapp.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MEDIA_ROOT = DATA_DIR / "test-media"  # noqa: F405
WHITENOISE_USE_FINDERS = WHITENOISE_AUTOREFRESH = True

# A file, not memory, so that a Celery worker process in the end-to-end tests shares it.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-db.sqlite3")}  # noqa: F405

# Pages use {% static %}; the manifest storage of production needs collectstatic first.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
