"""Every endpoint and method of the API against every role: the intended status, and a refused
request (or a read) changes nothing in the database."""

import uuid

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Sum

from raterapp.models import (
    ApiToken,
    AuditEntry,
    BudgetChange,
    BudgetPool,
    DerivedEstimate,
    EstimateSnapshot,
    Experiment,
    ExperimentBudget,
    Judgement,
    Lease,
    PairReport,
    PairTask,
    RaterAwareEstimate,
    RaterProfile,
    RetractedJudgement,
    SampleBatch,
    UploadedFile,
)
from tests.raterapp.api.conftest import ROLES
from tests.raterapp.routes import api_routes, shape
from tests.raterapp.services.files import tiny_files

E = "/api/experiments/{e}/"
NO = (401, 403, 405, 405, 405)  # a method the endpoint does not have: roles first, then 405
READ = (401, 403, 200, 404, 200)  # an engineer's read: other engineers get 404, raters 403; anonymous 401

# method, path, body, statuses for (anonymous, rater, owner, other engineer, admin)
TABLE = [
    ("get", "/api/experiments/", None, (401, 403, 200, 200, 200)),
    ("post", "/api/experiments/", "upload", (401, 403, 201, 201, 201)),
    ("put", "/api/experiments/", None, NO),
    ("delete", "/api/experiments/", None, NO),
    ("get", E, None, READ),
    ("put", E, None, NO),
    ("patch", E, None, NO),
    ("delete", E, None, (401, 403, 409, 404, 409)),  # only a failed experiment (test_experiment_delete.py)
    ("get", E + "impact/", None, READ),
    ("post", E + "impact/", None, NO),
    ("get", E + "impact/groups/", None, READ),
    ("get", E + "pairs/", None, READ),
    ("post", E + "pairs/", None, NO),
    ("get", E + "explorer/pairs/", None, READ),
    ("get", E + "explorer/pairs/?format=csv&pair_class=split", None, READ),
    ("post", E + "explorer/pairs/", None, NO),
    ("get", E + "explorer/pairs/{p}/", None, READ),
    ("delete", E + "explorer/pairs/{p}/", None, NO),
    ("get", E + "explorer/clusters/?side=exp&limit=5", None, READ),
    ("post", E + "explorer/clusters/", None, NO),
    ("get", E + "estimates/", None, READ),
    ("post", E + "estimates/", None, NO),
    ("get", E + "estimates/history/", None, READ),
    ("get", E + "exports/pairs/?format=csv", None, READ),
    ("get", E + "exports/pairs/?format=json", None, READ),
    ("get", E + "exports/judgements/?format=csv", None, READ),
    ("get", E + "exports/judgements/?format=json", None, READ),
    ("get", E + "exports/estimates/?format=csv", None, READ),
    ("get", E + "exports/estimates/?format=json", None, READ),
    ("delete", E + "exports/judgements/", None, NO),
    ("post", E + "next-pair/", None, (401, 200, 403, 403, 403)),
    ("get", E + "next-pair/", None, (401, 405, 403, 403, 403)),
    ("post", "/api/judgements/", "judgement", (401, 201, 403, 403, 403)),
    ("get", "/api/judgements/", None, (401, 405, 403, 403, 403)),
    ("post", "/api/judgements/{j}/undo/", None, (401, 200, 403, 403, 403)),
    ("get", "/api/judgements/{j}/undo/", None, (401, 405, 403, 403, 403)),
    ("post", "/api/tasks/{t}/report/", "report", (401, 201, 403, 403, 403)),
    ("post", "/api/leases/renew/", "renew", (401, 200, 403, 403, 403)),
    ("get", E + "progress/", None, (401, 200, 403, 403, 403)),
    ("post", E + "progress/", None, (401, 405, 403, 403, 403)),
    ("get", E + "gold-pairs/", None, READ),
    ("post", E + "gold-pairs/", "gold", (401, 403, 403, 404, 201)),
    ("put", E + "gold-rate/", "gold_rate", (401, 403, 403, 404, 200)),
    ("get", E + "gold-rate/", None, (401, 403, 405, 405, 405)),
    ("get", E + "gold-accuracy/", None, READ),
    ("get", E + "reports/", None, READ),
    ("post", E + "reports/", None, NO),
    ("get", E + "exports/impact/?format=csv", None, READ),
    ("get", E + "exports/impact/?format=json", None, READ),
    ("get", E + "dashboard/", None, READ),
    ("post", E + "dashboard/", None, NO),
    # Under WSGI (this client) the stream is 204 for those who may open it: the page then polls.
    ("get", E + "events/", None, (401, 403, 204, 404, 204)),
    ("post", E + "events/", None, NO),
    ("get", E + "derived/", None, READ),
    ("post", E + "derived/", None, NO),
    ("get", E + "estimates/convergence/", None, READ),
    ("get", E + "estimates/convergence/?format=csv", None, READ),
    ("get", E + "slices/", None, READ),
    ("delete", E + "slices/", None, NO),
    ("put", E + "target/", "target", (401, 403, 200, 404, 200)),
    ("get", E + "target/", None, NO),
    ("post", E + "close/", None, (401, 403, 200, 404, 200)),
    ("post", E + "reopen/", None, (401, 403, 400, 404, 400)),
    # Re-running a preparation: 409 here, as the experiment is prepared (a failed one: test_preparation_rerun.py).
    ("post", E + "prepare/", None, (401, 403, 409, 404, 409)),
    ("get", E + "prepare/", None, NO),
    ("get", E + "budget/", None, READ),
    ("patch", E + "budget/", "budget", (401, 403, 403, 404, 200)),
    ("put", E + "budget/", "budget", NO),
    ("delete", E + "budget/", None, NO),
    ("get", E + "budget/changes/", None, READ),
    ("post", E + "budget/changes/", None, NO),
    ("get", "/api/overview/", None, (401, 403, 403, 403, 200)),
    ("post", "/api/overview/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/budget-pools/", None, (401, 403, 403, 403, 200)),
    ("post", "/api/budget-pools/", "pool", (401, 403, 403, 403, 201)),
    ("get", "/api/budget-pools/{pool}/", None, (401, 403, 403, 403, 200)),
    ("patch", "/api/budget-pools/{pool}/", "pool_change", (401, 403, 403, 403, 200)),
    ("delete", "/api/budget-pools/{pool}/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/raters/", None, (401, 403, 403, 403, 200)),
    ("get", "/api/health/", None, (200, 200, 200, 200, 200)),
    # GET /api/health/detail/ for admins is 200 or 503 as workers answer: tests/raterapp/test_health.py.
    ("post", "/api/health/detail/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/raters/?format=csv&since=2026-01-01", None, (401, 403, 403, 403, 200)),
    ("post", "/api/raters/", "rater_new", (401, 403, 403, 403, 201)),
    ("delete", "/api/raters/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/raters/{r}/", None, (401, 403, 403, 403, 200)),  # a rater's own id too: they use me/
    ("get", "/api/raters/{o}/", None, (401, 403, 403, 403, 404)),  # not a rater
    ("patch", "/api/raters/{r}/", "rater_change", (401, 403, 403, 403, 200)),
    ("delete", "/api/raters/{r}/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/raters/me/", None, (401, 200, 403, 403, 403)),
    ("patch", "/api/raters/me/", "rater_change", (401, 405, 403, 403, 403)),
    ("get", E + "raters/", None, READ),
    ("get", E + "raters/?format=csv", None, READ),
    ("put", E + "raters/", "assign", (401, 403, 403, 404, 200)),
    ("post", E + "raters/", "assign", NO),
    ("get", E + "agreement/", None, READ),
    ("get", E + "agreement/?format=csv", None, READ),
    ("post", E + "agreement/", None, NO),
    ("get", E + "decision/", None, READ),
    ("put", E + "decision/", "decision", (401, 403, 200, 404, 200)),
    ("post", E + "decision/", None, NO),
    ("get", E + "recall-base/", None, READ),
    ("put", E + "recall-base/", "recall_base", (401, 403, 200, 404, 200)),
    ("post", E + "recall-base/", None, NO),
    ("get", E + "batches/", None, READ),
    ("post", E + "batches/", "batch", (401, 403, 202, 404, 202)),
    ("delete", E + "batches/", None, NO),
    ("get", E + "batches/plan/?draws=100", None, READ),
    ("post", E + "batches/plan/", None, NO),
    ("get", E + "rater-aware/", None, READ),
    ("post", E + "rater-aware/", None, NO),
    ("get", E + "transitivity/", None, (401, 403, 403, 403, 200)),  # names raters beside verdicts: admins
    ("post", E + "transitivity/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/raters/{r}/sensitivity/", None, (401, 403, 403, 403, 200)),
    ("get", "/api/raters/{o}/sensitivity/", None, (401, 403, 403, 403, 404)),  # not a rater
    ("delete", "/api/raters/{r}/sensitivity/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/audit/", None, (401, 403, 403, 403, 200)),
    ("post", "/api/audit/", None, (401, 403, 403, 403, 405)),
    ("get", "/api/tokens/", None, (401, 200, 200, 200, 200)),
    ("post", "/api/tokens/", "token", (401, 201, 201, 201, 201)),
    ("delete", "/api/tokens/", None, (401, 405, 405, 405, 405)),
    ("delete", "/api/tokens/{tok}/", None, (401, 404, 200, 404, 200)),  # the owner's token
    ("get", "/api/tokens/{tok}/", None, (401, 405, 405, 405, 405)),
    ("get", "/api/users/{o}/tokens/", None, (401, 403, 403, 403, 200)),
    ("delete", "/api/users/{o}/tokens/", None, (401, 403, 403, 403, 200)),
    ("post", "/api/users/{o}/tokens/", None, (401, 403, 403, 403, 405)),
    ("post", E + "archive/", None, (401, 403, 400, 404, 400)),  # in rating: close it first
    ("post", E + "unarchive/", None, (401, 403, 200, 404, 200)),
    ("get", E + "archive/", None, NO),
    ("get", "/api/experiments/?archived=true", None, (401, 403, 200, 200, 200)),
    ("post", "/api/raters/{r}/password-link/", None, (401, 403, 403, 403, 200)),
    ("post", "/api/raters/{o}/password-link/", None, (401, 403, 403, 403, 404)),  # not a rater
    ("get", "/api/raters/{r}/password-link/", None, (401, 403, 403, 403, 405)),
    ("patch", "/api/gold-pairs/{g}/", "gold_change", (401, 403, 403, 403, 200)),
    ("patch", "/api/gold-pairs/{t}/", "gold_change", (401, 403, 403, 403, 404)),  # not a gold question
    ("delete", "/api/gold-pairs/{g}/", None, (401, 403, 403, 403, 405)),
    ("post", "/api/reports/{rep}/resolve/", "resolve", (401, 403, 403, 403, 200)),
    ("get", "/api/reports/{rep}/resolve/", None, (401, 403, 403, 403, 405)),
]
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
    ("post", E + "batches/"),
    ("post", "/api/tokens/"),
    ("delete", "/api/tokens/{tok}/"),
    ("delete", "/api/users/{o}/tokens/"),
    ("post", E + "unarchive/"),
    ("patch", "/api/gold-pairs/{g}/"),
    ("post", "/api/reports/{rep}/resolve/"),
}


def database_state():
    return {
        "experiments": sorted(Experiment.objects.values_list("pk", "name", "status", "owner")),
        "files": UploadedFile.objects.count(),
        "leases": sorted(Lease.objects.values_list("task", "rater", "expires_at", "token")),
        "judgements": sorted(Judgement.objects.values_list("pk", "task", "rater", "verdict")),
        "verdicts": PairTask.objects.aggregate(n=Sum("verdicts"))["n"],
        "snapshots": EstimateSnapshot.objects.count(),
        "derived": DerivedEstimate.objects.count(),
        "rater_aware": RaterAwareEstimate.objects.count(),
        "retracted": RetractedJudgement.objects.count(),
        "reports": PairReport.objects.count(),
        "tasks": PairTask.objects.count(),
        "gold_rates": sorted(Experiment.objects.values_list("pk", "gold_rate")),
        "targets": sorted(Experiment.objects.values_list("pk", "target_half_width")),
        "decision_rules": sorted(Experiment.objects.values_list("pk", "decision_metric", "equivalence_margin")),
        "recall_base_ranges": sorted(Experiment.objects.values_list("pk", "recall_base_low", "recall_base_high")),
        "batches": sorted(SampleBatch.objects.values_list("experiment", "index", "draws", "status")),
        "budgets": sorted(ExperimentBudget.objects.values_list("pk", "max_verdicts", "paused", "pool", "spent")),
        "pools": sorted(BudgetPool.objects.values_list("pk", "name", "max_verdicts", "paused")),
        "budget_changes": BudgetChange.objects.count(),
        "users": sorted(User.objects.values_list("pk", "username", "is_active", "password")),
        "rater_profiles": sorted(
            RaterProfile.objects.values_list("user", "daily_quota", "total_quota", "paused", "paused_reason")
        ),
        "assigned_raters": sorted(Experiment.assigned_raters.through.objects.values_list("experiment", "user")),
        "tokens": sorted(ApiToken.objects.values_list("pk", "user", "expires_at", "revoked_at")),
        "audit_entries": AuditEntry.objects.count(),
        "gold_and_retired": sorted(PairTask.objects.values_list("pk", "gold_answer", "retired_at")),
        "report_resolutions": sorted(PairReport.objects.values_list("pk", "resolution", "resolved_at")),
        "archived": sorted(Experiment.objects.values_list("pk", "archived_at")),
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


def url_of(path, world):
    return path.format(
        e=world["experiment"].pk, j=world["judgement"].pk, t=world["task"].pk, p=world["pair"].pk, pool=world["pool"].pk,
        r=world["rater"].pk, o=world["owner"].pk, tok=world["token"].pk, g=world["gold"].pk, rep=world["report"].pk,
    )  # fmt: skip


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
            response = getattr(client_of(role), method)(url, data=data, format="multipart" if body == "upload" else "json")
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
