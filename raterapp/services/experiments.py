"""Creating an experiment: check the parameters, store the uploads, enqueue the preparation."""

from __future__ import annotations

import math
import numbers
import os
import secrets
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction

from metrics_core.io import InputError, format_of
from raterapp.models import Experiment, OutboxMessage, UploadedFile, Workspace
from raterapp.services.budgets import MAX_REPLICATION, budget_create
from raterapp.services.outbox import outbox_add
from raterapp.services.upload_limits import upload_limit_problems

Kind = UploadedFile.Kind
# Every distinct pair becomes rows and human work: beyond this a sample is a mistake.
MAX_DRAWS = 100_000
# seed + 1 orders the tasks, and both must fit a signed 64-bit column.
MAX_SEED = 2**63 - 2


def experiment_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    files: Mapping[str, File],
    description: str = "",
    kind: str = "change",
    items_location: str = "",
    catalogue_location: str = "",
    question: str | None = None,
    guidelines: str = "",
    scheme: str = "jaccard",
    n_draws: int = 2000,
    diff_share: float = 0.5,
    replication: int = 1,
    seed: int | None = None,
    confidence: float = 0.95,
    workspace: str = "",
    reuse_verdicts: bool = True,
) -> Experiment:
    """Create an experiment from its uploads and enqueue its preparation once committed.

    ``files`` maps kinds to files: ``catalogue`` always, and either ``items`` or ``base``
    and ``exp`` (with optional ``weights``); for the ``absolute`` kind, ``base`` (with
    optional ``weights``) only. A ``gold`` clustering is optional for both kinds.
    ``items_location`` (partitioned Parquet under one of ``DATA_LOCATIONS``) replaces the
    items upload; such experiments, and Parquet items uploads when ``DASK_SCHEDULER_ADDRESS``
    is set or they are larger than ``DASK_THRESHOLD_BYTES``, are prepared on Dask. With an
    items location, ``catalogue_location`` (Parquet) may replace the catalogue upload: only the
    rows of the sampled items are read from it.
    ``workspace`` names the workspace (made if new) whose experiments share item ids and, under
    the same question, verdicts (abcde-spec §11); empty: one of its own. ``reuse_verdicts`` off:
    the experiment neither takes verdicts from it nor offers its own.
    Raises ``ValidationError`` keyed by field
    (``files`` for the uploads); then nothing is created. The content of the files is
    checked by the preparation, which reports problems in ``Experiment.error``.
    """
    errors = _parameter_problems(
        name=name,
        kind=kind,
        scheme=scheme,
        n_draws=n_draws,
        diff_share=diff_share,
        replication=replication,
        seed=seed,
        confidence=confidence,
    )
    if len((workspace or "").strip()) > Workspace._meta.get_field("name").max_length:
        errors["workspace"] = ["a workspace name has at most 200 characters"]
    items_location = (items_location or "").strip()
    catalogue_location = (catalogue_location or "").strip()
    if items_location:
        if location_problems := _location_problems(items_location, files, kind, catalogue_location):
            errors["items_location"] = location_problems
    elif file_problems := _file_problems(files, kind):
        errors["files"] = file_problems
    if catalogue_location:
        problems = _allowed_location_problems(catalogue_location)
        if not items_location:
            problems.append("a catalogue location goes with an items location")
        if Kind.CATALOGUE in files:
            problems.append("give the catalogue either as a location or as an uploaded file, not both")
        if problems:
            errors["catalogue_location"] = problems
    engine = _engine_for(items_location, files) if not errors else Experiment.Engine.MEMORY
    if engine == Experiment.Engine.DASK and Kind.GOLD in files:
        errors["files"] = ["a gold clustering needs the in-memory engine; this experiment would be prepared on Dask"]
    if errors:
        raise ValidationError(errors)

    experiment = Experiment(
        owner=owner,
        name=name.strip(),
        description=description,
        kind=kind,
        items_location=items_location,
        catalogue_location=catalogue_location,
        engine=engine,
        guidelines=guidelines,
        scheme=scheme,
        n_draws=int(n_draws),
        diff_share=float(diff_share),
        replication=int(replication),
        seed=secrets.randbelow(MAX_SEED + 1) if seed is None else int(seed),
        confidence=float(confidence),
        reuse_verdicts=bool(reuse_verdicts),
    )
    if question is not None:
        experiment.question = question
    experiment.full_clean(exclude=["owner", "workspace", "question_version"])
    stored: list[UploadedFile] = []
    try:
        with transaction.atomic():
            if workspace := (workspace or "").strip():
                experiment.workspace = Workspace.objects.get_or_create(name=workspace)[0]
            experiment.save()
            budget_create(experiment=experiment)
            for kind, upload in files.items():
                _upload_save(experiment=experiment, kind=kind, upload=upload, stored=stored)
            outbox_add(kind=OutboxMessage.Kind.EXPERIMENT_PREPARE, target_id=experiment.pk)
    except BaseException:
        # The rows are rolled back, the files in the storage are not.
        for row in stored:
            row.file.delete(save=False)
        raise
    return experiment


def _upload_save(*, experiment: Experiment, kind: str, upload: File, stored: list[UploadedFile]) -> None:
    """Stream the file to the media storage (in chunks), then record it."""
    original_name = os.path.basename(upload.name)
    row = UploadedFile(experiment=experiment, kind=kind, original_name=original_name, size=upload.size)
    row.file.save(original_name, upload, save=False)
    stored.append(row)
    row.save()


def _file_problems(files: Mapping[str, Any], experiment_kind: str) -> list[str]:
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
    return problems + _format_problems(files)


def _format_problems(files: Mapping[str, Any]) -> list[str]:
    problems = []
    for kind in sorted(set(files) & set(Kind.values)):
        try:
            format_of(os.path.basename(files[kind].name or ""))
        except InputError as exc:
            problems.append(f"{kind}: {exc}")
    return problems + upload_limit_problems(files=files)


def _allowed_location_problems(location: str) -> list[str]:
    """A location must be under one of DATA_LOCATIONS: the server reads nothing else it is pointed at."""
    allowed = [prefix for prefix in settings.DATA_LOCATIONS if prefix]
    if not allowed:
        return ["reading from a location is not enabled on this server (DATA_LOCATIONS)"]
    if not any(_location_under(location, prefix) for prefix in allowed):
        return [f"must be under one of: {', '.join(allowed)}"]
    return []


def _location_under(location: str, allowed: str) -> bool:
    """Whether ``location`` is ``allowed`` or inside it: same URL scheme and host, and a path whose
    components start with the allowed path's (``/data/locations`` never admits
    ``/data/locations-evil/``; ``..`` and ``.`` components are refused outright)."""
    from urllib.parse import urlsplit

    where, root = urlsplit(location), urlsplit(allowed)
    if (where.scheme.lower(), where.netloc.lower()) != (root.scheme.lower(), root.netloc.lower()):
        return False
    if where.query or where.fragment or "\\" in location or "\x00" in location:
        return False
    parts = [part for part in where.path.split("/") if part]
    if any(part in (".", "..") for part in parts):
        return False
    base = [part for part in root.path.split("/") if part]
    absolute = where.path.startswith("/") == root.path.startswith("/")
    return absolute and parts[: len(base)] == base


def _location_problems(
    location: str, files: Mapping[str, Any], experiment_kind: str, catalogue_location: str
) -> list[str]:
    problems = _allowed_location_problems(location)
    if experiment_kind != Experiment.Kind.CHANGE:
        problems.append("a location gives the items of a change (item_id, base_cluster, exp_cluster)")
    if set(files) & {Kind.ITEMS, Kind.BASE, Kind.EXP, Kind.WEIGHTS}:
        problems.append("give the items either as a location or as uploaded files, not both")
    if Kind.CATALOGUE not in files and not catalogue_location:
        problems.append("a catalogue file (or location) is required")
    return problems + _format_problems(files)


def _engine_for(items_location: str, files: Mapping[str, Any]) -> str:
    """Dask for a location, and for Parquet items when a scheduler is configured or they are large."""
    if items_location:
        return Experiment.Engine.DASK
    items = files.get(Kind.ITEMS)
    if items is None or format_of(os.path.basename(items.name or "")) != "parquet":
        return Experiment.Engine.MEMORY
    if settings.DASK_SCHEDULER_ADDRESS or (items.size or 0) > settings.DASK_THRESHOLD_BYTES:
        return Experiment.Engine.DASK
    return Experiment.Engine.MEMORY


def _parameter_problems(
    *, name: Any, kind: Any, scheme: Any, n_draws: Any, diff_share: Any, replication: Any, seed: Any, confidence: Any
) -> dict[str, list[str]]:
    open_unit = "must be a number strictly between 0 and 1"
    checks = {
        "name": (isinstance(name, str) and bool(name.strip()), "a name is required"),
        "kind": (kind in Experiment.Kind.values, f"must be one of {', '.join(Experiment.Kind.values)}"),
        "scheme": (scheme in Experiment.Scheme.values, f"must be one of {', '.join(Experiment.Scheme.values)}"),
        "n_draws": (_is_int(n_draws) and 1 <= n_draws <= MAX_DRAWS, f"must be an integer from 1 to {MAX_DRAWS}"),
        "diff_share": (_is_real(diff_share) and 0 < diff_share < 1, open_unit),
        "replication": (
            _is_int(replication) and 1 <= replication <= MAX_REPLICATION,
            f"must be an integer from 1 to {MAX_REPLICATION}",
        ),
        "seed": (seed is None or (_is_int(seed) and 0 <= seed <= MAX_SEED), f"must be an integer from 0 to {MAX_SEED}"),
        "confidence": (_is_real(confidence) and 0 < confidence < 1, open_unit),
    }
    return {field: [problem] for field, (ok, problem) in checks.items() if not ok}


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
