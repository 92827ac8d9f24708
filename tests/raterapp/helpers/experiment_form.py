"""The new-experiment page's form: its fields, and a post of it with the uploads."""

from django.urls import reverse

FORM = {
    "name": "Checkout dedup v2",
    "description": "Merge near-duplicate offers",
    "question": "Same product?",
    "guidelines": "Compare titles.",
    "scheme": "jaccard",
    "n_draws": "50",
    "diff_share": "0.5",
    "replication": "1",
    "seed": "7",
    "confidence": "0.95",
}


def _post(client, files: dict, **fields):
    data = {**FORM, **fields}
    data.update(files)
    return client.post(reverse("experiment-new"), data)
