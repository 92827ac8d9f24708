"""The embedded broker (the demo's, and any run without Redis): kombu's file-system transport with
every file written whole before it appears where a reader looks.

kombu (5.x, no fix upstream) creates a message's file in the queue's folder and only then writes
it; a worker polling the folder can move the still-empty file away in between, read nothing and
stop with "Unrecoverable error: JSONDecodeError". The first binding of an exchange has the same
gap. Here each file is written in a staging folder beside the queue's and renamed into place, which
is atomic on one file system: a reader sees no file or the whole file."""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


def file_placed_whole(
    folder: str | os.PathLike[str], name: str, content: bytes, *, staging: str, replace: bool = True
) -> bool:
    """Write ``content`` to ``folder/name`` through ``staging`` (a folder on the same file system),
    so that the name never holds a partial file. With ``replace=False`` an existing file is kept
    and False returned."""
    staged = os.path.join(staging, f"{uuid.uuid4()}.{name}")
    with open(staged, "wb") as file:
        file.write(content)
    target = os.path.join(folder, name)
    try:
        if replace:
            os.replace(staged, target)
            return True
        try:
            os.link(staged, target)  # fails, leaving the file alone, when it exists
        except FileExistsError:
            return False
        return True
    finally:
        if not replace and os.path.exists(staged):
            os.remove(staged)


class Channel(filesystem.Channel):
    """kombu's file-system channel; messages and new exchange tables are placed whole."""

    @property
    def staging_folder(self) -> str:
        return self.transport_options.get("staging_folder", "staging")

    def _put(self, queue, payload, **kwargs):  # type: ignore[override]  # kombu's own two bases disagree
        """Put ``payload`` onto ``queue``: kombu's name (its time orders the queue), placed whole."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        try:
            file_placed_whole(self.data_folder_out, name, str_to_bytes(dumps(payload)), staging=self.staging_folder)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to directory") from exc

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        """kombu's binding, after the exchange's table exists whole (empty): kombu then adds to it
        under its lock instead of creating it."""
        file = self._exchange_file(exchange)
        self.control_folder.mkdir(exist_ok=True)
        if not file.exists():
            try:
                file_placed_whole(
                    file.parent, file.name, str_to_bytes(dumps([])), staging=self.staging_folder, replace=False
                )
            except OSError as exc:
                raise ChannelError(f"Cannot open {file}") from exc
        return super()._queue_bind(exchange, routing_key, pattern, queue)


class Transport(filesystem.Transport):
    Channel = Channel
