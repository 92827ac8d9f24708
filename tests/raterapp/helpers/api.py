"""The rating loop through the API: a rater's client, the next pair and a verdict."""

import uuid

from rest_framework.test import APIClient

from raterapp.services.accounts.api_tokens import api_token_create


def client_with_token(rater) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(actor=rater)[1]}")
    return client


def next_pair(client, experiment, holding=()):
    return client.post(f"/api/experiments/{experiment.pk}/next-pair/", {"holding": list(holding)}, format="json")


def next_task(client, experiment, holding=()):
    return next_pair(client, experiment, holding).json()["pair"]["task"]


def submit(client, task, verdict="equivalent", client_id=None, **extra):
    body = {"task": task, "verdict": verdict, "client_id": str(client_id or uuid.uuid4()), **extra}
    return client.post("/api/judgements/", body, format="json")
