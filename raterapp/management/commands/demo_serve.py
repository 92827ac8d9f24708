"""``python manage.py demo_serve``: the demo's processes under one supervisor (``make demo``).

It starts the web server, a Celery worker on both queues, Celery beat (the reconciler,
``raterapp.reconcile``) and the simulated raters, each in a process group of its own, and stops
them all (SIGTERM to each group, SIGKILL after a grace period) when it gets SIGINT (Ctrl-C),
SIGTERM or SIGHUP (the terminal closed), when its parent (``make``) dies or is stopping (SIGINT or
SIGHUP to make alone), or when the web server, the worker or beat exits. The children are kept out
of the terminal's process group so that a closed terminal reaches the supervisor only: a Celery
worker that gets SIGHUP itself restarts instead of stopping. Once the web server answers it prints
the address and how to sign in.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from django.conf import settings
from django.core.management.base import BaseCommand

from raterapp.services.demo import DEMO_PASSWORD

_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Polls (0.2 s apart) that must find the parent blocking a stop signal before the demo stops.
_PARENT_STOPPING_POLLS = 3


def _parent_stopping(parent: int) -> bool:
    """Whether ``parent`` is inside its handler of a stop signal, which blocks that signal while it
    runs (Linux: ``SigBlk`` in /proc). make, sent SIGINT or SIGHUP alone (not to the terminal's
    group), tells its children nothing and waits for them to end before it dies."""
    try:
        with open(f"/proc/{parent}/status") as status:
            blocked = next(int(line.split()[1], 16) for line in status if line.startswith("SigBlk:"))
    except (OSError, StopIteration, ValueError):
        return False
    return any(blocked & (1 << (signum - 1)) for signum in _STOP_SIGNALS)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=0.5) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def _die_with_parent() -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (elsewhere: a no-op)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Command(BaseCommand):
    help = "Run the demo's web server, Celery worker, Celery beat and simulated raters; stop them all together."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000, help="port of the web server on 127.0.0.1")
        parser.add_argument("--pace", type=float, default=0.5, help="seconds between simulated verdicts")
        parser.add_argument("--grace", type=float, default=5.0, help="seconds a child gets to stop before SIGKILL")
        parser.add_argument(
            "--loglevel",
            default="WARNING",
            choices=["DEBUG", "INFO", "WARNING", "ERROR"],
            help="log level of the Celery worker and beat (INFO: every task run, retried or sent)",
        )

    def handle(self, *args, **options):
        stop = []
        for signum in _STOP_SIGNALS:
            signal.signal(signum, lambda signum, frame: stop.append(signum))
        parent = os.getppid()
        _die_with_parent()
        python, manage = sys.executable, sys.argv[0]
        commands = {
            # ASGI like production; embedded (no Redis) its dashboards poll instead of streaming.
            "web": [
                python, "-m", "uvicorn", "raterapp.asgi:application", "--host", "127.0.0.1",
                "--port", str(options["port"]), "--log-level", "warning", "--timeout-graceful-shutdown", "3",
            ],
            "worker": [
                python, "-m", "celery", "-A", "raterapp", "worker", "--pool=solo", f"--loglevel={options['loglevel']}",
                "-Q", "preparation,live", "--hostname", f"demo-{os.getpid()}@%h",
                "--without-gossip", "--without-mingle",
            ],
            "beat": [
                python, "-m", "celery", "-A", "raterapp", "beat", f"--loglevel={options['loglevel']}",
                "--schedule", str(settings.DATA_DIR / "celerybeat-schedule"),
            ],
            "raters": [python, manage, "demo", "--simulate", "--pace", str(options["pace"])],
        }  # fmt: skip
        children = {name: self._start(command) for name, command in commands.items()}
        address, announced, parent_stopping = f"http://127.0.0.1:{options['port']}/", False, 0
        try:
            while not stop and os.getppid() == parent and parent_stopping < _PARENT_STOPPING_POLLS:
                if any(children[name].poll() is not None for name in ("web", "worker", "beat")):
                    break
                if not announced and _answers(f"{address}login/"):
                    self._announce(address)
                    announced = True
                parent_stopping = parent_stopping + 1 if _parent_stopping(parent) else 0
                time.sleep(0.2)
        finally:
            self._stop_all(children.values(), grace=options["grace"])

    def _announce(self, address: str) -> None:
        self.stdout.write(
            f"The demo is ready at {address}: sign in as engineer or admin to follow the experiment, or as "
            f"rater to judge pairs, password {DEMO_PASSWORD}. Ctrl-C stops it."
        )
        self.stdout.flush()

    @staticmethod
    def _start(command: list[str]) -> subprocess.Popen:
        return subprocess.Popen(command, start_new_session=True, preexec_fn=_die_with_parent)

    @staticmethod
    def _stop_all(children, *, grace: float) -> None:
        for child in children:
            _signal_group(child, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for child in children:
            try:
                child.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(child, signal.SIGKILL)
            child.wait()


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        pass
