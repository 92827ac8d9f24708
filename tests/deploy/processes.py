"""Helpers of the process-level tests: free ports, HTTP polls, process trees that must end, and the
problems (tasks that raised, exceptions, error records) in the processes' logs."""

from __future__ import annotations

import http.cookiejar
import json
import re
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import psutil

# What the demo must not inherit from the test run: the services, Django's test settings, make's own state.
NOT_INHERITED = {
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DJANGO_SETTINGS_MODULE",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_started(port: int, logs: Path) -> subprocess.Popen:
    """A redis-server of the test's own on ``port`` (no persistence), once it answers."""
    import redis as redis_py

    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=open(logs / "redis.log", "a"),
        stderr=subprocess.STDOUT,  # noqa: SIM115 - closed with the process
    )
    client = redis_py.Redis(port=port, socket_connect_timeout=0.5)
    wait_until(lambda: _pings(client), timeout=10, what="redis-server to answer")
    return server


def _pings(client) -> bool:
    try:
        return client.ping()
    except Exception:
        return False


def http_status(url: str, *, timeout: float = 2.0) -> int | None:
    """The HTTP status of a GET of ``url``, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, urllib.error.URLError):
        return None


class Session:
    """A person's HTTP session with the product: signed in through the login page (its CSRF cookie
    and form), then GETs of pages and API endpoints with the session cookie."""

    def __init__(self, base: str, username: str, password: str):
        self.base = base
        # Secure cookies (production's HTTPS=true) go back over http to 127.0.0.1, as browsers send them to localhost.
        self.cookies = http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(secure_protocols=("https", "http")))
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.opener.open(f"{base}/login/", timeout=30).read()
        token = next(c.value for c in self.cookies if c.name == "csrftoken")
        form = urllib.parse.urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token})
        with self.opener.open(f"{base}/login/", data=form.encode(), timeout=30) as response:
            if response.url.endswith("/login/"):
                raise AssertionError(f"{username} could not sign in at {base}")

    def get(self, path: str, *, timeout: float = 60) -> tuple[int, bytes]:
        try:
            with self.opener.open(f"{self.base}{path}", timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def get_json(self, path: str):
        status, body = self.get(path)
        assert status == 200, f"GET {path}: {status} {body[:500]!r}"
        return json.loads(body)


def wait_until(condition, *, timeout: float, what: str, interval: float = 0.25, alive=None):
    """Poll ``condition()`` until it is truthy; fail naming ``what`` (and early if ``alive()`` is false)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        if alive is not None and not alive():
            raise AssertionError(f"a process ended while waiting for {what}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def running(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``processes`` still alive (a zombie waiting for its reaper counts as ended)."""
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            pass
    return alive


def command_line(process: psutil.Process) -> str:
    """The process's command line, or "" once it has ended: a short-lived child (a shell make
    started, say) may be a zombie or gone between listing the children and reading this."""
    try:
        return " ".join(process.cmdline())
    except psutil.NoSuchProcess:  # ZombieProcess included
        return ""


def kill_all(processes: list[psutil.Process]) -> None:
    """SIGKILL whatever of ``processes`` is left (a test's cleanup after a failure)."""
    for process in running(processes):
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass


# ---- what the product's processes log when something went wrong (test_processes_run_clean.py,
# test_production.py): any task that raised, and any exception or error-level record in any log.

# Celery's trace (celery/app/trace.py): a task that raised, whether expected, retried or not.
TASK_RAISED = re.compile(
    r"Task (?P<task>[\w.]+)\[(?P<id>[\w-]+)\] (?P<how>raised unexpected|raised expected|INTERNAL ERROR|retry|rejected)"
    r":? ?(?P<exc>.*)"
)
TASK_SUCCEEDED = re.compile(r"Task (?P<task>[\w.]+)\[[\w-]+\] succeeded in ")
PROBLEM = re.compile(
    "|".join(
        [
            TASK_RAISED.pattern,
            r"Traceback \(most recent call last\)",
            r"\b(?:ERROR|CRITICAL)/\w",  # Celery's records: [time: ERROR/MainProcess]
            r'"level": "(?:ERROR|CRITICAL)"',  # the app's JSON lines (raterapp/conf/log.py)
            r"\[(?:ERROR|CRITICAL)\]",  # gunicorn
            r"^(?:ERROR|CRITICAL):",  # uvicorn
            r" - (?:ERROR|CRITICAL) - ",  # Dask
            r"Unrecoverable error",  # a Celery worker that stops
            r"Hard time limit .* exceeded",
        ]
    ),
    re.MULTILINE,
)
# The first line of a log record (of any of the processes above): where a traceback ends.
RECORD_START = re.compile(
    r'^(?:\[\d{4}-\d\d-\d\d |\{"time": |(?:INFO|WARNING|ERROR|CRITICAL|DEBUG): |\d{4}-\d\d-\d\d )'
)


@dataclass
class LogProblem:
    log: str
    line: int
    text: str  # the line and the traceback that follows it

    def __str__(self) -> str:
        return f"--- {self.log}, line {self.line}:\n{self.text}"


def log_problems(logs: dict[str, str], *, context: int = 60) -> list[LogProblem]:
    """Every line of ``logs`` (name -> text) that says a task raised, an exception, or an
    error-level record, each with the traceback after it (at most ``context`` lines)."""
    found = []
    for name, text in logs.items():
        lines = text.splitlines()
        covered = -1
        for number, line in enumerate(lines):
            if number <= covered or not PROBLEM.search(line):
                continue
            end = number + 1
            while end < len(lines) and end - number < context and not RECORD_START.match(lines[end]):
                end += 1
            # A traceback the record carries is part of it; the next record starts a new problem.
            covered = end - 1
            found.append(LogProblem(name, number + 1, "\n".join(lines[number:end])))
    return found


def tasks_raised(logs: dict[str, str]) -> Counter:
    """(task, how, exception) -> times, over every log: the one-line summary of what raised."""
    return Counter(
        (match["task"], match["how"], match["exc"].strip()[:300])
        for text in logs.values()
        for match in TASK_RAISED.finditer(text)
    )


def tasks_succeeded(logs: dict[str, str]) -> Counter:
    """Task name -> runs that succeeded (a worker logging at INFO)."""
    return Counter(match["task"] for text in logs.values() for match in TASK_SUCCEEDED.finditer(text))


def assert_logs_clean(logs: dict[str, str], *, what: str, shown: int = 5) -> None:
    """Fail when any of ``logs`` (name -> text) has a problem: the message names every task that
    raised and shows each distinct problem once (up to ``shown``) with its traceback."""
    problems = log_problems(logs)
    if not problems:
        return
    distinct: dict[str, list[LogProblem]] = {}
    for problem in problems:  # the same first line but for times, ids and numbers: the same problem
        distinct.setdefault(re.sub(r"[\d.:,-]+|\[[\w-]+\]", "#", problem.text.splitlines()[0]), []).append(problem)
    summary = [f"{count}× {task} {how}: {exc}" for (task, how, exc), count in tasks_raised(logs).most_common()]
    message = [f"{len(problems)} problem(s) in the logs of {what}"]
    if summary:
        message.append("tasks that raised:\n  " + "\n  ".join(summary))
    for same in list(distinct.values())[:shown]:
        message.append(str(same[0]) + (f"\n(and {len(same) - 1} more like it)" if len(same) > 1 else ""))
    if len(distinct) > shown:
        message.append(f"... and {len(distinct) - shown} other problem(s)")
    raise AssertionError("\n".join(message))
