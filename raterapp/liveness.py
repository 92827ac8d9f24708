"""docker-compose.yml's healthcheck of the web service: ``python -I /app/raterapp/liveness.py``.

Docker marks a container whose check fails unhealthy, and that is all: compose restarts no
unhealthy container (only Swarm and Kubernetes act on the check). So this check acts itself: when
the liveness path fails three times in a row, 5 s apart, it sends SIGTERM to PID 1 (gunicorn,
exec'd by the service's command), which stops its workers and exits, and the service's
``restart: unless-stopped`` starts the container again. Nothing listening is no reason to: the
migrations run before gunicorn starts. Run as a script, by its path, so that it imports nothing
of the app (the package would bring Celery with it, every 30 s), and isolated (``-I``): Python
would otherwise put this folder first on the import path, where ``selectors/`` hides the
standard library's module of that name.

``python raterapp/liveness.py [URL [PID]]``: another URL and process, for the tests.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import urllib.error
import urllib.request

URL = "http://127.0.0.1:8000/api/health/live/"
NOT_LISTENING = "nothing listening"


def liveness_attempt(url: str, *, timeout: float) -> str:
    """``"ok"``, ``NOT_LISTENING`` or what failed."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return "ok" if response.status == 200 else f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        return NOT_LISTENING if isinstance(exc.reason, ConnectionRefusedError) else f"{exc.reason}"
    except OSError as exc:  # a timeout while reading, a reset connection
        return f"{type(exc).__name__}: {exc}"


def liveness_check(url: str = URL, *, pid: int = 1, attempts: int = 3, pause: float = 5.0, timeout: float = 5.0) -> int:
    """0 when ``url`` answers 200; else 1, after sending ``pid`` SIGTERM if it failed ``attempts``
    times in a row (nothing listening ends the check at once, and sends nothing)."""
    failures = []
    for attempt in range(attempts):
        outcome = liveness_attempt(url, timeout=timeout)
        if outcome in ("ok", NOT_LISTENING):
            return 0 if outcome == "ok" else 1
        failures.append(outcome)
        if attempt + 1 < attempts:
            time.sleep(pause)
    print(f"{url} failed {attempts} times ({'; '.join(failures)}): SIGTERM to process {pid}", file=sys.stderr)
    os.kill(pid, signal.SIGTERM)
    return 1


if __name__ == "__main__":
    sys.exit(liveness_check(*sys.argv[1:2], pid=int(sys.argv[2]) if len(sys.argv) > 2 else 1))
