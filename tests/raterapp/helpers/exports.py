"""The experiment's exports through the API, and every CSV the API serves."""

import csv
import io

from tests.raterapp.helpers.roles import E


def export(client, experiment, what, fmt):
    return client.get(f"/api/experiments/{experiment.pk}/exports/{what}/", {"format": fmt})


def csv_rows(response):
    return list(csv.DictReader(io.StringIO(response.content.decode())))


CSV_EXPORTS = [
    E + "exports/pairs/?format=csv",
    E + "exports/judgements/?format=csv",
    E + "exports/scores/?format=csv",
    E + "exports/estimates/?format=csv",
    E + "exports/impact/?format=csv",
    E + "explorer/pairs/?format=csv",
    E + "estimates/convergence/?format=csv",
    E + "slices/?format=csv&attribute=colour",
    E + "raters/?format=csv",
    E + "agreement/?format=csv",
    "/api/raters/?format=csv&since=2026-01-01",
]
