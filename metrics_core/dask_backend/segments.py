"""Weighted draws inside segments of a distributed table, independent of its partitioning.

A *segment* is the set of rows sharing a key (a bucket of cells, a cluster's cells, a
cell's items). The rows of each segment are gathered in one place by a hash of the key
(a fixed function of the values, not of the partitions), sorted by a canonical order key
and given cumulative weights that start at 0 in every segment. A draw is then a request
``(segment key, u)`` answered with the row whose cumulative weight first exceeds ``u``
times the segment's total: the answer depends on the rows and ``u`` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask
import numpy as np
import pandas as pd
from dask.delayed import Delayed

from .._layout import bisect_segments

DRAW = "draw"  # the request's index, carried to its answer
SKIP_PREFIX = "skip_"  # request columns naming a row to leave out: skip_<order column>


def shared(value, *, broadcast: bool = False):
    """``value`` for tasks to read: scattered to the workers when the computation runs on
    ``dask.distributed`` (rather than shipped inside the task graph), else a delayed constant."""
    client = _distributed_client()
    if client is None:
        return dask.delayed(value)
    return client.scatter(value, broadcast=broadcast, hash=False)


def _distributed_client():
    """The client that computes, or None: a scheduler chosen in ``dask.config`` (``synchronous``,
    ``threads``) wins over a default client, and could not read its scattered data."""
    try:
        from distributed import Client
    except ImportError:
        return None
    client = getattr(dask.base.get_scheduler(), "__self__", None)
    return client if isinstance(client, Client) else None


def key_hash(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """A 64-bit hash of each row's values in ``columns`` (pandas' fixed-key SipHash)."""
    return pd.util.hash_pandas_object(frame[columns], index=False).to_numpy()


@dataclass(frozen=True)
class Segments:
    """Rows gathered into ``len(groups)`` groups by a hash of ``segment``, each group sorted
    by ``segment + order`` with per-segment cumulative ``weight`` in column ``cum``."""

    segment: list[str]
    order: list[str]
    weight: str
    groups: tuple[Delayed, ...]

    @classmethod
    def build(
        cls, parts: list[Delayed], *, segment: list[str], order: list[str], weight: str, n_groups: int
    ) -> Segments:
        """Gather the rows of the delayed frames ``parts`` (lazy; persist the result to reuse it)."""
        split = [dask.delayed(_split, nout=n_groups)(part, segment, n_groups) for part in parts]
        groups = tuple(
            dask.delayed(_gather)([pieces[g] for pieces in split], segment, order, weight) for g in range(n_groups)
        )
        return cls(segment, order, weight, groups)

    def persist(self) -> Segments:
        return Segments(self.segment, self.order, self.weight, tuple(dask.persist(*self.groups)))

    def totals(self) -> pd.DataFrame:
        """Total weight of every segment: ``segment`` columns and ``total``, sorted by segment."""
        parts = dask.compute(*(dask.delayed(_totals)(group, self.segment) for group in self.groups))
        return pd.concat(parts, ignore_index=True).sort_values(self.segment, kind="stable", ignore_index=True)

    def draw(self, requests: pd.DataFrame) -> pd.DataFrame:
        """Answer ``requests`` (``segment`` columns, ``u`` in [0, 1), ``draw``, optional ``skip_*``).

        Each answer is a row of the segment drawn ∝ ``weight`` (minus the row whose ``order``
        values equal the request's ``skip_*`` ones, where those are not null), with the
        request's ``draw``. Returns the answers sorted by ``draw``.
        """
        n_groups = len(self.groups)
        route = key_hash(requests, self.segment) % np.uint64(n_groups)
        tasks = []
        for g in range(n_groups):
            mine = requests[route == g]
            if len(mine):
                tasks.append(dask.delayed(_answer)(self.groups[g], shared(mine), self.segment, self.order, self.weight))
        answers = dask.compute(*tasks)
        return pd.concat(answers, ignore_index=True).sort_values(DRAW, ignore_index=True)


def _split(part: pd.DataFrame, segment: list[str], n_groups: int) -> tuple[pd.DataFrame, ...]:
    if n_groups == 1:
        return (part,)
    group = key_hash(part, segment) % np.uint64(n_groups)
    return tuple(part[group == g] for g in range(n_groups))


def _gather(pieces: list[pd.DataFrame], segment: list[str], order: list[str], weight: str) -> pd.DataFrame:
    frame = pd.concat(pieces, ignore_index=True).sort_values([*segment, *order], kind="stable", ignore_index=True)
    # A cumulative sum per segment, in the canonical order: the same floats wherever the rows came from.
    frame["cum"] = frame.groupby(segment, sort=False)[weight].cumsum()
    return frame


def _totals(frame: pd.DataFrame, segment: list[str]) -> pd.DataFrame:
    return frame.groupby(segment, sort=False)["cum"].last().rename("total").reset_index()


def _answer(frame: pd.DataFrame, requests: pd.DataFrame, segment: list[str], order: list[str], weight: str):
    position = np.arange(len(frame))
    bounds = (
        frame[segment]
        .assign(position=position)
        .groupby(segment, sort=False)["position"]
        .agg(["first", "last"])
        .reset_index()
    )
    asked = requests.merge(bounds, on=segment, how="left", validate="many_to_one")
    if asked["first"].isna().any():
        missing = asked[asked["first"].isna()].iloc[0]
        raise ValueError(f"no rows in segment {missing[segment].tolist()}: the request cannot be drawn")
    lo = asked["first"].to_numpy(np.int64)
    hi = asked["last"].to_numpy(np.int64) + 1
    cum = frame["cum"].to_numpy()
    w = frame[weight].to_numpy()
    u = asked["u"].to_numpy()
    skip_columns = [SKIP_PREFIX + name for name in order]
    skip = np.full(len(asked), -1, dtype=np.int64)
    if skip_columns[0] in asked.columns:
        wanted = asked[skip_columns[0]].notna().to_numpy()
        keys = asked.loc[wanted, [*segment, *skip_columns]]
        keys.columns = [*segment, *order]
        keys = keys.astype(frame[order].dtypes.to_dict())
        rows = frame[[*segment, *order]].assign(skip=position)
        skip[wanted] = keys.merge(rows, on=[*segment, *order], how="left", sort=False)["skip"].to_numpy(np.int64)
    chosen = _search(cum, w, lo, hi, skip, u)
    answer = frame.iloc[chosen].drop(columns=["cum"]).reset_index(drop=True)
    answer[DRAW] = asked[DRAW].to_numpy()
    return answer


def _search(cum: np.ndarray, w: np.ndarray, lo: np.ndarray, hi: np.ndarray, skip: np.ndarray, u: np.ndarray):
    """Positions drawn ∝ ``w`` within [lo, hi), minus position ``skip`` where it is >= 0."""
    has_skip = skip >= 0
    at = np.where(has_skip, skip, lo)
    skipped = np.where(has_skip, w[at], 0.0)
    before = np.where(has_skip & (at > lo), cum[np.maximum(at - 1, 0)], 0.0)
    total = cum[hi - 1]
    target = u * (total - skipped)
    after = has_skip & (target >= before)
    # Past the skipped row, cumulative weights include it: search from the next row on.
    target = np.where(after, target + skipped, target)
    start = np.where(after, at + 1, lo)
    stop = np.where(has_skip & ~after, at, hi)
    # The first position with a cumulative weight above the target (``not >``, so NaN never stops).
    position = bisect_segments(cum, start, stop, lambda value: ~(value > target))
    position = np.minimum(position, stop - 1)
    # Rounding at a segment's end can leave nothing after the skipped row: take the one before.
    position = np.where(after & (position < start), at - 1, position)
    return position
