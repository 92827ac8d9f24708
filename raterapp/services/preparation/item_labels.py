"""Ids and cluster ids must fit the database columns they are stored in (``Item``)."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.io import InputError
from raterapp.db.fields import max_length_of
from raterapp.models import Item


def item_labels_fit_check(*, path: str, columns: Mapping[str, pa.Array]) -> None:
    """``columns`` by the ``Item`` field they are stored in (``item_id``, ``base_cluster``,
    ``exp_cluster``); :class:`InputError` naming the first value longer than its field."""
    for column, values in columns.items():
        limit = max_length_of(Item, column)
        if pa.types.is_integer(values.type):
            continue
        too_long = pc.greater(pc.utf8_length(values), limit)
        if pc.any(too_long).as_py():
            value = values[pc.index(too_long, True).as_py()].as_py()
            raise InputError(path, f"{column} {value[:40]!r}... is longer than {limit} characters")
