"""The role table of the endpoints that put verdicts right (the history strip's read, a rater's
change, an admin's void), in the form of test_roles.py (whose every-endpoint check names this
file): raters see and change only their own verdicts, engineers cannot void, admins can; a refused
request or a read changes nothing."""

import uuid

import pytest
from django.db import transaction

from raterapp.models import AuditEntry, Judgement, RetractedJudgement
from raterapp.services.judging import assignment_next, judgement_submit
from tests.raterapp.api.conftest import ROLES
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.roles import TABLE, database_state, url_of

pytestmark = pytest.mark.rating_loop

E = "/api/experiments/{e}/"
# Anonymous requests are refused as the main table refuses them (403, or 401 with WWW-Authenticate).
A = next(statuses[0] for method, path, _, statuses in TABLE if (method, path) == ("get", "/api/overview/"))

# method, path, body, statuses for (anonymous, rater, owner, other engineer, admin)
VERDICT_ROWS = [
    ("get", E + "my-verdicts/", None, (A, 200, 403, 403, 403)),
    ("post", E + "my-verdicts/", None, (A, 405, 403, 403, 403)),
    ("put", "/api/judgements/{j}/", "change", (A, 200, 403, 403, 403)),
    ("put", "/api/judgements/{mine_not}/", "change", (A, 404, 403, 403, 403)),  # another rater's verdict
    ("get", "/api/judgements/{j}/", None, (A, 405, 403, 403, 403)),
    ("delete", "/api/judgements/{j}/", None, (A, 405, 403, 403, 403)),
    ("post", "/api/verdict-voids/", "void", (A, 403, 403, 403, 200)),
    ("post", "/api/verdict-voids/", "void_range", (A, 403, 403, 403, 200)),
    ("post", "/api/verdict-voids/", "void_no_reason", (A, 403, 403, 403, 400)),
    ("get", "/api/verdict-voids/", None, (A, 403, 403, 403, 405)),
]
WRITES = {("put", "/api/judgements/{j}/"), ("post", "/api/verdict-voids/")}


@pytest.fixture
def others_verdict(world):
    other = UserFactory(roles=["rater"])
    task = assignment_next(experiment=world["experiment"], rater=other)
    return judgement_submit(task=task, rater=other, verdict="equivalent", client_id=uuid.uuid4())[0]


def body_of(kind, world):
    if kind == "change":
        return {"verdict": "not_equivalent"}
    if kind == "void":
        return {"judgement": world["judgement"].pk, "reason": "role table"}
    if kind == "void_range":
        at = world["judgement"].created_at
        return {
            "rater": world["rater"].pk,
            "since": at.isoformat(),
            "until": (at.replace(year=at.year + 1)).isoformat(),
            "reason": "role table",
        }
    if kind == "void_no_reason":
        return {"judgement": world["judgement"].pk, "reason": ""}
    return None


@pytest.mark.parametrize(
    "method, path, body, statuses", VERDICT_ROWS, ids=[f"{m.upper()} {p} {b or ''}" for m, p, b, _ in VERDICT_ROWS]
)
def test_verdict_role_table(client_of, world, others_verdict, method, path, body, statuses):
    url = url_of(path.replace("{mine_not}", str(others_verdict.pk)), world)
    wrong = []
    for role, expected in zip(ROLES, statuses, strict=True):
        with transaction.atomic():
            before = database_state()
            audit_before = AuditEntry.objects.count()
            response = getattr(client_of(role), method)(url, data=body_of(body, world), format="json")
            if response.status_code != expected:
                wrong.append(f"{role}: {response.status_code}, not {expected}: {response.content[:300]!r}")
            elif not ((method, path) in WRITES and expected < 300) and (
                database_state() != before or AuditEntry.objects.count() != audit_before
            ):
                wrong.append(f"{role}: {response.status_code}, and the database changed")
            transaction.set_rollback(True)
    assert wrong == []


def test_a_rater_reads_only_their_own_recent_verdicts_newest_first(client_of, world, others_verdict):
    body = client_of("rater").get(f"/api/experiments/{world['experiment'].pk}/my-verdicts/").json()
    assert [row["id"] for row in body["verdicts"]] == [world["judgement"].pk]
    row = body["verdicts"][0]
    assert (row["task"], row["verdict"], row["client_id"]) == (
        world["judgement"].task_id,
        "equivalent",
        str(world["judgement"].client_id),
    )
    assert set(row["left"]) == {"title", "description", "image_url", "url", "attributes"}


def test_a_change_and_a_void_through_the_api(client_of, world):
    judgement = world["judgement"]
    changed = client_of("rater").put(f"/api/judgements/{judgement.pk}/", {"verdict": "unsure"}, format="json")
    assert (changed.status_code, changed.json()["verdict"]) == (200, "unsure")
    voided = client_of("admin").post(
        "/api/verdict-voids/", {"judgement": judgement.pk, "reason": "test"}, format="json"
    )
    assert (voided.status_code, voided.json()) == (200, {"voided": [judgement.pk]})
    assert not Judgement.objects.filter(pk=judgement.pk).exists()
    assert RetractedJudgement.objects.get(client_id=judgement.client_id).verdict == "unsure"
    assert list(
        AuditEntry.objects.filter(action__startswith="verdict.").order_by("pk").values_list("action", flat=True)
    ) == [
        "verdict.change",
        "verdict.void",
    ]
    again = client_of("rater").put(f"/api/judgements/{judgement.pk}/", {"verdict": "equivalent"}, format="json")
    assert again.status_code == 404
