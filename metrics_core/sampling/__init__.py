"""Weighted two-stage sampling of item pairs, with replacement (abcde-spec §3-4; JDD §7).

The pair population (affected vantage item ``i``, partner ``j`` in Base(i) ∪ Exp(i))
grows with the square of cluster sizes and is never materialised. Each scheme gives
every pair a sampling weight (:mod:`metrics_core.masses`). A draw picks

1. the vantage item ``i`` in proportion to its total mass in the stratum, which is
   w_i times a factor of its cell: a cell, then an item of it ∝ weight;
2. a class in proportion to ``i``'s mass of that class;
3. the partner ``j`` in proportion to its weight within that class's set:
   ``split`` = a cell of Base(i) other than i's own ∝ its weight, then an item of it;
   ``merge`` likewise in Exp(i); ``intersection`` = i's cell minus i; ``self`` = i.

Each step is a binary search in a cumulative weight array of a sorted layout of the
cells and items the draws touch (:mod:`metrics_core._layout`): one O(N) pass over the
items' cell codes, then O(log N) a draw, memory O(N + S).

:mod:`.coupling` draws a sample coupled to an earlier one (maximal coupling, draw by draw): the
same distribution as :func:`sample_pairs`, keeping the earlier draws as often as that allows.
"""

from .batches import batch_order_rng, batch_rng, concatenate_samples
from .core import (
    ALL,
    DIFF,
    PAIR_CLASSES,
    SCHEME_STRATA,
    SCHEMES,
    STABLE,
    STRATA,
    PairSample,
    SampleError,
    pair_classes_of,
)
from .coupling import (
    CoupledSample,
    CouplingError,
    couple_sample,
    coupling_rng,
    item_positions,
    pair_probabilities,
    sample_coupled,
)
from .draw import allocate_draws, pick_classes, sample_pairs
from .judging import jaccard_contributions, pairs_for_judgement
from .order import (
    draw_positions,
    first_positions,
    labelled_draws,
    labelled_of_batches,
    labelled_prefix,
    pairs_in_draw_order,
    waiting_verdicts,
)

__all__ = [
    "ALL",
    "CoupledSample",
    "CouplingError",
    "DIFF",
    "PAIR_CLASSES",
    "SCHEMES",
    "SCHEME_STRATA",
    "STABLE",
    "STRATA",
    "PairSample",
    "SampleError",
    "allocate_draws",
    "batch_order_rng",
    "batch_rng",
    "concatenate_samples",
    "couple_sample",
    "coupling_rng",
    "draw_positions",
    "first_positions",
    "item_positions",
    "jaccard_contributions",
    "labelled_draws",
    "labelled_of_batches",
    "labelled_prefix",
    "pair_classes_of",
    "pair_probabilities",
    "pairs_for_judgement",
    "pairs_in_draw_order",
    "pick_classes",
    "sample_coupled",
    "sample_pairs",
    "waiting_verdicts",
]
