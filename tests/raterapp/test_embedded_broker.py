"""The embedded broker (no Redis: the demo): a worker polling the queue never takes a message before
it is whole. kombu's own file-system transport does (the demo's worker stopped on JSONDecodeError)."""

from __future__ import annotations

import threading
from queue import Empty

from kombu import Connection
from kombu.transport import filesystem

from raterapp import embedded_broker
from raterapp.embedded_broker import file_placed_whole
from tests.raterapp.helpers.settings import settings_loaded

MESSAGES, PADDING = 200, 200_000  # large messages: writing one takes long enough to be caught


def _race(transport: type, folder) -> tuple[list[dict], list[Exception]]:
    """One thread puts MESSAGES messages while another takes them as fast as it can; what the taker
    got, and what it raised."""
    names = ("data_folder_in", "processed_folder", "control_folder", "staging_folder")
    options = {name: str(folder / name) for name in names}
    for path in options.values():
        (folder / path).mkdir()
    options |= {"data_folder_out": options["data_folder_in"], "store_processed": True}
    put_all, got, raised = threading.Event(), [], []

    def take() -> None:
        channel = Connection(transport=transport, transport_options=options).channel()
        while not (put_all.is_set() and len(got) + len(raised) >= MESSAGES):
            try:
                got.append(channel._get("celery"))
            except Empty:
                pass
            except Exception as error:  # noqa: BLE001  # what a worker would stop on, counted
                raised.append(error)

    taker = threading.Thread(target=take)
    taker.start()
    channel = Connection(transport=transport, transport_options=options).channel()
    for number in range(MESSAGES):
        channel._put("celery", {"number": number, "padding": "x" * PADDING})
    put_all.set()
    taker.join(60)
    assert not taker.is_alive()
    return got, raised


def test_a_worker_takes_every_message_whole_while_they_are_being_put(tmp_path):
    got, raised = _race(embedded_broker.Transport, tmp_path)
    assert raised == []
    assert sorted(message["number"] for message in got) == list(range(MESSAGES))
    assert all(message["padding"] == "x" * PADDING for message in got)


def test_kombus_own_transport_hands_out_messages_half_written(tmp_path):
    """The race above finds kombu's fault: the test can fail."""
    got, raised = _race(filesystem.Transport, tmp_path)
    assert raised, f"kombu's transport delivered all {len(got)} messages whole"


def test_a_file_is_never_seen_partial_and_an_existing_one_is_kept_when_asked(tmp_path):
    staging, folder = tmp_path / "staging", tmp_path / "folder"
    staging.mkdir(), folder.mkdir()
    assert file_placed_whole(folder, "a", b"one", staging=str(staging))
    assert file_placed_whole(folder, "a", b"two", staging=str(staging))
    assert (folder / "a").read_bytes() == b"two"
    assert not file_placed_whole(folder, "a", b"three", staging=str(staging), replace=False)
    assert (folder / "a").read_bytes() == b"two"
    assert file_placed_whole(folder, "b", b"four", staging=str(staging), replace=False)
    assert (folder / "b").read_bytes() == b"four"
    assert list(staging.iterdir()) == []


def test_without_redis_the_app_uses_the_embedded_broker(tmp_path):
    loaded = settings_loaded(
        {"SECRET_KEY": "k", "REDIS_URL": "", "CELERY_BROKER_URL": ""},
        "CELERY_BROKER_URL",
        "CELERY_BROKER_TRANSPORT",
        "CELERY_BROKER_TRANSPORT_OPTIONS",
        tmp_path=tmp_path,
    )
    assert loaded["CELERY_BROKER_URL"].startswith("filesystem://")
    assert loaded["CELERY_BROKER_TRANSPORT"] == "raterapp.embedded_broker:Transport"
    staging = loaded["CELERY_BROKER_TRANSPORT_OPTIONS"]["staging_folder"]
    assert staging == str(tmp_path / "data" / "broker-staging")
    transport = Connection(loaded["CELERY_BROKER_URL"], transport=loaded["CELERY_BROKER_TRANSPORT"]).transport
    assert type(transport) is embedded_broker.Transport


def test_with_redis_the_embedded_broker_is_not_configured(tmp_path):
    loaded = settings_loaded(
        {"SECRET_KEY": "k", "REDIS_URL": "redis://cache:6379/3"},
        "CELERY_BROKER_URL",
        "CELERY_BROKER_TRANSPORT",
        tmp_path=tmp_path,
    )
    assert loaded == {"CELERY_BROKER_URL": "redis://cache:6379/3", "CELERY_BROKER_TRANSPORT": None}
