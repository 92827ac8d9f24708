"""Managing raters: create and invite them, deactivate and reactivate, pause and unpause,
set their quotas, and choose which experiments they rate. Admins only.

Every service refuses a non-admin actor (``PermissionDenied``) and checks its input
(``ValidationError``) before it writes anything, so a refused action changes nothing.

Concurrency: a rater's lease requests lock the rater's user row first
(``judging/queue.py``). Pausing, deactivating and setting quotas take the same lock and
release the rater's live leases, so once a pause commits no request of the rater, from
any session, holds or gets a pair. A change of an experiment's raters releases the live
leases of raters it is no longer open to; a lease request that read the old assignment
just before the change committed may still lease one pair, which its rater can neither
judge (the verdict's access check answers 404) nor keep (the next renewal drops it).
Locking the experiment row against that would serialise every lease of the experiment.

Audit: every change of a quota, a pause, an assignment, a role or whether an account is
active writes an ``AuditEntry`` (who, whom, from what to what, why) in the transaction of
the change, so a refused or rolled-back change leaves no entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Field
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from raterapp.access import ADMIN, RATER, has_role, require_role
from raterapp.db.fields import max_length_of
from raterapp.db.locks import rater_lock
from raterapp.models import AuditEntry, Experiment, Lease, RaterProfile
from raterapp.services.accounts.api_tokens import api_tokens_revoke_all
from raterapp.services.audit import audit_record

Action = AuditEntry.Action

MAX_QUOTA = 2**31 - 1
ADMINS_ONLY = "Only admins manage raters."


def rater_create(*, actor, username: str, email: str, password: str | None = None):
    """A new rater (a user in the ``rater`` group, with a profile); ``(user, set_password_path)``.

    Without a password the user gets an unusable one and ``set_password_path`` is a
    one-time link (Django's password reset confirmation, valid for
    ``PASSWORD_RESET_TIMEOUT``) for the rater to choose one; with a password it is ``None``.
    """
    require_role(actor, ADMIN, ADMINS_ONLY)
    User = get_user_model()
    username = (username or "").strip()
    email = (email or "").strip()
    errors: dict[str, str | list[str]] = {}
    username_field = cast(Field, User._meta.get_field(User.USERNAME_FIELD))
    if not username:
        errors["username"] = "Give a user name."
    elif len(username) > max_length_of(User, User.USERNAME_FIELD):
        errors["username"] = f"At most {username_field.max_length} characters."
    elif not all(_passes(validator, username) for validator in username_field.validators):
        errors["username"] = "Letters, digits and @ . + - _ only."
    elif User.objects.filter(username__iexact=username).exists():
        errors["username"] = "A user with this name exists already."
    try:
        validate_email(email)
    except ValidationError:
        errors["email"] = "Give a valid e-mail address."
    if password is not None and "username" not in errors:
        try:
            password_validation.validate_password(password, user=User(username=username, email=email))
        except ValidationError as exc:
            errors["password"] = exc.messages
    if errors:
        raise ValidationError(errors)
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, email=email, password=password)
            user.groups.add(Group.objects.get_or_create(name=RATER)[0])
            RaterProfile.objects.create(user=user)
            audit_record(actor=actor, action=Action.ROLES, subject_id=user.pk, field="roles", old="", new=RATER)
    except IntegrityError:
        raise ValidationError({"username": "A user with this name exists already."}) from None
    return user, (None if password is not None else password_set_path(user))


def _passes(validator, value: str) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


def password_set_path(user) -> str:
    """The one-time link (a path) at which the user chooses a password; it stops working
    once the password changes."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": default_token_generator.make_token(user)})


def rater_deactivate(*, actor, rater):
    """The rater can no longer sign in (their sessions and tokens stop working); their
    verdicts stay and count; their live leases are released."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _rater_only(rater)
    if rater.pk == actor.pk:
        raise ValidationError({"is_active": "You cannot deactivate yourself."})
    with transaction.atomic():
        rater_lock(rater.pk)
        _active_set(actor, rater, False)
        _leases_release(rater_id=rater.pk)
    rater.is_active = False
    return rater


def rater_reactivate(*, actor, rater):
    require_role(actor, ADMIN, ADMINS_ONLY)
    _rater_only(rater)
    with transaction.atomic():
        _active_set(actor, rater, True)
    rater.is_active = True
    return rater


def _active_set(actor, rater, active: bool) -> None:
    if get_user_model().objects.filter(pk=rater.pk, is_active=not active).update(is_active=active):
        audit_record(
            actor=actor, action=Action.ACTIVE, subject_id=rater.pk, field="is_active", old=not active, new=active
        )
    if not active:  # for good: reactivating the account brings none of them back
        api_tokens_revoke_all(actor=actor, user=rater)


def rater_pause(*, actor, rater, reason: str) -> RaterProfile:
    """No pair is leased to the rater until an admin unpauses them; their live leases are
    released. Pausing a paused rater only replaces the reason."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _rater_only(rater)
    return rater_pause_record(rater_id=rater.pk, reason=reason, actor=actor)


def rater_pause_record(*, rater_id: int, reason: str, actor=None) -> RaterProfile:
    """Pause without an actor's check: for the automatic pause (``rater_quality``), audited
    with no actor."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"paused_reason": "Say why the rater is paused."})
    with transaction.atomic():
        rater_lock(rater_id)
        profile, _ = RaterProfile.objects.get_or_create(user_id=rater_id)
        audit_record(
            actor=actor, action=Action.PAUSE, subject_id=rater_id, field="paused", old=profile.paused, new=True,
            reason=reason,
        )  # fmt: skip
        if not profile.paused:
            profile.paused, profile.paused_at = True, timezone.now()
        profile.paused_reason = reason
        profile.save(update_fields=["paused", "paused_at", "paused_reason"])
        _leases_release(rater_id=rater_id)
    return profile


def rater_unpause(*, actor, rater) -> RaterProfile:
    """Lift a pause. The automatic pause then judges the rater on later verdicts only."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _rater_only(rater)
    with transaction.atomic():
        rater_lock(rater.pk)
        profile, _ = RaterProfile.objects.get_or_create(user=rater)
        if profile.paused:
            audit_record(
                actor=actor, action=Action.UNPAUSE, subject_id=rater.pk, field="paused", old=True, new=False,
                reason=f"Paused for: {profile.paused_reason}",
            )  # fmt: skip
            profile.paused, profile.paused_reason, profile.paused_at = False, "", None
            profile.unpaused_at = timezone.now()
            profile.save(update_fields=["paused", "paused_reason", "paused_at", "unpaused_at"])
    return profile


def rater_quota_set(*, actor, rater, daily_quota: int | None, total_quota: int | None, reason: str) -> RaterProfile:
    """Verdicts per day and in all (``None``: no limit), with why (required when a quota
    changes, kept in the audit log, as for budgets). A quota below what the rater has given
    already stops their leasing and keeps every verdict."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _rater_only(rater)
    values = {"daily_quota": _quota("daily_quota", daily_quota), "total_quota": _quota("total_quota", total_quota)}
    reason = (reason or "").strip()
    with transaction.atomic():
        rater_lock(rater.pk)
        profile, _ = RaterProfile.objects.get_or_create(user=rater)  # under the rater lock: read, then write
        changed = {name: value for name, value in values.items() if getattr(profile, name) != value}
        if changed and not reason:
            raise ValidationError({"quota_reason": "Say why the quota changes."})
        for name, value in changed.items():
            audit_record(
                actor=actor, action=Action.QUOTA, subject_id=rater.pk, field=name,
                old=_quota_text(getattr(profile, name)), new=_quota_text(value), reason=reason,
            )  # fmt: skip
        RaterProfile.objects.filter(pk=profile.pk).update(**values)
    profile.refresh_from_db()
    return profile


def rater_assign(*, actor, experiment: Experiment, raters: Iterable) -> list[int]:
    """Add raters to the experiment's assigned raters: from then on only assigned raters
    rate it. Returns the assigned rater ids."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    raters = _raters_only(raters)
    return _assignment_change(actor, experiment, lambda assigned: assigned | {r.pk for r in raters})


def rater_unassign(*, actor, experiment: Experiment, raters: Iterable) -> list[int]:
    """Remove raters from the experiment's assigned raters (their live leases in it are
    released); with none left, every rater may rate it again. Returns the assigned ids."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    raters = list(raters)
    return _assignment_change(actor, experiment, lambda assigned: assigned - {r.pk for r in raters})


def experiment_raters_set(
    *, actor, experiment: Experiment, rater_ids: Iterable[int], open_to_all: bool | None = None
) -> list[int]:
    """Exactly the raters with these user ids are assigned to the experiment (none: open to
    every rater if it is open to all raters, else to nobody); ``open_to_all``, when given,
    sets that too. An id that is not a rater's is a ``ValidationError``."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    rater_ids = set(rater_ids)
    raters = list(get_user_model().objects.filter(pk__in=rater_ids))
    missing = rater_ids - {r.pk for r in raters}
    if missing:
        raise ValidationError({"raters": f"No such users: {', '.join(map(str, sorted(missing)))}."})
    raters = _raters_only(raters)
    with transaction.atomic():
        if open_to_all is not None:
            Experiment.objects.filter(pk=experiment.pk).update(open_to_all_raters=open_to_all)
            experiment.open_to_all_raters = open_to_all
        wanted = _assignment_change(actor, experiment, lambda assigned: {r.pk for r in raters})
        if not wanted and not experiment.open_to_all_raters:
            Lease.objects.filter(task__experiment=experiment).delete()  # open to nobody now
    return wanted


def experiment_open_to_all_set(*, actor, experiment: Experiment, open_to_all: bool) -> bool:
    """Open the experiment to every rater while none is assigned (``True``), or to nobody but
    assigned raters (``False``: with none assigned, live leases are released). Returns whether
    it changed."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    with transaction.atomic():
        changing = Experiment.objects.filter(pk=experiment.pk).exclude(open_to_all_raters=open_to_all)
        changed = changing.update(open_to_all_raters=open_to_all, updated_at=timezone.now())
        experiment.open_to_all_raters = open_to_all
        if changed and not open_to_all and not experiment.assigned_raters.exists():
            Lease.objects.filter(task__experiment=experiment).delete()  # open to nobody now
    return bool(changed)


def rater_update(*, actor, rater, changes: dict):
    """Apply any of ``daily_quota``, ``total_quota`` (with ``quota_reason``), ``paused`` (with ``paused_reason``)
    and ``is_active`` at once: all of them or, when one is refused, none."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    _rater_only(rater)
    unknown = set(changes) - {"daily_quota", "total_quota", "quota_reason", "paused", "paused_reason", "is_active"}
    if unknown:
        raise ValidationError({name: "Not a rater setting." for name in sorted(unknown)})
    with transaction.atomic():
        if "daily_quota" in changes or "total_quota" in changes:
            profile = RaterProfile.objects.filter(user=rater).first()
            rater_quota_set(
                actor=actor,
                rater=rater,
                daily_quota=changes.get("daily_quota", profile.daily_quota if profile else None),
                total_quota=changes.get("total_quota", profile.total_quota if profile else None),
                reason=changes.get("quota_reason", ""),
            )
        paused_now = RaterProfile.objects.filter(user=rater, paused=True).exists()
        if changes.get("paused") is True or ("paused_reason" in changes and "paused" not in changes and paused_now):
            rater_pause(actor=actor, rater=rater, reason=changes.get("paused_reason", ""))
        elif changes.get("paused") is False:
            rater_unpause(actor=actor, rater=rater)
        if changes.get("is_active") is False:
            rater_deactivate(actor=actor, rater=rater)
        elif changes.get("is_active") is True:
            rater_reactivate(actor=actor, rater=rater)
    return rater


# ---- helpers ---------------------------------------------------------------------------------


def _assignment_change(actor, experiment: Experiment, change) -> list[int]:
    with transaction.atomic():
        experiment = Experiment.objects.select_for_update(no_key=True).get(pk=experiment.pk)
        assigned = set(experiment.assigned_raters.values_list("pk", flat=True))
        wanted = change(assigned)
        experiment.assigned_raters.remove(*(assigned - wanted))
        experiment.assigned_raters.add(*(wanted - assigned))
        for rater_id, action in [*((r, Action.UNASSIGN) for r in sorted(assigned - wanted)),
                                 *((r, Action.ASSIGN) for r in sorted(wanted - assigned))]:  # fmt: skip
            audit_record(
                actor=actor, action=action, subject_id=rater_id, experiment_id=experiment.pk, field="assigned",
                old=action == Action.UNASSIGN, new=action == Action.ASSIGN,
            )  # fmt: skip
        if wanted:
            Lease.objects.filter(task__experiment=experiment).exclude(rater__in=wanted).delete()
    return sorted(wanted)


def _leases_release(*, rater_id: int) -> None:
    """The rater's leases go: their pairs return to the queue at once."""
    Lease.objects.filter(rater_id=rater_id).delete()


def _rater_only(user) -> None:
    if not has_role(user, RATER):
        raise ValidationError({"rater": f"{user} is not a rater."})


def _raters_only(users: Iterable) -> list:
    users = list(users)
    strangers = [str(user) for user in users if not has_role(user, RATER)]
    if strangers:
        raise ValidationError({"raters": f"Not raters: {', '.join(sorted(strangers))}."})
    return users


def _quota_text(value: int | None) -> str:
    return "no limit" if value is None else str(value)


def _quota(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_QUOTA:
        raise ValidationError({name: "Give a whole number of verdicts, 0 or more, or null for no limit."})
    return value
