"""Who may do what. Every id that comes from a request passes one ``access_*`` function,
which answers 404 both for "does not exist" and "not yours".

Roles are Django groups: ``rater`` judges pairs, ``engineer`` creates and reads
experiments, ``admin`` (or a superuser) manages raters and budgets.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group, User
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from raterapp.db.rows import column_count, columns, instance_from_row, table

from .models import Experiment, Judgement, Lease, PairReport, PairTask, SampledPair, sampled_q

RATER, ENGINEER, ADMIN = "rater", "engineer", "admin"
ROLES = (RATER, ENGINEER, ADMIN)


def user_roles(user: User | AnonymousUser) -> set[str]:
    """The user's roles, looked up once per user object (that is, once per request)."""
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(ROLES)
    roles = getattr(user, "_raterapp_roles", None)
    if roles is None:
        roles = frozenset(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._raterapp_roles = roles  # type: ignore[attr-defined]  # kept on the request's user object
    return set(roles)


def user_with_roles_sql(user_alias: str) -> str:
    """The select list of a user (at ``user_alias``, a ``User`` table alias) and, last, whether
    they have each role: a query that reads a user (the token or session lookup) brings their
    roles along, and :func:`user_with_roles_from_row` keeps them."""
    memberships, groups = table(get_user_model().groups.through), table(Group)
    roles = ", ".join(
        f"EXISTS(SELECT 1 FROM {memberships} m JOIN {groups} g ON g.id = m.group_id"
        f" WHERE m.user_id = {user_alias}.id AND g.name = '{role}')"
        for role in ROLES
    )
    return f"{columns(get_user_model(), user_alias)}, {roles}"


def user_with_roles_from_row(values):
    """The user of a row's slice read with :func:`user_with_roles_sql`, their roles remembered."""
    user = instance_from_row(get_user_model(), values[: -len(ROLES)])
    user._raterapp_roles = frozenset(role for role, has in zip(ROLES, values[-len(ROLES) :], strict=True) if has)
    return user


def has_role(user, role: str) -> bool:
    return role in user_roles(user)


def require_role(actor, role: str, refusal: str) -> None:
    """Refuse an actor without ``role`` (``None``, no one, has none): ``PermissionDenied(refusal)``,
    which every interface answers with 403 and ``refusal``."""
    if actor is None or not has_role(actor, role):
        raise PermissionDenied(refusal)


def experiments_visible_to(user) -> QuerySet[Experiment]:
    """Experiments an engineer owns or was granted; admins see all."""
    roles = user_roles(user)
    if ADMIN in roles:
        return Experiment.objects.all()
    if ENGINEER in roles:
        return Experiment.objects.filter(Q(owner=user) | Q(shared_with=user)).distinct()
    return Experiment.objects.none()


def access_experiment_for_engineer(user, experiment_id: int) -> Experiment:
    try:
        return experiments_visible_to(user).get(pk=experiment_id)
    except (Experiment.DoesNotExist, ValueError, TypeError):
        raise Http404("No such experiment.") from None


def open_to_rater(*, open_to_all: bool, any_assigned: bool, assigned_to_rater: bool) -> bool:
    """Who may rate an experiment, for one rater: its assigned raters; with none assigned, every
    rater if it is open to all raters, else nobody. The rule's one statement: the ORM's
    (:func:`open_to_rater_q`) and the SQL's (:func:`open_to_rater_sql`) spellings are held to it by
    tests/raterapp/test_access_rules.py, and ``selectors/rating_access.py`` answers "who" with it."""
    return assigned_to_rater if any_assigned else open_to_all


def open_to_rater_q(rater_id: int) -> Q:
    """:func:`open_to_rater` as a filter of experiments, for the rater ``rater_id``."""
    assigned = Experiment.assigned_raters.through.objects.filter(experiment=OuterRef("pk"))
    return (Q(open_to_all_raters=True) & ~Exists(assigned)) | Exists(assigned.filter(user=rater_id))


def experiments_open_to_rater(user) -> QuerySet[Experiment]:
    """Experiments open for rating that this rater may judge (:func:`open_to_rater`)."""
    if not has_role(user, RATER):
        return Experiment.objects.none()
    return Experiment.objects.filter(open_to_rater_q(user.pk), status=Experiment.Status.RATING)


def task_in_rating_q(prefix: str = "") -> Q:
    """A task still served to raters: sampled (not a gold question) and not retired. ``prefix``
    reaches it through a relation (``"task__"``)."""
    return sampled_q(prefix) & Q(**{f"{prefix}retired_at__isnull": True})


def task_in_rating_sql(alias: str) -> str:
    """:func:`task_in_rating_q` on the task aliased ``alias``, written out for the loop's SQL."""
    return f"{alias}.gold_answer = '' AND {alias}.retired_at IS NULL"


def task_open_to_rater_sql(alias: str) -> str:
    """A task in the rater's queue (``selectors.judging.task_queue_for_rater``, the ORM's spelling),
    on the task aliased ``alias``, for the rater ``%(rater)s`` at ``%(now)s``: in rating and still
    wanted, neither judged nor reported by the rater nor held by them, with a verdict still wanted
    beyond the other raters' live leases. tests/raterapp/test_task_rules.py holds the two to one
    answer."""
    t = alias
    judgements, reports, leases = table(Judgement), table(PairReport), table(Lease)
    return f"""{task_in_rating_sql(t)} AND {t}.verdicts < {t}.wanted
    AND NOT EXISTS (SELECT 1 FROM {judgements} j WHERE j.task_id = {t}.id AND j.rater_id = %(rater)s)
    AND NOT EXISTS (SELECT 1 FROM {reports} r WHERE r.task_id = {t}.id AND r.rater_id = %(rater)s)
    AND NOT EXISTS (SELECT 1 FROM {leases} l
        WHERE l.task_id = {t}.id AND l.rater_id = %(rater)s AND l.expires_at > %(now)s)
    AND {t}.verdicts < {t}.wanted - (SELECT count(*) FROM {leases} l
        WHERE l.task_id = {t}.id AND l.expires_at > %(now)s AND l.rater_id <> %(rater)s)"""


# Read by no rating request, and the largest columns.
_EXPERIMENT_UNREAD = ("impact", "ground_truth_metrics")


def open_to_rater_sql() -> str:
    """:func:`experiments_open_to_rater` on the experiment aliased ``e``, written out for the loop's
    lookups below and the rater's home (one query each, without the ORM's cost);
    tests/raterapp/test_access_rules.py holds the two to one answer."""
    assigned = table(Experiment.assigned_raters.through)
    return f"""e.status = %(rating)s AND (
    (e.open_to_all_raters AND NOT EXISTS (SELECT 1 FROM {assigned} a WHERE a.experiment_id = e.id))
    OR EXISTS (SELECT 1 FROM {assigned} a WHERE a.experiment_id = e.id AND a.user_id = %(rater)s))"""


@cache
def _experiment_for_rater_sql() -> str:
    experiment = columns(Experiment, "e", leave_out=_EXPERIMENT_UNREAD)
    return f"SELECT {experiment} FROM {table(Experiment)} e WHERE e.id = %(id)s AND {open_to_rater_sql()}"


@cache
def _task_for_rater_sql() -> str:
    task, experiment = columns(PairTask, "t"), columns(Experiment, "e", leave_out=_EXPERIMENT_UNREAD)
    return (
        f"SELECT {task}, {experiment} FROM {table(PairTask)} t JOIN {table(Experiment)} e ON e.id = t.experiment_id"
        f" WHERE t.id = %(id)s AND {open_to_rater_sql()}"
    )


def _id(value) -> int | None:
    """``value`` as a row id, or ``None`` where it can name no row (not a whole number, or beyond 64 bits)."""
    try:
        value = int(value)
    except (ValueError, TypeError):
        return None
    return value if -(2**63) <= value < 2**63 else None


def _open_to_rater_read(user, sql: str, row_id) -> tuple | None:
    """The row of ``sql`` (one of the lookups above) for ``row_id``, if open to this rater."""
    row_id = _id(row_id)
    if row_id is None or not has_role(user, RATER):
        return None
    with connection.cursor() as cursor:
        cursor.execute(sql, {"id": row_id, "rating": Experiment.Status.RATING, "rater": user.pk})
        return cursor.fetchone()


def access_experiment_for_rater(user, experiment_id: int) -> Experiment:
    """Raters may judge an experiment open for rating that is open to them (see
    :func:`experiments_open_to_rater`)."""
    row = _open_to_rater_read(user, _experiment_for_rater_sql(), experiment_id)
    if row is None:
        raise Http404("No such experiment.")
    return instance_from_row(Experiment, row, leave_out=_EXPERIMENT_UNREAD)


def access_rater_for_admin(user, rater_id: int):
    """A rater (a member of the ``rater`` group, active or not), for admins (404 otherwise)."""
    if not has_role(user, ADMIN):
        raise Http404("No such rater.")
    try:
        return get_user_model().objects.filter(groups__name=RATER).get(pk=rater_id)
    except (get_user_model().DoesNotExist, ValueError, TypeError):
        raise Http404("No such rater.") from None


def access_task_for_rater(user, task_id: int) -> PairTask:
    """A pair task of an experiment open for rating and to this rater (404 otherwise), with its
    experiment."""
    row = _open_to_rater_read(user, _task_for_rater_sql(), task_id)
    if row is None:
        raise Http404("No such pair.")
    width = column_count(PairTask)
    task = instance_from_row(PairTask, row[:width])
    task.experiment = instance_from_row(Experiment, row[width:], leave_out=_EXPERIMENT_UNREAD)
    return task


def access_judgement_for_rater(user, judgement_id: int) -> Judgement:
    """One of the rater's own verdicts, in an experiment open for rating and to them (404 otherwise)."""
    if not has_role(user, RATER):
        raise Http404("No such verdict.")
    try:
        return Judgement.objects.select_related("task__experiment").get(
            pk=judgement_id, rater=user, task__experiment__in=experiments_open_to_rater(user)
        )
    except (Judgement.DoesNotExist, ValueError, TypeError):
        raise Http404("No such verdict.") from None


def access_sampled_pair_for_engineer(user, experiment_id: int, pair_id: int) -> SampledPair:
    """A sampled pair of an experiment the engineer may see, with both items (404 otherwise)."""
    experiment = access_experiment_for_engineer(user, experiment_id)
    try:
        return SampledPair.objects.select_related("experiment", "vantage", "partner", "task").get(
            pk=pair_id, experiment=experiment
        )
    except (SampledPair.DoesNotExist, ValueError, TypeError):
        raise Http404("No such pair.") from None


def access_experiment_for_owner(user, experiment_id: int) -> Experiment:
    """An experiment the user may change: its owner's or, for admins, any. Engineers it was
    only shared with may read it (403 here); others get 404 as for any invisible experiment."""
    experiment = access_experiment_for_engineer(user, experiment_id)
    if experiment.owner_id != user.pk and not has_role(user, ADMIN):
        raise PermissionDenied("Only the experiment's owner or an admin may change it.")
    return experiment
