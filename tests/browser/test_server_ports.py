"""The production web server of the browser and e2e tests takes its port from its pytest-xdist
worker's own share of the range (tests/browser/asgi_server.py): two workers never race for one."""

from tests.browser.asgi_server import PORTS, worker_ports


def test_each_worker_has_ports_of_its_own_within_the_range(monkeypatch):
    shares = []
    for index in range(4):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
        shares.append(set(worker_ports()))
    assert all(share and share <= set(PORTS) for share in shares)
    assert sum(map(len, shares)) == len(set().union(*shares))  # disjoint
