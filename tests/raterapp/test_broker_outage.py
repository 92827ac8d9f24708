"""The worker's side of a broker outage, without processes (tests/deploy/test_chaos.py has
them): kombu's closed connection is a connection error, and the worker retries for ever."""

from types import SimpleNamespace

import pytest
import redis
from kombu import Connection
from kombu.transport.redis import Channel, Transport

from raterapp.celery import app


def test_a_closed_broker_connection_is_a_connection_error_that_kombu_ignores_while_closing():
    closed = SimpleNamespace(connection=SimpleNamespace(client=None))
    with pytest.raises(redis.exceptions.ConnectionError, match="the broker connection was closed"):
        Channel._connparams(closed)
    assert any(issubclass(redis.exceptions.ConnectionError, error) for error in Transport.connection_errors)


def test_an_open_connection_still_gives_its_parameters():
    channel = Channel.__new__(Channel)  # a channel of a connection never opened: no Redis needed
    channel.connection = Connection("redis://redis.example:6390/2").transport
    for name in ("max_connections", "socket_timeout", "socket_connect_timeout", "socket_keepalive",
                 "socket_keepalive_options", "health_check_interval", "retry_on_timeout", "client_name"):
        setattr(channel, name, None)
    params = channel._connparams()
    assert (params["host"], params["port"], params["db"]) == ("redis.example", 6390, 2)


def test_the_worker_reconnects_for_ever_and_gives_back_what_it_held():
    assert app.conf.broker_connection_retry is True
    assert app.conf.broker_connection_retry_on_startup is True
    assert app.conf.broker_connection_max_retries is None
    assert app.conf.worker_cancel_long_running_tasks_on_connection_loss is False  # tests/deploy/test_chaos.py
    assert app.conf.task_acks_late is True
