"""The uploaded files of an experiment as local files, and errors that name them as the user did."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from raterapp.models import Experiment


@dataclass(frozen=True)
class LocalUpload:
    """An uploaded file: a local ``path`` with its extension, and the ``name`` the user gave it."""

    kind: str
    path: str
    name: str


@contextmanager
def uploads_local_open(*, experiment: Experiment) -> Iterator[dict[str, LocalUpload]]:
    """Each upload of the experiment by kind, as a local file for the metrics_core readers.

    A file-system storage hands out its own paths; any other storage is copied to a
    temporary folder that is removed on exit.
    """
    with tempfile.TemporaryDirectory(prefix=f"experiment-{experiment.pk}-") as folder:
        uploads = {}
        for row in experiment.files.all():
            try:
                path = row.file.path
            except NotImplementedError:
                path = os.path.join(folder, row.kind + os.path.splitext(cast(str, row.file.name))[1])
                with row.file.open("rb") as source, open(path, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
            uploads[row.kind] = LocalUpload(row.kind, path, row.original_name)
        yield uploads


def upload_message_for_user(*, message: str, uploads: dict[str, LocalUpload]) -> str:
    """``message`` with every local path replaced by the name the user uploaded it as."""
    for upload in sorted(uploads.values(), key=lambda u: len(u.path), reverse=True):
        message = message.replace(upload.path, upload.name)
    return message
