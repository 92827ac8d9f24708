"""What keeps a preparation run honest while it works: a heartbeat and a memory cap.

The heartbeat is a thread of the worker process that stamps ``Experiment.heartbeat_at`` every
``PREPARATION_HEARTBEAT_SECONDS``; it dies with the process, so a killed worker shows as a
heartbeat that stops (``preparation_control.preparations_stalled_requeue``).

The memory cap lowers the process's address-space limit (``RLIMIT_AS``) to what it uses now plus
``PREPARATION_MEMORY_LIMIT_MB`` for the run, and restores it afterwards: an allocation past it
raises ``MemoryError`` in the run, which fails the experiment with a message, instead of the
kernel's out-of-memory killer taking the whole worker process down with no word to anyone.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from django.conf import settings
from django.db import connection
from django.utils import timezone

from raterapp.models import Experiment

try:
    import resource
except ImportError:  # Windows: no cap there
    resource = None  # type: ignore[assignment]  # the module, or None where it does not exist

logger = logging.getLogger(__name__)
MIB = 1024 * 1024


def heartbeat_stamp(*, experiment_id: int) -> bool:
    """Stamp the run's heartbeat now; False when it could not be stored (a missed beat is no
    reason to stop the run)."""
    try:
        Experiment.objects.filter(pk=experiment_id).update(heartbeat_at=timezone.now())
        return True
    except Exception:
        logger.warning("experiment %s: heartbeat not stored", experiment_id, exc_info=True)
        return False


@contextlib.contextmanager
def preparation_heartbeat(*, experiment_id: int) -> Iterator[None]:
    """Stamp the experiment's heartbeat every ``PREPARATION_HEARTBEAT_SECONDS`` while the block runs."""
    stop = threading.Event()
    interval = settings.PREPARATION_HEARTBEAT_SECONDS

    def beat() -> None:
        try:
            while not stop.wait(interval):
                heartbeat_stamp(experiment_id=experiment_id)
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"heartbeat-{experiment_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


@contextlib.contextmanager
def memory_capped(*, limit_mb: int) -> Iterator[None]:
    """Allow the process ``limit_mb`` MB of address space beyond what it holds now (no cap for 0)."""
    held = address_space_bytes() if limit_mb and resource is not None else None
    if held is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = held + limit_mb * MIB
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def address_space_bytes() -> int | None:
    """The process's virtual memory size (what ``RLIMIT_AS`` counts), from /proc; None without
    one (not Linux: then there is no cap)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    logger.warning("no /proc/self/status VmSize: preparations run without PREPARATION_MEMORY_LIMIT_MB")
    return None
