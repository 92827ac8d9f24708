"""The Celery app: Redis as broker in production, a file-system broker for the embedded demo."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")

app = Celery("raterapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["raterapp"])


def _broker_closed_is_a_connection_error() -> None:
    """kombu 5.7's Redis transport (the latest release, no fix upstream) reads the connection's host
    from ``transport.client`` when it restores unacknowledged messages or acknowledges one while
    closing a connection Redis dropped; by then ``client`` is None, and the AttributeError it raises
    is not a connection error, so the worker stops with "Unrecoverable error: 'NoneType' object has
    no attribute 'hostname'". Raised as Redis's ConnectionError instead, it is what kombu ignores
    while closing, and the worker reconnects (tests/deploy/test_chaos.py)."""
    try:
        import redis
        from kombu.transport.redis import Channel
    except ImportError:  # the Redis transport is not installed: nothing to fix
        return
    connparams = Channel._connparams
    if getattr(connparams, "closed_is_connection_error", False):
        return

    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise redis.exceptions.ConnectionError("the broker connection was closed")
        return connparams(self, asynchronous=asynchronous)

    _connparams.closed_is_connection_error = True  # type: ignore[attr-defined]  # marks kombu as patched
    Channel._connparams = _connparams  # type: ignore[method-assign]  # the patch itself


_broker_closed_is_a_connection_error()
