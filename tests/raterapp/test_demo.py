import uuid

import numpy as np
import pytest

from raterapp.access import user_roles
from raterapp.models import Experiment, ExperimentBudget, Judgement, PairTask
from raterapp.services.demo import (
    DEMO_USERS,
    SIMULATED_RATERS,
    demo_experiment_ensure,
    demo_raters_simulate,
    demo_truth,
    demo_users_ensure,
)
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.preparation.pipeline import experiment_prepare


@pytest.mark.django_db(transaction=True)
def test_demo_experiment_is_prepared_and_simulated_raters_answer_from_the_truth(
    tmp_path, django_capture_on_commit_callbacks, settings
):
    # The production defaults: the demo opens its experiment itself.
    settings.NEW_EXPERIMENT_OPEN_TO, settings.NEW_EXPERIMENT_BUDGET = "assigned", 0
    users = demo_users_ensure(password="pw")
    assert {name: user_roles(user) for name, user in users.items()} == {n: {r} for n, r in DEMO_USERS.items()}
    experiment, created = demo_experiment_ensure(
        owner=users["engineer"], folder=tmp_path, n_draws=60, opened_by=users["admin"]
    )
    again, created_again = demo_experiment_ensure(owner=users["engineer"], folder=tmp_path, n_draws=60)
    assert created and not created_again and again == experiment
    assert Experiment.objects.get(pk=experiment.pk).open_to_all_raters
    assert ExperimentBudget.objects.get(experiment=experiment).max_verdicts is None

    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.RATING, experiment.error
    assert experiment.items_count == 5000
    # The true entities came as a ground-truth clustering: the page calibrates the estimates against them.
    assert experiment.ground_truth_metrics["truth"]["DeltaRecall"] > 0  # Exp finds many more true duplicates
    assert experiment.ground_truth_metrics["quality"]["DeltaPrecision"] < 0

    # The person trying the page holds a pair while the simulation runs: it is left to them.
    held = assignment_next(experiment=experiment, rater=users["rater"])
    raters = [users[name] for name in SIMULATED_RATERS]
    count = demo_raters_simulate(experiment=experiment, raters=raters, rng=np.random.default_rng(0), unsure_rate=0.0)
    assert not Judgement.objects.filter(task=held).exists()
    assert judgement_submit(task=held, rater=users["rater"], verdict="unsure", client_id=uuid.uuid4())[1]
    tasks = PairTask.objects.filter(experiment=experiment)
    assert count + 1 == tasks.count() > 0
    assert all(task.verdicts == task.wanted for task in tasks)
    truth = demo_truth()
    for judgement in Judgement.objects.filter(task__experiment=experiment).select_related(
        "task__item_a", "task__item_b"
    ):
        same = truth[judgement.task.item_a.item_id] == truth[judgement.task.item_b.item_id]
        if judgement.rater != users["rater"]:
            assert judgement.verdict == ("equivalent" if same else "not_equivalent")


@pytest.mark.django_db
def test_demo_users_are_made_once_and_a_second_start_signs_no_one_out(client):
    """Each `make demo` (and its simulated raters' process) calls demo_users_ensure: setting the
    passwords again changed every session's hash and signed out whoever had the demo open."""
    from django.contrib.auth.models import User

    demo_users_ensure(password="first")
    client.login(username="engineer", password="first")
    before = dict(User.objects.values_list("username", "password"))

    users = demo_users_ensure(password="second")
    assert dict(User.objects.values_list("username", "password")) == before
    assert {name: user_roles(user) for name, user in users.items()} == {n: {r} for n, r in DEMO_USERS.items()}
    assert [u.username for u in User.objects.filter(is_staff=True)] == ["admin"]
    assert client.get("/api/experiments/").status_code == 200  # still signed in


@pytest.mark.django_db
def test_every_make_demo_simulates_the_same_verdicts(monkeypatch, settings, tmp_path):
    """`make demo` shows everyone the same minute: its simulated raters' unsure verdicts come from a
    fixed seed. Unseeded, one run in twenty put an unsure verdict on the demo's 25th pair in draw
    order, the first that ΔRecall and IQ need: they came 80 verdicts later, past the minute."""
    import io

    from django.core.management import call_command

    from raterapp.management.commands import demo as command

    settings.DATA_DIR = tmp_path
    streams = []
    monkeypatch.setattr(command.Command, "_wait_until_ready", lambda self, experiment, seconds: experiment)

    def simulate(*, rng, **options):
        streams.append(rng.random(200).tolist())
        return 0

    monkeypatch.setattr(command, "demo_raters_simulate", simulate)
    for _ in range(2):
        call_command("demo", "--simulate", "--pace", "0", stdout=io.StringIO())
    assert len(streams) == 2 and streams[0] == streams[1]
    call_command("demo", "--simulate", "--pace", "0", "--seed", "2", stdout=io.StringIO())
    assert streams[2] != streams[0]
