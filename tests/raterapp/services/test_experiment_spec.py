"""Experiment creation in its parts: the checked spec, the uploads stored all or none, the records."""

import dataclasses

import pytest
from django.core.exceptions import ValidationError

from raterapp.models import Experiment, ExperimentBudget, OutboxMessage, UploadedFile
from raterapp.services.experiments import files as experiment_files
from raterapp.services.experiments.create import experiment_create
from raterapp.services.experiments.spec import ExperimentSpec, experiment_spec
from tests.raterapp.services.files import tiny_files


def test_a_spec_is_checked_and_frozen_and_writes_nothing(db):
    spec = experiment_spec(files=tiny_files(), name="  Matcher ", n_draws=40, workspace=" shop ")
    assert (spec.name, spec.n_draws, spec.workspace, spec.engine) == ("Matcher", 40, "shop", "memory")
    assert isinstance(spec.seed, int) and spec.question is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.n_draws = 1
    assert Experiment.objects.count() == 0


def test_a_spec_gathers_the_parameter_and_file_problems_in_one_error(db):
    with pytest.raises(ValidationError) as caught:
        experiment_spec(files=tiny_files(catalogue=None), name=" ", diff_share=2)
    assert set(caught.value.message_dict) == {"name", "diff_share", "files"}


def test_create_makes_the_row_budget_uploads_and_outbox_message_from_the_spec(engineer, media):
    files = tiny_files()
    spec = experiment_spec(files=files, name="e", seed=5, replication=2, workspace="shop")
    experiment = experiment_create(owner=engineer, spec=spec, files=files)
    row = Experiment.objects.get()
    assert (row.name, row.seed, row.replication, row.engine, row.workspace.name) == ("e", 5, 2, "memory", "shop")
    assert row.question == Experiment._meta.get_field("question").default
    assert ExperimentBudget.objects.get().experiment_id == experiment.pk
    assert sorted(UploadedFile.objects.values_list("kind", flat=True)) == ["catalogue", "items"]
    assert OutboxMessage.objects.get().target_id == experiment.pk


def test_an_upload_failing_midway_leaves_no_row_and_no_stored_file(engineer, media, monkeypatch):
    saved = []
    real_save = UploadedFile.save

    def save_once(self, *args, **kwargs):
        if saved:
            raise OSError("disk full")
        saved.append(self)
        real_save(self, *args, **kwargs)

    monkeypatch.setattr(experiment_files.UploadedFile, "save", save_once)
    files = tiny_files()
    with pytest.raises(OSError):
        experiment_create(owner=engineer, spec=experiment_spec(files=files, name="e"), files=files)
    assert len(saved) == 1
    assert (Experiment.objects.count(), UploadedFile.objects.count(), OutboxMessage.objects.count()) == (0, 0, 0)
    assert [path for path in media.rglob("*") if path.is_file()] == []


def test_the_spec_has_a_field_for_every_parameter_of_experiment_spec():
    import inspect

    parameters = set(inspect.signature(experiment_spec).parameters) - {"files"}
    assert parameters == {field.name for field in dataclasses.fields(ExperimentSpec)} - {"engine"}
