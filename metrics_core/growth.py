"""What another batch of draws is expected to bring (abcde-spec §10): new pairs and their verdicts.

Draws are i.i.d., so the chance that the next draw hits a pair no draw has hit yet is the
sample's missing mass, which the Good–Turing estimator gives from the pairs drawn exactly once:
``P(new) ≈ N₁ / n`` (Good 1953). Only new unordered non-self pairs become tasks (a self pair
needs no verdict; a pair drawn again only adds a draw), so a batch of ``S`` draws is expected to
bring about ``S · N₁ / n`` tasks, each wanting ``replication`` verdicts. This holds while ``S``
is not much larger than ``n``, and errs high after that (the missing mass shrinks as the new
draws fill it), which keeps the plan on the side of caution.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ._sorting import unordered_pair_keys
from .masses import SELF
from .sampling import PairSample


@dataclass(frozen=True)
class BatchExpectation:
    """What a batch of ``draws`` more draws is expected to add."""

    draws: int
    new_pair_share: float  # Good–Turing missing mass of the unordered non-self pairs
    new_pairs: float
    verdicts: float
    cost: float

    def as_dict(self) -> dict:
        return asdict(self)


def batch_expectation(
    *, new_pair_share: float, draws: int, replication: int, cost_per_verdict: float = 0.0
) -> BatchExpectation:
    """Expected new tasks, verdicts and cost of another batch of ``draws`` draws.

    Parameters
    ----------
    new_pair_share : float
        The chance that a draw is a new unordered non-self pair (:func:`new_pair_share`).
    draws : int
        Draws of the batch.
    replication : int
        Verdicts wanted per pair.
    cost_per_verdict : float
        Price of one verdict.

    Examples
    --------
    Ten draws: pairs {0,1} and {0,2} once each, {1,2} three times, self pairs five times.

    >>> import numpy as np
    >>> from metrics_core import PairSample
    >>> s = PairSample("jaccard", np.array([0, 0, 1, 2, 0]), np.array([1, 2, 2, 1, 0]),
    ...                np.array([1, 1, 1, 1, 0]), np.zeros(5, dtype=int), np.array([1, 1, 2, 1, 5]))
    >>> e = batch_expectation(new_pair_share=new_pair_share(s), draws=100, replication=2, cost_per_verdict=0.5)
    >>> e.new_pair_share, e.new_pairs, e.verdicts, e.cost
    (0.2, 20.0, 40.0, 20.0)
    """
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 0:
        raise ValueError(f"draws must be a non-negative whole number, got {draws!r}")
    if isinstance(replication, bool) or not isinstance(replication, (int, np.integer)) or replication < 1:
        raise ValueError(f"replication must be a positive whole number, got {replication!r}")
    if not (math.isfinite(cost_per_verdict) and cost_per_verdict >= 0):
        raise ValueError(f"cost_per_verdict must be a non-negative number, got {cost_per_verdict!r}")
    share = float(new_pair_share)
    if not (math.isfinite(share) and 0.0 <= share <= 1.0):
        raise ValueError(f"new_pair_share must be in [0, 1], got {new_pair_share!r}")
    new_pairs = float(draws) * share
    verdicts = new_pairs * int(replication)
    return BatchExpectation(int(draws), share, new_pairs, verdicts, verdicts * float(cost_per_verdict))


def new_pair_share(sample: PairSample) -> float:
    """Good–Turing estimate of the chance that the next draw is a new unordered non-self pair
    (``nan`` for an empty sample)."""
    total = sample.n_draws
    if total == 0:
        return math.nan
    keep = sample.pair_class != SELF
    i, j = sample.i[keep], sample.j[keep]
    if len(i) == 0:
        return 0.0
    _, unit = np.unique(unordered_pair_keys(i, j, int(max(i.max(), j.max())) + 1), return_inverse=True)
    per_pair = np.bincount(unit, weights=sample.draws[keep])
    return new_pair_share_from_counts(pairs_drawn_once=int(np.count_nonzero(per_pair == 1)), draws=total)


def new_pair_share_from_counts(*, pairs_drawn_once: int, draws: int) -> float:
    """Good–Turing's missing mass ``N₁ / n`` from the number of unordered non-self pairs drawn
    exactly once and the number of draws (``nan`` without draws).

    >>> new_pair_share_from_counts(pairs_drawn_once=30, draws=200)
    0.15
    """
    if pairs_drawn_once < 0 or draws < 0 or pairs_drawn_once > draws:
        raise ValueError(f"need 0 <= pairs_drawn_once <= draws, got {pairs_drawn_once} and {draws}")
    return math.nan if draws == 0 else pairs_drawn_once / draws
