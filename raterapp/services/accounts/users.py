"""Users' roles (the ``rater``, ``engineer`` and ``admin`` groups), changed by admins with an
audit entry in the same transaction; the first users of an install, made on the server."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from raterapp.access import ADMIN, RATER, ROLES, require_role
from raterapp.db.locks import rater_lock
from raterapp.models import AuditEntry, Lease, RaterProfile
from raterapp.services.audit import audit_record


def user_roles_set(*, actor, user, roles: Iterable[str], reason: str = "") -> list[str]:
    """Exactly these roles for ``user`` (other groups stay); the roles, sorted. A new rater gets
    a profile; a former rater's live leases are released. Admins may not drop their own admin
    role (someone must be left to give it back)."""
    require_role(actor, ADMIN, "Only admins change roles.")
    wanted = set(roles)
    unknown = wanted - set(ROLES)
    if unknown:
        raise ValidationError({"roles": f"Not roles: {', '.join(sorted(unknown))}. Choose from {', '.join(ROLES)}."})
    if user.pk == actor.pk and ADMIN not in wanted and not actor.is_superuser:
        raise ValidationError({"roles": "You cannot take away your own admin role."})
    with transaction.atomic():
        rater_lock(user.pk)
        current = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        if current == wanted:
            return sorted(wanted)
        user.groups.remove(*Group.objects.filter(name__in=current - wanted))
        user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in sorted(wanted - current)))
        if RATER in wanted:
            RaterProfile.objects.get_or_create(user=user)
        elif RATER in current:
            Lease.objects.filter(rater=user).delete()
        audit_record(
            actor=actor, action=AuditEntry.Action.ROLES, subject_id=user.pk, field="roles",
            old=",".join(sorted(current)), new=",".join(sorted(wanted)), reason=reason,
        )  # fmt: skip
    user.__dict__.pop("_raterapp_roles", None)
    return sorted(wanted)


def user_create_on_server(*, username: str, role: str, password: str) -> object:
    """A user with one role, made by whoever runs ``manage.py user_create`` on the server (the
    first admin has no admin to make them: the audit entry has no actor). An existing user name
    is refused, never changed: running it twice cannot reset someone's password."""
    User = get_user_model()
    if role not in ROLES:
        raise ValidationError({"role": f"Not a role: {role}. Choose from {', '.join(ROLES)}."})
    if User.objects.filter(username__iexact=username).exists():
        raise ValidationError({"username": f"A user named {username!r} exists already."})
    user = User(username=username)
    user.full_clean(exclude=["password"])
    password_validation.validate_password(password, user=user)
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, password=password)
            user.groups.add(Group.objects.get_or_create(name=role)[0])
            if role == RATER:
                RaterProfile.objects.create(user=user)
            audit_record(
                actor=None, action=AuditEntry.Action.ROLES, subject_id=user.pk, field="roles", old="", new=role
            )
    except IntegrityError:
        raise ValidationError({"username": f"A user named {username!r} exists already."}) from None
    return user
