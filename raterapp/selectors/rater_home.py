"""A rater's home: their standing (pause, quota, verdicts today and in all) and the experiments they
may rate or rated, each with why they cannot get a pair there now.

The home page and ``/api/raters/me/``, which that page polls every few seconds, read it in two
queries whatever the number of experiments and verdicts: issue 33 found 29 queries at 10
experiments, and one rater polling them slowed every other (tests/raterapp/test_rater_polls_constant.py).
Both are written out in SQL: the ORM took 15 ms to build the experiments' query, PostgreSQL 1 ms to
run it. They run on any database.
"""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.utils import timezone

from raterapp.access import RATER, has_role, open_to_rater_sql, task_in_rating_sql, task_open_to_rater_sql
from raterapp.db.rows import column_count, columns, instance_from_row, table
from raterapp.models import (
    BudgetPool,
    Experiment,
    ExperimentBudget,
    ExperimentProgress,
    Judgement,
    Lease,
    PairTask,
    RaterProfile,
    RaterVerdictCount,
)
from raterapp.selectors.judging import today_start
from raterapp.vocabulary import QueueClosedReason

# Read by neither the page nor the API, and the largest columns.
_UNREAD = ("impact", "ground_truth_metrics")


@cache
def _standing_sql() -> str:
    return f"""
SELECT {columns(RaterProfile, "p")},
    (SELECT COALESCE(SUM(c.verdicts), 0) FROM {table(RaterVerdictCount)} c WHERE c.rater_id = %(rater)s),
    (SELECT count(*) FROM {table(Judgement)} j WHERE j.rater_id = %(rater)s AND j.created_at >= %(today)s),
    (SELECT count(*) FROM {table(Lease)} l WHERE l.rater_id = %(rater)s AND l.expires_at > %(now)s)
FROM (SELECT 1) one LEFT JOIN {table(RaterProfile)} p ON p.user_id = %(rater)s"""


def rater_standing_get(*, rater) -> dict:
    """The rater's pause, verdicts today and in all, and quota (what is left of it counts the
    pairs they hold under a live lease as given): one query."""
    at = connection.ops.adapt_datetimefield_value
    params = {"rater": rater.pk, "today": at(today_start()), "now": at(timezone.now())}
    with connection.cursor() as cursor:
        cursor.execute(_standing_sql(), params)
        row = cursor.fetchone()
    width = column_count(RaterProfile)
    profile = instance_from_row(RaterProfile, row[:width]) if row[0] is not None else RaterProfile()
    total, today, held = row[width:]
    daily, total_quota = profile.daily_quota, profile.total_quota
    return {
        "paused": profile.paused,
        "paused_at": profile.paused_at if profile.paused else None,
        "today": today,
        "total": total,
        "quota": {
            "daily": daily,
            "daily_left": None if daily is None else max(daily - today - held, 0),
            "total": total_quota,
            "total_left": None if total_quota is None else max(total_quota - total - held, 0),
        },
    }


def rater_home_rows(*, rater, standing: dict | None = None) -> list[dict]:
    """The rater's experiments, newest first, with what they still want (``remaining``), the
    rater's verdicts (``mine``) and ``blocked``: why the rater cannot get a pair now (the
    reasons of the next-pair API: ``rater_paused``, ``not_assigned``, ``quota_daily``,
    ``quota_total``, ``budget_paused``, ``budget_spent``, ``queue_empty``), or ``None`` when
    they can. Checked in the order the lease service checks them; a pair the rater holds can
    always be finished. Experiments assigned to other raters are listed last (as
    ``not_assigned``) only where this rater gave verdicts before. ``standing``: the rater's
    :func:`rater_standing_get`, when the caller read it already. One query."""
    standing = standing or rater_standing_get(rater=rater)
    quota_reason = _quota_reason(standing["quota"])
    at = connection.ops.adapt_datetimefield_value
    params = {
        "rater": rater.pk,
        "is_rater": has_role(rater, RATER),
        "rating": Experiment.Status.RATING,
        "now": at(timezone.now()),
        # A paused rater, or one past their quota, gets no pair anywhere: nothing else to count.
        "closed": not (standing["paused"] or quota_reason),
        **{reason.value: reason.value for reason in QueueClosedReason},
    }
    with connection.cursor() as cursor:
        cursor.execute(_rows_sql(), params)
        rows = cursor.fetchall()
    width = column_count(Experiment, leave_out=_UNREAD)
    home = []
    for row in rows:
        open_to_rater, mine, remaining, holding, closed = row[width:]
        if not open_to_rater:
            blocked: str | None = QueueClosedReason.NOT_ASSIGNED
        elif standing["paused"]:
            blocked = QueueClosedReason.RATER_PAUSED
        elif holding:
            blocked = None
        else:
            blocked = quota_reason or closed
        home.append(
            {
                "experiment": instance_from_row(Experiment, row[:width], leave_out=_UNREAD),
                "remaining": remaining,
                "mine": mine,
                "blocked": QueueClosedReason(blocked) if blocked else None,
            }
        )
    return home


def rater_summary_get(*, rater) -> dict:
    """What a rater may see of their own standing: pause, quota and progress (verdicts today,
    in all, and in each experiment open to them, with why they cannot rate it now). Not why
    they were paused: quality checks (gold questions among them) stay quiet."""
    standing = rater_standing_get(rater=rater)
    return {
        "rater": rater.pk,
        "username": rater.get_username(),
        **standing,
        "experiments": [
            {
                "experiment": row["experiment"].pk,
                "name": row["experiment"].name,
                "mine": row["mine"],
                "remaining": row["remaining"],
                "blocked": row["blocked"],
            }
            for row in rater_home_rows(rater=rater, standing=standing)
            if row["blocked"] != QueueClosedReason.NOT_ASSIGNED
        ],
    }


def _quota_reason(quota: dict) -> str | None:
    if quota["daily_left"] is not None and quota["daily_left"] <= 0:
        return QueueClosedReason.QUOTA_DAILY
    if quota["total_left"] is not None and quota["total_left"] <= 0:
        return QueueClosedReason.QUOTA_TOTAL
    return None


@cache
def _rows_sql() -> str:
    """Experiments open for rating that are open to the rater or that they gave verdicts in, with
    whether they are open to the rater, the rater's verdicts, the verdicts still wanted (the
    ``ExperimentProgress`` row, else the sum over the tasks), whether the rater holds a live lease
    there, and (when ``closed``) why it leases them no pair: its budget or pool paused or used up
    by verdicts and live leases, in the order of ``budget_closed_reason``, or the rater's queue
    empty (``task_queue_for_rater``, as ``services.judging.store.QUEUE_NEXT`` writes it). A CASE,
    so that a reason found spares the counts after it; the queue is a LIMIT 1 subquery, which the
    planner cannot turn into one over every experiment's tasks."""
    tasks, leases = table(PairTask), table(Lease)
    live_leases = f"SELECT count(*) FROM {leases} l JOIN {tasks} t ON t.id = l.task_id WHERE l.expires_at > %(now)s"
    return f"""
WITH seen AS (
    SELECT {columns(Experiment, "e", leave_out=_UNREAD)},
        %(is_rater)s AND {open_to_rater_sql()} AS open_to_rater,
        COALESCE((SELECT c.verdicts FROM {table(RaterVerdictCount)} c
            WHERE c.rater_id = %(rater)s AND c.experiment_id = e.id), 0) AS mine
    FROM {table(Experiment)} e
    WHERE e.status = %(rating)s
)
SELECT {columns(Experiment, "e", leave_out=_UNREAD)}, e.open_to_rater, e.mine,
    CASE WHEN e.open_to_rater THEN COALESCE(
        (SELECT g.verdicts_left FROM {table(ExperimentProgress)} g WHERE g.experiment_id = e.id),
        (SELECT SUM(t.wanted) - SUM(t.verdicts) FROM {tasks} t
            WHERE t.experiment_id = e.id AND {task_in_rating_sql("t")}),
        0) END,
    EXISTS(SELECT 1 FROM {leases} l JOIN {tasks} t ON t.id = l.task_id
        WHERE l.rater_id = %(rater)s AND l.expires_at > %(now)s AND t.experiment_id = e.id),
    CASE
        WHEN NOT e.open_to_rater OR NOT %(closed)s THEN NULL
        WHEN b.paused THEN %(budget_paused)s
        WHEN b.max_verdicts <= b.spent + ({live_leases} AND t.experiment_id = e.id) THEN %(budget_spent)s
        WHEN p.paused THEN %(budget_paused)s
        WHEN p.max_verdicts <= p.spent + ({live_leases} AND t.experiment_id IN (
            SELECT pb.experiment_id FROM {table(ExperimentBudget)} pb WHERE pb.pool_id = p.id)) THEN %(budget_spent)s
        WHEN (SELECT 1 FROM {tasks} t WHERE t.experiment_id = e.id AND {task_open_to_rater_sql("t")}
            ORDER BY t.rank LIMIT 1) IS NULL THEN %(queue_empty)s
    END
FROM seen e
    LEFT JOIN {table(ExperimentBudget)} b ON b.experiment_id = e.id
    LEFT JOIN {table(BudgetPool)} p ON p.id = b.pool_id
WHERE e.open_to_rater OR e.mine > 0
ORDER BY e.open_to_rater DESC, e.created_at DESC, e.id DESC"""
