"""The reconciler, run by Celery beat every ``RECONCILE_INTERVAL_SECONDS`` (``raterapp.reconcile``):
it repairs what a broker outage or a lost task left behind.

1. Side effects still in the outbox (:mod:`raterapp.services.outbox`) are dispatched.
2. Every experiment whose estimates are stale (:mod:`raterapp.selectors.staleness`) is recomputed
   here, without going through the debounce: its pending key may outlive the task it stood for.

Both are idempotent, so a run that overlaps another (or a message delivered twice) does no harm.
"""

from __future__ import annotations

import logging

from raterapp.selectors.staleness import experiments_stale_list
from raterapp.services.outbox import outbox_dispatch
from raterapp.services.refresh.estimates import estimates_refresh

logger = logging.getLogger(__name__)


def reconcile() -> dict:
    """Dispatch the pending outbox and recompute stale estimates; what was done."""
    dispatched = outbox_dispatch()
    recomputed = []
    for experiment_id in experiments_stale_list():
        try:
            estimates_refresh(experiment_id=experiment_id)
        except Exception:  # one experiment's failure must not stop the others'; the next run tries again
            logger.exception("the stale estimates of experiment %s could not be recomputed", experiment_id)
        else:
            recomputed.append(experiment_id)
    if dispatched or recomputed:
        logger.info("reconciled: %s outbox effects dispatched, estimates of %s recomputed", dispatched, recomputed)
    return {"dispatched": dispatched, "recomputed": recomputed}
