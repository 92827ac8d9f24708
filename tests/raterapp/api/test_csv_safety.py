import uuid

from raterapp.services.judging import assignment_next, judgement_submit
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .test_exports import csv_rows, export


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
