"""The content of uploads checked while the request is handled, before an experiment exists.

The first rows of each file (``metrics_core.io.HEAD_ROWS`` rows, of a CSV file at most its first
``HEAD_BYTES``) are checked by the rules the preparation reads the whole file with
(``metrics_core.io.check_head``, ``catalogue_head_check``): headers and required columns (a
CSV separated by ';' is named as such), each column's type and values, and, where a file was
read whole, that it has what the others need (a catalogue row, a weight for each item of the
first rows). Every problem of every file is listed. A problem past the first rows is left to
the preparation, which fails the experiment with the file, line and problem.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.io import Head, InputError, check_head
from raterapp.models import Experiment, UploadedFile
from raterapp.services.preparation.catalogue import catalogue_head_check, catalogue_rows_for
from raterapp.services.preparation.item_labels import item_labels_fit_check

Kind = UploadedFile.Kind
TABLE_OF: dict[str, str] = {
    Kind.ITEMS: "items",
    Kind.BASE: "clustering",
    Kind.EXP: "clustering",
    Kind.GROUND_TRUTH: "clustering",
}
TABLE_OF[Kind.WEIGHTS] = "weights"


def upload_content_problems(*, files: Mapping[str, Any], kind: str) -> list[str]:
    """One message per problem found in the first rows of the uploads, each naming the kind,
    the file as the user named it, the line and the problem. ``files`` passed ``file_problems``."""
    with local_copies(files) as paths:
        names = {key: os.path.basename(files[key].name or "") for key in paths}
        heads = {key: check_head(path, table=TABLE_OF[key]) for key, path in paths.items() if key in TABLE_OF}
        catalogue = None
        if Kind.CATALOGUE in paths:
            heads[Kind.CATALOGUE], catalogue = catalogue_head_check(path=paths[Kind.CATALOGUE])
        found = [
            (key, error) for key in sorted(heads) for error in heads[key].problems or _label_problems(key, heads[key])
        ]
        found += _cross_problems(heads, catalogue, names, kind)
        return [f"{key}: {names[key]}{str(error)[len(error.path) :]}" for key, error in found]


# The Item field each column of a file is stored in.
STORED_AS: dict[str, dict[str, str]] = {
    Kind.ITEMS: {"item_id": "item_id", "base_cluster": "base_cluster", "exp_cluster": "exp_cluster"},
    Kind.BASE: {"item_id": "item_id", "cluster_id": "base_cluster"},
    Kind.EXP: {"item_id": "item_id", "cluster_id": "exp_cluster"},
}


def _label_problems(key: str, head: Head) -> list[InputError]:
    """Ids and cluster ids of a head that passed, too long for the database."""
    if key not in STORED_AS or head.source is None:
        return []
    columns = {field: _column(head.source.table, name) for name, field in STORED_AS[key].items()}
    try:
        item_labels_fit_check(path=head.path, columns=columns)
    except InputError as exc:
        return [exc]
    return []


def _column(table: pa.Table, name: str) -> pa.Array:
    values = table.column(name).combine_chunks()
    return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values


def _cross_problems(heads: dict[str, Head], catalogue, names: dict[str, str], kind: str) -> list:
    """What one file needs of another, where both heads passed and the other was read whole."""
    ids = _item_ids(heads, kind)
    if ids is None:
        return []
    found = []
    weights = heads.get(Kind.WEIGHTS)
    if weights is not None and weights.complete and weights.item_ids is not None:
        absent = pc.invert(pc.is_in(ids, value_set=weights.item_ids))
        if pc.any(absent).as_py():
            first = ids[pc.index(absent, True).as_py()].as_py()
            found.append((Kind.WEIGHTS, InputError(weights.path, f"no weight for item_id {first!r}")))
    if catalogue is not None and heads[Kind.CATALOGUE].complete:
        items = names[Kind.ITEMS if Kind.ITEMS in heads else Kind.BASE]
        try:
            catalogue_rows_for(catalogue=catalogue, item_ids=ids, items_path=items)
        except InputError as exc:
            found.append((Kind.CATALOGUE, exc))
    return found


def _item_ids(heads: dict[str, Head], kind: str) -> pa.Array | None:
    """The ids of the first rows that the preparation keeps as items (with Base and Exp: those in both)."""
    if Kind.ITEMS in heads:
        return heads[Kind.ITEMS].item_ids if not heads[Kind.ITEMS].problems else None
    clusterings = [Kind.BASE] if kind == Experiment.Kind.ABSOLUTE else [Kind.BASE, Kind.EXP]
    if any(key not in heads or heads[key].problems for key in clusterings):
        return None
    ids = cast(pa.Array, heads[Kind.BASE].item_ids)  # a head that passed has its ids
    if kind != Experiment.Kind.ABSOLUTE:
        ids = ids.filter(pc.is_in(ids, value_set=heads[Kind.EXP].item_ids))
    return ids


@contextmanager
def local_copies(files: Mapping[str, Any]) -> Iterator[dict[str, str]]:
    """A local path for each upload, ending in its extension: Django's temporary file where it
    wrote one, else a copy in a temporary folder removed on exit."""
    with tempfile.TemporaryDirectory(prefix="upload-check-") as folder:
        paths = {}
        for key, upload in files.items():
            extension = os.path.splitext(upload.name or "")[1].lower()
            if hasattr(upload, "temporary_file_path") and upload.temporary_file_path().lower().endswith(extension):
                paths[key] = upload.temporary_file_path()
                continue
            paths[key] = os.path.join(folder, key + extension)
            upload.seek(0)
            try:
                with open(paths[key], "wb") as target:
                    shutil.copyfileobj(upload, target, 1 << 20)
            finally:
                upload.seek(0)
        yield paths
