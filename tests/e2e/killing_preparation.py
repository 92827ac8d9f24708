"""``python -m tests.e2e.killing_preparation worker ARGS...``: a Celery worker whose pool process
kills itself (SIGKILL, as the kernel's out-of-memory killer would) whenever a preparation reaches
sampling: a preparation that can never finish."""

import os
import signal
import sys


def main(worker_argv: list[str]) -> None:
    import django

    django.setup()
    import raterapp.services.preparation.pipeline as preparation
    from raterapp.celery import app

    def killed(**kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    preparation.sampled_rows_build = killed
    app.worker_main(worker_argv)


if __name__ == "__main__":
    main(sys.argv[1:])
