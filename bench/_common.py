"""What the benchmarks share: the synthetic clusterings they measure on, their common arguments,
and timing, memory and output helpers. Imported by name from the scripts in this folder
(``python bench/x.py`` puts the folder first on the path)."""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

import numpy as np

ID_KINDS = "int-dense,int-random64,string"


def moved_and_merged(
    base: np.ndarray, n_clusters: int, rng: np.random.Generator, *, moved: float, merged: float
) -> np.ndarray:
    """Exp from Base: a ``moved`` share of the items moved to random clusters, then a ``merged``
    share of the clusters merged into random others (so cluster counts differ)."""
    exp = base.copy()
    moving = rng.random(len(base)) < moved
    exp[moving] = rng.integers(0, n_clusters, int(moving.sum()))
    merging = rng.random(n_clusters) < merged
    target = rng.integers(0, n_clusters, n_clusters)
    return np.where(merging[exp], target[exp], exp)


def make_codes(
    n_items: int, n_clusters: int, rng: np.random.Generator, *, moved: float = 0.10, merged: float = 0.02
) -> tuple[np.ndarray, np.ndarray]:
    """Base clusters of random sizes; Exp moves 10% of items and merges 2% of clusters by default."""
    base = rng.integers(0, n_clusters, n_items)
    return base, moved_and_merged(base, n_clusters, rng, moved=moved, merged=merged)


def id_names(kind: str, n_clusters: int, rng: np.random.Generator) -> np.ndarray | None:
    """Cluster ids of one kind (``ID_KINDS``) by code: None for dense integers (the codes themselves)."""
    if kind == "int-dense":
        return None
    if kind == "int-random64":
        return rng.choice(np.iinfo(np.int64).max, size=n_clusters, replace=False)
    return np.array([f"cluster-{k:08x}" for k in rng.permutation(n_clusters)], dtype=object)


def as_ids(codes: np.ndarray, names: np.ndarray | None) -> np.ndarray:
    """The same clustering with the ids of ``id_names``."""
    return codes if names is None else names[codes]


def parser(doc: str | None) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_clustering_arguments(parser: argparse.ArgumentParser, *, items: int, clusters: int) -> None:
    """The size of the synthetic clustering, its id kinds, the seed, rounds and memory warm-up."""
    parser.add_argument("--items", type=int, default=items)
    parser.add_argument("--clusters", type=int, default=clusters)
    parser.add_argument("--kinds", default=ID_KINDS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-gib", type=float, default=4.0, help="memory to touch once before timing")


def warm_up(gib: float) -> None:
    """Touch memory once: on a VM, memory the guest never used is faulted in from the host
    at a few hundred MB/s, a cost a long-running worker pays once, not per computation."""
    block = np.ones(int(gib * 2**30 / 8))
    del block


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def peak_mib(function, *args, **kwargs) -> int:
    """Peak traced memory of one call (tracemalloc traces numpy's buffers), in a pass of its own:
    tracing slows allocation, so timings are taken without it."""
    tracemalloc.start()
    try:
        function(*args, **kwargs)
        return round(tracemalloc.get_traced_memory()[1] / 2**20)
    finally:
        tracemalloc.stop()


def emit(**figures) -> None:
    print(json.dumps(figures), flush=True)
