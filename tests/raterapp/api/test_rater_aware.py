"""The rater-aware, transitivity and sensitivity endpoints, and the rater-aware panel in the
dashboard's JSON: what the worker stored, arranged by the selectors (roles: test_roles.py)."""

import pytest

from raterapp.models import RaterAwareEstimate
from raterapp.selectors.rater_aware import experiment_transitivity_get
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.tasks import rater_aware_refresh_task
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import judge_with_errors
from tests.raterapp.prepared import experiment_prepared


@pytest.fixture
def judged(people, settings):
    settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 40
    experiment = experiment_prepared(owner=people["owner"], replication=3, n_draws=200)
    raters = make_raters(3)
    judge_with_errors(experiment, raters)
    return experiment, raters


def test_nothing_is_there_before_the_worker_ran(client_of, judged):
    experiment, raters = judged
    e = experiment.pk
    assert client_of("owner").get(f"/api/experiments/{e}/rater-aware/").status_code == 404
    assert client_of("admin").get(f"/api/experiments/{e}/transitivity/").status_code == 404
    assert client_of("owner").get(f"/api/experiments/{e}/dashboard/").json()["rater_aware"] is None
    assert client_of("owner").get(f"/api/experiments/{e}/raters/").json()["fits"] == []
    body = client_of("admin").get(f"/api/raters/{raters[0].pk}/sensitivity/").json()
    assert body == {"rater": raters[0].pk, "username": raters[0].username, "experiments": []}
    assert RaterAwareEstimate.objects.count() == 0


def test_the_task_stores_and_every_endpoint_reads_the_same_fit(client_of, judged):
    experiment, raters = judged
    e = experiment.pk
    estimates_refresh(experiment_id=e)
    rater_aware_refresh_task.apply(args=[e]).get()
    stored = RaterAwareEstimate.objects.get(experiment=experiment)
    own = client_of("owner").get(f"/api/experiments/{e}/rater-aware/").json()
    dashboard = client_of("owner").get(f"/api/experiments/{e}/dashboard/").json()
    assert own == {"experiment": e, **dashboard["rater_aware"]}
    assert [row["metric"] for row in own["estimates"]] == list(dashboard["estimates"])
    for row in own["estimates"]:
        assert row["value"] == stored.payload["estimates"][row["metric"]]["value"]
        assert row["ci_high"] == stored.payload["estimates"][row["metric"]]["ci_high"]
        assert row["raw_value"] == dashboard["estimates"][row["metric"]]["value"]
    fits = {r["rater"]: r for r in stored.payload["raters"]}
    assert {r["username"]: r["sensitivity"] for r in own["raters"]} == {
        r.username: fits[r.pk]["sensitivity"] for r in raters
    }
    assert own["transitivity"]["inconsistent_triangles"] == stored.transitivity["inconsistent_triangles"] > 0

    listed = client_of("owner").get(f"/api/experiments/{e}/raters/").json()["fits"]
    assert listed == sorted(
        ({**fits[r.pk], "username": r.username} for r in raters), key=lambda row: row["username"]
    )

    review = client_of("admin").get(f"/api/experiments/{e}/transitivity/").json()
    assert review == experiment_transitivity_get(experiment=experiment)
    assert len(review["triangles"]) == review["inconsistent_triangles"]

    sensitivity = client_of("admin").get(f"/api/raters/{raters[1].pk}/sensitivity/").json()
    assert sensitivity["experiments"] == [
        {
            "experiment": e,
            "experiment_name": experiment.name,
            "computed_at": stored.created_at.isoformat(),
            **{k: fits[raters[1].pk][k] for k in ("sensitivity", "specificity", "verdicts", "unsure")},
        }
    ]
