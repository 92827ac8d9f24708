"""Preparing an experiment with a ground-truth clustering, and one of the absolute quality of a clustering."""

import pytest
from django.core.exceptions import ValidationError

from metrics_core import impact_metrics, population_from_labels, quality_from_gold, truth_from_gold
from raterapp.models import Experiment, Item
from tests.raterapp.helpers.preparation import assert_nothing_left, created, prepared
from tests.raterapp.services.files import CATALOGUE_CSV, tiny_files, upload

Status = Experiment.Status
GROUND_TRUTH_CSV = "item_id,cluster_id\na,x\nb,x\nc,y\nd,y\ne,z\n"  # e is in no clustering: ignored


def test_a_ground_truth_clustering_gives_the_exact_quality_and_the_true_derived_metrics(engineer, media):
    experiment = prepared(engineer, files=tiny_files(ground_truth=upload("gold.csv", GROUND_TRUTH_CSV)))
    assert experiment.status == Status.RATING
    population = population_from_labels(["B1", "B1", "B1", "B2"], ["E1", "E1", "E2", "E2"])
    expected_quality = quality_from_gold(population, ["x", "x", "y", "y"])
    assert experiment.ground_truth_metrics["quality"] == pytest.approx(expected_quality)
    truth = truth_from_gold(population, ["x", "x", "y", "y"])
    assert experiment.ground_truth_metrics["truth"] == pytest.approx(truth)
    assert experiment.ground_truth_metrics["truth"]["DeltaRecall"] == pytest.approx(0.25)  # Exp is the Ideal clustering


def test_an_item_without_a_ground_truth_cluster_fails_the_upload_and_leaves_nothing(engineer, media):
    ground_truth = upload("gold.csv", "item_id,cluster_id\na,x\nb,x\nd,y\n")
    experiment = prepared(engineer, files=tiny_files(ground_truth=ground_truth))
    assert experiment.status == Status.FAILED
    assert experiment.error == "gold.csv: no ground-truth cluster for item_id 'c' (1 of 4 items lack one)"
    assert experiment.ground_truth_metrics is None
    assert_nothing_left(experiment)


def test_a_ground_truth_file_with_a_bad_row_names_its_line(engineer, media):
    ground_truth = upload("gold.csv", "item_id,cluster_id\na,x\nb,x\nc,y\na,y\nd,y\n")
    with pytest.raises(ValidationError) as refused:  # in the first rows: refused in the request (issue 34)
        created(engineer, files=tiny_files(ground_truth=ground_truth))
    assert refused.value.message_dict == {"files": ["ground_truth: gold.csv: line 5: duplicate item_id 'a' (first on line 2)"]}
    experiment = prepared(engineer, files=tiny_files(ground_truth=ground_truth), checked=False)  # as if further on
    assert (experiment.status, experiment.error) == (Status.FAILED, "gold.csv: line 5: duplicate item_id 'a' (first on line 2)")


def test_absolute_quality_takes_one_clustering_and_puts_every_item_alone_in_exp(engineer, media):
    files = {
        "base": upload("clustering.csv", "item_id,cluster_id\na,B1\nb,B1\nc,B1\nd,B2\n"),
        "weights": upload("weights.csv", "item_id,weight\na,2\nb,1\nc,1\nd,1\n"),
        "catalogue": upload("catalogue.csv", CATALOGUE_CSV),
    }
    experiment = prepared(engineer, files=files, kind="absolute")
    assert (experiment.kind, experiment.status) == ("absolute", Status.RATING)
    expected = impact_metrics(population_from_labels(["B1"] * 3 + ["B2"], [0, 1, 2, 3], [2, 1, 1, 1]))
    assert experiment.impact["metrics"] == pytest.approx(expected.as_dict()["metrics"])
    assert experiment.impact["metrics"]["MergeRate"] == 0.0
    exp_clusters = dict(Item.objects.filter(experiment=experiment).values_list("item_id", "exp_cluster"))
    assert all(exp_clusters[item] == item for item in exp_clusters)  # every item alone


@pytest.mark.parametrize(
    "files",
    [
        {"items": "items.csv"},
        {"base": "base.csv", "exp": "exp.csv"},
        {"weights": "weights.csv"},
    ],
)
def test_absolute_quality_refuses_an_exp_clustering_or_a_missing_base(engineer, media, files):
    given = {kind: upload(name, "item_id,cluster_id\na,1\n") for kind, name in files.items()}
    given["catalogue"] = upload("catalogue.csv", CATALOGUE_CSV)
    with pytest.raises(ValidationError) as raised:
        created(engineer, files=given, kind="absolute")
    assert raised.value.message_dict["files"] == [
        "the absolute quality of a clustering takes a base file (and optionally a weights file)"
    ]
    assert not Experiment.objects.exists()


def test_an_unknown_kind_is_refused(engineer, media):
    with pytest.raises(ValidationError) as raised:
        created(engineer, kind="relative")
    assert raised.value.message_dict["kind"] == ["must be one of change, absolute"]
