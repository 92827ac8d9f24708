"""``make demo`` stops every process it started, however it is stopped: Ctrl-C (SIGINT to the
terminal's process group), a closed terminal (SIGHUP to it) or SIGTERM to ``make`` alone.

Each run is the real ``make demo`` on a free port, with a data folder of its own (SQLite and the
file-system broker, never the tests' or the developer's demo), shared by the three runs so that
only the first one migrates and builds the demo experiment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from .processes import free_port, http_status, kill_all, running, wait_until

ROOT = Path(__file__).resolve().parents[2]
# What the demo must not inherit from the test run: the services, Django's test settings, make's own state.
NOT_INHERITED = {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}


@pytest.fixture(scope="module")
def demo_data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("demo-data")


def _make_demo(data_dir: Path, port: int, log) -> subprocess.Popen:
    env = {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}
    # -o: the test suite runs inside the installed .venv; make must not reinstall it here.
    command = ["make", "--no-print-directory", "-o", ".venv/.installed", "demo",
               f"DEMO_PORT={port}", f"DEMO_DATA_DIR={data_dir}", f"BIN={Path(sys.executable).parent}"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGINT to the terminal's group", "SIGHUP to the terminal's group", "SIGTERM to make"])
def test_stopping_make_demo_stops_every_process_it_started(demo_data_dir, tmp_path, how):
    port = free_port()
    with open(tmp_path / "demo.log", "w") as log:
        make = _make_demo(demo_data_dir, port, log)
        tree: list[psutil.Process] = [psutil.Process(make.pid)]

        def descendants() -> list[psutil.Process]:
            found = list(tree)
            for process in running(tree):
                try:
                    found += process.children(recursive=True)
                except psutil.NoSuchProcess:
                    pass
            return list(dict.fromkeys(found))

        try:
            wait_until(
                lambda: http_status(f"http://127.0.0.1:{port}/login/") == 200,
                timeout=300, what="the demo's web server", alive=lambda: make.poll() is None,
            )
            supervisor = wait_until(
                lambda: [p for p in tree[0].children(recursive=True) if "demo_serve" in p.cmdline()],
                timeout=10, what="the supervisor",
            )[0]
            assert supervisor.ppid() == make.pid  # no shell between them: the supervisor sees make die
            wait_until(lambda: len(supervisor.children()) == 4, timeout=30, what="the supervisor's four children")
            tree = descendants()
            commands = [" ".join(p.cmdline()) for p in tree]
            assert any("celery" in c and "worker" in c for c in commands), commands
            assert any("uvicorn raterapp.asgi:application" in c for c in commands), commands
            assert any("celery" in c and " beat " in c for c in commands), commands

            if how.startswith("SIGTERM"):
                os.kill(make.pid, signal.SIGTERM)
            else:
                os.killpg(make.pid, signal.SIGINT if how.startswith("SIGINT") else signal.SIGHUP)
            make.wait(timeout=30)
            wait_until(lambda: not running(tree), timeout=30, what="every process of the demo to end")
            assert http_status(f"http://127.0.0.1:{port}/login/", timeout=1) is None
        except BaseException:
            log.flush()
            print((tmp_path / "demo.log").read_text()[-5000:])
            raise
        finally:
            kill_all(descendants())
            if make.poll() is None:
                make.kill()
                make.wait()
