"""Who may do what. Every id that comes from a request passes one ``access_*`` function,
which answers 404 both for "does not exist" and "not yours".

Roles are Django groups: ``rater`` judges pairs, ``engineer`` creates and reads
experiments, ``admin`` (or a superuser) manages raters and budgets.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from .models import Experiment, Judgement, PairTask, SampledPair

RATER, ENGINEER, ADMIN = "rater", "engineer", "admin"
ROLES = (RATER, ENGINEER, ADMIN)


def user_roles(user: AbstractBaseUser | AnonymousUser) -> set[str]:
    """The user's roles, looked up once per user object (that is, once per request)."""
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(ROLES)
    roles = getattr(user, "_raterapp_roles", None)
    if roles is None:
        roles = frozenset(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._raterapp_roles = roles
    return set(roles)


def roles_annotations(user_field: str) -> dict:
    """One ``Exists`` per role of the user at ``user_field``: a query that reads a user (the
    token or session lookup) brings their roles along, and :func:`roles_remember` keeps them."""
    memberships = get_user_model().groups.through.objects
    return {f"role_{role}": Exists(memberships.filter(user=OuterRef(user_field), group__name=role)) for role in ROLES}


def roles_remember(user, row) -> None:
    """Keep on ``user`` the roles read with :func:`roles_annotations` into ``row``."""
    user._raterapp_roles = frozenset(role for role in ROLES if getattr(row, f"role_{role}"))


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


def experiments_open_to_rater(user) -> QuerySet[Experiment]:
    """Experiments open for rating that this rater may judge: those the rater is assigned
    to, and those open to all raters that have no assigned raters."""
    if not has_role(user, RATER):
        return Experiment.objects.none()
    assigned = Experiment.assigned_raters.through.objects.filter(experiment=OuterRef("pk"))
    return Experiment.objects.filter(status=Experiment.Status.RATING).filter(
        (Q(open_to_all_raters=True) & ~Exists(assigned)) | Exists(assigned.filter(user=user.pk))
    )


def access_experiment_for_rater(user, experiment_id: int) -> Experiment:
    """Raters may judge an experiment open for rating that is open to them (see
    :func:`experiments_open_to_rater`)."""
    try:
        return experiments_open_to_rater(user).get(pk=experiment_id)
    except (Experiment.DoesNotExist, ValueError, TypeError):
        raise Http404("No such experiment.") from None


def access_rater_for_admin(user, rater_id: int):
    """A rater (a member of the ``rater`` group, active or not), for admins (404 otherwise)."""
    if not has_role(user, ADMIN):
        raise Http404("No such rater.")
    try:
        return get_user_model().objects.filter(groups__name=RATER).get(pk=rater_id)
    except (get_user_model().DoesNotExist, ValueError, TypeError):
        raise Http404("No such rater.") from None


def access_task_for_rater(user, task_id: int) -> PairTask:
    """A pair task of an experiment open for rating and to this rater (404 otherwise)."""
    try:
        return PairTask.objects.select_related("experiment").get(
            pk=task_id, experiment__in=experiments_open_to_rater(user)
        )
    except (PairTask.DoesNotExist, ValueError, TypeError):
        raise Http404("No such pair.") from None


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
