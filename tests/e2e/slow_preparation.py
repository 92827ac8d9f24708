"""``python -m tests.e2e.slow_preparation STARTED RELEASE worker ARGS...``: a Celery worker whose
preparation task is a stand-in that writes STARTED, then holds the worker until the file RELEASE
exists (at most two minutes): a preparation that lasts as long as a test needs."""

import sys
import time
from pathlib import Path


def main(started: Path, release: Path, worker_argv: list[str]) -> None:
    import django

    django.setup()
    import raterapp.services.preparation.pipeline as preparation
    from raterapp.celery import app

    def held_preparation(*, experiment_id: int, after_database_error: bool = False) -> None:
        started.write_text(str(experiment_id))
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        started.with_suffix(".done").write_text(str(experiment_id))

    preparation.experiment_prepare = held_preparation
    app.worker_main(worker_argv)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
