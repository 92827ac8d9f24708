"""``python -m tests.e2e.slow_preparation STARTED RELEASE worker ARGS...``: a Celery worker whose preparation
task is a stand-in that writes STARTED, then holds the worker until the file RELEASE exists (at most
two minutes): a preparation that lasts as long as a test needs."""

import sys
import time
from pathlib import Path

import django

django.setup()

import raterapp.services.preparation as preparation  # noqa: E402
from raterapp.celery import app  # noqa: E402

started, release = Path(sys.argv[1]), Path(sys.argv[2])


def _held_preparation(*, experiment_id: int) -> None:
    started.write_text(str(experiment_id))
    deadline = time.monotonic() + 120
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    started.with_suffix(".done").write_text(str(experiment_id))


preparation.experiment_prepare = _held_preparation
app.worker_main(sys.argv[3:])
