"""Read and write metrics_core tables: CSV (header row required) or Parquet, all or nothing.

Conventions:

- The format is chosen by the file extension, ``.csv`` or ``.parquet``.
- CSV cells are read as text, with no type inference, so ``"007"`` and ``"7"`` stay
  distinct ids and a column never fails to convert halfway through a file.
- Ids keep their type where they are checked and matched (item ids of items and
  clusterings files, cluster ids): a Parquet file's integers stay integers, and a CSV
  column whose every cell is the canonical decimal of an int64 is read as int64
  (:mod:`.integer_text`), as the same column in Parquet, losing nothing. Duplicate
  checks and the matching of items across files are integer kernels then
  (:mod:`.id_positions`); text ids are hashed by Arrow. Item ids are written to
  outputs as text, as before, and messages name an id by its text.
- A reader returns a fully validated table or raises :class:`InputError`; nothing is
  returned half-loaded. Its message is one line naming the file as the user gave
  it, the place and the problem: ``"items.csv: line 7: duplicate item_id 'a' (first
  on line 3)"``. CSV places are lines as an editor shows them (the header is line
  1); Parquet places are 1-based rows.
- Checks are vectorised (pyarrow/numpy); where the first offender is, is worked out
  only on the error path.
- :func:`write_tables` writes every file or none: each goes to a temporary file in
  the target folder first and is moved into place with ``os.replace``.
"""

from .catalogue import CatalogueTable, read_catalogue
from .errors import InputError
from .formats import check_output_path, format_of, write_table, write_tables
from .heads import HEAD_BYTES, HEAD_ROWS, Head, check_head, head_checked
from .scores import ScoresTable, read_scores, read_scores_for_pairs, write_scores
from .source import TableSource
from .tables import (
    FORMULA_START,
    ItemTable,
    JudgementsTable,
    PairsTable,
    read_clustering_against_singletons,
    read_clusterings,
    read_gold_labels,
    read_items,
    read_judgements,
    read_pairs,
    read_truth_and_prediction,
    unquote_spreadsheet_text,
)

__all__ = [
    "FORMULA_START",
    "HEAD_BYTES",
    "HEAD_ROWS",
    "Head",
    "check_head",
    "head_checked",
    "CatalogueTable",
    "InputError",
    "check_output_path",
    "ItemTable",
    "JudgementsTable",
    "PairsTable",
    "ScoresTable",
    "TableSource",
    "format_of",
    "read_clustering_against_singletons",
    "read_clusterings",
    "read_gold_labels",
    "read_items",
    "read_judgements",
    "read_pairs",
    "read_catalogue",
    "read_scores",
    "read_scores_for_pairs",
    "read_truth_and_prediction",
    "unquote_spreadsheet_text",
    "write_table",
    "write_scores",
    "write_tables",
]
