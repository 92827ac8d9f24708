"""The product as it is deployed, in CI, without a container runtime:

(a) the Dockerfile's build commands run with exactly the Dockerfile's environment (its volume and
    static paths in a temporary folder): collectstatic with the manifest storage, DEBUG=false, no
    secret;
(b) web, both Celery workers, Celery beat and the Dask scheduler and worker start from docker-compose.yml's own
    ``command:`` and ``environment:``, with ``.env.example`` copied unchanged as ``.env``, against
    the real PostgreSQL (the test database) and Redis; only the compose service names become
    127.0.0.1, the published ports free ones, and the data volume a temporary folder;
(c) every page and every API GET endpoint, for every role, loaded in Chromium from that gunicorn:
    no 500, no console error (so no Content-Security-Policy violation), no missing static file;
(d) the security baseline under these settings: HSTS on what the proxy forwarded as https, the
    strict CSP, https links, hashed tokens refused once expired.

Each process runs in a process group of its own and is stopped at the end of the module.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import global_settings, settings

from tests.browser.conftest import pages_visited, record_problems
from tests.e2e.conftest import _database_url

from .compose_services import (
    APP_SERVICES,
    COMPOSE_DATABASE_URL,
    COMPOSE_REDIS_URL,
    logs_tail,
    queues_emptied,
    service_command,
    service_start,
    services_stop,
)
from .processes import assert_logs_clean, free_port, http_status, log_problems, tasks_succeeded, wait_until
from .shape import ROOT, Substitutions, base_environment, compose_read, dockerfile_read, env_file_read

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.REDIS_URL or not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="the production shape runs on PostgreSQL and Redis (CI sets DATABASE_URL and REDIS_URL)",
    ),
]


@dataclass
class Production:
    url: str
    dask_dashboard: str
    dask_scheduler: str
    static_root: Path
    data_dir: Path
    logs: Path
    environment: dict[str, str]  # the web service's: what a `docker compose run web ...` gets


def _build(image, folder: Path, paths: Substitutions) -> None:
    """(a) Every RUN of the Dockerfile that builds the app, with the Dockerfile's ENV alone. The
    package installs are the locks' (tests/deploy/test_locks.py) and the user is the system's."""
    env = {**base_environment(), **{name: paths(value) for name, value in image.env.items()}}
    assert "SECRET_KEY" not in env and "DATABASE_URL" not in env
    app_steps = [command for command in image.run if not command.startswith(("pip install", "useradd"))]
    assert any("collectstatic" in command for command in app_steps), image.run
    for command in app_steps:
        result = subprocess.run(
            ["sh", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, f"RUN {command}\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def production(django_db_setup, tmp_path_factory):
    folder = tmp_path_factory.mktemp("production")
    data_dir, static_root, logs = folder / "data", folder / "staticfiles", folder / "logs"
    logs.mkdir()
    image = dockerfile_read()
    paths = Substitutions([("/app/staticfiles", str(static_root)), ("/data", str(data_dir))])
    _build(image, folder, paths)
    assert paths.unused() == []

    web, scheduler, dashboard = free_port(), free_port(), free_port()
    database_url = _database_url()
    subs = Substitutions([
        (COMPOSE_DATABASE_URL, database_url),  # the real PostgreSQL: the test database
        (COMPOSE_REDIS_URL, settings.REDIS_URL),  # the real Redis: the tests' database of it
        ("tcp://dask-scheduler:8786", f"tcp://127.0.0.1:{scheduler}"),
        ("--bind 0.0.0.0:8000", f"--bind 127.0.0.1:{web}"),
        ("--port 8786", f"--host 127.0.0.1 --port {scheduler}"),
        ("--dashboard-address :8787", f"--dashboard-address 127.0.0.1:{dashboard}"),
        ("--nthreads 2", "--host 127.0.0.1 --dashboard-address 127.0.0.1:0 --nthreads 2"),
        *paths.pairs,
    ])
    shutil.copy(ROOT / ".env.example", folder / ".env")
    env_file = env_file_read(folder / ".env")
    compose = compose_read()
    assert set(APP_SERVICES) <= set(compose["services"])
    assert [s for s in compose["services"] if s not in (*APP_SERVICES, "db", "redis")] == []

    queues_emptied(settings.REDIS_URL, ("preparation", "live"))
    processes: dict[str, subprocess.Popen] = {}
    environments: dict[str, dict[str, str]] = {}
    try:
        for name in APP_SERVICES:
            command, environments[name] = service_command(compose["services"][name], image, env_file, subs)
            processes[name] = service_start(name, command, environments[name], logs)
        assert subs.unused() == []
        base = f"http://127.0.0.1:{web}"

        def healthy():
            if any(p.poll() is not None for p in processes.values()):
                raise AssertionError("a service ended:\n" + logs_tail(logs))
            return http_status(f"{base}/api/health/") == 200

        wait_until(healthy, timeout=180, what="a healthy /api/health/")
        yield Production(
            base, f"http://127.0.0.1:{dashboard}", f"tcp://127.0.0.1:{scheduler}", static_root, data_dir, logs,
            environments["web"],
        )  # fmt: skip
    except BaseException:
        print(logs_tail(logs))
        raise
    finally:
        services_stop(processes)


def test_the_image_build_collects_static_files_with_the_manifest(production):
    manifest = json.loads((production.static_root / "staticfiles.json").read_text())["paths"]
    for name in ("raterapp/vendor/chartjs/chart.umd.min.js", "raterapp/css/app.css", "raterapp/favicon.svg"):
        assert name in manifest
        assert (production.static_root / manifest[name]).is_file()
    assert "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in manifest
    assert not (production.data_dir / "staticfiles").exists()  # baked in, not in the data volume


def test_the_compose_services_are_healthy(production):
    with urllib.request.urlopen(f"{production.url}/api/health/", timeout=10) as response:
        health = json.load(response)
    assert health == {"ok": True, "database": {"status": "ok"}, "redis": {"status": "ok"}}
    # The detailed report (admins': /api/health/detail/) pings the workers through the same broker.
    from raterapp.selectors.health import health_get

    def both_queues():
        workers = health_get()["worker"].get("workers", [])
        return workers if {w.split("@")[0] for w in workers} >= {"preparation", "live"} else None

    workers = wait_until(both_queues, timeout=60, what="a preparation and a live worker")
    assert any(w.startswith("preparation@") for w in workers) and any(w.startswith("live@") for w in workers), workers
    # The Dask dashboard (bokeh) and a worker connected to the scheduler.
    assert http_status(f"{production.dask_dashboard}/status", timeout=10) == 200
    from distributed import Client

    with Client(production.dask_scheduler, timeout=30) as client:
        wait_until(lambda: client.scheduler_info()["workers"], timeout=60, what="a Dask worker")
    # The secret key was made on first start, in the data volume, and one for all services.
    assert len((production.data_dir / "secret_key").read_text()) >= 50


def test_beat_has_the_live_worker_run_the_reconciler_and_every_service_restarts(production):
    """Celery beat sends raterapp.reconcile every RECONCILE_INTERVAL_SECONDS (.env.example's) to the
    live queue; the live worker runs it. A service that dies (the worker when Redis goes) comes back."""
    interval = float(env_file_read(ROOT / ".env.example")["RECONCILE_INTERVAL_SECONDS"])
    ran = re.compile(r"Task raterapp\.reconcile\[[0-9a-f-]+\] succeeded")
    wait_until(
        lambda: ran.search((production.logs / "worker-live.log").read_text()),
        timeout=3 * interval + 30, what="the live worker to run raterapp.reconcile",
    )
    assert "Sending due task reconcile (raterapp.reconcile)" in (production.logs / "beat.log").read_text()
    assert "Task raterapp.reconcile[" not in (production.logs / "worker-preparation.log").read_text()
    services = compose_read()["services"]
    assert {name: services[name].get("restart") for name in APP_SERVICES} == dict.fromkeys(APP_SERVICES, "unless-stopped")


# ---- the product's own work: raters judge for a minute and no task raises (issue 32).

JUDGING_SECONDS = 60
RATER_THINK_SECONDS = 1.0
WATCHED_API = ("dashboard/", "estimates/", "derived/", "slices/", "rater-aware/", "decision/")


def _api(base: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{base}{path}", data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, {"body": error.read()[:1000].decode(errors="replace")}


def _rater_judges(base: str, token: str, experiment_id: int, truth: dict[int, str], stop, answers: list) -> None:
    """A rater at the judging page: the next pair, a moment's thought, the true verdict (unsure
    for a pair the truth does not know), until ``stop`` or an empty queue; each answer's status."""
    pair_path = f"/api/experiments/{experiment_id}/next-pair/"
    while not stop.is_set():
        status, leased = _api(base, pair_path, token, {"holding": []})
        answers.append(("next-pair", status))
        if status != 200 or leased["pair"] is None:
            return
        stop.wait(RATER_THINK_SECONDS)
        task = leased["pair"]["task"]
        body = {"task": task, "verdict": truth.get(task, "unsure"), "client_id": str(uuid.uuid4())}
        answers.append(("judgement", _api(base, "/api/judgements/", token, body)[0]))


def test_raters_judge_for_a_minute_and_no_task_raises(production, transactional_db):
    """The demo experiment made by `manage.py demo` in the web service's environment, prepared by
    the preparation worker; three raters judge it over the API for a minute while the engineer
    watches its dashboard; the live worker keeps the estimates, ΔRecall and IQ, the slices and the
    rater-aware fit up to date. No task may raise (not even once, retried) and no service may log an
    exception or an error, from the start of the services on; and the work must be done."""
    from django.contrib.auth.models import User

    from raterapp.models import (
        DerivedEstimate,
        EstimateSnapshot,
        Experiment,
        Judgement,
        OutboxMessage,
        PairTask,
        RaterAwareEstimate,
    )  # fmt: skip
    from raterapp.services.accounts.api_tokens import api_token_create
    from raterapp.services.demo import SIMULATED_RATERS, demo_truth

    made = subprocess.run(
        [shutil.which("python", path=production.environment["PATH"]), "manage.py", "demo"],
        cwd=ROOT, env=production.environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    experiment = Experiment.objects.get(pk=int(re.search(r"Created experiment (\d+):", made.stdout)[1]))

    def prepared():
        experiment.refresh_from_db()
        assert experiment.status != Experiment.Status.FAILED, experiment.error
        return experiment.status == Experiment.Status.RATING

    wait_until(prepared, timeout=180, what="the preparation worker to prepare the demo experiment")
    known = demo_truth()
    truth = {
        task: "equivalent" if known[a] == known[b] else "not_equivalent"
        for task, a, b in PairTask.objects.filter(experiment=experiment).values_list(
            "pk", "item_a__item_id", "item_b__item_id"
        )
    }
    tokens = {name: api_token_create(actor=User.objects.get(username=name))[1] for name in (*SIMULATED_RATERS, "engineer")}
    engineer = tokens.pop("engineer")
    stop, answers = threading.Event(), []
    raters = [
        threading.Thread(target=_rater_judges, args=(production.url, token, experiment.pk, truth, stop, answers))
        for token in tokens.values()
    ]
    started = time.monotonic()
    for rater in raters:
        rater.start()
    watched: list[tuple[str, int]] = []
    try:
        while time.monotonic() - started < JUDGING_SECONDS and any(rater.is_alive() for rater in raters):
            for path in WATCHED_API:
                status, body = _api(production.url, f"/api/experiments/{experiment.pk}/{path}", engineer)
                # Before the first results a view says they are not computed yet (404).
                if not (status == 200 or (status == 404 and "yet." in body.get("body", ""))):
                    watched.append((path, status, body))
            time.sleep(2)
    finally:
        stop.set()
        for rater in raters:
            rater.join(timeout=60)
    judged_for = time.monotonic() - started

    def caught_up_or_raised():
        if log_problems(_log_texts(production.logs)):
            return "raised"
        judged = Judgement.objects.filter(task__experiment=experiment).count()
        latest = [
            model.objects.filter(experiment=experiment).order_by("-pk").values_list("judgements", flat=True).first()
            for model in (EstimateSnapshot, DerivedEstimate, RaterAwareEstimate)
        ]
        return all(count == judged for count in latest)

    caught_up = wait_until(caught_up_or_raised, timeout=60, interval=1, what="the estimates to catch up") is True
    logs = _log_texts(production.logs)
    assert_logs_clean(logs, what="the compose services")  # first: a task that raised explains the rest
    assert watched == [], watched
    assert caught_up
    refused = Counter(answer for answer in answers if answer[1] not in (200, 201))
    assert not refused, refused
    assert judged_for >= JUDGING_SECONDS, f"the raters ran out of pairs after {judged_for:.0f}s"
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.RATING and not experiment.error
    assert list(OutboxMessage.objects.exclude(last_error="").values_list("kind", "last_error")) == []
    # The work was done: verdicts, snapshots, ΔRecall and IQ, the slices, the rater-aware fit.
    assert Judgement.objects.filter(task__experiment=experiment).count() >= 60
    assert EstimateSnapshot.objects.filter(experiment=experiment).count() >= 10
    derived = DerivedEstimate.objects.filter(experiment=experiment).order_by("-pk")
    assert derived.count() >= 3
    assert {"DeltaRecall", "IQ"} <= set(derived[0].payload["estimates"]), derived[0].payload
    assert derived[0].slices and all(derived[0].slices.values()), derived[0].slices
    assert RaterAwareEstimate.objects.filter(experiment=experiment).exists()
    succeeded = tasks_succeeded(logs)
    for task, at_least in {
        "raterapp.experiment_prepare": 1,
        "raterapp.estimates_refresh": 10,
        "raterapp.derived_refresh": 3,
        "raterapp.rater_aware_refresh": 1,
        "raterapp.reconcile": 3,
    }.items():
        assert succeeded[task] >= at_least, (task, dict(succeeded))


def _log_texts(logs: Path) -> dict[str, str]:
    return {path.name: path.read_text(errors="replace") for path in sorted(logs.glob("*.log"))}


# ---- (c) every page and API GET, every role, in Chromium against gunicorn in production mode.

ROLES = ["anonymous", "rater", "engineer", "admin"]
# logout/ is a POST (a GET would not sign out anyway); api/schema/ is a download, fetched with the API.
SKIPPED_ROUTES = ("logout/", "api/schema/")


def _pages() -> list[str]:
    """Every page route of the project (API and Django admin internals aside), as a template."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found = []

    def walk(patterns, prefix=""):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                if not route.startswith(("admin/", "api/")):
                    walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route not in SKIPPED_ROUTES:
                found.append(route)

    walk(get_resolver().url_patterns)
    return ["/" + route for route in dict.fromkeys(found)] + ["/admin/"]


def _api_gets() -> list[str]:
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    return [path for path, operations in paths.items() if "get" in operations] + ["/api/schema/"]


def _filled(template: str, values: dict[str, object]) -> str:
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values.get(m.group(1), 1)), template)
    return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), 1)), path)


@pytest.mark.browser
@pytest.mark.parametrize("role", ROLES)
def test_every_page_and_api_get_of_every_role_in_production_mode(production, browser, transactional_db, settings, role):
    from raterapp.models import SampledPair
    from tests.raterapp.factories import UserFactory
    from tests.raterapp.prepared import experiment_prepared

    settings.MEDIA_ROOT = production.data_dir / "media"  # where the server's workers read populations
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS  # the server's, not the tests' fast one
    users = {}
    for name in ("rater", "engineer", "admin"):
        users[name] = UserFactory(username=f"smoke-{name}", roles=[name])
        users[name].set_password("pw-smoke")
        users[name].save()
    experiment = experiment_prepared(owner=users["engineer"], name="smoke", slices=True)
    values = {
        "experiment_id": experiment.pk,
        "rater_id": users["rater"].pk,
        "sampled_pair_id": SampledPair.objects.filter(experiment=experiment).values_list("pk", flat=True).first(),
    }

    context = browser.new_context()
    page = context.new_page()
    if role != "anonymous":
        page.goto(f"{production.url}/login/")
        page.get_by_label("User name", exact=True).fill(f"smoke-{role}")
        page.get_by_label("Password", exact=True).fill("pw-smoke")
        with page.expect_navigation():
            page.get_by_label("Password", exact=True).press("Enter")
        assert "/login/" not in page.url, f"{role} could not sign in over plain http"

    problems: list[str] = []
    # A role's 403 or 404 is its answer; a 500, or a static file the manifest does not know, is not.
    expected = lambda r: r.status < 500 and "/static/" not in r.url  # noqa: E731
    statuses = {}
    urls = [f"{production.url}{_filled(template, values)}" for template in _pages()]
    prepare = lambda tab: record_problems(tab, problems, expected_response=expected)  # noqa: E731
    for url, response, _ in pages_visited(context, urls, prepare=prepare):
        statuses[url.removeprefix(production.url)] = response.status
    for template in _api_gets():
        path = _filled(template, values)
        statuses[path] = context.request.get(f"{production.url}{path}").status
    context.close()

    assert [f"{status} {path}" for path, status in statuses.items() if status >= 500] == []
    assert problems == []
    signed_in_page = {"anonymous": "/login/", "rater": "/rate/", "engineer": "/experiments/", "admin": "/overview/"}[role]
    assert statuses[signed_in_page] == 200, statuses


# ---- the security baseline as the compose settings serve it (.env.example: behind a TLS proxy).


def _call(url: str, *, headers: dict[str, str], data: bytes | None = None):
    request = urllib.request.Request(url, headers=headers, data=data)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_tokens_headers_and_links_under_the_compose_settings(production, transactional_db):
    from django.utils import timezone

    from raterapp.models import ApiToken
    from raterapp.services.accounts.api_tokens import api_token_create
    from tests.raterapp.factories import UserFactory

    admin = UserFactory(username="smoke-token-admin", roles=["admin"])
    token, key = api_token_create(actor=admin)
    auth = {"Authorization": f"Token {key}", "Host": "127.0.0.1", "X-Forwarded-Proto": "https"}
    status, headers, _ = _call(f"{production.url}/api/experiments/", headers=auth)
    assert status == 200
    # What the proxy forwarded as https gets HSTS; every answer the strict CSP.
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert "script-src 'self';" in headers["Content-Security-Policy"] + ";"
    plain_status, plain_headers, _ = _call(f"{production.url}/login/", headers={})
    assert plain_status == 200 and "Strict-Transport-Security" not in plain_headers
    assert "default-src 'self'" in plain_headers["Content-Security-Policy"]
    # A new rater's one-time link takes the proxy's scheme.
    body = json.dumps({"username": "smoke-token-rater", "email": "r@example.org"}).encode()
    status, _, answer = _call(
        f"{production.url}/api/raters/", headers={**auth, "Content-Type": "application/json"}, data=body
    )
    assert status == 201, answer
    assert json.loads(answer)["set_password_url"].startswith("https://127.0.0.1/accounts/set-password/")
    # Only the key's hash is stored, and an expired token is refused.
    assert key not in json.dumps(list(ApiToken.objects.values("key_hash", "prefix", "name")))
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now())
    status, _, answer = _call(f"{production.url}/api/experiments/", headers=auth)
    assert (status, json.loads(answer)) == (401, {"detail": "Token expired: make a new one."})


def test_the_web_service_streams_the_dashboard_under_asgi(production, transactional_db, settings):
    """compose's web (gunicorn with uvicorn workers) serves the dashboard's live stream."""
    from raterapp.services.accounts.api_tokens import api_token_create
    from tests.raterapp.factories import UserFactory
    from tests.raterapp.prepared import experiment_prepared

    settings.MEDIA_ROOT = production.data_dir / "media"
    engineer = UserFactory(username="stream-engineer", roles=["engineer"])
    experiment = experiment_prepared(owner=engineer, name="streamed")
    request = urllib.request.Request(
        f"{production.url}/api/experiments/{experiment.pk}/events/",
        headers={"Authorization": f"Token {api_token_create(actor=engineer)[1]}", "Accept": "text/event-stream"},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
        assert response.readline().startswith(b"retry: ")
        lines = [response.readline() for _ in range(4)]  # the blank line, then the first event
    assert lines[1] == b"event: dashboard\n" and lines[2].startswith(b"id: ")
    assert json.loads(lines[3].removeprefix(b"data: "))["dashboard"]["experiment"]["name"] == "streamed"
