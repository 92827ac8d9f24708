"""Raters for the dashboard's tests, answering from the dashboard's own truth."""

import uuid

from raterapp.services.judging import assignment_next, judgement_submit
from tests.raterapp.factories import UserFactory

# The truth the simulated raters answer from: the first Base cluster is two people.
GOLD = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3]


def judge(experiment, raters, *, limit=None, gold=GOLD):
    """Raters judge until nothing is left (or ``limit`` verdicts), answering from GOLD, every 5th unsure."""
    submitted = []
    for rater in raters:
        while (limit is None or len(submitted) < limit) and (
            task := assignment_next(experiment=experiment, rater=rater)
        ) is not None:
            a, b = task.item_a.position, task.item_b.position
            verdict = "equivalent" if gold[a] == gold[b] else "not_equivalent"
            if len(submitted) % 5 == 4:
                verdict = "unsure"
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
            submitted.append((a, b, verdict))
    return submitted


def raters(n):
    return [UserFactory(roles=["rater"]) for _ in range(n)]
