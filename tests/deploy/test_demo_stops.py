"""``make demo`` stops every process it started, however it is stopped: Ctrl-C (SIGINT to the
terminal's process group), a closed terminal (SIGHUP to it), SIGTERM or SIGINT to ``make`` alone
(make then waits for its children and tells them nothing: issue 34's demo kept running). It says
where it is once the web server answers, and a second ``make demo`` signs no one out.

Each run is the real ``make demo`` on a free port, with a data folder of its own (SQLite and the
file-system broker, never the tests' or the developer's demo), shared by the three runs so that
only the first one migrates and builds the demo experiment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from .processes import (
    NOT_INHERITED,
    Session,
    assert_logs_clean,
    command_line,
    free_port,
    http_status,
    kill_all,
    running,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[2]
READY = "The demo is ready at http://127.0.0.1:{port}/: sign in as engineer or admin to follow the experiment, or as rater to judge pairs, password abcde-demo. Ctrl-C stops it."


@pytest.fixture(scope="module")
def demo_data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("demo-data")


def _make_demo(data_dir: Path, port: int, log) -> subprocess.Popen:
    env = {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}
    # -o: the test suite runs inside the installed .venv; make must not reinstall it here.
    command = [
        "make",
        "--no-print-directory",
        "-o",
        ".venv/.installed",
        "demo",
        f"DEMO_PORT={port}",
        f"DEMO_DATA_DIR={data_dir}",
        f"BIN={Path(sys.executable).parent}",
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "how", ["SIGINT to the terminal's group", "SIGHUP to the terminal's group", "SIGTERM to make", "SIGINT to make"]
)
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
                timeout=300,
                what="the demo's web server",
                alive=lambda: make.poll() is None,
            )
            log.flush()
            wait_until(
                lambda: READY.format(port=port) in (tmp_path / "demo.log").read_text(),
                timeout=10,
                what="make demo to say where it is",
            )
            supervisor = wait_until(
                lambda: [p for p in tree[0].children(recursive=True) if "demo_serve" in command_line(p)],
                timeout=10,
                what="the supervisor",
            )[0]
            assert supervisor.ppid() == make.pid  # no shell between them: the supervisor sees make die
            wait_until(lambda: len(supervisor.children()) == 4, timeout=30, what="the supervisor's four children")
            tree = descendants()
            commands = [command_line(p) for p in tree]
            assert any("celery" in c and "worker" in c for c in commands), commands
            assert any("uvicorn raterapp.asgi:application" in c for c in commands), commands
            assert any("celery" in c and " beat " in c for c in commands), commands

            signum = getattr(signal, how.split()[0])
            if how.endswith("to make"):
                os.kill(make.pid, signum)
            else:
                os.killpg(make.pid, signum)
            make.wait(timeout=10)
            wait_until(lambda: not running(tree), timeout=10, what="every process of the demo to end")
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


def _stopped(make: subprocess.Popen) -> None:
    """``make demo`` stopped as with Ctrl-C (SIGINT to its group), and waited for."""
    os.killpg(make.pid, signal.SIGINT)
    make.wait(timeout=30)


@pytest.mark.slow
def test_a_second_make_demo_keeps_the_sessions_open_and_the_stream_answers_well_formed(demo_data_dir, tmp_path):
    """Each start once set the demo users' passwords again (make demo's own `manage.py demo` and
    the simulated raters'), which signed out every open session. The events endpoint, which the
    embedded demo answers with 204, once sent a body with it (uvicorn logged an ASGI error for
    every dashboard)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    makes = []
    try:
        for run in ("first", "second"):
            log_path = tmp_path / f"{run}.log"
            with open(log_path, "w") as log:
                makes.append(_make_demo(demo_data_dir, port, log))
            make = makes[-1]
            wait_until(
                lambda: READY.format(port=port) in log_path.read_text(),  # noqa: B023 - called in this turn
                timeout=300, what=f"the {run} make demo to say where it is", alive=lambda: make.poll() is None,  # noqa: B023
            )  # fmt: skip
            # The simulated raters' `manage.py demo --simulate` has made sure of the users too (its
            # line follows that of make demo's own `manage.py demo`).
            wait_until(
                lambda: log_path.read_text().count("Simulated raters:") == 2,  # noqa: B023 - called in this turn
                timeout=60, what="the simulated raters to start",
            )  # fmt: skip
            if run == "first":
                engineer = Session(base, "engineer", "abcde-demo")
                experiments = json.loads(engineer.get("/api/experiments/")[1])["results"]
                _stopped(make)
        status, body = engineer.get("/api/experiments/")
        assert status == 200, (status, body[:300])
        engineer.opener.addheaders = [("Accept", "text/event-stream")]
        status, body = engineer.get(f"/api/experiments/{experiments[0]['id']}/events/")
        assert (status, body) == (204, b"")
        time.sleep(1)  # for uvicorn to log what it found wrong with the answer, if anything
        assert_logs_clean({"the second make demo": (tmp_path / "second.log").read_text()}, what="make demo")
        _stopped(makes[-1])
    except BaseException:
        for run in ("first", "second"):
            if (tmp_path / f"{run}.log").exists():
                print(f"--- {run}\n" + (tmp_path / f"{run}.log").read_text()[-5000:])
        raise
    finally:
        for make in makes:
            if make.poll() is None:
                os.killpg(make.pid, signal.SIGTERM)
                make.wait(timeout=30)
