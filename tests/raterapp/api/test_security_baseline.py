"""Issue 16's security baseline: spreadsheet-safe CSV, sign-in lockout, API rates, malformed
requests, page sizes, the location allow-list and the username check."""

import csv
import io
import json
import uuid

import pytest
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from metrics_core.cli import main as metrics_core_main
from metrics_core.io import FORMULA_START, read_judgements, read_pairs
from raterapp.api.common import CSVRenderer
from raterapp.models import ImpactGroup, Item
from raterapp.services.accounts.raters import rater_create
from raterapp.services.experiments.locations import allowed_location_problems
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.exports import CSV_EXPORTS
from tests.raterapp.prepared import BASE, EXP, experiment_prepared

PREFIXES = FORMULA_START  # =, +, -, @, tab, CR


def hostile(k: int) -> str:
    return f'{PREFIXES[k % len(PREFIXES)]}HYPERLINK("http://evil.example","{k}")'


def unsafe_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: text (not a number) starting with a formula character."""
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    return [c for c in cells if c[:1] in PREFIXES and not _is_number(c)]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.fixture
def hostile_experiment(people):
    """Item ids, titles, slice labels, comments and a username that start with each formula
    character; every task judged twice."""
    experiment = experiment_prepared(owner=people["owner"], replication=2, slices=True)
    for item in Item.objects.filter(experiment=experiment):
        k = item.position
        item.item_id, item.title = hostile(k), hostile(k + 1)
        item.attributes = {"colour": hostile(k + 2)}
        item.save()
    for k, group in enumerate(ImpactGroup.objects.filter(experiment=experiment, dimension="colour")):
        group.label = hostile(k)
        group.save()
    raters = [UserFactory(roles=["rater"], username=f"{prefix}rater{n}") for n, prefix in enumerate(PREFIXES[:2])]
    for n, rater in enumerate(raters):
        while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
            a, b = task.item_a.position, task.item_b.position
            verdict = "equivalent" if BASE[a] == BASE[b] else "not_equivalent"
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4(), comment=hostile(a + n))
    estimates_refresh(experiment_id=experiment.pk)
    return experiment


@pytest.mark.parametrize("url", CSV_EXPORTS)
def test_every_cell_of_every_csv_export_is_spreadsheet_safe(client_of, hostile_experiment, url):
    client = client_of("admin")
    response = client.get(url.format(e=hostile_experiment.pk))
    assert response.status_code == 200, response.content[:300]
    text = response.content.decode()
    assert unsafe_cells(text) == []
    hostile_data = {"pairs": "HYPERLINK", "judgements": "HYPERLINK", "explorer": "HYPERLINK", "slices": "HYPERLINK",
                    "raters": "'=rater0", "agreement": "'=rater0"}  # fmt: skip
    carried = [mark for part, mark in hostile_data.items() if f"/{part}/" in url]
    assert all(mark in text for mark in carried)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_the_renderer_quotes_text_but_leaves_numbers(prefix):
    rows = [{"text": prefix + "cmd", "number": -1.5, "numeric_text": "-2", "quoted": "'" + prefix + "x"}]
    out = list(csv.DictReader(io.StringIO(CSVRenderer().render(rows).decode(), newline="")))[0]
    assert out == {"text": "'" + prefix + "cmd", "number": "-1.5", "numeric_text": "-2", "quoted": "''" + prefix + "x"}


def test_the_command_line_reads_back_the_ids_of_spreadsheet_safe_exports(
    client_of, hostile_experiment, tmp_path, capsys
):
    """Quoted ids in the exports are the app's ids again for ``python -m metrics_core estimate``."""
    client = client_of("owner")
    items = Item.objects.filter(experiment=hostile_experiment)
    ids = {item.position: item.item_id for item in items}
    rows = [[ids.get(k, f"-{k}"), f"b{b}", f"e{e}"] for k, (b, e) in enumerate(zip(BASE, EXP))]
    with open(tmp_path / "items.csv", "w", newline="") as out:
        csv.writer(out).writerows([["item_id", "base_cluster", "exp_cluster"], *rows])
    for what in ("pairs", "judgements"):
        url = f"/api/experiments/{hostile_experiment.pk}/exports/{what}/?format=csv"
        (tmp_path / f"{what}.csv").write_bytes(client.get(url).content)
    assert set(read_pairs(tmp_path / "pairs.csv").i.to_pylist()) <= set(ids.values())
    assert set(read_judgements(tmp_path / "judgements.csv").j.to_pylist()) <= set(ids.values())
    capsys.readouterr()
    status = metrics_core_main(["estimate", str(tmp_path / "items.csv"), str(tmp_path / "pairs.csv"),
                                str(tmp_path / "judgements.csv"), "--confidence", "0.95"])  # fmt: skip
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    snapshot = client.get(f"/api/experiments/{hostile_experiment.pk}/estimates/").json()
    from_cli = json.loads(out)["estimates"]
    assert {k: v for k, v in from_cli.items() if k not in ("DeltaRecall", "IQ")} == snapshot["estimates"]


def test_thirty_wrong_passwords_lock_the_username_out_even_with_the_right_one(client, db, settings):
    settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_LOCKOUT_SECONDS = 10, 900
    user = UserFactory(username=f"locked-{uuid.uuid4().hex[:8]}")
    user.set_password("the right one 123")
    user.save()
    for _ in range(30):
        response = client.post("/login/", {"username": user.username, "password": "wrong"})
        assert response.status_code == 200 and not response.wsgi_request.user.is_authenticated
    response = client.post("/login/", {"username": user.username, "password": "the right one 123"})
    assert response.status_code == 200
    assert "Too many failed sign-ins for this username: try again in 15 minutes." in response.content.decode()
    assert "_auth_user_id" not in client.session
    other = UserFactory()  # another username is not locked out
    other.set_password("another right one")
    other.save()
    assert client.post("/login/", {"username": other.username, "password": "another right one"}).status_code == 302


def test_the_lockout_ends_after_its_period(client, db, settings, monkeypatch):
    import time

    settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_LOCKOUT_SECONDS = 3, 900
    user = UserFactory(username=f"later-{uuid.uuid4().hex[:8]}")
    user.set_password("the right one 123")
    user.save()
    for _ in range(3):
        client.post("/login/", {"username": user.username, "password": "wrong"})
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 901)
    response = client.post("/login/", {"username": user.username, "password": "the right one 123"})
    assert response.status_code == 302


def test_the_api_rate_limit_answers_429_with_a_clear_message(db, settings):
    from django.core.cache import cache
    from rest_framework.settings import api_settings
    from rest_framework.throttling import UserRateThrottle

    user = UserFactory(roles=["engineer"])
    client = APIClient()
    client.force_authenticate(user)
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "user": "5/min"}
    original = UserRateThrottle.THROTTLE_RATES
    UserRateThrottle.THROTTLE_RATES = rates
    try:
        statuses = [client.get("/api/experiments/").status_code for _ in range(6)]
    finally:
        UserRateThrottle.THROTTLE_RATES = original
        cache.delete(f"throttle_user_{user.pk}")
    assert statuses == [200] * 5 + [429]


@pytest.mark.parametrize(
    "url", ["/api/experiments/?attribute=%00", "/api/experiments/1/slices/?attribute=%00", "/?q=%00"]
)
def test_a_nul_in_the_query_string_is_400(client_of, url):
    assert client_of("admin").get(url).status_code == 400


def test_a_deeply_nested_json_body_is_400(client_of):
    body = "[" * 100_000 + "]" * 100_000
    response = client_of("rater").post("/api/judgements/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - nested too deeply."}


def test_page_sizes_are_bounded(client_of, settings, people):
    settings.API_MAX_PAGE_SIZE = 2
    for n in range(3):
        experiment_prepared(owner=people["owner"], name=f"e{n}", n_draws=20)
    body = client_of("owner").get("/api/experiments/?limit=100000").json()
    assert (body["count"], len(body["results"])) == (3, 2)


@pytest.mark.parametrize(
    "location, ok",
    [
        ("/data/locations", True),
        ("/data/locations/", True),
        ("/data/locations/a/items", True),
        ("/data/locations-evil/", False),
        ("/data/locationsX", False),
        ("/data/locations/../secret", False),
        ("/data/locations/./a", False),
        ("data/locations/a", False),
        ("file:///data/locations/a", False),
        ("s3://bucket/prefix/a", True),
        ("s3://bucket/prefix-evil/a", False),
        ("s3://bucket-evil/prefix/a", False),
        ("s3://evil/bucket/prefix/a", False),
        ("gs://bucket/prefix/a", False),
        ("s3://bucket/prefix/a?x=1", False),
    ],
)
def test_the_location_allow_list_matches_path_components_scheme_and_host(settings, location, ok):
    settings.DATA_LOCATIONS = ["/data/locations", "s3://bucket/prefix/"]
    assert (allowed_location_problems(location) == []) is ok


def test_a_link_inside_an_allowed_folder_is_judged_by_where_it_leads(settings, tmp_path):
    allowed, outside = tmp_path / "locations", tmp_path / "secret"
    (allowed / "a").mkdir(parents=True)
    outside.mkdir()
    (allowed / "out").symlink_to(outside)
    (allowed / "in").symlink_to(allowed / "a")
    settings.DATA_LOCATIONS = [str(allowed)]
    assert allowed_location_problems(str(allowed / "a" / "items")) == []
    assert allowed_location_problems(str(allowed / "in" / "items")) == []
    assert allowed_location_problems(str(allowed / "out" / "items")) == [f"must be under one of: {allowed}"]


@pytest.mark.parametrize("username", ["a b", "x<script>", "tab\there", "ü" * 151])
def test_rater_creation_runs_the_username_validator(db, username):
    admin = UserFactory(roles=["admin"])
    with pytest.raises(ValidationError) as caught:
        rater_create(actor=admin, username=username, email="r@example.org")
    assert list(caught.value.message_dict) == ["username"]
