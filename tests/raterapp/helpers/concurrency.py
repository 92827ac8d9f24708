"""Many raters at once through the API: requests through a bounded number of server slots, and a
race of threads started at the same moment."""

import threading

from django.db import connection
from rest_framework.test import APIClient

# Like a server with this many workers: requests beyond it wait for a free one. Each request
# holds a database connection, and PostgreSQL's default max_connections is 100.
SERVER_SLOTS = threading.BoundedSemaphore(40)


def post(client, url, body):
    with SERVER_SLOTS:
        try:
            return client.post(url, body, format="json")
        finally:
            connection.close()


def race(raters, action):
    """Run ``action(rater)`` for every rater at the same moment; their results, in order."""
    start = threading.Barrier(len(raters))
    results = [None] * len(raters)

    def run(k, rater):
        start.wait()
        results[k] = action(rater)

    threads = [threading.Thread(target=run, args=(k, rater)) for k, rater in enumerate(raters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client
