"""Rater pages: role tables of /rate/ and /rate/<id>/, their 404s and context, and the home redirect."""

from __future__ import annotations

import json
import re

import pytest
from django.db.models import F
from django.urls import reverse

from raterapp.models import Experiment, Judgement
from raterapp.services.accounts.raters import rater_pause, rater_quota_set
from raterapp.vocabulary import PASSES_BY_ITSELF, RATER_BLOCKED_WORDS
from tests.raterapp.factories import ExperimentFactory, UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def experiment(users):
    return experiment_prepared(owner=users["engineer"], name="Open <b>for</b> rating")


ROLE_TABLE = [
    ("anonymous", 302),
    ("nobody", 403),
    ("rater", 200),
    ("engineer", 403),
    ("admin", 403),
    ("superuser", 200),
]


@pytest.mark.parametrize("page", ["rate-home", "rate-experiment"])
@pytest.mark.parametrize("who, expected", ROLE_TABLE)
def test_rater_pages_role_table(sign_in, experiment, page, who, expected):
    url = reverse(page, args=[experiment.pk] if page == "rate-experiment" else [])
    response = sign_in(who).get(url)
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"] == f"/login/?next={url}"
    if expected == 403:
        assert b"This page is for raters" in response.content


@pytest.mark.parametrize(
    "status",
    [s for s in Experiment.Status.values if s != Experiment.Status.RATING],
)
def test_judging_page_of_an_experiment_not_open_for_rating_is_404(client, users, status):
    experiment = ExperimentFactory(owner=users["engineer"], status=status)
    client.force_login(users["rater"])
    assert client.get(reverse("rate-experiment", args=[experiment.pk])).status_code == 404


def test_judging_page_of_a_missing_experiment_is_404(client, users):
    client.force_login(users["rater"])
    assert client.get(reverse("rate-experiment", args=[999_999])).status_code == 404


def test_judging_page_context_and_config(client, users, experiment, settings):
    settings.LEASE_SECONDS, settings.UNDO_SECONDS = 90, 300
    client.force_login(users["rater"])
    response = client.get(reverse("rate-experiment", args=[experiment.pk]))
    assert response.context["experiment"] == experiment
    assert response.context["lease_seconds"] == 90
    assert response.context["undo_seconds"] == 300
    content = response.content.decode()
    match = re.search(r'<script id="judging-config" type="application/json">(.*?)</script>', content, re.S)
    assert match, "the page's configuration travels in a json_script block"
    assert json.loads(match.group(1)) == {
        "experiment": experiment.pk,
        "leaseSeconds": 90,
        "undoSeconds": 300,
        "historySize": 50,
        "verdictLabels": {"equivalent": "Equivalent", "not_equivalent": "Not equivalent", "unsure": "Unsure"},
        "endWords": {
            reason: [words["end"][0], words["end"][1] + (f" {PASSES_BY_ITSELF}" if words["waits"] else "")]
            for reason, words in RATER_BLOCKED_WORDS.items()
        },
        "urls": {
            "home": "/rate/",
            "nextPair": f"/api/experiments/{experiment.pk}/next-pair/",
            "judgements": "/api/judgements/",
            "undo": "/api/judgements/0/undo/",
            "myVerdicts": f"/api/experiments/{experiment.pk}/my-verdicts/",
            "report": "/api/tasks/0/report/",
            "renew": "/api/leases/renew/",
        },
    }
    # The only scripts: the config (data, not code) and the module file.
    assert re.findall(r"<script\b[^>]*>", content) == [
        '<script id="judging-config" type="application/json">',
        '<script type="module" src="/static/raterapp/js/judging.js">',
    ]
    assert experiment.question in content
    assert "Look at the names." in content  # the guidelines, behind a disclosure
    assert 'aria-labelledby="item-left-label"' in content and ">Item A</h2>" in content
    assert 'aria-live="polite"' in content
    for label, keys in (("Equivalent", "1 E"), ("Not equivalent", "2 N"), ("Unsure", "3 U")):
        assert f'aria-keyshortcuts="{keys}"' in content and f">{label}</span>" in content


def test_judging_page_sends_no_item_or_cluster_ids(client, users, experiment):
    client.force_login(users["rater"])
    content = client.get(reverse("rate-experiment", args=[experiment.pk])).content.decode()
    for item in experiment.items.all():
        assert item.item_id not in content
        assert item.title not in content  # the cards come from the API, not the page


def test_rater_home_lists_experiments_open_for_rating_with_counts(client, users, experiment):
    ExperimentFactory(owner=users["engineer"], name="still sampling", status=Experiment.Status.SAMPLING)
    ExperimentFactory(owner=users["engineer"], name="finished", status=Experiment.Status.DONE)
    task = experiment.tasks.order_by("rank").first()
    Judgement.objects.create(task=task, rater=users["rater"], verdict="equivalent", client_id="0" * 32)
    task.verdicts = 1
    task.save()
    client.force_login(users["rater"])
    response = client.get(reverse("rate-home"))
    content = response.content.decode()
    assert "Open &lt;b&gt;for&lt;/b&gt; rating" in content
    assert "still sampling" not in content and "finished" not in content
    assert [row["experiment"] for row in response.context["experiments"]] == [experiment]
    wanted = experiment.tasks.count() - 1
    assert re.search(rf"<dd data-remaining>{wanted}</dd>", content)
    assert "<dd data-mine>1</dd>" in content
    assert "Same person?" in content
    assert f'href="{reverse("rate-experiment", args=[experiment.pk])}"' in content
    assert "Continue rating" in content


def test_rater_home_without_experiments(client, users):
    client.force_login(users["rater"])
    content = client.get(reverse("rate-home")).content.decode()
    assert "No experiment is open for rating right now." in content
    assert "Start rating" not in content


@pytest.mark.parametrize(
    "roles, expected",
    [
        (["rater"], "/rate/"),
        (["engineer"], "/experiments/"),
        (["admin"], "/experiments/"),
        (["rater", "engineer"], "/experiments/"),
        (["rater", "admin"], "/experiments/"),
        ([], "/experiments/"),
    ],
)
def test_home_sends_raters_to_rate_and_everyone_else_to_experiments(client, roles, expected):
    client.force_login(UserFactory(roles=roles))
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"] == expected


def test_home_sends_anonymous_visitors_to_sign_in_and_back(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/"


@pytest.mark.parametrize("who, shown", [("rater", True), ("engineer", False), ("admin", False)])
def test_nav_shows_the_rate_link_to_raters(client, users, who, shown):
    client.force_login(users[who])
    page = "rate-home" if who == "rater" else "experiment-list"
    content = client.get(reverse(page)).content.decode()
    assert (f'<a href="{reverse("rate-home")}"' in content) is shown
    if shown:
        assert 'aria-current="page">Rate</a>' in content


def test_the_home_page_lists_only_experiments_open_to_the_rater_and_says_when_they_are_paused(
    client, users, experiment
):
    from raterapp.services.accounts.raters import rater_assign, rater_pause

    someone_else = UserFactory(roles=["rater"])
    client.force_login(users["rater"])
    page = client.get(reverse("rate-home"))
    assert f'data-experiment="{experiment.pk}"'.encode() in page.content and b"data-paused-note" not in page.content
    rater_assign(actor=users["admin"], experiment=experiment, raters=[someone_else])
    rater_pause(actor=users["admin"], rater=users["rater"], reason="too fast: median 0.8 s")
    page = client.get(reverse("rate-home"))
    assert f'data-experiment="{experiment.pk}"'.encode() not in page.content
    assert b"Your rating is paused" in page.content and b"too fast" not in page.content
    assert client.get(reverse("rate-experiment", args=[experiment.pk])).status_code == 404


def _budget(users, experiment, **changes):
    from raterapp.models import ExperimentBudget
    from raterapp.services.experiments.budgets import budget_update

    budget, _ = ExperimentBudget.objects.get_or_create(experiment=experiment)
    budget_update(budget=budget, actor=users["admin"], changes=changes, reason="test", via="api")


def _judged_then_assigned_to_others(users, experiment):
    from raterapp.services.accounts.raters import rater_assign
    from raterapp.services.judging import assignment_next, judgement_submit

    task = assignment_next(experiment=experiment, rater=users["rater"])
    judgement_submit(task=task, rater=users["rater"], verdict="equivalent", client_id="1" * 32)
    rater_assign(actor=users["admin"], experiment=experiment, raters=[UserFactory(roles=["rater"])])


HOME_CASES = {
    None: lambda users, experiment: None,
    "rater_paused": lambda users, experiment: rater_pause(actor=users["admin"], rater=users["rater"], reason="a break"),
    "budget_paused": lambda users, experiment: _budget(users, experiment, paused=True),
    "budget_spent": lambda users, experiment: _budget(users, experiment, max_verdicts=0),
    "quota_daily": lambda users, experiment: rater_quota_set(
        actor=users["admin"], rater=users["rater"], daily_quota=0, total_quota=None, reason="r"
    ),
    "queue_empty": lambda users, experiment: experiment.tasks.update(verdicts=F("wanted")),
    "not_assigned": _judged_then_assigned_to_others,
}


@pytest.mark.parametrize("reason", list(HOME_CASES))
def test_rater_home_says_why_each_experiment_can_or_cannot_be_rated_as_the_queue_would(
    client, users, experiment, reason
):
    from raterapp.services.judging import QueueClosed, assignment_next

    HOME_CASES[reason](users, experiment)
    client.force_login(users["rater"])
    response = client.get(reverse("rate-home"))
    (row,) = response.context["experiments"]
    assert row["blocked"] == reason
    content = response.content.decode()
    assert f'data-blocked="{reason or ""}"' in content
    assert f"<strong>{row['status_title']}</strong>" in content
    judging = f'href="{reverse("rate-experiment", args=[experiment.pk])}"'
    if reason is None:
        assert "Start rating" in content and "Open and wait" not in content
    else:
        assert "Start rating" not in content and "Continue rating" not in content
        assert ("Open and wait" in content) is (
            reason in {"rater_paused", "budget_paused", "budget_spent", "queue_empty"}
        )
        assert (judging in content) is ("Open and wait" in content)
    # The page says what the queue does: a pair for a ready experiment, else the same reason.
    try:
        task = assignment_next(experiment=experiment, rater=users["rater"])
    except QueueClosed as closed:
        assert closed.reason == reason
    else:
        assert (reason, task is None) in {(None, False), ("queue_empty", True)}


def test_rater_home_lets_a_rater_finish_a_pair_they_hold_after_the_budget_ran_out(client, users, experiment):
    from raterapp.services.judging import assignment_next

    _budget(users, experiment, max_verdicts=1)
    assignment_next(experiment=experiment, rater=users["rater"])  # the budget's one verdict, promised to this rater
    client.force_login(users["rater"])
    (row,) = client.get(reverse("rate-home")).context["experiments"]
    assert row["blocked"] is None
    other = UserFactory(roles=["rater"])
    client.force_login(other)
    (row,) = client.get(reverse("rate-home")).context["experiments"]
    assert row["blocked"] == "budget_spent"
