"""Weights at the edges of float64 in the app (issue 33): all of them ~1e-320 once underflowed every
pair weight and reached "Rating" with nothing to rate; one of 1e308 among ones did the same. Now
the first are rescaled exactly (the experiment is rated as with equal weights) and the second is
refused, naming the row and the weights."""

import pytest
from django.core.exceptions import ValidationError

from raterapp.models import Experiment, PairTask
from tests.raterapp.helpers.preparation import prepared
from tests.raterapp.services.files import random_files, upload


def _weighted(tmp_path, weight_of) -> dict:
    files, path = random_files(tmp_path, n=120)
    lines = open(path).read().splitlines()
    rows = [lines[0] + ",weight"] + [f"{line},{weight_of(k)}" for k, line in enumerate(lines[1:])]
    return {**files, "items": upload("items.csv", "\n".join(rows) + "\n")}


def test_tiny_weights_are_rated_as_equal_weights(engineer, media, tmp_path):
    tiny = prepared(engineer, files=_weighted(tmp_path, lambda k: "1e-320"), n_draws=200)
    equal = prepared(engineer, files=_weighted(tmp_path, lambda k: "1"), n_draws=200)
    assert tiny.status == Experiment.Status.RATING, tiny.error
    assert PairTask.objects.filter(experiment=tiny).count() == PairTask.objects.filter(experiment=equal).count() > 0
    assert tiny.impact["metrics"] == pytest.approx(equal.impact["metrics"], rel=1e-12)


def test_one_weight_dominating_the_rest_is_refused_naming_its_row(engineer, media, tmp_path):
    weighted = lambda: _weighted(tmp_path, lambda k: "1e308" if k == 5 else "1")  # noqa: E731
    with pytest.raises(ValidationError) as refused:  # in the first rows: refused in the request (issue 34)
        prepared(engineer, files=weighted(), n_draws=200)
    [problem] = refused.value.message_dict["files"]
    assert problem.startswith("items: items.csv: line 7: weight '1e308' is more than 2**200"), problem
    experiment = prepared(engineer, files=weighted(), n_draws=200, checked=False)  # as if further on
    assert experiment.status == Experiment.Status.FAILED
    assert "items.csv" in experiment.error and "line 7: weight '1e308'" in experiment.error, experiment.error
    assert not PairTask.objects.filter(experiment=experiment).exists()
