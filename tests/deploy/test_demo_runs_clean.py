"""The demo's own processes run clean: ``make demo``'s commands (its own data folder and port, the
embedded SQLite and file-system broker) with the web server, the Celery worker, Celery beat and the
simulated raters for a minute, an engineer watching the dashboard meanwhile. No task may raise (not
even once, retried), no process may log an exception or an error; and the work must have been
done: estimate snapshots, ΔRecall and IQ, the slice estimates and the rater-aware fit, each caught up
with the last verdict once the raters stop (issue 32: every derived refresh of the demo failed and
nothing noticed).

The commands are make's own (``make -n demo``), run one by one; the supervisor's only addition is
``--loglevel INFO``, so that the worker logs every task it runs, retries included."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from .processes import (
    Session,
    assert_logs_clean,
    free_port,
    http_status,
    kill_all,
    log_problems,
    running,
    tasks_succeeded,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[2]
# What the demo must not inherit from the test run (as in test_demo_stops.py).
NOT_INHERITED = {
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DJANGO_SETTINGS_MODULE",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
}
RUN_SECONDS = 60
# Pages and API endpoints of the dashboard the engineer keeps open (each must answer 200).
WATCHED = (
    "/experiments/{id}/",
    "/api/experiments/{id}/dashboard/",
    "/api/experiments/{id}/estimates/",
    "/api/experiments/{id}/derived/",
    "/api/experiments/{id}/slices/",
    "/api/experiments/{id}/rater-aware/",
    "/api/experiments/{id}/decision/",
)
# What the worker did, read from the demo's database (its own SQLite) by a manage.py of its own.
STATE = """
import json
from raterapp.models import (DerivedEstimate, EstimateSnapshot, Experiment, Judgement, OutboxMessage,
    RaterAwareEstimate)
experiment = Experiment.objects.get(pk=EXPERIMENT)
last = lambda model: model.objects.filter(experiment=experiment).order_by("-pk").first()
snapshot, derived, rater_aware = last(EstimateSnapshot), last(DerivedEstimate), last(RaterAwareEstimate)
print(json.dumps({
    "status": experiment.status, "error": experiment.error,
    "judgements": Judgement.objects.filter(task__experiment=experiment).count(),
    "snapshots": EstimateSnapshot.objects.filter(experiment=experiment).count(),
    "snapshot_judgements": snapshot and snapshot.judgements,
    "derived": DerivedEstimate.objects.filter(experiment=experiment).count(),
    "derived_judgements": derived and derived.judgements,
    "derived_metrics": sorted(derived.payload.get("estimates", {})) if derived else [],
    "derived_slices": {name: len(values) for name, values in derived.slices.items()} if derived else {},
    "rater_aware": RaterAwareEstimate.objects.filter(experiment=experiment).count(),
    "rater_aware_judgements": rater_aware and rater_aware.judgements,
    "outbox_errors": list(OutboxMessage.objects.exclude(last_error="").values_list("kind", "last_error")),
}))
"""


def _demo_commands(data_dir: Path, port: int, env: dict) -> list[list[str]]:
    """``make demo``'s commands, as make would run them (the .venv is the test run's)."""
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", ".venv/.installed", "demo",
         f"DEMO_PORT={port}", f"DEMO_DATA_DIR={data_dir}", f"BIN={Path(sys.executable).parent}"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [shlex.split(line) for line in dry_run.stdout.splitlines() if line.strip()]


def _dashboard_watched(engineer: Session, experiment_id: int, *, not_yet_allowed: bool) -> None:
    """Each watched view answers 200 (or, while the first results are on their way, a 404 that says
    they are not computed yet)."""
    for path in WATCHED:
        status, body = engineer.get(path.format(id=experiment_id))
        not_yet = not_yet_allowed and status == 404 and b"yet." in body
        assert status == 200 or not_yet, f"GET {path}: {status} {body[:1000]!r}"


def _state(serve: list[str], experiment_id: int, env: dict) -> dict:
    """The demo database's counts, by the demo's own manage.py and environment."""
    python_and_env = serve[: serve.index("manage.py")]
    script = "import django; django.setup()\n" + STATE.replace("EXPERIMENT", str(experiment_id))
    result = subprocess.run(
        [*python_and_env, "-c", script], cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "raterapp.settings"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_demo_runs_a_minute_with_no_task_raising(tmp_path):
    data_dir, port = tmp_path / "demo-data", free_port()
    env = {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}
    *setup, serve = _demo_commands(data_dir, port, env)
    assert serve[-3:] == ["demo_serve", "--port", str(port)], serve
    setup_log = ""
    for command in setup:  # migrate, createcachetable, demo (the users and the experiment)
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        setup_log += f"$ {shlex.join(command)}\n{result.stdout}{result.stderr}"
        assert result.returncode == 0, setup_log
    experiment_id = int(re.search(r"(?:Created|Found) experiment (\d+):", setup_log)[1])

    log_path = tmp_path / "demo.log"
    state, ran_for, failure = None, 0.0, None
    with open(log_path, "w") as log:
        supervisor = subprocess.Popen(
            [*serve, "--loglevel", "INFO"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        started = time.monotonic()
        tree = [psutil.Process(supervisor.pid)]
        try:
            wait_until(
                lambda: http_status(f"http://127.0.0.1:{port}/login/") == 200,
                timeout=120, what="the demo's web server", alive=lambda: supervisor.poll() is None,
            )  # fmt: skip
            wait_until(lambda: len(tree[0].children()) == 4, timeout=30, what="the supervisor's four children")
            children = tree[0].children()
            tree += [descendant for child in children for descendant in [child, *child.children(recursive=True)]]
            raters = next(p for p in children if "--simulate" in p.cmdline())

            # The engineer keeps the dashboard open while the raters judge: every view answers. (They
            # sign in once the raters judge: the raters' `manage.py demo` sets the demo passwords
            # again as it starts, which ends the sessions signed in before.)
            wait_until(
                lambda: _state(serve, experiment_id, env)["judgements"], timeout=RUN_SECONDS, interval=1,
                what="the simulated raters' first verdict", alive=lambda: supervisor.poll() is None,
            )  # fmt: skip
            engineer = Session(f"http://127.0.0.1:{port}", "engineer", "abcde-demo")
            while time.monotonic() - started < RUN_SECONDS:
                assert supervisor.poll() is None, "the demo's supervisor ended"
                assert raters.is_running(), "the simulated raters ended (the demo experiment is not ready?)"
                _dashboard_watched(engineer, experiment_id, not_yet_allowed=True)
                time.sleep(2)
            ran_for = time.monotonic() - started

            # The raters stop; what their last verdicts asked for is done within a reconcile or two
            # (no use waiting when a task raised: the logs say why below).
            os.killpg(raters.pid, signal.SIGTERM)
            wait_until(lambda: not running([raters]), timeout=30, what="the simulated raters to stop")

            def caught_up_or_raised():
                if log_problems({"demo": log_path.read_text()}):
                    return "raised"
                state = _state(serve, experiment_id, env)
                done = (state["snapshot_judgements"], state["derived_judgements"], state["rater_aware_judgements"])
                return state if all(count == state["judgements"] for count in done) else None

            state = wait_until(caught_up_or_raised, timeout=60, interval=2, what="the estimates to catch up")
            if state != "raised":
                _dashboard_watched(engineer, experiment_id, not_yet_allowed=False)
        except AssertionError as error:
            failure = error  # reported after the logs: a task that raised explains the rest
        finally:
            if supervisor.poll() is None:
                os.kill(supervisor.pid, signal.SIGTERM)  # as when make dies: it stops its children
                try:
                    supervisor.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            kill_all(tree)
            if supervisor.poll() is None:
                supervisor.kill()
                supervisor.wait()

    logs = {"setup": setup_log, "demo (web, worker, beat, raters)": log_path.read_text()}
    assert_logs_clean(logs, what="the demo")
    if failure is not None:
        raise failure
    assert ran_for >= RUN_SECONDS
    assert state["status"] == "rating" and not state["error"], state
    assert state["outbox_errors"] == [], state
    # Work happened: verdicts, snapshots, ΔRecall and IQ, slice estimates, the rater-aware fit.
    assert state["judgements"] >= 40, state
    assert state["snapshots"] >= 10, state
    assert state["derived"] >= 3 and {"DeltaRecall", "IQ"} <= set(state["derived_metrics"]), state
    assert state["derived_slices"] and all(state["derived_slices"].values()), state
    assert state["rater_aware"] >= 1, state
    succeeded = tasks_succeeded(logs)
    for task, at_least in {
        "raterapp.experiment_prepare": 1,
        "raterapp.estimates_refresh": 10,
        "raterapp.derived_refresh": 3,
        "raterapp.rater_aware_refresh": 1,
        "raterapp.reconcile": 3,
    }.items():
        assert succeeded[task] >= at_least, (task, dict(succeeded))
