"""Which tasks a rater's queue holds is one rule with two spellings: the ORM's
(``selectors.judging.task_queue_for_rater``, ``access.task_in_rating_q``), for pages and the embedded
demo, and the SQL's (``access.task_open_to_rater_sql``, ``task_in_rating_sql``), for the rating
loop on PostgreSQL and the rater's home. Here both give one answer over every case, and a change
of any one condition of the SQL (an AND made OR, a NOT EXISTS made EXISTS, a < made <=) changes
the answer: a mutated rule fails."""

import re
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from raterapp.access import task_in_rating_q, task_in_rating_sql, task_open_to_rater_sql
from raterapp.db.rows import table
from raterapp.models import Item, Judgement, Lease, PairReport, PairTask, Verdict
from raterapp.selectors.judging import task_queue_for_rater
from tests.raterapp.factories import ExperimentFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.rating_loop]

# (name, gold, retired, wanted, verdicts, what happened to the task), and whether it is in the queue.
CASES = [
    ("plain", False, False, 1, 0, (), True),
    ("gold", True, False, 1, 0, (), False),
    ("retired", False, True, 1, 0, (), False),
    ("filled", False, False, 1, 1, (), False),
    ("judged by me", False, False, 2, 1, ("my verdict",), False),
    ("reported by me", False, False, 1, 0, ("my report",), False),
    ("held by me", False, False, 2, 0, ("my live lease",), False),
    ("my lease expired", False, False, 1, 0, ("my old lease",), True),
    ("held by another, full", False, False, 1, 0, ("their live lease",), False),
    ("held by another, room left", False, False, 2, 0, ("their live lease",), True),
    ("another's lease expired", False, False, 1, 0, ("their old lease",), True),
    ("judged by another", False, False, 2, 1, ("their verdict",), True),
    ("reported by another", False, False, 1, 0, ("their report",), True),
    ("held by two others, room for one", False, False, 3, 1, ("their live lease", "third's live lease"), False),
    ("gold and retired", True, True, 1, 0, (), False),
    ("my lease ends now", False, False, 1, 0, ("my lease ending now",), True),
    ("another's lease ends now", False, False, 1, 0, ("their lease ending now",), True),
]


@pytest.fixture
def world():
    me, other, third = UserFactory(), UserFactory(), UserFactory()
    experiment = ExperimentFactory(status="rating")
    now = timezone.now()
    live, old = now + timedelta(minutes=5), now - timedelta(minutes=5)
    expected = {}
    for k, (name, gold, retired, wanted, verdicts, events, in_queue) in enumerate(CASES):
        a, b = (
            Item.objects.create(
                experiment=experiment, item_id=f"{k}{side}", position=2 * k + n, base_cluster="b",
                exp_cluster="e", weight=1.0,
            )
            for n, side in enumerate("ab")
        )  # fmt: skip
        task = PairTask.objects.create(
            experiment=experiment, item_a=a, item_b=b, rank=k, wanted=wanted, verdicts=verdicts,
            gold_answer=Verdict.EQUIVALENT if gold else "", retired_at=now if retired else None,
        )  # fmt: skip
        for event in events:
            who = {"my": me, "their": other, "third's": third}[event.split()[0]]
            if event.endswith("verdict"):
                Judgement.objects.create(task=task, rater=who, verdict=Verdict.EQUIVALENT, client_id=uuid.uuid4())
            elif event.endswith("report"):
                PairReport.objects.create(task=task, rater=who, reason=PairReport.Reason.choices[0][0])
            else:
                ends = live if "live" in event else now if "now" in event else old
                Lease.objects.create(task=task, rater=who, expires_at=ends)
        expected[task.pk] = (name, in_queue)
    return experiment, me, now, expected


def _sql_queue(experiment, rater, now, condition: str) -> set[int]:
    at = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT t.id FROM {table(PairTask)} t WHERE t.experiment_id = %(experiment)s AND {condition}",
            {"experiment": experiment.pk, "rater": rater.pk, "now": at(now)},
        )
        return {row[0] for row in cursor.fetchall()}


def test_the_orm_and_the_sql_queue_hold_the_same_tasks_in_every_case(world):
    experiment, me, now, expected = world
    orm = set(task_queue_for_rater(experiment=experiment, rater=me, now=now).values_list("pk", flat=True))
    sql = _sql_queue(experiment, me, now, task_open_to_rater_sql("t"))
    assert {expected[pk][0] for pk in orm} == {name for name, in_queue in expected.values() if in_queue}
    assert sql == orm


def test_in_rating_means_the_same_in_the_orm_and_the_sql(world):
    experiment, me, now, _ = world
    orm = set(PairTask.objects.filter(task_in_rating_q(), experiment=experiment).values_list("pk", flat=True))
    assert _sql_queue(experiment, me, now, task_in_rating_sql("t")) == orm
    assert len(orm) == len(CASES) - 3  # gold, retired, gold and retired


def _mutants(sql: str):
    """Each one-place change of a condition: AND to OR, NOT EXISTS to EXISTS, < to <=, > to >=,
    <> to =, = to <>."""
    for pattern, replacement in [
        (r"\bAND\b", "OR"), (r"NOT EXISTS", "EXISTS"), (r"(?<![<>])<(?![=>])", "<="),
        (r"(?<![<-])>(?!=)", ">="), (r"<>", "="), (r"(?<![<>!])=(?!>)", "<>"),
    ]:  # fmt: skip
        for match in re.finditer(pattern, sql):
            yield sql[: match.start()] + replacement + sql[match.end() :]


def test_any_one_change_of_the_sql_rule_changes_the_answer(world):
    experiment, me, now, expected = world
    right = {pk for pk, (_, in_queue) in expected.items() if in_queue}
    rule = task_open_to_rater_sql("t")
    survivors = [
        [line.strip() for line in mutant.splitlines() if line not in rule.splitlines()]
        for mutant in _mutants(rule)
        if _sql_queue(experiment, me, now, mutant) == right
    ]
    assert sum(1 for _ in _mutants(rule)) >= 20
    # The one change that cannot show: "verdicts < wanted" is implied by the last condition
    # (verdicts < wanted minus the others' live leases), and is written for the planner, which
    # uses the queue's partial index (task_open_queue) only where the query states its condition.
    assert survivors == [["t.gold_answer = '' AND t.retired_at IS NULL AND t.verdicts <= t.wanted"]]
