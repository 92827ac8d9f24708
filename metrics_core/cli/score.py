"""``score``: the built-in card similarity (:mod:`metrics_core.similarity`) of every distinct pair of
PAIRS, written as a SCORES file for ``estimate --scores`` (abcde-spec §15)."""

from __future__ import annotations

import argparse

import numpy as np
import pyarrow as pa

from ..io import TableSource, check_output_path, unquote_spreadsheet_text
from ..io.catalogue import CatalogueTable, read_catalogue
from ..io.scores import starts_with_quote, write_scores
from ..similarity import card_similarity


def run_score(args: argparse.Namespace) -> dict:
    check_output_path(args.out)
    catalogue = read_catalogue(args.catalogue)
    src, i, j = _pair_ids(args.pairs)
    first = _positions(catalogue, src, "i", i)
    second = _positions(catalogue, src, "j", j)
    rows = _distinct_rows(first, second, len(catalogue))
    score = card_similarity(cards=catalogue.cards, attributes=catalogue.attributes, i=first[rows], j=second[rows])
    taken = pa.array(rows)
    write_scores(args.out, i=i.take(taken), j=j.take(taken), score=score)
    return {"pairs": len(rows), "out": args.out}


def _pair_ids(path: str) -> tuple[TableSource, pa.Array, pa.Array]:
    """The ``i`` and ``j`` ids of a PAIRS file (any table with those columns), read as ``read_pairs`` reads them."""
    src = TableSource.open(path, required=("i", "j"))
    i, j = src.ids("i"), src.ids("j")
    if src.kind == "csv":
        i, j = (unquote_spreadsheet_text(ids) if starts_with_quote(ids) else ids for ids in (i, j))
    return src, i, j


def _positions(catalogue: CatalogueTable, src: TableSource, column: str, ids: pa.Array) -> np.ndarray:
    positions = catalogue.positions_of(ids)
    unknown = np.flatnonzero(positions < 0)
    if len(unknown):
        row = int(unknown[0])
        raise src.error(f"{column} {ids[row].as_py()!r} is not an item_id of {catalogue.path}", row=row)
    return positions


def _distinct_rows(first: np.ndarray, second: np.ndarray, n_items: int) -> np.ndarray:
    """The first row of each unordered pair, in file order: ``(a, b)`` and ``(b, a)`` are one pair."""
    key = np.minimum(first, second) * np.int64(n_items) + np.maximum(first, second)
    _, rows = np.unique(key, return_index=True)
    if len(rows) == len(key):
        return np.arange(len(key))
    return np.sort(rows)
