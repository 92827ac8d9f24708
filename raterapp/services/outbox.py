"""The transactional outbox: side effects that commit, or roll back, with the data that asks for them.

A service that wants work done once its transaction commits (enqueue a preparation, schedule a
refresh) calls :func:`outbox_add` inside the transaction: a row is written with the data. After
the commit the row is dispatched at once, best-effort: when Redis or the broker does not answer,
the row stays pending, the error is logged on it and the request goes on (its data is stored).
The reconciler (``raterapp.reconcile``, every ``RECONCILE_INTERVAL_SECONDS``) dispatches what is
pending with :func:`outbox_dispatch`.

A dispatcher claims rows (a conditional update) before it hands their effect to the broker, so
two dispatchers never dispatch the same row; one that died holding a claim loses it after
``CLAIM_SECONDS``. Pending rows of one effect (kind and target) are dispatched once for all of
them. An effect is handed over at least once (a crash between the hand-over and the delete
repeats it), which the tasks allow: they are idempotent, and refreshes are debounced.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Min, Q
from django.utils import timezone

from raterapp.exceptions import DATABASE_OUT_OF_REACH
from raterapp.models import OutboxMessage
from raterapp.services import scheduling

logger = logging.getLogger(__name__)
Kind = OutboxMessage.Kind

CLAIM_SECONDS = 300


def outbox_add(*, kind: str, target_id: int) -> OutboxMessage:
    """Record a side effect in the current transaction; dispatched once it commits (or later)."""
    message = OutboxMessage.objects.create(kind=Kind(kind), target_id=target_id)
    outbox_dispatch_on_commit(message)
    return message


def outbox_dispatch_on_commit(message: OutboxMessage) -> None:
    """Dispatch ``message``, a row of the current transaction, once it commits (:func:`outbox_add`,
    or a service that wrote the row in one statement with its data)."""

    # A named function, not a partial: Django names the callback when it logs a failure.
    def outbox_dispatch_after_commit() -> None:
        _row_dispatch(message)

    transaction.on_commit(outbox_dispatch_after_commit, robust=True)


def _row_dispatch(message: OutboxMessage) -> None:
    """Dispatch one pending row whose effect is known. The row is deleted in the transaction that
    hands the effect over, so its lock is the claim (a dispatcher claiming it waits, then finds it
    gone) and there is one commit, one flush of PostgreSQL's log, instead of a claim's and a
    delete's. A failed hand-over rolls the delete back and counts the attempt. Never raises."""
    try:
        with transaction.atomic():
            if not outbox_pending().filter(pk=message.pk)._raw_delete(OutboxMessage.objects.db):
                return  # dispatched already
            EFFECTS[message.kind](message.target_id)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        try:
            OutboxMessage.objects.filter(pk=message.pk).update(attempts=F("attempts") + 1, last_error=error)
        except DATABASE_OUT_OF_REACH as lost:  # the row stays pending all the same
            logger.warning("the outbox could not record a failed dispatch: the database is out of reach: %s", lost)
        except Exception:
            logger.exception("the outbox could not record a failed dispatch")
        logger.warning("%s of %s not dispatched, kept for the reconciler: %s", message.kind, message.target_id, exc)


def outbox_dispatch(*, ids: list[int] | None = None, limit: int = 1000) -> int:
    """Dispatch the pending rows (of ``ids``, or every one, oldest effects first, at most ``limit``
    effects); how many effects were handed over. Never raises: what failed stays pending."""
    try:
        pending = outbox_pending()
        if ids is not None:
            pending = pending.filter(pk__in=ids)
        effects = (
            pending.order_by().values_list("kind", "target_id").annotate(first=Min("pk")).order_by("first")[:limit]
        )
        return sum(_effect_dispatch(kind, target_id, pending) for kind, target_id, _ in list(effects))
    except DATABASE_OUT_OF_REACH as lost:
        logger.warning("the outbox rows stay pending: the database is out of reach: %s", lost)
        return 0
    except Exception:
        logger.exception("the outbox could not be dispatched; its rows stay pending")
        return 0


def outbox_pending():
    """Rows not handed over yet and not claimed by a live dispatcher."""
    stale = timezone.now() - timedelta(seconds=CLAIM_SECONDS)
    return OutboxMessage.objects.filter(Q(claimed_by=None) | Q(claimed_at__lt=stale))


def _effect_dispatch(kind: str, target_id: int, pending) -> int:
    claim = uuid.uuid4()
    if not pending.filter(kind=kind, target_id=target_id).update(claimed_by=claim, claimed_at=timezone.now()):
        return 0  # another dispatcher took them
    claimed = OutboxMessage.objects.filter(claimed_by=claim)
    try:
        EFFECTS[kind](target_id)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        claimed.update(claimed_by=None, claimed_at=None, attempts=F("attempts") + 1, last_error=error)
        logger.warning("%s of %s not dispatched, kept for the reconciler: %s", kind, target_id, exc)
        return 0
    claimed.delete()
    return 1


# What each kind of row hands over: a call of the scheduling module, which names its task.
EFFECTS: dict[str, Callable[[int], object]] = {
    Kind.EXPERIMENT_PREPARE: scheduling.experiment_prepare_enqueue,
    Kind.SAMPLE_BATCH_DRAW: scheduling.sample_batch_draw_enqueue,
    Kind.ESTIMATES_REFRESH: scheduling.ESTIMATES_REFRESH.schedule,
    Kind.DERIVED_REFRESH: scheduling.derived_refreshes_schedule,
    Kind.RATER_AUTO_PAUSE: scheduling.rater_auto_pause_schedule,
}
