"""Human verdicts on item pairs, merged per unordered pair (abcde-spec §5).

Equivalence is symmetric, so a verdict on ``(i, j)`` also holds for ``(j, i)``. With
several raters on one pair (ours) the pair's value is the share of its non-unsure
verdicts that say *equivalent*; a pair with only *unsure* verdicts is unjudged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._sorting import unordered_pair_keys
from ._validation import as_1d, same_length

VERDICTS: tuple[str, ...] = ("equivalent", "not_equivalent", "unsure")
EQUIVALENT, NOT_EQUIVALENT, UNSURE = range(3)


@dataclass(frozen=True, eq=False)
class PairVerdicts:
    """Verdict counts per distinct unordered pair ``a < b`` (item positions), sorted."""

    a: np.ndarray
    b: np.ndarray
    equivalent: np.ndarray
    not_equivalent: np.ndarray
    unsure: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    def equivalent_share(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Share of equivalent verdicts of each pair ``{i, j}``; NaN where unjudged.

        Self pairs are always equivalent (1.0) and need no verdict.
        """
        return self.share_of_counts(i, j, self.counts(i, j))

    def share_of_counts(
        self, i: np.ndarray, j: np.ndarray, counts: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> np.ndarray:
        """:meth:`equivalent_share` from the pairs' :meth:`counts`, already looked up."""
        equivalent, not_equivalent, _ = counts
        return _share(np.asarray(i) == np.asarray(j), equivalent, equivalent + not_equivalent)

    def resolved_share(self, i: np.ndarray, j: np.ndarray, unsure_as: np.ndarray | float) -> np.ndarray:
        """:meth:`equivalent_share` had every *unsure* verdict said *equivalent* where ``unsure_as`` is 1
        and *not equivalent* where it is 0 (abcde-spec §12): unsure verdicts count as judged.
        """
        equivalent, not_equivalent, unsure = self.counts(i, j)
        resolved = equivalent + np.asarray(unsure_as, dtype=np.float64) * unsure
        return _share(np.asarray(i) == np.asarray(j), resolved, equivalent + not_equivalent + unsure)

    def counts(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Equivalent, not-equivalent and unsure verdicts of each pair ``{i, j}`` (0 for self pairs)."""
        # Counts are int64, or fractional where they carry a posterior (metrics_core.rater_aware).
        equivalent, not_equivalent, unsure = (
            np.zeros(len(np.asarray(i)), dtype=v.dtype) for v in (self.equivalent, self.not_equivalent, self.unsure)
        )
        out = (equivalent, not_equivalent, unsure)
        row = self.rows_of(i, j)
        found = np.flatnonzero(row >= 0)
        for column, values in zip(out, (self.equivalent, self.not_equivalent, self.unsure)):
            column[found] = values[row[found]]
        return out

    def rows_of(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The row of each pair ``{i, j}`` in these verdicts (int64), -1 for a pair without one and a self pair.

        >>> v = verdicts_from_judgements([3, 1], [1, 2], ["equivalent", "unsure"])
        >>> v.rows_of([1, 3, 2, 4, 1], [3, 1, 1, 4, 4]).tolist()
        [1, 1, 0, -1, -1]
        """
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        if len(self.a) == 0:
            return np.full(len(i), -1, dtype=np.int64)
        n = int(max(self.b.max(), i.max(initial=0), j.max(initial=0))) + 1
        known = self.a * n + self.b
        wanted = unordered_pair_keys(i, j, n)
        # Searching in sorted order walks the keys once: 2x faster on a million pairs than in any order.
        order = np.argsort(wanted)
        index = np.empty(len(wanted), dtype=np.int64)
        index[order] = np.minimum(np.searchsorted(known, wanted[order]), len(known) - 1)
        found = (known[index] == wanted) & (i != j)
        return np.where(found, index, -1)


def _share(is_self: np.ndarray, equivalent: np.ndarray, verdicts: np.ndarray) -> np.ndarray:
    share = np.full(len(is_self), np.nan)
    usable = verdicts > 0
    share[usable] = equivalent[usable] / verdicts[usable]
    share[is_self] = 1.0
    return share


def verdicts_from_judgements(i: Any, j: Any, verdict: Any) -> PairVerdicts:
    """Count each pair's verdicts, whichever order its items were shown in.

    Parameters
    ----------
    i, j : array-like of int
        Item positions of each judgement.
    verdict : array-like
        Names from :data:`VERDICTS`, or their codes 0, 1, 2.

    Examples
    --------
    >>> v = verdicts_from_judgements([3, 1, 1], [1, 3, 2], ["equivalent", "unsure", "not_equivalent"])
    >>> v.a.tolist(), v.b.tolist(), v.equivalent.tolist(), v.unsure.tolist()
    ([1, 1], [2, 3], [0, 1], [0, 1])
    >>> v.equivalent_share([1, 3, 5], [3, 1, 5]).tolist()
    [1.0, 1.0, 1.0]
    """
    i, j = as_1d("i", i).astype(np.int64), as_1d("j", j).astype(np.int64)
    codes = verdict_codes_of(as_1d("verdict", verdict))
    same_length(i=i, j=j, verdict=codes)
    keep = i != j
    i, j, codes = i[keep], j[keep], codes[keep]
    if len(i) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return PairVerdicts(empty, empty, empty, empty, empty)
    n = int(max(i.max(), j.max())) + 1
    pairs, pair_of_row = np.unique(unordered_pair_keys(i, j, n), return_inverse=True)
    counts = [np.bincount(pair_of_row[codes == c], minlength=len(pairs)) for c in range(3)]
    return PairVerdicts(pairs // n, pairs % n, *counts)


def verdict_codes_of(verdict: np.ndarray) -> np.ndarray:
    if verdict.dtype.kind in "iu":
        codes = verdict.astype(np.int8)
    else:
        lookup = {name: code for code, name in enumerate(VERDICTS)}
        codes = np.array([lookup.get(v, -1) for v in verdict.tolist()], dtype=np.int8)
    bad = (codes < 0) | (codes > 2)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"verdict[{k}] = {verdict.tolist()[k]!r}: must be one of {', '.join(VERDICTS)}")
    return codes
