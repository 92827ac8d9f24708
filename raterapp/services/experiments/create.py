"""Creating an experiment: its row, budget and uploads, and its preparation enqueued."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

from django.contrib.auth.models import User
from django.core.files import File
from django.db import transaction

from raterapp.models import Experiment, OutboxMessage, Workspace
from raterapp.services.experiments.budgets import budget_create
from raterapp.services.experiments.files import uploads_removed_on_failure, uploads_save
from raterapp.services.experiments.spec import ExperimentSpec
from raterapp.services.outbox import outbox_add


def experiment_create(*, owner: User, spec: ExperimentSpec, files: Mapping[str, File]) -> Experiment:
    """Create an experiment from ``spec`` (checked with these ``files`` by ``experiment_spec``)
    and its uploads, and enqueue its preparation once committed.

    Raises ``ValidationError`` (from the model's own checks); then nothing is created, and no
    upload stays in the storage if anything fails.
    """
    experiment = _experiment_row(owner=owner, spec=spec)
    experiment.full_clean(exclude=["owner", "workspace", "question_version"])
    with uploads_removed_on_failure() as stored, transaction.atomic():
        if spec.workspace:
            experiment.workspace = Workspace.objects.get_or_create(name=spec.workspace)[0]
        experiment.save()
        budget_create(experiment=experiment)
        uploads_save(experiment=experiment, files=files, stored=stored)
        outbox_add(kind=OutboxMessage.Kind.EXPERIMENT_PREPARE, target_id=experiment.pk)
    return experiment


def _experiment_row(*, owner: User, spec: ExperimentSpec) -> Experiment:
    fields = {key: value for key, value in asdict(spec).items() if key != "workspace"}
    if fields["question"] is None:  # the model's default question
        del fields["question"]
    return Experiment(owner=owner, **fields)
