"""No GET or HEAD request writes to the database: every page and API endpoint the URL resolver
serves (the Django admin's too), with real ids from an experiment in use, for every role."""

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from raterapp.models import Experiment
from tests.raterapp.api.conftest import ROLES
from tests.raterapp.routes import routes

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
# Without Redis (the embedded default) the cache lives in a table; a throttle counter there is
# the cache's bookkeeping, not data. On Redis (CI) these statements never reach the database.
CACHE_TABLES = tuple(
    f'"{cache["LOCATION"]}"' for cache in settings.CACHES.values() if cache["BACKEND"].endswith(".DatabaseCache")
)
# (route, role) → why a read may write there. Each must be unavoidable, and is listed here only.
ALLOWED = {
    **{
        ("/accounts/set-password/{uidb64}/{token}/", role): "Django keeps the reset token in the session, "
        "out of the address bar, before it shows the form (PasswordResetConfirmView): a session row"
        for role in ROLES
    },
}


def ids_of(world, people) -> dict:
    rater = world["rater"]
    return {
        "experiment_id": world["experiment"].pk,
        "sampled_pair_id": world["pair"].pk,
        "judgement_id": world["judgement"].pk,
        "task_id": world["task"].pk,
        "pool_id": world["pool"].pk,
        "rater_id": rater.pk,
        "user_id": world["owner"].pk,
        "token_id": world["token"].pk,
        "report_id": world["report"].pk,
        "uidb64": urlsafe_base64_encode(force_bytes(rater.pk)),
        "token": default_token_generator.make_token(rater),
        "app_label": "raterapp",
        "content_type_id": ContentType.objects.get_for_model(Experiment).pk,
        "id": rater.pk,  # the admin's password form of a user
        "url": "no/such/page/",  # the admin's catch-all
    }


def url_of(route, ids) -> str:
    values = dict(ids)
    if "object_id" in route.params:  # the admin: /admin/<app>/<model>/<object_id>/...
        _, _, app_label, model_name, *_ = route.path.split("/")
        if route.path.startswith("/admin/r/"):
            values["object_id"] = ids["experiment_id"]
        else:
            first = apps.get_model(app_label, model_name).objects.order_by("pk").first()
            values["object_id"] = first.pk if first is not None else 1
    return route.path.format(**values)


def writes_of(client, url, method) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        getattr(client, method)(url)
    statements = (q["sql"] for q in queries.captured_queries)
    return [sql for sql in statements if sql.lstrip().upper().startswith(WRITES) and not _on_cache_table(sql)]


def _on_cache_table(sql: str) -> bool:
    return any(table in sql.split("(", 1)[0] for table in CACHE_TABLES)


@pytest.mark.parametrize("role", ROLES)
def test_no_get_or_head_request_writes_to_the_database(world, people, role):
    client = Client()
    if people[role] is not None:
        client.force_login(people[role])  # the sign-in's own writes happen here, before counting
    ids = ids_of(world, people)
    crawled, writes = 0, {}
    for route in routes():
        if "get" not in route.methods:
            continue
        url = url_of(route, ids)
        for method in ("get", "head"):
            crawled += 1
            if statements := writes_of(client, url, method):
                writes[route.path, f"{method.upper()} {url}"] = statements
    assert {key: sql for key, sql in writes.items() if (key[0], role) not in ALLOWED} == {}
    assert {path for path, r in ALLOWED if r == role} <= {path for path, _ in writes}  # no stale exception
    assert crawled > 300  # the walk found every page, endpoint and admin view
