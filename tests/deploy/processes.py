"""Helpers of the process-level tests: free ports, HTTP polls, and process trees that must end."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request

import psutil


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url: str, *, timeout: float = 2.0) -> int | None:
    """The HTTP status of a GET of ``url``, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, urllib.error.URLError):
        return None


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


def kill_all(processes: list[psutil.Process]) -> None:
    """SIGKILL whatever of ``processes`` is left (a test's cleanup after a failure)."""
    for process in running(processes):
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
