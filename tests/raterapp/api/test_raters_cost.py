"""The raters' lists read no replicated verdict (issue 36): the raters page, the overview, the
raters API and an experiment's raters cost the same queries at 10 and at 10,000 replicated
verdicts, because the agreement columns are the worker's stored result
(``services/refresh/rater_agreement.py``), not computed on every view. On PostgreSQL each query's
rows are counted too: the only read that grows with the verdicts is the one the median seconds
needs (each listed rater's verdict times), which the agreement never shared."""

from __future__ import annotations

import itertools
import math
import re
import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from raterapp.models import Experiment, Item, Judgement, PairTask, Verdict
from raterapp.services.refresh.rater_agreement import rater_agreement_refresh
from tests.raterapp.factories import UserFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

RATERS = 10
# Every rater, and one experiment's (the API's filter and the experiment's raters).
URLS = ("/raters/", "/overview/", "/api/raters/", "/api/raters/?experiment={pk}", "/api/experiments/{pk}/raters/")
# The median seconds' read: every verdict time of the listed raters, one row each.
SPEED_READ = '"raterapp_judgement"."created_at"'


def verdicts_add(experiment: Experiment, raters: list, tasks: int, first: int) -> None:
    """``tasks`` more replicated pairs, each judged by every rater (a made-up mix of verdicts)."""
    n_items = math.ceil((1 + math.sqrt(1 + 8 * (first + tasks))) / 2)
    have = experiment.items.count()
    Item.objects.bulk_create(
        Item(experiment=experiment, item_id=f"i{k}", position=k, base_cluster="b", exp_cluster="e", weight=1.0)
        for k in range(have, n_items)
    )
    items = list(experiment.items.order_by("position"))
    pairs = itertools.islice(itertools.combinations(items, 2), first, first + tasks)
    made = PairTask.objects.bulk_create(
        PairTask(experiment=experiment, item_a=a, item_b=b, rank=first + k, wanted=RATERS, verdicts=RATERS)
        for k, (a, b) in enumerate(pairs)
    )
    choices = (Verdict.EQUIVALENT, Verdict.NOT_EQUIVALENT, Verdict.EQUIVALENT, Verdict.UNSURE)
    Judgement.objects.bulk_create(
        (
            Judgement(task=task, rater=rater, verdict=choices[(task.pk * 7 + r * 3) % 4], client_id=uuid.uuid4())
            for task in made
            for r, rater in enumerate(raters)
        ),
        batch_size=5_000,
    )


def cost_of(client: Client, url: str) -> list[tuple[str, int | None]]:
    """Each query of one GET, with the rows it returned (PostgreSQL; ``None`` elsewhere)."""
    rows = []

    def count_rows(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        rows.append(context["cursor"].rowcount if connection.vendor == "postgresql" else None)
        return result

    with connection.execute_wrapper(count_rows), CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return list(zip((q["sql"] for q in queries.captured_queries), rows, strict=True))


def shape(sql: str) -> str:
    """The statement without its literals (the session's expiry, the overview's days are moments)."""
    return re.sub(r"'[^']*'", "?", sql)


def test_the_raters_lists_cost_the_same_at_10_and_10000_replicated_verdicts():
    admin = UserFactory(roles=["admin"])
    raters = [UserFactory(username=f"rater-{k}", roles=["rater"]) for k in range(RATERS)]
    experiment = Experiment.objects.create(name="many verdicts", owner=UserFactory(roles=["engineer"]))
    client = Client()
    client.force_login(admin)
    costs = {}
    for total, (tasks, first) in [(10, (1, 0)), (10_000, (999, 1))]:
        verdicts_add(experiment, raters, tasks, first)
        assert Judgement.objects.count() == total
        rater_agreement_refresh(experiment_id=experiment.pk)  # what the worker does after a snapshot
        rater_agreement_refresh(experiment_id=None)
        costs[total] = {url: cost_of(client, url.format(pk=experiment.pk)) for url in URLS}

    for url in URLS:
        small, large = costs[10][url], costs[10_000][url]
        assert len(small) == len(large), url
        assert [shape(sql) for sql, _ in small] == [shape(sql) for sql, _ in large], url
        if connection.vendor == "postgresql":
            grown = [sql for (sql, few), (_, many) in zip(small, large, strict=True) if many != few]
            assert len(grown) == 1 and SPEED_READ in grown[0] and "GROUP BY" not in grown[0], (url, grown)
