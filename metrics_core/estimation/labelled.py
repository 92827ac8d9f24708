"""Which classes' labelled draws each estimate rests on (abcde-spec §14), for reporting ``labelled_draws``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..masses import INTERSECTION, MERGE, SELF, SPLIT
from ..sampling import PairSample

_EVERY = (SELF, SPLIT, MERGE, INTERSECTION)
_SPLIT, _MERGE, _DIFF = (SPLIT,), (MERGE,), (SPLIT, MERGE)

# The pair classes whose draws each metric is estimated from; any other metric (ΔPrecision,
# ΔRecall, IQ) rests on every class.
METRIC_CLASSES: dict[str, tuple[int, ...]] = {
    "GoodSplitDistance": _SPLIT,
    "BadSplitDistance": _SPLIT,
    "GoodSplitRate": _SPLIT,
    "BadSplitRate": _SPLIT,
    "GoodMergeDistance": _MERGE,
    "BadMergeDistance": _MERGE,
    "GoodMergeRate": _MERGE,
    "BadMergeRate": _MERGE,
    "GoodDistance": _DIFF,
    "BadDistance": _DIFF,
    "GoodMinusBadDistance": _DIFF,
    # Self pairs are known, not judged: the index's labelled draws are the intersection's.
    "AffectedGoodIndex": (INTERSECTION,),
    "AffectedBadIndex": (INTERSECTION,),
}


def labelled_draws_by_metric(sample: PairSample, labelled_draws: Any, metrics: Iterable[str]) -> dict[str, int]:
    """Each metric's labelled draws: the sum of ``labelled_draws`` over the rows of its classes.

    Examples
    --------
    >>> s = PairSample("jaccard", np.array([0, 0, 1]), np.array([0, 1, 2]),
    ...                np.array([SELF, SPLIT, MERGE], dtype=np.int8), np.zeros(3, dtype=np.int8), np.array([3, 2, 2]))
    >>> labelled_draws_by_metric(s, [3, 1, 0], ["GoodSplitRate", "GoodDistance", "DeltaPrecision"])
    {'GoodSplitRate': 1, 'GoodDistance': 1, 'DeltaPrecision': 4}
    """
    per_class = np.bincount(sample.pair_class.astype(np.int64), weights=np.asarray(labelled_draws), minlength=4)
    return {name: int(per_class[list(METRIC_CLASSES.get(name, _EVERY))].sum()) for name in metrics}
