"""Each rater's agreement with the other raters on replicated (non-gold) pairs, computed by the
worker and stored as a :class:`RaterAgreement`, so that the raters' lists (the raters page, the
overview, ``/api/raters/``, an experiment's raters) read one row instead of every verdict.

It reads every replicated verdict of its scope, so it follows the snapshots, debounced by
``RATER_AGREEMENT_DEBOUNCE_SECONDS`` (:func:`raterapp.services.scheduling.derived_refreshes_schedule`):
one run for the experiment whose snapshot asked, and one across all experiments, which a burst of
snapshots in many experiments shares. metrics_core computes the numbers
(:func:`raterapp.selectors.raters.rater_agreement_compute` reads the rows); this module stores them.
"""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from raterapp.models import Experiment, RaterAgreement
from raterapp.selectors.raters import rater_agreement_compute
from raterapp.services.scheduling import RATER_AGREEMENT_REFRESH, rater_agreement_all_started


def rater_agreement_refresh(*, experiment_id: int | None) -> RaterAgreement:
    """Compute each rater's agreement in the experiment (across all experiments with ``None``)
    from every replicated verdict now, and store it in place of the scope's earlier one.

    A computation that read the verdicts before the stored one did (two runs that overlapped)
    leaves the stored one: the row only ever moves forward.
    """
    if experiment_id is None:
        rater_agreement_all_started()
        experiment = None
    else:
        RATER_AGREEMENT_REFRESH.started(experiment_id)
        experiment = Experiment.objects.get(pk=experiment_id)
    started, computed_at = time.monotonic(), timezone.now()
    rows, judgements = rater_agreement_compute(experiment=experiment)
    values = {
        "computed_at": computed_at,
        "judgements": judgements,
        "seconds": time.monotonic() - started,
        "raters": {str(rater): row for rater, row in rows.items()},
    }
    with transaction.atomic():
        stored, created = RaterAgreement.objects.select_for_update().get_or_create(
            experiment=experiment, defaults=values
        )
        if not created and stored.computed_at < computed_at:
            for field, value in values.items():
                setattr(stored, field, value)
            stored.save(update_fields=list(values))
    return stored
