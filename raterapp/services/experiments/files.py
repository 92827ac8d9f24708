"""An experiment's uploads: which are acceptable, and storing them all or none."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from django.conf import settings
from django.core.files import File

from metrics_core.io import InputError, format_of
from raterapp.models import Experiment, UploadedFile
from raterapp.services.experiments.upload_limits import upload_limit_problems

Kind = UploadedFile.Kind


def file_problems(files: Mapping[str, Any], experiment_kind: str) -> list[str]:
    """What is wrong with the uploads of an experiment whose items are uploaded."""
    kinds = set(files)
    problems = [f"unknown file kind {kind!r}" for kind in sorted(kinds - set(Kind.values))]
    if Kind.CATALOGUE not in kinds:
        problems.append("a catalogue file is required")
    clusterings = kinds & {Kind.BASE, Kind.EXP, Kind.WEIGHTS}
    if experiment_kind == Experiment.Kind.ABSOLUTE:
        if Kind.BASE not in kinds or kinds & {Kind.ITEMS, Kind.EXP}:
            problems.append("the absolute quality of a clustering takes a base file (and optionally a weights file)")
    elif (Kind.ITEMS in kinds) == bool(clusterings) or (clusterings and not {Kind.BASE, Kind.EXP} <= kinds):
        problems.append("give either an items file, or a base and an exp file (and optionally a weights file)")
    return problems + format_problems(files)


def format_problems(files: Mapping[str, Any]) -> list[str]:
    """Unreadable file formats (by name) and uploads over the limits."""
    problems = []
    for kind in sorted(set(files) & set(Kind.values)):
        try:
            format_of(os.path.basename(files[kind].name or ""))
        except InputError as exc:
            problems.append(f"{kind}: {exc}")
    return problems + upload_limit_problems(files=files)


def engine_for(items_location: str, files: Mapping[str, Any]) -> str:
    """Dask for a location, and for Parquet items when a scheduler is configured or they are large."""
    if items_location:
        return Experiment.Engine.DASK
    items = files.get(Kind.ITEMS)
    if items is None or format_of(os.path.basename(items.name or "")) != "parquet":
        return Experiment.Engine.MEMORY
    if settings.DASK_SCHEDULER_ADDRESS or (items.size or 0) > settings.DASK_THRESHOLD_BYTES:
        return Experiment.Engine.DASK
    return Experiment.Engine.MEMORY


@contextmanager
def uploads_removed_on_failure() -> Iterator[list[UploadedFile]]:
    """Yield a list for ``uploads_save``; if the block fails, delete the stored files again.

    Enter it outside the transaction: its rollback undoes the rows, not the files in the storage.
    """
    stored: list[UploadedFile] = []
    try:
        yield stored
    except BaseException:
        for row in stored:
            row.file.delete(save=False)
        raise


def uploads_save(*, experiment: Experiment, files: Mapping[str, File], stored: list[UploadedFile]) -> None:
    """Stream each file to the media storage (in chunks), then record it; ``stored`` collects them."""
    for kind, upload in files.items():
        original_name = os.path.basename(cast(str, upload.name))  # an upload has its name
        row = UploadedFile(experiment=experiment, kind=kind, original_name=original_name, size=upload.size)
        row.file.save(original_name, upload, save=False)
        stored.append(row)
        row.save()
