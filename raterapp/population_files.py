"""The normalised population of an experiment: one Parquet file in the media storage.

The one module that reads and writes these files, and the one cache of what a process derives
from them (:class:`ExperimentCache`; services write the files, selectors and services read them).

Columns ``item_id, base_cluster, exp_cluster, weight`` and then the slice attributes (text);
the storage must be a file system (readers map the file into memory).
Row k is the item at position k: ``Item.position`` and every position in metrics_core
index the rows of this file. The file is written once by the preparation and never
changed, so readers may cache what they load from it.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files.storage import default_storage

from metrics_core import Population
from metrics_core.io import InputError, ItemTable, write_table
from raterapp.models import Experiment

POPULATION_COLUMNS = ("item_id", "base_cluster", "exp_cluster", "weight")
# A population of 1M items takes well over 100 MB in memory: keep a few, not all.
CACHE_SIZE = 4


def population_storage_name(*, experiment_id: int) -> str:
    return f"experiments/{experiment_id}/population.parquet"


def population_write(*, experiment_id: int, columns: dict[str, Any]) -> str:
    """Write the population file (to a temporary name, then moved into place); returns its storage name.

    A failure to write is the server's problem, not the upload's: it is raised as
    ``OSError``, never as the :class:`InputError` shown to the user.
    """
    name = population_storage_name(experiment_id=experiment_id)
    path = default_storage.path(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        write_table(path, columns)
    except InputError as exc:
        raise OSError(f"cannot write the population of experiment {experiment_id}: {exc}") from exc
    return name


def population_delete(*, experiment_id: int) -> None:
    name = population_storage_name(experiment_id=experiment_id)
    if default_storage.exists(name):
        default_storage.delete(name)


def population_for_experiment(experiment: Experiment) -> tuple[np.ndarray, Population]:
    """The item ids (object array of str, read-only) and the population of a prepared experiment.

    Built exactly as ``metrics_core.io.read_items(...).to_population()`` builds it, so
    a sample drawn from it with a given seed is the sample metrics_core draws from the
    upload with that seed.
    """
    path = population_path(experiment)
    return _POPULATIONS.get_or_read(experiment, population_version(experiment), lambda: _population_load(path))


def population_version(experiment: Experiment) -> tuple[int, int, int]:
    """The population file's version: a file written again (a re-run) is another file."""
    stat = os.stat(population_path(experiment))
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def population_attributes(experiment: Experiment, *, positions: np.ndarray | None = None) -> dict[str, pa.Array]:
    """The slice attributes of every item, or of the items at ``positions``."""
    path = population_path(experiment)
    names = population_attribute_names(experiment)
    if not names:
        return {}
    table = pq.read_table(path, columns=names, memory_map=True)
    if positions is not None:
        table = table.take(pa.array(positions))
    return {name: table.column(name).combine_chunks() for name in names}


def population_attribute_names(experiment: Experiment) -> list[str]:
    """The names of the population file's slice-attribute columns, in file order."""
    return [name for name in pq.read_schema(population_path(experiment)).names if name not in POPULATION_COLUMNS]


def population_path(experiment: Experiment) -> str:
    if not experiment.population_file:
        raise ValueError(f"experiment {experiment.pk} has no population file yet (status {experiment.status})")
    return default_storage.path(experiment.population_file)


def _population_load(path: str) -> tuple[np.ndarray, Population]:
    table = pq.read_table(path, columns=list(POPULATION_COLUMNS), memory_map=True)
    item_id, base, exp = (table.column(name).combine_chunks() for name in POPULATION_COLUMNS[:3])
    weight = table.column("weight").to_numpy()
    population = ItemTable(path, item_id, base, exp, weight, {}).to_population()
    ids = item_id.to_numpy(zero_copy_only=False)
    ids.flags.writeable = False
    return ids, population


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A small least-recently-used mapping for what readers derive from a population file."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        if key not in self._items:
            return None
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.maxsize:
            self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        self._items.pop(key, None)

    def keys(self) -> list[K]:
        return list(self._items)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class ExperimentCache(Generic[V]):
    """What a process reads or derives from an experiment's population file and rows, kept for at
    most ``maxsize`` experiments (the least recently used make way).

    The one rule of invalidation: an entry is tagged with the versions it was read from (the
    experiment's creation time, since SQLite may reuse the id of a rolled-back row, and the
    ``version`` the reader gives: the file's, the sample's). A read that finds another tag reads
    again, and its value replaces the entry. Nothing else removes an entry."""

    def __init__(self, maxsize: int) -> None:
        self._entries: BoundedCache[int, tuple[Hashable, V]] = BoundedCache(maxsize)

    def get_or_read(self, experiment: Experiment, version: Hashable, read: Callable[[], V], *, keep: bool = True) -> V:
        """The value tagged ``version``, read by ``read()`` unless kept; ``keep=False`` reads without
        keeping (what is read may still change)."""
        tag = (experiment.created_at, version)
        entry = self._entries.get(experiment.pk)
        if entry is not None and entry[0] == tag:
            return entry[1]
        value = read()
        if keep:
            self._entries.put(experiment.pk, (tag, value))
        return value

    def experiments(self) -> list[int]:
        """The ids of the experiments kept, least recently used first."""
        return self._entries.keys()

    def __len__(self) -> int:
        return len(self._entries)


_POPULATIONS: ExperimentCache[tuple[np.ndarray, Population]] = ExperimentCache(CACHE_SIZE)
