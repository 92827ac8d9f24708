from .conftest import wait_for


def test_a_real_worker_runs_a_task_from_the_broker(celery_worker_process, client):
    """The health endpoint sees the worker, through the real broker."""
    from tests.raterapp.factories import UserFactory

    client.force_login(UserFactory(roles=["admin"]))
    body = wait_for(lambda: client.get("/api/health/detail/").json(), what="health")
    assert body["worker"]["status"] == "ok", body
    assert any(name.startswith("e2e-") for name in body["worker"]["workers"])
