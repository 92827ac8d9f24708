import numpy as np
import pytest
from django.core.files.storage import default_storage

from metrics_core import IMPACT_METRICS, PAIR_CLASSES, STRATA, draw_positions, pairs_in_draw_order, sample_pairs
from metrics_core.io import InputError, read_items
from raterapp.models import Experiment, ImpactGroup, Item, PairTask, SampledPair
from raterapp.services.preparation import pipeline as preparation
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.helpers.preparation import assert_nothing_left, created, prepared, rows_of
from tests.raterapp.services.files import (
    CATALOGUE_CSV,
    ITEMS_CSV,
    parquet_bytes,
    random_files,
    tiny_files,
    upload,
)

Status = Experiment.Status


# ---------------------------------------------------------------------------- success


def test_prepare_opens_the_experiment_for_rating_with_the_exact_impact(engineer, media):
    experiment = prepared(engineer)
    assert (experiment.status, experiment.progress, experiment.error) == (Status.RATING, 1.0, "")
    assert (experiment.items_count, experiment.dropped_items) == (4, 0)
    assert experiment.population_file == f"experiments/{experiment.pk}/population.parquet"
    assert default_storage.exists(experiment.population_file)
    metrics = experiment.impact.pop("metrics")
    assert experiment.impact == {"items": 4, "affected_items": 4, "total_weight": 4.0, "dropped_items": 0}
    assert metrics["SplitDistance"] == pytest.approx(7 / 24)
    assert metrics["MergeDistance"] == pytest.approx(3 / 16)
    assert metrics["JaccardDistance"] == pytest.approx(23 / 48)
    assert sorted(metrics) == sorted(IMPACT_METRICS)  # PostgreSQL jsonb keeps no key order


def test_impact_groups_per_base_cluster_exp_cluster_and_catalogue_attribute(engineer, media):
    experiment = prepared(engineer)
    groups = ImpactGroup.objects.filter(experiment=experiment)
    distance = {(g.dimension, g.label): g.metrics["JaccardDistance"] for g in groups}
    # JaccardDistance of a: 1/3, b: 1/3, c: 3/4, d: 1/2; a group's is its items' mean.
    assert distance == pytest.approx(
        {
            ("base", "B1"): 17 / 36,
            ("base", "B2"): 1 / 2,
            ("exp", "E1"): 1 / 3,
            ("exp", "E2"): 5 / 8,
            ("colour", "red"): 1 / 3,
            ("colour", "blue"): 5 / 8,
        }
    )
    blue = groups.get(dimension="colour", label="blue")
    assert (blue.items, blue.affected_items, blue.weight) == (2, 2, 2.0)
    assert sorted(blue.metrics) == sorted(IMPACT_METRICS)


def test_items_of_sampled_pairs_carry_their_card_attributes_and_clusters(engineer, media):
    experiment = prepared(engineer)
    sampled = set(SampledPair.objects.filter(experiment=experiment).values_list("vantage__item_id", flat=True))
    sampled |= set(SampledPair.objects.filter(experiment=experiment).values_list("partner__item_id", flat=True))
    assert set(Item.objects.filter(experiment=experiment).values_list("item_id", flat=True)) == sampled
    assert rows_of(experiment)["items"][0] == (
        "a", 0, "Alpha", "The first", "https://img.example/a.png", "https://example.org/a", {"colour": "red"}, "B1", "E1", 1.0
    )


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_sampled_pairs_and_tasks_are_metrics_core_sample_of_the_upload(engineer, media, tmp_path, scheme):
    files, items_path = random_files(tmp_path)
    experiment = prepared(engineer, files=files, scheme=scheme, n_draws=500, diff_share=0.3, seed=11, replication=3)
    assert experiment.status == Status.RATING

    items = read_items(items_path)
    ids = np.asarray(items.item_id.to_pylist(), dtype=object)
    sample = sample_pairs(items.to_population(), n_draws=500, scheme=scheme, rng=np.random.default_rng(11), diff_share=0.3)
    a, b = pairs_in_draw_order(sample, draw_positions(sample, rng=np.random.default_rng(12)))  # draw order (§14)
    rank = {(x, y): k for k, (x, y) in enumerate(zip(a.tolist(), b.tolist()))}
    expected_pairs = sorted(
        (ids[i], ids[j], PAIR_CLASSES[c], STRATA[s], d, None if i == j else rank[min(i, j), max(i, j)])
        for i, j, c, s, d in zip(sample.i.tolist(), sample.j.tolist(), sample.pair_class, sample.stratum, sample.draws.tolist())
    )
    rows = rows_of(experiment)
    assert rows["pairs"] == expected_pairs
    assert rows["tasks"] == [(k, x, y, 3, 0) for k, (x, y) in enumerate(zip(ids[a], ids[b]))]
    positions = np.unique(np.concatenate([sample.i, sample.j]))
    assert [(r[0], r[1], r[6]) for r in rows["items"]] == [(ids[p], p, {"shop": f"s{p % 3}"}) for p in positions]


def test_base_exp_and_weights_files_drop_items_in_one_clustering_only(engineer, media):
    files = {
        "base": upload("base.csv", "item_id,cluster_id\na,B1\nb,B1\nc,B1\nd,B2\nonly-base,B3\n"),
        "exp": upload("exp.csv", "item_id,cluster_id\nd,E2\nc,E2\nb,E1\na,E1\nonly-exp,E3\n"),
        "weights": upload("weights.csv", "item_id,weight\na,2\nb,1\nc,1\nd,0.5\nonly-base,3\n"),
        "catalogue": upload("catalogue.csv", CATALOGUE_CSV),
    }
    experiment = prepared(engineer, files=files)
    assert (experiment.status, experiment.items_count, experiment.dropped_items) == (Status.RATING, 4, 2)
    assert experiment.impact["total_weight"] == 4.5
    assert experiment.impact["dropped_items"] == 2
    weights = dict(Item.objects.filter(experiment=experiment).values_list("item_id", "weight"))
    assert weights == {"a": 2.0, "b": 1.0, "c": 1.0, "d": 0.5}


def test_parquet_uploads_with_integer_cluster_ids(engineer, media):
    items = parquet_bytes({"item_id": [1, 2, 3, 4], "base_cluster": [10, 10, 10, 20], "exp_cluster": [1, 1, 2, 2]})
    catalogue = parquet_bytes({"item_id": ["1", "2", "3", "4"], "title": ["A", "B", None, "D"], "year": [2020, 2021, None, 2021]})
    files = {"items": upload("items.parquet", items), "catalogue": upload("catalogue.parquet", catalogue)}
    experiment = prepared(engineer, files=files)
    assert experiment.status == Status.RATING
    assert set(ImpactGroup.objects.filter(experiment=experiment).values_list("dimension", "label")) == {
        ("base", "10"), ("base", "20"), ("exp", "1"), ("exp", "2"), ("year", "2020"), ("year", "2021"), ("year", ""),
    }
    third = Item.objects.get(experiment=experiment, item_id="3")
    assert (third.title, third.attributes, third.base_cluster, third.exp_cluster) == ("", {"year": None}, "10", "2")


# ---------------------------------------------------------------------------- idempotency


def test_rerun_on_a_prepared_experiment_leaves_identical_rows(engineer, media):
    experiment = prepared(engineer)
    before = rows_of(experiment)
    experiment_prepare(experiment_id=experiment.pk)
    assert rows_of(experiment) == before
    assert Experiment.objects.get(pk=experiment.pk).status == Status.RATING


@pytest.mark.parametrize("status", [Status.VALIDATING, Status.COMPUTING_IMPACT, Status.SAMPLING])
def test_rerun_of_a_step_replaces_its_rows_without_duplicates(engineer, media, status):
    experiment = prepared(engineer)
    before = rows_of(experiment)
    Experiment.objects.filter(pk=experiment.pk).update(status=status)
    experiment_prepare(experiment_id=experiment.pk)
    assert rows_of(experiment) == before
    assert Experiment.objects.get(pk=experiment.pk).status == Status.RATING


class WorkerKilled(BaseException):
    """What a run sees of its process being killed: nothing after this runs (no ``except Exception``)."""


def test_a_crash_inside_a_step_leaves_nothing_of_it_and_the_next_run_resumes(engineer, media, monkeypatch):
    reference = rows_of(prepared(engineer))
    save = preparation.sampled_rows_save

    def save_then_crash(**kwargs):
        save(**kwargs)
        raise WorkerKilled

    monkeypatch.setattr(preparation, "sampled_rows_save", save_then_crash)
    experiment = created(engineer)
    with pytest.raises(WorkerKilled):
        experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.preparation_attempts) == (Status.SAMPLING, 1)
    assert (Item.objects.filter(experiment=experiment).count(), PairTask.objects.filter(experiment=experiment).count()) == (0, 0)

    monkeypatch.setattr(preparation, "sampled_rows_save", save)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.preparation_attempts) == (Status.RATING, 2)
    assert rows_of(experiment) == reference


def test_a_run_that_finds_the_status_moved_on_changes_nothing(engineer, media, monkeypatch):
    build = preparation.impact_groups_build

    def build_while_cancelled(**kwargs):
        result = build(**kwargs)
        Experiment.objects.filter(pk=kwargs["experiment"].pk).update(status=Status.DONE)
        return result

    monkeypatch.setattr(preparation, "impact_groups_build", build_while_cancelled)
    experiment = created(engineer)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.impact) == (Status.DONE, None)
    assert ImpactGroup.objects.filter(experiment=experiment).count() == 0


def test_progress_is_stored_during_a_step(engineer, media, monkeypatch):
    seen = []
    build = preparation.impact_groups_build

    def build_and_look(**kwargs):
        result = build(**kwargs)
        seen.append(Experiment.objects.values_list("status", "progress").get(pk=kwargs["experiment"].pk))
        return result

    monkeypatch.setattr(preparation, "impact_groups_build", build_and_look)
    prepared(engineer)
    assert seen == [(Status.COMPUTING_IMPACT, 1.0)]


def test_failed_and_missing_experiments_are_left_alone(engineer, media):
    experiment = created(engineer)
    Experiment.objects.filter(pk=experiment.pk).update(status=Status.FAILED, error="earlier")
    experiment_prepare(experiment_id=experiment.pk)
    experiment_prepare(experiment_id=experiment.pk + 1000)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error) == (Status.FAILED, "earlier")
    assert Item.objects.count() == 0


# ---------------------------------------------------------------------------- bad uploads

PARQUET = parquet_bytes({"item_id": ["a", "b"], "base_cluster": ["1", "1"], "exp_cluster": ["1", "2"]})
BAD_UPLOADS = {
    "wrong columns": (
        {"items": upload("items.csv", "id,base,exp\na,1,2\n")},
        "items.csv: missing column 'item_id', 'base_cluster', 'exp_cluster' (columns found: 'id', 'base', 'exp')",
    ),
    "catalogue without title": (
        {"catalogue": upload("catalogue.csv", "item_id,name\na,A\n")},
        "catalogue.csv: missing column 'title' (columns found: 'item_id', 'name')",
    ),
    "duplicate item id": (
        {"items": upload("items.csv", ITEMS_CSV + "a,B2,E2\n")},
        "items.csv: line 6: duplicate item_id 'a' (first on line 2)",
    ),
    "duplicate catalogue id": (
        {"catalogue": upload("catalogue.csv", CATALOGUE_CSV + "b,Bis,,,,red\n")},
        "catalogue.csv: line 7: duplicate item_id 'b' (first on line 3)",
    ),
    "zero weight": (
        {"items": upload("items.csv", "item_id,base_cluster,exp_cluster,weight\na,B1,E1,1\nb,B1,E2,0\n")},
        "items.csv: line 3: weight '0' must be greater than 0",
    ),
    "negative weight in a weights file": (
        {
            "items": None,
            "base": upload("base.csv", "item_id,cluster_id\na,1\nb,1\n"),
            "exp": upload("exp.csv", "item_id,cluster_id\na,1\nb,2\n"),
            "weights": upload("weights.csv", "item_id,weight\na,1\nb,-1.5\n"),
        },
        "weights.csv: line 3: weight '-1.5' must be greater than 0",
    ),
    "item missing from the catalogue": (
        {"catalogue": upload("catalogue.csv", "item_id,title\na,A\nb,B\nc,C\n")},
        "catalogue.csv: no row for item_id 'd' of items.csv",
    ),
    "0-byte items file": ({"items": upload("items.csv", b"")}, "items.csv: empty file"),
    "0-byte catalogue": ({"catalogue": upload("catalogue.csv", b"")}, "catalogue.csv: empty file"),
    "no common items": (
        {
            "items": None,
            "base": upload("base.csv", "item_id,cluster_id\na,1\n"),
            "exp": upload("exp.csv", "item_id,cluster_id\nb,1\n"),
        },
        "exp.csv: no item_id in common with base.csv",
    ),
    "nothing affected": (
        {"items": upload("items.csv", "item_id,base_cluster,exp_cluster\na,1,x\nb,1,x\nc,2,y\n")},
        "items.csv: no item is affected (Base and Exp are identical): nothing to sample",
    ),
    "reserved column": (
        {"catalogue": upload("catalogue.csv", "item_id,title,weight\na,A,1\n")},
        "catalogue.csv: column 'weight' is reserved: rename it",
    ),
    "attribute in both files": (
        {"items": upload("items.csv", "item_id,base_cluster,exp_cluster,colour\na,1,1,red\nb,1,2,red\n")},
        "catalogue.csv: column 'colour' is also in items.csv: rename one of them",
    ),
    "id too long for the database": (
        {"items": upload("items.csv", f"item_id,base_cluster,exp_cluster\n{'x' * 256},1,1\nb,1,2\n")},
        f"items.csv: item_id {'x' * 40!r}... is longer than 255 characters",
    ),
}


@pytest.mark.parametrize("files, message", BAD_UPLOADS.values(), ids=BAD_UPLOADS.keys())
def test_a_bad_upload_fails_with_its_problem_and_leaves_nothing(engineer, media, files, message):
    experiment = prepared(engineer, files=tiny_files(**files), checked=False)  # as if past the first rows
    assert (experiment.status, experiment.error, experiment.progress) == (Status.FAILED, message, 0.0)
    assert_nothing_left(experiment)


def test_a_truncated_parquet_upload_is_refused_at_upload_and_creates_nothing(engineer, media):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="items.parquet: not a readable Parquet file"):
        created(engineer, files=tiny_files(items=upload("items.parquet", PARQUET[: len(PARQUET) // 2])))
    assert Experiment.objects.count() == 0


def test_a_failure_in_a_later_step_removes_the_earlier_steps_rows_and_file(engineer, media, monkeypatch):
    def refuse(**kwargs):
        raise InputError(kwargs["catalogue"].path, "refused for the test")

    monkeypatch.setattr(preparation, "sampled_rows_build", refuse)
    experiment = prepared(engineer)
    assert (experiment.status, experiment.error) == (Status.FAILED, "catalogue.csv: refused for the test")
    assert_nothing_left(experiment)


def test_a_second_run_of_a_failed_preparation_changes_nothing(engineer, media):
    experiment = prepared(engineer, files=tiny_files(items=upload("items.csv", b"")), checked=False)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error) == (Status.FAILED, "items.csv: empty file")
