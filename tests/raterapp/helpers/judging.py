"""Judging a prepared experiment (``tests/raterapp/prepared.py``) in the services' tests: simulated
raters answering from GOLD, and the rows judging may change."""

import uuid

from raterapp.models import Judgement, Lease, PairTask
from raterapp.services.judging import assignment_next, judgement_submit

GOLD = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 3]


def state(experiment):
    """Everything judging may change, to assert that a refused action changed nothing."""
    return (
        list(PairTask.objects.filter(experiment=experiment).order_by("pk").values_list("pk", "verdicts")),
        sorted(Judgement.objects.filter(task__experiment=experiment).values_list("pk", "task", "rater", "verdict")),
        sorted(Lease.objects.filter(task__experiment=experiment).values_list("task", "rater", "expires_at")),
    )


def judge_everything(experiment, raters):
    """Every rater judges until nothing is left; verdicts from GOLD, every 7th unsure.
    Returns the (a, b, verdict) positions and verdicts as submitted."""
    submitted = []
    for rater in raters:
        while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
            a, b = task.item_a.position, task.item_b.position
            verdict = "equivalent" if GOLD[a] == GOLD[b] else "not_equivalent"
            if len(submitted) % 7 == 3:
                verdict = "unsure"
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
            submitted.append((a, b, verdict))
    return submitted


def judge_with_errors(experiment, raters):
    """Each rater judges until nothing is left, answering from GOLD but wrong on a fixed fifth
    of the pairs: the first two raters on the same fifth (so that the majority is wrong there
    and triangles break), the third on another. Returns one dict per verdict, in order."""
    submitted = []
    for k, rater in enumerate(raters):
        while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
            a, b = task.item_a.position, task.item_b.position
            right = GOLD[a] == GOLD[b]
            said = right != ((a * 31 + b * 17 + (k // 2) * 2) % 5 == 0)
            verdict = "equivalent" if said else "not_equivalent"
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
            submitted.append(
                {
                    "a": a,
                    "b": b,
                    "item_a": task.item_a.item_id,
                    "item_b": task.item_b.item_id,
                    "verdict": verdict,
                    "rater": rater.pk,
                    "gold": task.gold_answer,
                }
            )
    return submitted
