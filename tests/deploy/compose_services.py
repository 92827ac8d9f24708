"""docker-compose.yml's services as processes of this machine: each service's own ``command:`` and
environment (the Dockerfile's ENV, the env file, the service's ``environment:``), with the
container world's names (service hosts, ports, volume paths) replaced by this machine's."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

from .shape import ROOT, Substitutions, base_environment

APP_SERVICES = ("web", "worker-preparation", "worker-live", "beat", "dask-scheduler", "dask-worker")
COMPOSE_DATABASE_URL = "postgres://rater:rater@db:5432/rater"
COMPOSE_REDIS_URL = "redis://redis:6379/0"


def service_command(service: dict, image, env_file: dict, subs: Substitutions) -> tuple[list[str], dict[str, str]]:
    """The service's command line and environment, as compose would run it, on this machine."""
    environment = {**image.env, **(env_file if "env_file" in service else {}), **service.get("environment", {})}
    env = {**base_environment(), **{key: subs(str(value)) for key, value in environment.items()}}
    return shlex.split(subs(service["command"])), env


def service_start(name: str, command: list[str], env: dict, logs: Path) -> subprocess.Popen:
    """The service in a process group of its own, its output in ``logs/<name>.log``."""
    log = open(logs / f"{name}.log", "w")  # noqa: SIM115 - the process owns it until the end
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def services_stop(processes: dict[str, subprocess.Popen]) -> None:
    """SIGTERM to each service's process group, SIGKILL to what is left after 20 s."""
    for process in processes.values():
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 20
    for process in processes.values():
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def logs_tail(logs: Path, chars: int = 3000) -> str:
    return "\n".join(f"--- {path.name}\n{path.read_text()[-chars:]}" for path in sorted(logs.glob("*.log")))


def queues_emptied(redis_url: str, queues: tuple[str, ...]) -> None:
    """Drop what an earlier run left in the compose queues of this Redis (a test that failed before
    the tasks it asked for ran): those tasks name rows of a test database since dropped, and would
    raise here. Only these queues' messages go (kombu's keys: the queue, its priority lists and
    its unacknowledged ones); the other pytest-xdist workers' queues have names of their own."""
    import redis

    client = redis.Redis.from_url(redis_url)
    for queue in queues:
        client.delete(queue, *client.scan_iter(match=f"{queue}\x06\x16*"))
    for tag, payload in client.hgetall("unacked").items():
        if json.loads(payload)[-1] in queues:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)
