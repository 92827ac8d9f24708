"""CSV exports are spreadsheet-safe: a value a spreadsheet would run as a formula gets one
leading quote, in every column of every export, for each formula prefix."""

import csv
import io
import re
import uuid

import pytest

from metrics_core.io import FORMULA_START
from raterapp.models import ImpactGroup, Item
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.exports import CSV_EXPORTS, csv_rows, export
from tests.raterapp.prepared import BASE, experiment_prepared


def test_a_rater_comment_cannot_become_a_spreadsheet_formula(people, client_of):
    experiment = experiment_prepared(owner=people["owner"])
    rater = UserFactory(roles=["rater"])
    task = assignment_next(experiment=experiment, rater=rater)
    formula = '=HYPERLINK("http://evil.example","x")'
    judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4(), comment=formula)
    rows = csv_rows(export(client_of("owner"), experiment, "judgements", "csv"))
    assert rows[0]["comment"] == "'" + formula
    assert rows[0]["i"] == task.item_a.item_id  # the command-line columns stay exact
    assert export(client_of("owner"), experiment, "judgements", "json").json()[0]["comment"] == formula


# ---- Issue 16's acceptance: every column of every CSV export, each formula prefix in turn.

# What each export carries of the hostile values (by the tag after "|"): item ids, titles,
# comments, slice labels, rater names.
CARRIED = {
    "exports/pairs/": {"item"},
    "exports/judgements/": {"item", "comment"},
    "exports/scores/": {"item"},
    "exports/estimates/": set(),
    "exports/impact/": set(),
    "explorer/pairs/": {"item", "title"},
    "estimates/convergence/": set(),
    "slices/": {"slice"},
    "/raters/": {"rater"},
    "agreement/": {"rater"},
}


def hostile_value(prefix: str, tag: str, k: int) -> str:
    return f'{prefix}HYPERLINK("http://evil.example/{k}","x")|{tag}{k}'


@pytest.fixture
def hostile_world(people, request):
    """Every untrusted text of an experiment starts with the same formula prefix: item ids,
    titles, descriptions, cluster ids, attribute values and slice labels, verdict comments and
    the raters' user names; every task judged by both raters."""
    prefix = request.param
    experiment = experiment_prepared(owner=people["owner"], replication=2, slices=True)
    for item in Item.objects.filter(experiment=experiment):
        k = item.position
        item.item_id, item.title = hostile_value(prefix, "item", k), hostile_value(prefix, "title", k)
        item.description = hostile_value(prefix, "description", k)
        item.base_cluster, item.exp_cluster = hostile_value(prefix, "cluster", k), hostile_value(prefix, "cluster", -k)
        item.attributes = {"colour": hostile_value(prefix, "slice", k % 2)}
        item.save()
    for k, group in enumerate(ImpactGroup.objects.filter(experiment=experiment)):
        group.label = hostile_value(prefix, "slice", k)
        group.save()
    raters = [UserFactory(roles=["rater"], username=hostile_value(prefix, "rater", n)[:150]) for n in range(2)]
    for n, rater in enumerate(raters):
        while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
            a, b = task.item_a.position, task.item_b.position
            verdict = "equivalent" if BASE[a] == BASE[b] else "not_equivalent"
            comment = hostile_value(prefix, "comment", a + n)
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4(), comment=comment)
    estimates_refresh(experiment_id=experiment.pk)
    return prefix, experiment


@pytest.mark.parametrize("hostile_world", FORMULA_START, ids=["eq", "plus", "minus", "at", "tab", "cr"], indirect=True)
def test_every_column_of_every_csv_export_is_spreadsheet_safe_with_each_prefix(client_of, hostile_world):
    prefix, experiment = hostile_world
    client = client_of("admin")
    for url in CSV_EXPORTS:
        url = url.format(e=experiment.pk)
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:300])
        rows = list(csv.reader(io.StringIO(response.content.decode(), newline="")))
        assert len(rows) > 1, url  # a header and data
        width = len(rows[0])
        assert all(len(row) == width for row in rows), url  # no cell broke its row (tab, CR)
        cells = [cell for row in rows for cell in row]
        unsafe = [cell for cell in cells if cell[:1] in FORMULA_START and not _is_number(cell)]
        assert unsafe == [], (url, unsafe[:3])
        found = {
            re.sub(r"-?\d+$", "", cell.rsplit("|", 1)[1]) for cell in cells if "|" in cell and "HYPERLINK" in cell
        }
        expected = next(tags for part, tags in CARRIED.items() if part in url)
        assert found == expected, url
        for cell in cells:
            if "HYPERLINK" in cell:  # the value as the app holds it, behind one neutralising quote
                assert cell.startswith("'" + prefix + "HYPERLINK"), (url, cell)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
