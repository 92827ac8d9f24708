"""The production web server for browser tests: gunicorn with uvicorn workers (as docker-compose.yml
runs it) on the test database, the real Redis and the tests' settings, on a free port of the range
this suite's process-level tests use."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from tests.deploy.processes import http_status, wait_until
from tests.e2e.conftest import ROOT, _database_url

PORTS = range(17600, 17700)
PORTS_PER_WORKER = 25


def worker_ports() -> range:
    """This pytest-xdist worker's own share of PORTS (gw0 the first 25, gw1 the next...). With one
    range for all, two workers could both find the same port free before either server bound it,
    and a test then talked to the other worker's server (on the other worker's database: 401)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    start = PORTS.start + PORTS_PER_WORKER * index % len(PORTS)
    return range(start, start + PORTS_PER_WORKER)


def port_in_range() -> int:
    """The first port of this worker's share of PORTS nobody listens on."""
    ports = worker_ports()
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports}")


@contextmanager
def asgi_server_started(log_dir: Path, *, workers: int = 2, environment: dict[str, str] | None = None):
    """``gunicorn raterapp.asgi:application -k raterapp.web_worker.UvicornWorker`` (with ``environment``
    added to the tests'); yield its base URL once it answers, stop it (SIGTERM, then SIGKILL) at the end."""
    port = port_in_range()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        **(environment or {}),
    }
    log_path = log_dir / "gunicorn.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "raterapp.asgi:application", "-k", "raterapp.web_worker.UvicornWorker",
         "--workers", str(workers), "--bind", f"127.0.0.1:{port}", "--graceful-timeout", "3"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_until(
                lambda: http_status(f"{url}/login/") == 200,
                timeout=60,
                what="gunicorn with uvicorn workers",
                alive=lambda: server.poll() is None,
            )
        except AssertionError as error:
            raise AssertionError(f"{error}\n{log_path.read_text()}") from None
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
