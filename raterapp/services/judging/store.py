"""The rating loop's statements in SQL: what a lease request and a submit read under their locks
(one query each, on any database), and their writes as one statement each on PostgreSQL (the other
databases take the ORM's statements one by one). Written out, not built by the ORM, because
building them cost more CPU than running them.

A lease: the slot check and the lease (or the renewal of the rater's expired one) in one insert.
A verdict: the task's count, the verdict, the lease, the budget (and its pool), the ledger, the
experiment's progress row and the outbox's refresh. The hot rows (budget, pool, progress) are
written last in the statement, so their locks are held for it and the commit only. Each limit stays
a condition of its UPDATE; a refusal raises and the caller's transaction rolls everything back."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection

from raterapp import models
from raterapp.access import task_open_to_rater_sql
from raterapp.db.rows import table

from .errors import JudgementRefused
from .spending import BUDGET_SPENT, POOL_SPENT, BudgetSpent


def _row(sql: str, params: dict) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _at(value: datetime):
    return connection.ops.adapt_datetimefield_value(value)


HAS_QUOTA = f"""EXISTS(SELECT 1 FROM {table(models.RaterProfile)} p
    WHERE p.user_id = %(rater)s AND (p.daily_quota IS NOT NULL OR p.total_quota IS NOT NULL))"""
RATER_STATE = f"""
SELECT
    EXISTS(SELECT 1 FROM {table(models.RaterProfile)} p WHERE p.user_id = %(rater)s AND p.paused),
    {HAS_QUOTA},
    (SELECT e.open_to_all_raters FROM {table(models.Experiment)} e WHERE e.id = %(experiment)s),
    EXISTS(SELECT 1 FROM {table(models.Experiment.assigned_raters.through)} a WHERE a.experiment_id = %(experiment)s),
    EXISTS(SELECT 1 FROM {table(models.Experiment.assigned_raters.through)} a
        WHERE a.experiment_id = %(experiment)s AND a.user_id = %(rater)s),
    EXISTS(SELECT 1 FROM {table(models.Lease)} l WHERE l.rater_id = %(rater)s AND l.expires_at > %(now)s
        AND (SELECT t.experiment_id FROM {table(models.PairTask)} t WHERE t.id = l.task_id) = %(experiment)s),
    EXISTS(SELECT 1 FROM {table(models.ExperimentBudget)} b WHERE b.experiment_id = %(experiment)s
        AND (b.max_verdicts IS NOT NULL OR b.pool_id IS NOT NULL OR b.paused))
"""
RATER_STATE_FIELDS = ("paused", "has_quota", "open_to_all", "any_assigned", "mine", "holds", "budget_limited")


def rater_state(*, experiment_id: int, rater, now: datetime) -> dict:
    """What decides whether the rater may lease a pair of the experiment (call it under the rater's
    lock): paused, assigned (``open_to_all`` is null when the experiment is gone), whether they hold
    live leases in it, and whether a quota or a limited budget needs counting."""
    row = _row(RATER_STATE, {"rater": rater.pk, "experiment": experiment_id, "now": _at(now)})
    return {field: None if value is None else bool(value) for field, value in zip(RATER_STATE_FIELDS, row)}


SUBMIT_STATE = f"""
SELECT
    (SELECT l.expires_at <= %(now)s FROM {table(models.Lease)} l WHERE l.task_id = %(task)s AND l.rater_id = %(rater)s),
    EXISTS(SELECT 1 FROM {table(models.Judgement)} j WHERE j.task_id = %(task)s AND j.rater_id = %(rater)s),
    EXISTS(SELECT 1 FROM {table(models.Judgement)} j WHERE j.client_id = %(client_id)s)
        OR EXISTS(SELECT 1 FROM {table(models.RetractedJudgement)} r WHERE r.client_id = %(client_id)s),
    {HAS_QUOTA}
"""
SUBMIT_STATE_FIELDS = ("lease_expired", "judged", "client_id_used", "has_quota")


def submit_state(*, task_id: int, rater, client_id: uuid.UUID, now: datetime) -> dict:
    """What a submit checks before it writes (call it under the rater's and the task's locks):
    ``lease_expired`` (null: the rater holds no lease on the task), whether they judged it, whether
    the client_id was used (a retry, or an undone verdict) and whether a quota needs counting."""
    client_id = models.Judgement._meta.get_field("client_id").get_db_prep_value(client_id, connection)
    row = _row(SUBMIT_STATE, {"task": task_id, "rater": rater.pk, "client_id": client_id, "now": _at(now)})
    return {field: None if value is None else bool(value) for field, value in zip(SUBMIT_STATE_FIELDS, row)}


CARD_COLUMNS = ("id", "title", "description", "image_url", "url", "attributes")
TASK_COLUMNS = ("id", "experiment_id", "item_a_id", "item_b_id", "rank", "wanted", "verdicts", "gold_answer")
QUEUE_NEXT = f"""
SELECT {", ".join(f"t.{c}" for c in TASK_COLUMNS)}, {", ".join(f"a.{c}" for c in CARD_COLUMNS)},
    {", ".join(f"b.{c}" for c in CARD_COLUMNS)}
FROM {table(models.PairTask)} t
    JOIN {table(models.Item)} a ON a.id = t.item_a_id
    JOIN {table(models.Item)} b ON b.id = t.item_b_id
WHERE t.experiment_id = %(experiment)s AND t.rank > %(after)s AND {task_open_to_rater_sql("t")}
ORDER BY t.rank
LIMIT 1
FOR UPDATE OF t SKIP LOCKED
"""


def queue_next(*, experiment_id: int, rater, now: datetime, after: int | None) -> models.PairTask | None:
    """The first task of the rater's queue after rank ``after``, with its cards, its row locked
    (skipping locked ones): ``selectors.judging.task_queue_for_rater`` written out, as it costs
    more to build than to run. PostgreSQL only."""
    params = {"experiment": experiment_id, "rater": rater.pk, "now": now, "after": -1 if after is None else after}
    row = _row(QUEUE_NEXT, params)
    if row is None:
        return None
    n, m = len(TASK_COLUMNS), len(CARD_COLUMNS)
    task = models.PairTask.from_db(connection.alias, TASK_COLUMNS, row[:n])
    attributes = models.Item._meta.get_field("attributes")
    for field, values in (("item_a", row[n : n + m]), ("item_b", row[n + m :])):
        values = (*values[:-1], attributes.from_db_value(values[-1], None, connection))  # type: ignore[arg-type]  # no expression: a row's value, as Django's loads read it
        setattr(task, field, models.Item.from_db(connection.alias, CARD_COLUMNS, values))
    return task


LEASE_TAKE = f"""
INSERT INTO {table(models.Lease)} (task_id, rater_id, token, expires_at, created_at)
SELECT t.id, %(rater)s, %(token)s, %(expires)s, %(now)s FROM {table(models.PairTask)} t
WHERE t.id = %(task)s
    AND NOT EXISTS (SELECT 1 FROM {table(models.Judgement)} j WHERE j.task_id = t.id AND j.rater_id = %(rater)s)
    AND (t.gold_answer <> '' OR t.verdicts + (
        SELECT count(*) FROM {table(models.Lease)} l
        WHERE l.task_id = t.id AND l.expires_at > %(now)s AND l.rater_id <> %(rater)s
    ) < t.wanted)
ON CONFLICT (task_id, rater_id) DO UPDATE
    SET expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at, token = EXCLUDED.token
RETURNING id
"""


def lease_take(*, task: models.PairTask, rater, now: datetime) -> models.Lease | None:
    """Lease the task to the rater if its slot is free (checked in the same statement, which sees
    every committed lease and verdict: call it with the task's row locked); ``None`` otherwise."""
    lease = models.Lease(task=task, rater=rater, token=uuid.uuid4(), created_at=now)
    lease.expires_at = now + timedelta(seconds=settings.LEASE_SECONDS)
    params = {"task": task.pk, "rater": rater.pk, "token": lease.token, "expires": lease.expires_at, "now": now}
    with connection.cursor() as cursor:
        cursor.execute(LEASE_TAKE, params)
        row = cursor.fetchone()
    if row is None:
        return None
    lease = _written(lease, pk=row[0])
    lease.task, lease.rater = task, rater
    return lease


VERDICT_STORE = f"""
WITH t AS (
    UPDATE {table(models.PairTask)} SET verdicts = verdicts + 1
    WHERE id = %(task)s AND (gold_answer <> '' OR verdicts < wanted)
    RETURNING id, experiment_id, gold_answer <> '' AS gold
), j AS (
    INSERT INTO {table(models.Judgement)} (task_id, rater_id, verdict, comment, client_id, created_at)
    SELECT t.id, %(rater)s, %(verdict)s, %(comment)s, %(client_id)s, %(now)s FROM t
    RETURNING id
), b AS (
    UPDATE {table(models.ExperimentBudget)} budget SET spent = budget.spent + 1 FROM t, j
    WHERE budget.experiment_id = t.experiment_id AND (budget.max_verdicts IS NULL OR budget.spent < budget.max_verdicts)
    RETURNING budget.pool_id, budget.cost_per_verdict, t.experiment_id, t.gold
), p AS (
    UPDATE {table(models.BudgetPool)} pool SET spent = pool.spent + 1 FROM b
    WHERE pool.id = b.pool_id AND pool.spent < pool.max_verdicts
    RETURNING pool.id
), ledger AS (
    INSERT INTO {table(models.BudgetLedgerEntry)}
        (kind, experiment_id, pool_id, rater_id, verdict, amount, cost, created_at)
    SELECT %(spend)s, b.experiment_id, b.pool_id, %(rater)s, %(client_id)s, 1, b.cost_per_verdict, %(now)s FROM b
    RETURNING id
), progress AS (
    UPDATE {table(models.ExperimentProgress)} progress SET verdicts_left = progress.verdicts_left - 1 FROM b
    WHERE progress.experiment_id = b.experiment_id AND NOT b.gold
    RETURNING progress.id
), outbox AS (
    INSERT INTO {table(models.OutboxMessage)} (kind, target_id, created_at, attempts, last_error)
    SELECT %(refresh)s, b.experiment_id, %(now)s, 0, '' FROM b WHERE NOT b.gold
    RETURNING id
), lease AS (
    DELETE FROM {table(models.Lease)} WHERE task_id = %(task)s AND rater_id = %(rater)s
    RETURNING id
)
SELECT (SELECT id FROM j), (SELECT count(*) FROM b), (SELECT pool_id FROM b), (SELECT count(*) FROM p),
    (SELECT id FROM outbox), (SELECT count(*) FROM ledger), (SELECT count(*) FROM progress),
    (SELECT count(*) FROM lease)
"""


def verdict_store(
    *, task: models.PairTask, rater, verdict: str, client_id: uuid.UUID, comment: str, now: datetime
) -> tuple[models.Judgement, models.OutboxMessage | None]:
    """Store the verdict and everything that moves with it; ``(judgement, outbox row or None)``.

    Raises :class:`JudgementRefused` when the task has all its verdicts, :class:`BudgetSpent`
    when the budget or its pool is spent, and ``IntegrityError`` when the rater judged the task or
    the ``client_id`` is taken; call it in a transaction, which each of them rolls back."""
    params = {
        "task": task.pk,
        "rater": rater.pk,
        "verdict": verdict,
        "comment": comment,
        "client_id": client_id,
        "now": now,
        "spend": models.BudgetLedgerEntry.Kind.SPEND.value,
        "refresh": models.OutboxMessage.Kind.ESTIMATES_REFRESH.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(VERDICT_STORE, params)
        judgement_id, budgets, pool_id, pools, outbox_id, *_ = cursor.fetchone()
    if judgement_id is None:
        raise JudgementRefused("This pair already has all the verdicts it needs.")
    if not budgets:
        models.ExperimentBudget.objects.filter(experiment_id=task.experiment_id).values("pk").get()  # made with it
        raise BudgetSpent(BUDGET_SPENT)
    if pool_id is not None and not pools:
        raise BudgetSpent(POOL_SPENT)
    written = models.Judgement(task=task, rater=rater, verdict=verdict, comment=comment, client_id=client_id)
    written.created_at = now
    judgement = _written(written, pk=judgement_id)
    judgement.task, judgement.rater = task, rater
    outbox = None
    if outbox_id is not None:
        outbox = models.OutboxMessage(
            pk=outbox_id, kind=models.OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=task.experiment_id
        )
    return judgement, outbox


def _written(instance, *, pk: int):
    """``instance``, whose row a statement of this module wrote with id ``pk``, as the instance of a
    row read from the database (Django's ``Model.from_db``: saving it updates, never inserts)."""
    model = type(instance)
    values = [pk if field.primary_key else getattr(instance, field.attname) for field in model._meta.concrete_fields]
    return model.from_db(connection.alias, [field.attname for field in model._meta.concrete_fields], values)


def one_statement_writes() -> bool:
    """Whether this database takes the statements of this module."""
    return connection.vendor == "postgresql"
