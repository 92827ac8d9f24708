"""Requests for the OpenAPI schema at the same time, in one process's threads (the development
server, a worker with WEB_THREADS above 1), each get the whole schema: drf-spectacular's generator
is not thread-safe (its issues #1123 and #1368), and raterapp.api.schema_view makes them take turns."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client


def _references(node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                found.add(value.rsplit("/", 1)[1])
            else:
                _references(value, found)
    elif isinstance(node, list):
        for value in node:
            _references(value, found)
    return found


# Without Redis (the embedded default) the API's throttle counts are a table.
@pytest.mark.django_db(transaction=True)
def test_eight_requests_at_once_each_get_the_whole_schema():
    def fetch(_):
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
        return response.status_code, response.content

    with ThreadPoolExecutor(8) as pool:
        answers = [answer for _ in range(3) for answer in pool.map(fetch, range(8))]
    assert {status for status, _ in answers} == {200}
    assert len({content for _, content in answers}) == 1
    schema = json.loads(answers[0][1])
    assert _references(schema["paths"], set()) <= set(schema["components"]["schemas"])
    assert "/api/judgements/" in schema["paths"]
