"""The load test's raters (bench_judging.py): threads that judge through the API as the judging
page does, each on its own keep-alive connection, recording every request's server time
(``Server-Timing``) and client latency."""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid

import numpy as np


class Rater(threading.Thread):
    def __init__(self, port: int, token: str, experiment: int, stop: threading.Event, seed: int, separate: bool):
        super().__init__(daemon=True)
        self.port, self.token, self.experiment, self.stop = port, token, experiment, stop
        self.separate = separate
        self.rng = np.random.default_rng(seed)
        self.samples: list[tuple[str, float, float, int]] = []  # endpoint, server ms, client ms, status
        self.submitted: set[str] = set()
        self.errors: list[str] = []

    def call(self, conn, endpoint: str, path: str, body: dict) -> tuple[int, dict | None]:
        payload = json.dumps(body)
        headers = {"Authorization": f"Token {self.token}", "Content-Type": "application/json"}
        started = time.perf_counter()
        conn.request("POST", path, body=payload, headers=headers)
        response = conn.getresponse()
        data = response.read()
        client_ms = (time.perf_counter() - started) * 1000
        timing = response.getheader("Server-Timing", "app;dur=nan")
        self.samples.append((endpoint, float(timing.split("dur=")[1]), client_ms, response.status))
        return response.status, (json.loads(data) if data else None)

    def run(self) -> None:
        """The judging page's loop: a verdict also leases the next pair (``next``); next-pair only
        to start, or when a verdict brought none. ``separate``: next-pair before every verdict."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        following = None
        try:
            while not self.stop.is_set():
                if following is None:
                    path = f"/api/experiments/{self.experiment}/next-pair/"
                    status, following = self.call(conn, "next-pair", path, {})
                    if status != 200:
                        self.errors.append(f"next-pair {status} {following}")
                        return
                if following["pair"] is None:
                    self.errors.append(f"no pair left: {following['reason']}")
                    return
                verdict = ("equivalent", "not_equivalent", "unsure")[int(self.rng.integers(3))]
                answer = {"task": following["pair"]["task"], "verdict": verdict, "client_id": str(uuid.uuid4())}
                if not self.separate:
                    answer["next"] = {"holding": []}
                for _ in range(2 if self.rng.random() < 0.1 else 1):
                    status, body = self.call(conn, "submit", "/api/judgements/", answer)
                    if status not in (200, 201):
                        self.errors.append(f"submit {status}")
                following = None if self.separate or body is None else body.get("next")
                self.submitted.add(answer["client_id"])
        except Exception as exc:  # noqa: BLE001 - reported in the summary
            self.errors.append(repr(exc))
        finally:
            conn.close()


def summary(samples: list, endpoint: str, seconds: float) -> dict:
    rows = [s for s in samples if s[0] == endpoint]
    server = np.array([s[1] for s in rows])
    client = np.array([s[2] for s in rows])

    def pct(values):
        return {f"p{q}": round(float(np.percentile(values, q)), 1) for q in (50, 95, 99)}

    rate = round(len(rows) / seconds, 1)
    return {"requests": len(rows), "per_second": rate, "server_ms": pct(server), "client_ms": pct(client)}
