"""Every endpoint and method of the API against every role: the intended status, and a refused
request (or a read) changes nothing in the database."""

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from tests.raterapp.api.conftest import ROLES
from tests.raterapp.helpers.roles import TABLE, E, database_state, url_of
from tests.raterapp.routes import api_routes, shape
from tests.raterapp.services.files import tiny_files

WRITES = {
    ("post", "/api/experiments/"),
    ("post", E + "next-pair/"),
    ("post", "/api/judgements/"),
    ("post", "/api/judgements/{j}/undo/"),
    ("post", "/api/tasks/{t}/report/"),
    ("post", "/api/leases/renew/"),
    ("post", E + "gold-pairs/"),
    ("put", E + "gold-rate/"),
    ("put", E + "target/"),
    ("post", E + "close/"),
    ("patch", E + "budget/"),
    ("post", "/api/budget-pools/"),
    ("patch", "/api/budget-pools/{pool}/"),
    ("post", "/api/raters/"),
    ("patch", "/api/raters/{r}/"),
    ("put", E + "raters/"),
    ("put", E + "decision/"),
    ("put", E + "recall-base/"),
    ("put", E + "model-assisted/"),
    ("post", E + "scores/"),
    ("post", E + "batches/"),
    ("post", "/api/tokens/"),
    ("delete", "/api/tokens/{tok}/"),
    ("delete", "/api/users/{o}/tokens/"),
    ("post", E + "unarchive/"),
    ("patch", "/api/gold-pairs/{g}/"),
    ("post", "/api/reports/{rep}/resolve/"),
}


def body_of(kind, world):
    if kind == "upload":
        return {"name": "uploaded", "n_draws": "50", **tiny_files()}
    if kind == "judgement":
        return {"task": world["task"].pk, "verdict": "equivalent", "client_id": str(uuid.uuid4())}
    if kind == "report":
        return {"reason": "unreadable", "note": "blank image"}
    if kind == "renew":
        return {"tasks": [world["task"].pk]}
    if kind == "gold":
        task = world["task"]
        return {"item_a": task.item_a.item_id, "item_b": task.item_b.item_id, "answer": "equivalent"}
    if kind == "gold_rate":
        return {"gold_rate": 0.2}
    if kind == "target":
        return {"target_half_width": 0.05}
    if kind == "budget":
        return {"max_verdicts": 500, "paused": True, "reason": "role table"}
    if kind == "pool":
        return {"name": "new pool", "max_verdicts": 100, "reason": "role table"}
    if kind == "pool_change":
        return {"max_verdicts": 1, "reason": "role table"}
    if kind == "rater_new":
        return {"username": "new-rater", "email": "new-rater@example.org"}
    if kind == "rater_change":
        return {"daily_quota": 5, "quota_reason": "role table", "paused": True, "paused_reason": "role table"}
    if kind == "decision":
        return {"decision_metric": "DeltaPrecision", "equivalence_margin": 0.01}
    if kind == "recall_base":
        return {"recall_base_low": 0.3, "recall_base_high": 0.7}
    if kind == "model_assisted":
        return {"model_assisted": False}
    if kind == "scores":
        task = world["task"]
        text = f"i,j,score\n{task.item_a.item_id},{task.item_b.item_id},0.25\n"
        return {"scores": SimpleUploadedFile("scores.csv", text.encode())}
    if kind == "batch":
        return {"draws": 100}
    if kind == "token":
        return {"name": "role table", "ttl_days": 2}
    if kind == "assign":
        return {"raters": [world["rater"].pk]}
    if kind == "gold_change":
        return {"answer": "not_equivalent", "retired": True}
    if kind == "resolve":
        return {"resolution": "excluded", "note": "role table"}
    return None


@pytest.mark.parametrize(
    "method, path, body, statuses", TABLE, ids=[f"{m.upper()} {p.replace('{e}', 'N')}" for m, p, _, _ in TABLE]
)
def test_role_table(client_of, world, method, path, body, statuses):
    """Each role in turn against the same world: what one role's request wrote is rolled back
    before the next one's."""
    url = url_of(path, world)
    wrong = []
    for role, expected in zip(ROLES, statuses, strict=True):
        with transaction.atomic():
            before = database_state()
            data = body_of(body, world)
            response = getattr(client_of(role), method)(
                url, data=data, format="multipart" if body in ("upload", "scores") else "json"
            )
            if response.status_code != expected:
                wrong.append(f"{role}: {response.status_code}, not {expected}: {response.content[:300]!r}")
            elif expected == 401 and response.get("WWW-Authenticate") != "Token":
                wrong.append(f"{role}: 401 without WWW-Authenticate: Token")
            elif not ((method, path) in WRITES and expected < 300) and database_state() != before:
                wrong.append(f"{role}: {response.status_code}, and the database changed")
            transaction.set_rollback(True)
    assert wrong == []


@pytest.mark.parametrize(
    "method, path",
    [("get", E), ("get", E + "pairs/"), ("get", E + "estimates/"), ("get", E + "exports/judgements/?format=csv")],
)
def test_a_missing_experiment_is_404_like_a_foreign_one(client_of, world, method, path):
    missing = getattr(client_of("owner"), method)(path.format(e=world["experiment"].pk + 1000))
    foreign = getattr(client_of("other"), method)(path.format(e=world["experiment"].pk))
    assert missing.status_code == foreign.status_code == 404
    assert missing.content == foreign.content


def test_an_engineer_granted_the_experiment_reads_it(client_of, people, world):
    world["experiment"].shared_with.add(people["other"])
    assert client_of("other").get(E.format(e=world["experiment"].pk)).status_code == 200


def test_a_superuser_has_every_role(client_of, people, world):
    people["admin"].is_superuser = True
    people["admin"].save()
    assert client_of("admin").post(E.format(e=world["experiment"].pk) + "next-pair/").status_code == 200


# The table's rows for a route and method the walk finds are tested above; these have theirs elsewhere.
ROWS_ELSEWHERE = {
    ("get", "/api/health/detail/"): "200 or 503 as workers answer: tests/raterapp/test_health.py",
    ("get", "/api/schema/"): "public documentation: test_schema.py",
    ("get", "/api/docs/"): "public documentation: test_schema.py",
    ("get", "/api/redoc/"): "public documentation: test_schema.py",
    ("get", E + "my-verdicts/"): "putting verdicts right: test_verdict_roles.py",
    ("put", "/api/judgements/{j}/"): "putting verdicts right: test_verdict_roles.py",
    ("post", "/api/verdict-voids/"): "putting verdicts right: test_verdict_roles.py",
}


def test_every_endpoint_and_method_the_urls_serve_has_a_role_row():
    """Walked from the URL resolver: a new endpoint (or method) without a row fails here."""
    rows = {(method, shape(path)) for method, path, _, _ in TABLE}
    elsewhere = {(method, shape(path)) for method, path in ROWS_ELSEWHERE}
    served = {(method, shape(route.path)) for route in api_routes() for method in route.methods}
    assert served - rows - elsewhere == set()
    assert elsewhere <= served  # no stale exception
