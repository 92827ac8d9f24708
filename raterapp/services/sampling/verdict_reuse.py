"""Verdicts shared in a workspace (abcde-spec §11): a newly sampled pair that already has verdicts
in the experiment's workspace, under its question version, is answered by them. Its task then
wants only the verdicts replication asks for beyond them (none: it is never offered to raters),
and ``ReusedVerdict`` rows link the task to the verdicts that answer it. An experiment that opts
out (``reuse_verdicts`` off) neither takes verdicts nor offers its own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db.models import F

from raterapp.access import task_in_rating_q
from raterapp.models import Experiment, Judgement, OutboxMessage, PairTask, ReusedVerdict
from raterapp.reuse_keys import pair_key
from raterapp.services.outbox import outbox_add

_CHUNK = 500  # keys per lookup query (SQLite's limit on bound parameters)


def tasks_reuse_apply(*, experiment: Experiment, tasks: Sequence[PairTask], item_ids: dict[int, str]) -> None:
    """Fill the reuse keys of unsaved ``tasks`` (item row id → item id in ``item_ids``) and lower
    ``wanted`` by the verdicts found for them; call ``reused_verdicts_record`` once they are saved."""
    for task in tasks:
        task.pair_key = pair_key(item_ids[task.item_a_id], item_ids[task.item_b_id])
        task.question_version_id = experiment.question_version_id
    sources = verdict_sources_find(experiment=experiment, keys=[task.pair_key for task in tasks])
    for task in tasks:
        reused = sources.get(task.pair_key, [])
        task._reused_sources = reused  # type: ignore[attr-defined]  # kept on the task until they are copied
        task.wanted = max(task.wanted - len(reused), 0)


def reused_verdicts_record(*, experiment: Experiment, tasks: Iterable[PairTask], batch_size: int = 1000) -> int:
    """Record the verdicts ``tasks_reuse_apply`` found for the (now saved) tasks; the count recorded."""
    rows = [
        ReusedVerdict(experiment_id=experiment.pk, task_id=task.pk, source_id=source)
        for task in tasks
        for source in getattr(task, "_reused_sources", ())
    ]
    ReusedVerdict.objects.bulk_create(rows, batch_size=batch_size)
    return len(rows)


def verdict_sources_find(*, experiment: Experiment, keys: Sequence[str]) -> dict[str, list[int]]:
    """Per pair key, the ids of up to ``replication`` verdicts (from distinct raters, oldest first)
    given in other experiments of the workspace that offer theirs, under the same question version."""
    if not experiment.reuse_verdicts or not keys:
        return {}
    found: dict[str, list[int]] = {}
    raters: dict[str, set[int]] = {}
    unique = sorted(set(keys))
    for start in range(0, len(unique), _CHUNK):
        rows = (
            Judgement.objects.filter(
                task_in_rating_q("task__"),
                task__pair_key__in=unique[start : start + _CHUNK],
                task__question_version_id=experiment.question_version_id,
                task__experiment__workspace_id=experiment.workspace_id,
                task__experiment__reuse_verdicts=True,
            )
            .exclude(task__experiment_id=experiment.pk)
            .order_by("pk")
            .values_list("task__pair_key", "pk", "rater_id")
        )
        for key, judgement, rater in rows:
            seen = raters.setdefault(key, set())
            if rater in seen or len(seen) >= experiment.replication:
                continue
            seen.add(rater)
            found.setdefault(key, []).append(judgement)
    return found


def reused_verdicts_release(*, judgement_id: int) -> list[int]:
    """Before a verdict is undone: the tasks it answered in other experiments want one more verdict
    again and their estimates are refreshed (its ``ReusedVerdict`` rows go with it); the experiments."""
    from raterapp.services.judging.progress import experiment_progress_move  # judging imports this module

    reuses = list(ReusedVerdict.objects.filter(source_id=judgement_id).values_list("task_id", "experiment_id"))
    for task_id, experiment_id in reuses:
        PairTask.objects.filter(pk=task_id).update(wanted=F("wanted") + 1)
        experiment_progress_move(experiment_id=experiment_id, verdicts=-1)
        outbox_add(kind=OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=experiment_id)
    return [experiment_id for _, experiment_id in reuses]
