"""Settings, read from environment variables only (every one is listed in .env.example).

Production differs from the demo only by environment: with ``DATABASE_URL`` and
``REDIS_URL`` unset, the app runs on SQLite with a file-system Celery broker under
``DATA_DIR`` (the embedded demo default); with them set, on PostgreSQL and Redis.
A variable set to the empty string counts as unset (``cp .env.example .env`` leaves
several empty), so its default applies.
"""

from __future__ import annotations

import math
import os
import secrets
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from raterapp.conf.api_schema import *  # noqa: F403
from raterapp.conf.celery_queues import *  # noqa: F403
from raterapp.conf.django_apps import *  # noqa: F403
from raterapp.conf.log import logging_config
from raterapp.conf.rest_framework import REST_FRAMEWORK_CLASSES


class _Env(environ.Env):
    """django-environ, reading ``NAME=`` (empty) as unset."""

    def get_value(self, var, cast=None, default=environ.Env.NOTSET, parse_default=False):
        if self.ENVIRON.get(f"{self.prefix}{var}") == "":
            if default is self.NOTSET:
                raise ImproperlyConfigured(f"Set the {var} environment variable")
            return default
        return super().get_value(var, cast=cast, default=default, parse_default=parse_default)

    def seconds(self, var: str, default: float) -> float:
        """A duration, as ``default``'s type (int or float); refused at start unless a finite number ≥ 0."""
        try:
            value = self.get_value(var, cast=type(default), default=default)
        except ValueError:
            value = math.nan
        if not 0 <= value < math.inf:
            number = "a whole number" if isinstance(default, int) else "a number"
            raise ImproperlyConfigured(f"{var} must be {number} of seconds ≥ 0, got {self.ENVIRON.get(var)!r}")
        return value


def _secret_key_from_file(path: str) -> str:
    """The key kept in ``path``; a random one is written there first if the file does not exist.

    Several processes (web, workers) may start at once: each writes its candidate to a file of
    its own and links it into place, and whichever link lands first is the key they all read.
    """
    target = Path(path)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        candidate = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        candidate.write_text(secrets.token_urlsafe(50))
        candidate.chmod(0o600)
        try:
            os.link(candidate, target)
        except FileExistsError:
            pass
        finally:
            candidate.unlink()
    key = target.read_text().strip()
    if not key:
        raise ImproperlyConfigured(f"SECRET_KEY_FILE {path} is empty")
    return key


BASE_DIR = Path(__file__).resolve().parent.parent
env = _Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
DATA_DIR = Path(env.str("DATA_DIR", default=str(BASE_DIR / ".data")))
DATA_DIR.mkdir(parents=True, exist_ok=True)
# Production: SECRET_KEY, or SECRET_KEY_FILE naming a file that holds it (created with a random
# key on first start; docker-compose.yml keeps it in the data volume). Never a default outside DEBUG.
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY and env.str("SECRET_KEY_FILE", default=""):
    SECRET_KEY = _secret_key_from_file(env.str("SECRET_KEY_FILE"))
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("Set the SECRET_KEY environment variable (or SECRET_KEY_FILE)")
    SECRET_KEY = "insecure-demo-key-set-SECRET_KEY"
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])


DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'db.sqlite3'}")}
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded demo has three writers (web, worker, simulated raters): let them queue.
    DATABASES["default"].setdefault(
        "OPTIONS", {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
# DB_POOL (on under ASGI, see raterapp/asgi.py): PostgreSQL connections from a pool per process,
# as Django advises under ASGI instead of CONN_MAX_AGE; DB_POOL_MAX_SIZE bounds each process's share.
if env.bool("DB_POOL", default=False) and DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env.int("DB_POOL_MAX_SIZE", default=10),
        "timeout": 10,
    }
    # The pool checks a connection before a request gets it (Django passes psycopg_pool's
    # check_connection): one the server closed (a restart, a failover, an idle reaper) is replaced.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Requests a web worker runs in Django at once under ASGI (raterapp/asgi.py; 0: no limit); the
# rest wait in the worker's event loop, not in threads that fight for the GIL. The live streams
# are not counted. One: the rating loop's requests are short and CPU-bound in Python, so a second
# thread only stretches both (bench/results/judging.md); parallelism comes from the workers.
WEB_THREADS = env.int("WEB_THREADS", default=1)
# Seconds a web worker's database pool may stay exhausted (every connection handed out, requests
# waiting) before the worker ends and gunicorn starts a new one (raterapp/web_worker.py; 0: never).
WEB_POOL_STARVED_SECONDS = env.float("WEB_POOL_STARVED_SECONDS", default=30.0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
# Before every Redis channel name (raterapp/services/refresh/live.py): apps sharing one Redis stay apart.
REDIS_CHANNEL_PREFIX = env.str("REDIS_CHANNEL_PREFIX", default="")
# The embedded broker: folders under DATA_DIR (the demo has a DATA_DIR of its own, see the
# Makefile, so it never shares a broker with the tests). "localhost" only keeps kombu from
# warning that no host name was given.
FILESYSTEM_BROKER_URL = "filesystem://localhost/"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or FILESYSTEM_BROKER_URL)
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's file-system transport with every file placed whole (raterapp/embedded_broker.py).
    CELERY_BROKER_TRANSPORT = "raterapp.embedded_broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, str | float] = {
        "data_folder_in": str(DATA_DIR / "broker"),
        "data_folder_out": str(DATA_DIR / "broker"),
        "processed_folder": str(DATA_DIR / "broker-processed"),
        "control_folder": str(DATA_DIR / "broker-control"),
        "staging_folder": str(DATA_DIR / "broker-staging"),
    }
    for folder in ("broker", "broker-processed", "broker-control", "broker-staging"):
        (DATA_DIR / folder).mkdir(exist_ok=True)
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Redis hands an unacknowledged message to another worker after this many seconds: longer than the
# longest task (the preparations' one-hour limit), or a running preparation would start twice. A
# whole worker lost mid-task is re-queued sooner by the heartbeat reconciler (below).
CELERY_VISIBILITY_TIMEOUT = env.seconds("CELERY_VISIBILITY_TIMEOUT", 7200)
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
# Periodic tasks (celery beat). raterapp/services/preparation/control.py: preparations whose
# heartbeat stopped are re-queued (resuming at their step) or, after PREPARATION_MAX_ATTEMPTS
# runs, failed with a message.
PREPARATION_HEARTBEAT_SECONDS = env.seconds("PREPARATION_HEARTBEAT_SECONDS", 10.0)
PREPARATION_STALL_SECONDS = env.seconds("PREPARATION_STALL_SECONDS", 60)
PREPARATION_RECONCILE_SECONDS = env.seconds("PREPARATION_RECONCILE_SECONDS", 20.0)
PREPARATION_MAX_ATTEMPTS = env.int("PREPARATION_MAX_ATTEMPTS", default=3)
# Memory a preparation may take beyond what its worker process holds when it starts (an address-space
# limit in the process, lifted afterwards): past it the experiment fails saying so, instead of the
# kernel killing the worker. 0: no limit. The in-memory engine only (Dask's cluster manages its own).
PREPARATION_MEMORY_LIMIT_MB = env.int("PREPARATION_MEMORY_LIMIT_MB", default=8192)
# Celery beat (docker-compose.yml's "beat", the demo's supervisor): the reconciler dispatches
# side effects the broker missed (raterapp/services/reconcile.py). A run not started within one
# interval is dropped: the next one does the same work.
RECONCILE_INTERVAL_SECONDS = env.seconds("RECONCILE_INTERVAL_SECONDS", 10.0)
# Estimates that lag the verdicts for longer than this count as stale: the dashboard says so and
# the reconciler recomputes them (a normal refresh takes ESTIMATES_DEBOUNCE_SECONDS and a moment).
ESTIMATES_STALE_SECONDS = env.seconds("ESTIMATES_STALE_SECONDS", 15.0)
CELERY_BEAT_SCHEDULE = {
    "reconcile": {
        "task": "raterapp.reconcile",
        "schedule": RECONCILE_INTERVAL_SECONDS,
        "options": {"expires": RECONCILE_INTERVAL_SECONDS},
    },
    "preparations-stalled-requeue": {
        "task": "raterapp.preparations_stalled_requeue",
        "schedule": PREPARATION_RECONCILE_SECONDS,
    },
}

# "default" fails soft while Redis is away (raterapp/cache.py); "debounce" (the pending keys of
# raterapp/services/scheduling.py) raises, so that the outbox keeps the effect and tries again.
_DATABASE_CACHE = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "raterapp_cache"}
_REDIS_POOL = {"pool_class": "raterapp.cache.SharedConnectionPool"}
CACHES = {
    "default": (
        {"BACKEND": "raterapp.cache.FailSoftRedisCache", "LOCATION": REDIS_URL, "OPTIONS": _REDIS_POOL}
        if REDIS_URL
        else _DATABASE_CACHE
    ),
    "debounce": (
        {"BACKEND": "raterapp.cache.SharedRedisCache", "LOCATION": REDIS_URL, "OPTIONS": dict(_REDIS_POOL)}
        if REDIS_URL
        else dict(_DATABASE_CACHE)
    ),
}

# raterapp/services/accounts/login_limits.py: wrong passwords before a username is locked out, and for how long.
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
LOGIN_LOCKOUT_SECONDS = env.seconds("LOGIN_LOCKOUT_SECONDS", 900)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Outside the data volume: the image bakes its static files in at build time (Dockerfile).
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(DATA_DIR / "media")))
MEDIA_URL = "media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if not DEBUG
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Without collectstatic (DEBUG, tests) whitenoise serves straight from the finders.
WHITENOISE_USE_FINDERS = WHITENOISE_AUTOREFRESH = env.bool("WHITENOISE_AUTOREFRESH", default=DEBUG)
# Uploads above 2.5 MB stream to temporary files instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_MEMORY_SIZE = 10_485_760

# API tokens (raterapp/services/accounts/api_tokens.py): days a new token works; its owner or an admin
# may revoke it sooner.
API_TOKEN_TTL_DAYS = env.int("API_TOKEN_TTL_DAYS", default=30)
# The most rows one page of the API gives (?limit=).
API_MAX_PAGE_SIZE = env.int("API_MAX_PAGE_SIZE", default=1000)
# The API's classes (raterapp/conf/rest_framework.py) and its rates per period: anonymous callers by
# address, signed-in users per user (whatever the authentication), and per user the views of a
# throttle_scope: a rater's polls and the rating loop (.env.example sizes them).
REST_FRAMEWORK = {
    **REST_FRAMEWORK_CLASSES,
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_RATE_ANON", default="120/min"),
        "user": env.str("API_RATE_USER", default="3000/min"),
        "rater_poll": env.str("API_RATE_RATER_POLL", default="60/min"),
        "rating": env.str("API_RATE_RATING", default="600/min"),
    },
}

LOGGING = logging_config(level=env.str("LOG_LEVEL", default="INFO"))

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# HTTPS=true when users reach the app over https (a TLS-terminating proxy in front of gunicorn
# that sets X-Forwarded-Proto): cookies are then Secure-only. Plain http (the compose file as it
# is, the demo) needs Secure off, or no sign-in would stick.
HTTPS = env.bool("HTTPS", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS)
# Behind a TLS-terminating proxy: the header (as Django names it) and value the proxy sets on
# https requests, so that request.is_secure() holds and links built from the request (invitations,
# API links) are https. Default with HTTPS=true: X-Forwarded-Proto: https. Only behind a proxy that
# sets or strips the header itself: a client could send it too.
SECURE_PROXY_SSL_HEADER = (
    tuple(env.list("SECURE_PROXY_SSL_HEADER", default=["HTTP_X_FORWARDED_PROTO", "https"] if HTTPS else [])) or None
)
if SECURE_PROXY_SSL_HEADER is not None and len(SECURE_PROXY_SSL_HEADER) != 2:
    raise ImproperlyConfigured("SECURE_PROXY_SSL_HEADER is a header and a value, e.g. HTTP_X_FORWARDED_PROTO,https")
# The host (and port) of links from the proxy's X-Forwarded-Host (and -Port) instead of Host.
USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=False)
USE_X_FORWARDED_PORT = env.bool("USE_X_FORWARDED_PORT", default=False)
# The API tells anonymous callers apart by address (their rate): the address the nearest of
# API_NUM_PROXIES proxies saw, from X-Forwarded-For (1 behind the TLS proxy), else the connection's.
# DRF's default, the whole X-Forwarded-For, is whatever a client sends: a new one each time would
# escape the rate.
REST_FRAMEWORK["NUM_PROXIES"] = env.int("API_NUM_PROXIES", default=1 if HTTPS else 0)
# Strict-Transport-Security, only over https: browsers then refuse plain http for this long.
SECURE_HSTS_SECONDS = env.seconds("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
# `manage.py check --deploy` (tests/deploy/test_deploy_check.py): warnings silenced, and why.
SILENCED_SYSTEM_CHECKS = []
if SECURE_PROXY_SSL_HEADER and not SECURE_SSL_REDIRECT:
    # W008, no SECURE_SSL_REDIRECT: behind the TLS proxy, the proxy redirects http to https; a
    # redirect here would also loop on the health checks, which reach gunicorn over plain http.
    SILENCED_SYSTEM_CHECKS.append("security.W008")
if SECURE_HSTS_SECONDS and not SECURE_HSTS_PRELOAD:
    # W021, no HSTS preload: being preloaded into browsers is a commitment for the whole domain
    # that takes months to undo; the operator opts in with SECURE_HSTS_PRELOAD=true.
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# Content-Security-Policy (django-csp): scripts, styles, fonts and requests from this server only;
# no inline script, no inline style attribute, no plugin, no framing. Item pictures come from
# wherever the catalogue points (CSP_IMG_SRC). Two pages relax it for what they embed: ReDoc
# (/api/redoc/, inline styles and a blob: worker) and DRF's browsable API (style attributes; see
# raterapp/api/renderers.py). CSP_REPORT_ONLY=true sends it as a report-only header (to try a
# change), CSP_REPORT_URI collects violation reports.
# (Lower-case names: django-csp refuses settings named like its former CSP_* ones.)
_csp_img_src = env.list("CSP_IMG_SRC", default=["'self'", "data:", "https:", "http:"])
_csp_report_uri = env.str("CSP_REPORT_URI", default="")
_CSP = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": _csp_img_src,
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        **({"report-uri": [_csp_report_uri]} if _csp_report_uri else {}),
    }
}
if env.bool("CSP_REPORT_ONLY", default=False):
    CONTENT_SECURITY_POLICY_REPORT_ONLY = _CSP
else:
    CONTENT_SECURITY_POLICY = _CSP

# Raters' leases on pairs and the live estimates channel.
LEASE_SECONDS = env.seconds("LEASE_SECONDS", 120)
UNDO_SECONDS = env.seconds("UNDO_SECONDS", 600)

# What a new experiment starts with; admins change both per experiment afterwards (its budget,
# its assigned raters or "open to all raters"). NEW_EXPERIMENT_BUDGET: the verdicts its budget
# allows, a whole number or "unlimited" (default 0: nothing is spent until an admin grants a
# budget). NEW_EXPERIMENT_OPEN_TO: "assigned" (default: only raters an admin assigns may rate
# it) or "all" (every rater, as soon as it is prepared, until raters are assigned).
NEW_EXPERIMENT_BUDGET = env.str("NEW_EXPERIMENT_BUDGET", default="0").strip().lower()
if NEW_EXPERIMENT_BUDGET == "unlimited":
    NEW_EXPERIMENT_BUDGET = None
elif NEW_EXPERIMENT_BUDGET.isdigit():
    NEW_EXPERIMENT_BUDGET = int(NEW_EXPERIMENT_BUDGET)
else:
    raise ImproperlyConfigured("NEW_EXPERIMENT_BUDGET must be a whole number of verdicts or 'unlimited'")
NEW_EXPERIMENT_OPEN_TO = env.str("NEW_EXPERIMENT_OPEN_TO", default="assigned").strip().lower()
if NEW_EXPERIMENT_OPEN_TO not in {"assigned", "all"}:
    raise ImproperlyConfigured("NEW_EXPERIMENT_OPEN_TO must be 'assigned' or 'all'")
# Most of the time from a verdict to the open dashboards: a burst within it shares one recompute.
# At most one recompute per experiment runs and one waits, whatever the pace of verdicts.
ESTIMATES_DEBOUNCE_SECONDS = env.seconds("ESTIMATES_DEBOUNCE_SECONDS", 0.25)
# The dashboard's live stream (raterapp/api/events.py): a comment every EVENTS_HEARTBEAT_SECONDS
# keeps proxies from closing an idle stream; the server re-reads the dashboard's version at that
# pace too (for changes nothing publishes: edits, batches), and ends a stream after
# EVENTS_LIFETIME_SECONDS (the browser reconnects with Last-Event-ID).
EVENTS_HEARTBEAT_SECONDS = env.seconds("EVENTS_HEARTBEAT_SECONDS", 15.0)
EVENTS_LIFETIME_SECONDS = env.seconds("EVENTS_LIFETIME_SECONDS", 600.0)
# The streams of one experiment share a Redis subscription per web worker process, but each re-reads
# the dashboard on every change: at most this many per user and in all, per web worker process;
# one more is told to poll (an `unavailable` event) instead.
EVENTS_STREAMS_PER_USER = env.int("EVENTS_STREAMS_PER_USER", default=8)
EVENTS_STREAMS_PER_PROCESS = env.int("EVENTS_STREAMS_PER_PROCESS", default=200)
# ΔRecall and IQ: a bootstrap of this many replicates (seconds at 100k draws), so it runs
# in its own task after the snapshots, at most once per DERIVED_DEBOUNCE_SECONDS.
DERIVED_BOOTSTRAP_REPLICATES = env.int("DERIVED_BOOTSTRAP_REPLICATES", default=1000)
DERIVED_DEBOUNCE_SECONDS = env.seconds("DERIVED_DEBOUNCE_SECONDS", 2.0)
# The rater-aware estimates (Dawid–Skene, abcde-spec §13) refit the raters in every replicate.
RATER_AWARE_BOOTSTRAP_REPLICATES = env.int("RATER_AWARE_BOOTSTRAP_REPLICATES", default=200)
# At most one refit per this many seconds: a burst of verdicts shares one (the fit takes seconds).
RATER_AWARE_DEBOUNCE_SECONDS = env.seconds("RATER_AWARE_DEBOUNCE_SECONDS", 10.0)
# Each rater's agreement with the others (the raters' lists): recomputed after the snapshots, in
# each experiment and across all of them, at most once per this many seconds (it reads every
# replicated verdict of its scope).
RATER_AGREEMENT_DEBOUNCE_SECONDS = env.seconds("RATER_AGREEMENT_DEBOUNCE_SECONDS", 10.0)

# Populations beyond one machine (metrics_core.dask_backend): with a scheduler address the
# worker's preparation of Parquet items (upload or location) runs on that Dask cluster; without
# one, Parquet uploads above DASK_THRESHOLD_BYTES run on Dask in the worker (out of core).
DASK_SCHEDULER_ADDRESS = env.str("DASK_SCHEDULER_ADDRESS", default="")
DASK_THRESHOLD_BYTES = env.int("DASK_THRESHOLD_BYTES", default=2 * 1024**3)
# Where engineers may point an experiment at (folders or fsspec URL prefixes, comma-separated,
# e.g. "s3://clusterings/,/data/shared/"); none by default: the web server must not read any
# path it is given.
DATA_LOCATIONS = env.list("DATA_LOCATIONS", default=[])

# Limits on uploads (raterapp/services/experiments/upload_limits.py at the request; field lengths and NUL
# bytes by the preparation). A file over one is refused, whole, with the file and the problem.
UPLOAD_MAX_BYTES = env.int("UPLOAD_MAX_BYTES", default=4 * 1024**3)
UPLOAD_MAX_ROWS = env.int("UPLOAD_MAX_ROWS", default=50_000_000)
# A Parquet file's size once decoded (dictionary-encoded text counted as decoded): a small file
# must not expand past this.
UPLOAD_MAX_EXPANDED_BYTES = env.int("UPLOAD_MAX_EXPANDED_BYTES", default=16 * 1024**3)
# The longest text cell of a catalogue (titles, descriptions, URLs, attributes), in characters.
UPLOAD_MAX_FIELD_CHARS = env.int("UPLOAD_MAX_FIELD_CHARS", default=10_000)

# Rater quality flags (raterapp/selectors/raters.py) and the optional automatic pause.
# too_fast: median seconds per verdict below RATER_MIN_SECONDS, over at least
# RATER_MIN_TIMED_VERDICTS timed verdicts; low_gold_accuracy: gold accuracy below
# RATER_MIN_GOLD_ACCURACY on at least RATER_MIN_GOLD_ANSWERS sure gold answers.
RATER_MIN_SECONDS = env.seconds("RATER_MIN_SECONDS", 2.0)
RATER_MIN_TIMED_VERDICTS = env.int("RATER_MIN_TIMED_VERDICTS", default=10)
RATER_MIN_GOLD_ACCURACY = env.float("RATER_MIN_GOLD_ACCURACY", default=0.7)
RATER_MIN_GOLD_ANSWERS = env.int("RATER_MIN_GOLD_ANSWERS", default=10)
RATER_AUTO_PAUSE = env.bool("RATER_AUTO_PAUSE", default=False)
