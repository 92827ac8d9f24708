import pytest
from django.core.management import call_command

from tests.raterapp.routes import api_routes

# What the schema leaves out: the schema and its two viewers.
UNDOCUMENTED = {"/api/schema/", "/api/docs/", "/api/redoc/"}

PATHS = [
    "/api/experiments/{experiment_id}/derived/",
    "/api/experiments/",
    "/api/experiments/{experiment_id}/",
    "/api/experiments/{experiment_id}/impact/",
    "/api/experiments/{experiment_id}/impact/groups/",
    "/api/experiments/{experiment_id}/pairs/",
    "/api/experiments/{experiment_id}/estimates/",
    "/api/experiments/{experiment_id}/estimates/history/",
    "/api/experiments/{experiment_id}/exports/pairs/",
    "/api/experiments/{experiment_id}/exports/judgements/",
    "/api/experiments/{experiment_id}/exports/estimates/",
    "/api/experiments/{experiment_id}/next-pair/",
    "/api/judgements/",
    "/api/judgements/{judgement_id}/undo/",
    "/api/tasks/{task_id}/report/",
    "/api/leases/renew/",
    "/api/experiments/{experiment_id}/progress/",
    "/api/experiments/{experiment_id}/gold-pairs/",
    "/api/experiments/{experiment_id}/gold-rate/",
    "/api/experiments/{experiment_id}/gold-accuracy/",
    "/api/experiments/{experiment_id}/reports/",
    "/api/experiments/{experiment_id}/explorer/pairs/",
    "/api/experiments/{experiment_id}/explorer/pairs/{sampled_pair_id}/",
    "/api/experiments/{experiment_id}/explorer/clusters/",
    "/api/experiments/{experiment_id}/dashboard/",
    "/api/experiments/{experiment_id}/exports/impact/",
    "/api/experiments/{experiment_id}/estimates/convergence/",
    "/api/experiments/{experiment_id}/slices/",
    "/api/experiments/{experiment_id}/target/",
    "/api/experiments/{experiment_id}/recall-base/",
    "/api/experiments/{experiment_id}/model-assisted/",
    "/api/experiments/{experiment_id}/scores/",
    "/api/experiments/{experiment_id}/exports/scores/",
    "/api/experiments/{experiment_id}/close/",
    "/api/experiments/{experiment_id}/reopen/",
    "/api/experiments/{experiment_id}/budget/",
    "/api/experiments/{experiment_id}/budget/changes/",
    "/api/budget-pools/",
    "/api/overview/",
    "/api/budget-pools/{pool_id}/",
    "/api/raters/",
    "/api/raters/me/",
    "/api/raters/{rater_id}/",
    "/api/experiments/{experiment_id}/raters/",
    "/api/experiments/{experiment_id}/agreement/",
    "/api/experiments/{experiment_id}/archive/",
    "/api/experiments/{experiment_id}/unarchive/",
    "/api/raters/{rater_id}/password-link/",
    "/api/gold-pairs/{task_id}/",
    "/api/reports/{report_id}/resolve/",
]


@pytest.mark.django_db
def test_the_schema_documents_every_endpoint(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert set(PATHS) <= set(schema["paths"])
    assert "multipart/form-data" in schema["paths"]["/api/experiments/"]["post"]["requestBody"]["content"]
    assert set(schema["paths"]["/api/experiments/{experiment_id}/exports/pairs/"]["get"]["responses"]["200"]["content"]) == {
        "application/json", "text/csv",
    }
    assert "Roles:" in schema["paths"]["/api/judgements/"]["post"]["description"]


def test_the_schema_generates_without_warnings(tmp_path):
    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))


@pytest.mark.django_db
def test_the_schema_documents_every_endpoint_and_method_the_urls_serve(client):
    """Walked from the URL resolver: a new endpoint (or method) missing from the schema fails here."""
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    served = {(route.path, method) for route in api_routes() if route.path not in UNDOCUMENTED for method in route.methods}
    documented = {(path, method) for path, operations in schema["paths"].items() for method in operations}
    assert served - documented == set()
    assert set(PATHS) <= {path for path, _ in served}  # the list above names served endpoints


def test_every_api_get_is_written_in_its_own_view():
    """``grep -n "def get" raterapp/api`` finds every GET endpoint: none is inherited from a base
    view of DRF's generics or ours, and none is generated."""
    inherited = sorted(
        route.path
        for route in api_routes()
        if route.view_class is not None
        and route.view_class.__module__.startswith("raterapp.")
        and "get" in route.methods
        and "get" not in vars(route.view_class)
    )
    assert inherited == []
