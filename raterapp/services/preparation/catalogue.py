"""The item catalogue of an experiment: what raters see of each item, and its slice attributes.

Columns: ``item_id`` and ``title`` (required), ``description``, ``image_url`` and ``url``
(optional); every further column is an attribute, kept as text for slicing. The file is
read by metrics_core.io, so its errors are the same one line ``file: line: problem`` as
those of the clustering files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from django.conf import settings

# metrics_core.io exposes readers of its own tables only; its column checks are what a
# catalogue needs too, so they are reused here rather than written a second time.
from metrics_core.io import HEAD_BYTES, HEAD_ROWS, Head, InputError, ItemTable, TableSource, head_checked

CARD_COLUMNS = ("title", "description", "image_url", "url")
# Names the population file and the impact dimensions use for themselves.
RESERVED_COLUMNS = ("base_cluster", "exp_cluster", "weight", "base", "exp")


@dataclass(frozen=True, eq=False)
class Catalogue:
    """Validated catalogue rows: ids, card fields ('' where absent) and text attributes."""

    path: str
    item_id: pa.Array
    cards: Mapping[str, pa.Array]
    attributes: Mapping[str, pa.Array]

    def __len__(self) -> int:
        return len(self.item_id)


def catalogue_read(*, path: str) -> Catalogue:
    """Read and validate a catalogue file (CSV or Parquet). Raises :class:`InputError`."""
    src = TableSource.open(path, required=("item_id", "title"), optional=CARD_COLUMNS[1:], keep_others=True)
    return _catalogue_of(src, _catalogue_ids(src))


def catalogue_head_check(
    *, path: str, rows: int = HEAD_ROWS, max_bytes: int = HEAD_BYTES
) -> tuple[Head, Catalogue | None]:
    """The first rows of a catalogue file checked as :func:`catalogue_read` checks the whole
    file (see ``metrics_core.io.check_head``), and the catalogue of them when they pass."""
    built: list[Catalogue] = []

    def checks(src: TableSource) -> list:
        def rest() -> None:
            try:
                ids = _catalogue_ids(src)
            except InputError:
                return  # listed by the first check; the rest needs valid ids
            built.append(_catalogue_of(src, ids))

        return [lambda: _catalogue_ids(src), rest]

    head = head_checked(
        path,
        required=("item_id", "title"),
        optional=CARD_COLUMNS[1:],
        keep_others=True,
        checks=checks,
        rows=rows,
        max_bytes=max_bytes,
    )
    return head, (built[0] if built and not head.problems else None)


def _catalogue_ids(src: TableSource) -> pa.Array:
    item_id = src.ids("item_id")
    src.require_unique("item_id", item_id)
    return item_id


def _catalogue_of(src: TableSource, item_id: pa.Array) -> Catalogue:
    path = src.path
    others = [name for name in src.names if name != "item_id" and name not in CARD_COLUMNS]
    _require_unreserved(path, others)
    cards = {
        name: pc.fill_null(_text(src, name), "") if name in src.names else pa.repeat("", src.n_rows)
        for name in CARD_COLUMNS
    }
    attributes = {name: _text(src, name) for name in others}
    for name, values in {**cards, **attributes}.items():
        src.require_no_nul(name, values)
        _require_short(name, values, lambda problem, row: src.error(problem, row=row))
    return Catalogue(str(path), item_id, cards, attributes)


def catalogue_location_check(*, location: str) -> None:
    """The catalogue at a location has the required columns and no reserved one (its schema only)."""
    names = _dataset(location).schema.names
    missing = [name for name in ("item_id", "title") if name not in names]
    if missing:
        found = ", ".join(repr(name) for name in names)
        raise InputError(location, f"missing column {', '.join(map(repr, missing))} (columns found: {found})")
    _require_unreserved(location, [name for name in names if name != "item_id" and name not in CARD_COLUMNS])


def catalogue_read_for(*, location: str, item_ids: pa.Array) -> Catalogue:
    """The rows of ``item_ids`` in the Parquet catalogue at ``location`` (a folder, file or fsspec URL),
    read with a filter so that a catalogue of any size costs the sampled rows only."""
    import pyarrow.dataset as ds

    catalogue_location_check(location=location)
    dataset = _dataset(location)
    wanted = item_ids.cast(pa.string())
    try:
        table = dataset.to_table(filter=ds.field("item_id").cast(pa.string()).isin(wanted))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise InputError(location, f"cannot read the catalogue: {exc}") from None
    ids = _as_text(location, "item_id", table.column("item_id").combine_chunks())
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise InputError(location, f"duplicate item_id {repeated[0].as_py()!r}")
    names = table.column_names
    cards = {
        name: pc.fill_null(_as_text(location, name, table.column(name).combine_chunks()), "")
        if name in names
        else pa.repeat("", table.num_rows)
        for name in CARD_COLUMNS
    }
    others = [name for name in names if name != "item_id" and name not in CARD_COLUMNS]
    attributes = {name: _as_text(location, name, table.column(name).combine_chunks()) for name in others}
    for name, values in {"item_id": ids, **cards, **attributes}.items():
        if pc.any(pc.match_substring(values, "\x00")).as_py():
            raise InputError(location, f"{name} holds a NUL character (\\x00)")
        _require_short(name, values, lambda problem, row: InputError(location, f"{problem} (item_id {ids[row]})"))
    return Catalogue(location, ids, cards, attributes)


def _dataset(location: str):
    import fsspec
    import pyarrow.dataset as ds

    try:
        filesystem, path = fsspec.core.url_to_fs(location)
        return ds.dataset(path, filesystem=filesystem, format="parquet")
    except (OSError, ValueError, pa.ArrowInvalid) as exc:
        raise InputError(location, f"cannot read Parquet: {exc}") from None


def catalogue_rows_for(*, catalogue: Catalogue, item_ids: pa.Array, items_path: str) -> np.ndarray:
    """The catalogue row of each item id (int64); :class:`InputError` naming the first id missing."""
    value_set = catalogue.item_id if catalogue.item_id.type == item_ids.type else catalogue.item_id.cast(item_ids.type)
    rows = pc.index_in(item_ids, value_set=value_set)
    if rows.null_count:
        first = pc.index(pc.is_null(rows), True).as_py()
        raise InputError(catalogue.path, f"no row for item_id {item_ids[first].as_py()!r} of {items_path}")
    return rows.to_numpy(zero_copy_only=False).astype(np.int64)


def catalogue_attributes_for(*, catalogue: Catalogue, rows: np.ndarray, items: ItemTable) -> dict[str, pa.Array]:
    """The slice attributes of the items: the items file's extra columns, then the catalogue's.

    Raises :class:`InputError` when a name is reserved or in both files.
    """
    from_items = {name: _as_text(items.path, name, values) for name, values in items.attributes.items()}
    _require_unreserved(items.path, list(from_items))
    both = [name for name in catalogue.attributes if name in from_items]
    if both:
        raise InputError(catalogue.path, f"column {both[0]!r} is also in {items.path}: rename one of them")
    indices = pa.array(rows)
    return {**from_items, **{name: values.take(indices) for name, values in catalogue.attributes.items()}}


def catalogue_cards_at(*, catalogue: Catalogue, rows: np.ndarray) -> dict[str, list[str]]:
    """The card fields of the given catalogue rows, one list per card column."""
    indices = pa.array(rows)
    return {name: values.take(indices).to_pylist() for name, values in catalogue.cards.items()}


def _require_short(name: str, values: pa.Array, error) -> None:
    """No text longer than UPLOAD_MAX_FIELD_CHARS; ``error(problem, row)`` makes the InputError."""
    limit = settings.UPLOAD_MAX_FIELD_CHARS
    lengths = pc.utf8_length(values)
    if len(values) and (pc.max(lengths).as_py() or 0) > limit:
        row = pc.index(pc.greater(lengths, limit), True).as_py()
        length = lengths[row].as_py()
        raise error(f"{name} is {length:,} characters long, more than {limit:,} (UPLOAD_MAX_FIELD_CHARS)", row)


def _require_unreserved(path: str, names: list[str]) -> None:
    reserved = [name for name in names if name in RESERVED_COLUMNS]
    if reserved:
        raise InputError(path, f"column {reserved[0]!r} is reserved: rename it")


def _text(src: TableSource, name: str) -> pa.Array:
    column = src.table.column(name)
    return _as_text(src.path, name, column.combine_chunks() if column.num_chunks != 1 else column.chunk(0))


def _as_text(path: str, name: str, values: pa.Array) -> pa.Array:
    """Text values, nulls kept; lists, structs and binary columns are refused."""
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return values
    if pa.types.is_binary(values.type) or pa.types.is_nested(values.type):
        raise InputError(path, f"column {name!r} has type {values.type}; expected text")
    try:
        return pc.cast(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(path, f"column {name!r} has type {values.type}; expected text") from None
