"""Admins resolve raters' reports of broken pairs: keep the pair, exclude it from rating, or
make it a gold question with a known answer. The resolution (who, when, what, the note) is
stored on every open report of the pair, and the pair's own change goes through the gold
services."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from raterapp.access import ADMIN, require_role
from raterapp.models import PairReport
from raterapp.services.judging.gold import ANSWERS, gold_pair_create, task_retire

Resolution = PairReport.Resolution


def pair_report_resolve(*, report: PairReport, actor, resolution: str, note: str, answer: str = "") -> PairReport:
    """Resolve the report, and every other open report of the same pair, with ``note``.

    ``excluded``: no rater gets the pair any more (its verdicts stay). ``gold``: the pair
    becomes a gold question with ``answer`` (it keeps being judged as sampled too).
    ``kept``: nothing changes but the report. A resolved report cannot be resolved again.
    """
    require_role(actor, ADMIN, "Only admins resolve reports.")
    note = (note or "").strip()
    errors = {}
    if resolution not in Resolution.values:
        errors["resolution"] = "Choose what to do with the pair."
    elif resolution == Resolution.GOLD and answer not in ANSWERS:
        errors["answer"] = "Give the gold answer: equivalent or not equivalent."
    if not note:
        errors["note"] = "Write a note: what was wrong and what you did."
    if errors:
        raise ValidationError(errors)
    task = report.task
    with transaction.atomic():
        report = PairReport.objects.select_for_update().get(pk=report.pk)
        if report.resolved_at is not None:
            raise ValidationError({"resolution": "This report was resolved already."})
        if resolution == Resolution.EXCLUDED:
            task_retire(task=task, actor=actor)
        elif resolution == Resolution.GOLD:
            gold_pair_create(
                experiment=task.experiment,
                actor=actor,
                item_a=task.item_a.item_id,
                item_b=task.item_b.item_id,
                answer=answer,
            )
        PairReport.objects.filter(task=task, resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolved_by=actor, resolution=resolution, resolution_note=note
        )
    report.refresh_from_db()
    return report
