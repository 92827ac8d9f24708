"""Handing pairs to raters and recording what they say about them.

A task (an unordered pair) wants ``wanted`` verdicts from distinct raters. A rater works
on a task under a *lease* that expires after ``settings.LEASE_SECONDS`` unless renewed; a
task is offered only while ``verdicts + other raters' live leases < wanted``, so every
live lease is a promise that its holder's verdict will be counted.

The rules that must hold under concurrency live in the database: one verdict per rater
and task (unique constraint), one judgement per ``client_id`` (unique), ``verdicts <=
wanted`` (check constraint) and the increment itself is a conditional update. Every
write locks the task row first (``SELECT ... FOR UPDATE``; SKIP LOCKED while searching
the queue on PostgreSQL) and only then counts leases and verdicts, in fresh statements
that see everything committed before.

A late verdict (its lease expired) is kept while the task wants verdicts, even when the
pair went to another rater meanwhile: a given answer is worth more than a promised one,
so the newest leases the task can no longer honour are withdrawn (only as many as the
replication requires). Quotas and budgets are checked again when a verdict is stored,
under the rater's row lock and by conditional updates: a verdict they refuse (late or
not) writes nothing and withdraws no one's lease.

Gold tasks (a known answer, chosen by admins) are mixed into the queue at the
experiment's ``gold_rate``; they have no replication limit and count in no estimate.
"""

from .corrections import judgement_change, judgements_void
from .errors import JudgementRefused, QueueClosed
from .queue import MAX_HELD, assignment_next, leases_renew
from .reports import pair_report_create
from .verdicts import judgement_submit, judgement_undo

__all__ = [
    "MAX_HELD",
    "JudgementRefused",
    "QueueClosed",
    "assignment_next",
    "judgement_change",
    "judgement_submit",
    "judgement_undo",
    "judgements_void",
    "leases_renew",
    "pair_report_create",
]
