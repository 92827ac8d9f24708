import pytest
from django.contrib.auth.models import Group, User

from raterapp.access import ROLES


@pytest.fixture
def users(db):
    """One user per role, and one without any role."""
    made = {}
    for role in ROLES:
        user = User.objects.create_user(username=role, password="pw-" + role)
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        made[role] = user
    made["nobody"] = User.objects.create_user(username="nobody", password="pw-nobody")
    return made
