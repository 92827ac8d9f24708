"""What an experiment is to be, checked: every parameter, and how it fits the uploads."""

from __future__ import annotations

import math
import numbers
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

from raterapp.db.fields import max_length_of
from raterapp.models import Experiment, UploadedFile, Workspace
from raterapp.services.experiments.budgets import MAX_REPLICATION
from raterapp.services.experiments.files import engine_for, file_problems, format_problems
from raterapp.services.experiments.locations import catalogue_location_problems, items_location_problems
from raterapp.services.experiments.upload_checks import upload_content_problems

Kind = UploadedFile.Kind
# Every distinct pair becomes rows and human work: beyond this a sample is a mistake.
MAX_DRAWS = 100_000
# seed + 1 orders the tasks, and both must fit a signed 64-bit column.
MAX_SEED = 2**63 - 2


@dataclass(frozen=True)
class ExperimentSpec:
    """The checked parameters of a new experiment; ``experiment_spec`` makes them."""

    name: str
    description: str
    kind: str
    items_location: str
    catalogue_location: str
    engine: str
    question: str | None
    guidelines: str
    scheme: str
    n_draws: int
    diff_share: float
    replication: int
    seed: int
    confidence: float
    workspace: str
    reuse_verdicts: bool
    rating_request: str = ""
    requested_verdicts: int | None = None


def experiment_spec(
    *,
    files: Mapping[str, Any],
    name: str,
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
    rating_request: str = "",
    requested_verdicts: int | None = None,
) -> ExperimentSpec:
    """Check the parameters of an experiment against each other and against its uploads.

    ``files`` maps kinds to files: ``catalogue`` always, and either ``items`` or ``base``
    and ``exp`` (with optional ``weights``); for the ``absolute`` kind, ``base`` (with
    optional ``weights``) only. A ``ground_truth`` clustering is optional for both kinds.
    ``items_location`` (partitioned Parquet under one of ``DATA_LOCATIONS``) replaces the
    items upload; such experiments, and Parquet items uploads when ``DASK_SCHEDULER_ADDRESS``
    is set or they are larger than ``DASK_THRESHOLD_BYTES``, are prepared on Dask. With an
    items location, ``catalogue_location`` (Parquet) may replace the catalogue upload: only the
    rows of the sampled items are read from it.
    ``workspace`` names the workspace (made if new) whose experiments share item ids and, under
    the same question, verdicts (abcde-spec §11); empty: one of its own. ``reuse_verdicts`` off:
    the experiment neither takes verdicts from it nor offers its own. No ``seed``: a random one.
    ``rating_request`` and ``requested_verdicts``: what the owner asks admins for (raters, a budget).
    Raises ``ValidationError`` keyed by field (``files`` for the uploads, every problem of their
    first rows listed: ``upload_checks``). What lies past the first rows is checked by the
    preparation, which reports a problem in ``Experiment.error``.
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
    workspace = (workspace or "").strip()
    if len(workspace) > max_length_of(Workspace, "name"):
        errors["workspace"] = ["a workspace name has at most 200 characters"]
    items_location = (items_location or "").strip()
    catalogue_location = (catalogue_location or "").strip()
    if items_location:
        problems = items_location_problems(items_location, files, kind, catalogue_location) + format_problems(files)
        if problems:
            errors["items_location"] = problems
        elif problems := upload_content_problems(files=files, kind=kind):
            errors["files"] = problems
    elif problems := file_problems(files, kind) or upload_content_problems(files=files, kind=kind):
        errors["files"] = problems
    if catalogue_location:
        if problems := catalogue_location_problems(catalogue_location, files, items_location):
            errors["catalogue_location"] = problems
    engine = engine_for(items_location, files) if not errors else Experiment.Engine.MEMORY
    if engine == Experiment.Engine.DASK and Kind.GROUND_TRUTH in files:
        errors["files"] = [
            "a ground-truth clustering needs the in-memory engine; this experiment would be prepared on Dask"
        ]
    rating_request = (rating_request or "").strip()
    if len(rating_request) > 2000:
        errors["rating_request"] = ["a request has at most 2000 characters"]
    if requested_verdicts is not None and not (_is_int(requested_verdicts) and 0 < requested_verdicts < 2**31):
        errors["requested_verdicts"] = ["ask for a whole number of verdicts, 1 or more, or leave it empty"]
    if errors:
        raise ValidationError(errors)
    return ExperimentSpec(
        name=name.strip(),
        description=description,
        kind=kind,
        items_location=items_location,
        catalogue_location=catalogue_location,
        engine=engine,
        question=question,
        guidelines=guidelines,
        scheme=scheme,
        n_draws=int(n_draws),
        diff_share=float(diff_share),
        replication=int(replication),
        seed=secrets.randbelow(MAX_SEED + 1) if seed is None else int(seed),
        confidence=float(confidence),
        workspace=workspace,
        reuse_verdicts=bool(reuse_verdicts),
        rating_request=rating_request,
        requested_verdicts=None if requested_verdicts is None else int(requested_verdicts),
    )


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
