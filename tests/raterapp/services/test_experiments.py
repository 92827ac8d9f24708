from unittest import mock

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage

from raterapp.models import Experiment, OutboxMessage, UploadedFile
from raterapp.services.experiments import create as experiments
from raterapp.services.experiments.spec import MAX_SEED
from raterapp.tasks import experiment_prepare_task
from tests.raterapp.services.files import CATALOGUE_CSV, ITEMS_CSV, experiment_made, tiny_files, upload


def test_create_stores_the_parameters_and_uploads_and_enqueues_the_preparation_on_commit(
    engineer, media, django_capture_on_commit_callbacks
):
    with mock.patch.object(experiment_prepare_task, "delay") as delay:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            experiment = experiment_made(
                owner=engineer,
                name="  New matcher ",
                files=tiny_files(),
                description="Looser rules",
                question="Same product?",
                guidelines="Ignore colour.",
                scheme="stratified",
                n_draws=500,
                diff_share=0.25,
                replication=3,
                seed=42,
                confidence=0.9,
            )
            delay.assert_not_called()
        assert len(callbacks) == 1
        callbacks[0]()
    delay.assert_called_once_with(experiment.pk)

    experiment = Experiment.objects.get(pk=experiment.pk)
    assert (experiment.name, experiment.owner, experiment.question, experiment.guidelines) == (
        "New matcher", engineer, "Same product?", "Ignore colour."
    )
    assert (experiment.scheme, experiment.n_draws, experiment.diff_share, experiment.replication) == ("stratified", 500, 0.25, 3)
    assert (experiment.seed, experiment.confidence, experiment.status) == (42, 0.9, Experiment.Status.QUEUED)
    uploads = {f.kind: f for f in experiment.files.all()}
    assert {kind: (f.original_name, f.size) for kind, f in uploads.items()} == {
        "items": ("items.csv", len(ITEMS_CSV)),
        "catalogue": ("catalogue.csv", len(CATALOGUE_CSV)),
    }
    assert uploads["items"].file.name == f"experiments/{experiment.pk}/uploads/items.csv"
    with default_storage.open(uploads["catalogue"].file.name) as stored:
        assert stored.read().decode() == CATALOGUE_CSV


def test_defaults_and_a_drawn_seed(engineer, media):
    experiment = experiment_made(owner=engineer, name="e", files=tiny_files())
    assert (experiment.scheme, experiment.n_draws, experiment.diff_share, experiment.replication, experiment.confidence) == (
        "jaccard", 2000, 0.5, 1, 0.95
    )
    assert experiment.question == "Do these two items refer to the same thing?"
    assert 0 <= experiment.seed <= MAX_SEED
    other = experiment_made(owner=engineer, name="e", files=tiny_files())
    assert other.seed != experiment.seed


def test_the_task_prepares_the_experiment_when_run_eagerly(engineer, media, settings, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_made(owner=engineer, name="e", files=tiny_files(), n_draws=20, seed=1)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error, experiment.items_count) == (Experiment.Status.RATING, "", 4)


def test_parameter_errors_name_their_field_and_create_nothing(engineer, media):
    with pytest.raises(ValidationError) as refused:
        experiment_made(
            owner=engineer,
            name=" ",
            files=tiny_files(),
            scheme="random",
            n_draws=0,
            diff_share=1.0,
            replication=True,
            seed=-1,
            confidence=float("nan"),
        )
    assert refused.value.message_dict == {
        "name": ["a name is required"],
        "scheme": ["must be one of jaccard, stratified, precision"],
        "n_draws": ["must be an integer from 1 to 100000"],
        "diff_share": ["must be a number strictly between 0 and 1"],
        "replication": ["must be an integer from 1 to 20"],
        "seed": [f"must be an integer from 0 to {MAX_SEED}"],
        "confidence": ["must be a number strictly between 0 and 1"],
    }
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)
    assert not media.exists() or not any(media.rglob("*.csv"))


def test_model_field_limits_are_checked_too(engineer, media):
    with pytest.raises(ValidationError) as refused:
        experiment_made(owner=engineer, name="n" * 201, files=tiny_files(), question="q" * 501)
    assert refused.value.message_dict == {
        "name": ["Ensure this value has at most 200 characters (it has 201)."],
        "question": ["Ensure this value has at most 500 characters (it has 501)."],
    }
    assert Experiment.objects.count() == 0


FILE_PROBLEMS = {
    "no catalogue": ({"catalogue": None}, ["a catalogue file is required"]),
    "no clusterings": (
        {"items": None},
        ["give either an items file, or a base and an exp file (and optionally a weights file)"],
    ),
    "items and base": (
        {"base": upload("base.csv", "item_id,cluster_id\n")},
        ["give either an items file, or a base and an exp file (and optionally a weights file)"],
    ),
    "base without exp": (
        {"items": None, "base": upload("base.csv", "x")},
        ["give either an items file, or a base and an exp file (and optionally a weights file)"],
    ),
    "weights with items": (
        {"weights": upload("weights.csv", "x")},
        ["give either an items file, or a base and an exp file (and optionally a weights file)"],
    ),
    "unknown kind and bad extension": (
        {"extra": upload("extra.csv", "x"), "items": upload("items.xlsx", "x")},
        ["unknown file kind 'extra'", "items: items.xlsx: unsupported file type: use a .csv or .parquet file"],
    ),
}


@pytest.mark.parametrize("replace, problems", FILE_PROBLEMS.values(), ids=FILE_PROBLEMS.keys())
def test_file_errors_are_keyed_by_files_and_create_nothing(engineer, media, replace, problems):
    with pytest.raises(ValidationError) as refused:
        experiment_made(owner=engineer, name="e", files=tiny_files(**replace))
    assert refused.value.message_dict == {"files": problems}
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)


def test_files_stored_before_a_failed_create_are_removed(engineer, media, monkeypatch):
    def refuse(**kwargs):
        raise RuntimeError("database gone")

    monkeypatch.setattr(experiments, "outbox_add", refuse)
    with pytest.raises(RuntimeError):
        experiment_made(owner=engineer, name="e", files=tiny_files())
    assert (Experiment.objects.count(), UploadedFile.objects.count(), OutboxMessage.objects.count()) == (0, 0, 0)
    assert [path for path in media.rglob("*") if path.is_file()] == []


def test_a_broker_down_at_commit_keeps_the_experiment_and_its_preparation_in_the_outbox(
    engineer, media, django_capture_on_commit_callbacks
):
    with mock.patch.object(experiment_prepare_task, "delay", side_effect=ConnectionError("broker down")) as delay:
        with django_capture_on_commit_callbacks(execute=True):
            experiment = experiment_made(owner=engineer, name="e", files=tiny_files())
    delay.assert_called_once_with(experiment.pk)
    assert Experiment.objects.get(pk=experiment.pk).status == Experiment.Status.QUEUED
    pending = OutboxMessage.objects.get()
    assert (pending.kind, pending.target_id, pending.attempts) == ("experiment_prepare", experiment.pk, 1)
    assert pending.last_error == "ConnectionError: broker down"
