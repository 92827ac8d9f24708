"""CATALOGUE files for ``score``: the items' cards, as the app's catalogue upload has them.

Columns ``item_id`` and ``title`` (required), ``description``, ``image_url`` and ``url``
(optional); every further column is an attribute. Card fields and attributes are read as text
(numbers as their text; a missing value is an empty one). The app's own reader
(``raterapp/services/preparation/catalogue.py``) checks the same columns and adds its upload
limits (field length, reserved names), which a file scored here need not meet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InputError
from .id_positions import positions_of_ids
from .source import TableSource, as_string, combined_array

CATALOGUE_CARD_COLUMNS = ("title", "description", "image_url", "url")


@dataclass(frozen=True, eq=False)
class CatalogueTable:
    """Validated catalogue rows: ids in their type, card fields ('' where absent) and text attributes."""

    path: str
    ids: pa.Array
    cards: Mapping[str, pa.Array]
    attributes: Mapping[str, pa.Array]

    def __len__(self) -> int:
        return len(self.ids)

    def positions_of(self, ids: Any) -> np.ndarray:
        """Position of each id (text, or integers) among the items, -1 where unknown (int64);
        as ``ItemTable.positions_of``: integer ids are looked up as integers, ``007`` is not ``7``."""
        return positions_of_ids(ids, self.ids, lambda: as_string(self.ids))


def read_catalogue(path: Any) -> CatalogueTable:
    """Read and validate a catalogue: unique non-empty ``item_id``, a ``title`` column, text fields.

    Raises :class:`InputError` naming the file, the line and the problem.
    """
    src = TableSource.open(path, required=("item_id", "title"), optional=CATALOGUE_CARD_COLUMNS[1:], keep_others=True)
    ids = src.ids("item_id", as_text=False)
    src.require_unique("item_id", ids)
    cards = {name: _text(src, name) for name in CATALOGUE_CARD_COLUMNS if name in src.names}
    others = [name for name in src.names if name != "item_id" and name not in CATALOGUE_CARD_COLUMNS]
    return CatalogueTable(src.path, ids, cards, {name: _text(src, name) for name in others})


def _text(src: TableSource, name: str) -> pa.Array:
    """A column as text, nulls as ''; lists, structs and binary columns are refused."""
    values = combined_array(src.table.column(name))
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        if pa.types.is_binary(values.type) or pa.types.is_nested(values.type):
            raise InputError(src.path, f"column {name!r} has type {values.type}; expected text")
        try:
            values = as_string(values)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(src.path, f"column {name!r} has type {values.type}; expected text") from None
    return pc.fill_null(values, "")
