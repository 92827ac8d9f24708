"""Two-stage weighted pair sampling on Dask (abcde-spec §3-4), reproducible from a seed
whatever the number of partitions or workers.

The schemes, strata and class masses are the in-memory backend's
(:mod:`metrics_core.sampling`, :mod:`metrics_core.masses`). A draw picks

1. a cell ∝ its vantage mass (its weight times the stratum factor of
   :func:`~metrics_core.masses.stratum_factor`): the S draws are allocated to a fixed number of
   *buckets* of cells (a hash of the cell's cluster ids) by an exact multinomial over the
   buckets' mass totals, then each bucket's draws land on its cells ∝ mass;
2. the vantage item ``i`` in that cell ∝ its weight;
3. the class ∝ ``i``'s class masses (:func:`~metrics_core.masses.item_class_masses`);
4. the partner ``j``: a cell of Base(i) (split) or Exp(i) (merge) other than i's own ∝ its
   weight, then an item of it ∝ weight; for intersection an item of i's cell other than i;
   for self, ``i``.

All randomness is drawn on the driver from ``rng``, in draw order: the multinomial, then
one uniform per draw and step. Workers only answer those uniforms inside segments whose
rows are sorted canonically with sums that start afresh in each segment
(:mod:`.segments`), and every weight they use is a canonical or exact sum (:mod:`.items`):
so the sample is a function of the data and the seed alone. Steps 2 and 4 read only the
items of the O(S) cells drawn (a hash filter of each partition), never the whole
population; the driver holds O(S + buckets) rows. Batch ``b`` of an experiment (abcde-spec
§10) is the sample drawn with ``rng=metrics_core.batch_rng(seed=K, batch=b)``, as in memory.
"""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd

from ..masses import INTERSECTION, MERGE, SELF, SPLIT, item_class_masses, stratum_factor
from ..sampling import PAIR_CLASSES, SCHEME_STRATA, STRATA, allocate_draws, pick_classes
from ..sampling.draw import sampling_arguments
from .items import KEYS, DaskItems, cell_mass_inputs, cell_sets
from .segments import DRAW, SKIP_PREFIX, Segments, key_hash, shared

PAIRS_COLUMNS: tuple[str, ...] = ("i", "j", "pair_class", "stratum", "draws", "scheme")
# A fixed number of buckets: the multinomial's categories must not depend on the partitioning.
N_BUCKETS = 4096
_MAX_GROUPS = 64
# What the class masses of a vantage item need from its cell (cell_sets and item_class_masses).
_VANTAGE_COLUMNS = (
    "cell_weight",
    "cell_size",
    "base_weight",
    "exp_weight",
    "set_split",
    "set_merge",
    "set_union",
    "affected",
)


def sample_pairs(
    items: DaskItems,
    *,
    rng: np.random.Generator,
    n_draws: int,
    scheme: str = "jaccard",
    diff_share: float = 0.5,
) -> pd.DataFrame:
    """Draw ``n_draws`` pairs with replacement, as :func:`metrics_core.sample_pairs` does.

    Returns the PAIRS table of the command line (metrics-cli.md): columns ``i, j`` (item
    ids), ``pair_class``, ``stratum``, ``draws`` (summing to ``n_draws``) and ``scheme``, one
    row per distinct ``(stratum, i, j)``, sorted by them (an example is in
    :mod:`metrics_core.dask_backend`).
    """
    n_draws, rng, diff_share = sampling_arguments(n_draws=n_draws, scheme=scheme, rng=rng, diff_share=diff_share)
    return pairs_table(
        scheme, draw_rows(items, scheme=scheme, allocation=allocate_draws(scheme, n_draws, diff_share), rng=rng)
    )


def draw_rows(items: DaskItems, *, scheme: str, allocation: dict[int, int], rng: np.random.Generator) -> pd.DataFrame:
    """The draws of :func:`sample_pairs` one by one: ``allocation`` maps each stratum to its number of
    draws. Columns ``i, j`` (item ids), ``pair_class``, ``stratum`` (codes) and ``draw``, in the draws'
    order: by stratum, then grouped by bucket (so not exchangeable: permute them before taking a prefix).
    """
    cells = items.cells
    n_groups = max(1, min(cells.npartitions, _MAX_GROUPS))
    vantage = []
    for stratum, count in allocation.items():
        chosen = _vantage_cells(cells, scheme, SCHEME_STRATA[scheme][stratum], count, rng, n_groups)
        vantage.append(chosen.assign(stratum=np.int8(stratum)))
    draws = pd.concat(vantage, ignore_index=True)
    draws[DRAW] = np.arange(len(draws))
    u_item, u_class, u_cell, u_partner = rng.random((4, len(draws)))

    i = _items_of_cells(items, draws[KEYS].assign(u=u_item, draw=draws[DRAW]), n_groups)
    draws["i"], draws["weight_i"] = i["item_id"].to_numpy(), i["weight"].to_numpy()
    weight_i = draws["weight_i"].to_numpy()
    masses = item_class_masses(scheme, **cell_mass_inputs(draws), weight=weight_i, total_weight=items.total_weight)
    pair_class = np.empty(len(draws), dtype=np.int8)
    for stratum in allocation:
        rows = draws["stratum"].to_numpy() == stratum
        pair_class[rows] = pick_classes(masses[rows], SCHEME_STRATA[scheme][stratum], u_class[rows])
    draws["pair_class"] = pair_class
    draws["j"] = _partners(items, draws, u_cell, u_partner, n_groups)
    return draws[["i", "j", "pair_class", "stratum", DRAW]]


def _vantage_cells(
    cells, scheme: str, classes: tuple[int, ...], count: int, rng: np.random.Generator, n_groups: int
) -> pd.DataFrame:
    """``count`` cells drawn ∝ weight × stratum factor: multinomial over buckets, then within them."""
    parts = [dask.delayed(_with_mass)(part, scheme, classes) for part in cells.to_delayed()]
    buckets = Segments.build(parts, segment=["bucket"], order=KEYS, weight="mass", n_groups=n_groups).persist()
    totals = buckets.totals()
    if totals.empty:
        raise ValueError("nothing to sample: no item is affected (Base and Exp are identical)")
    mass = totals["total"].to_numpy()
    per_bucket = rng.multinomial(count, mass / mass.sum())
    requests = pd.DataFrame({"bucket": np.repeat(totals["bucket"].to_numpy(), per_bucket)})
    requests["u"] = rng.random(count)
    requests[DRAW] = np.arange(count)
    return buckets.draw(requests).drop(columns=["bucket", "mass", DRAW])


def _with_mass(part: pd.DataFrame, scheme: str, classes: tuple[int, ...]) -> pd.DataFrame:
    factor = stratum_factor(scheme, classes, sets=cell_sets(part), affected=part["affected"].to_numpy())
    part = part[[*KEYS, *_VANTAGE_COLUMNS]].assign(mass=part["cell_weight"].to_numpy() * factor)
    part = part[part["mass"] > 0]
    return part.assign(bucket=(key_hash(part, KEYS) % np.uint64(N_BUCKETS)).astype(np.int64))


def _items_of_cells(items: DaskItems, requests: pd.DataFrame, n_groups: int) -> pd.DataFrame:
    """One item per request (cell ``KEYS``, ``u``, ``draw``, optional ``skip_item_id``) ∝ weight."""
    wanted = shared(np.unique(key_hash(requests, KEYS)), broadcast=True)
    frame = items.frame[["item_id", *KEYS, "weight"]]
    parts = [dask.delayed(_rows_with_keys)(part, KEYS, wanted) for part in frame.to_delayed()]
    segments = Segments.build(parts, segment=KEYS, order=["item_id"], weight="weight", n_groups=n_groups)
    return segments.draw(requests)


def _partners(items: DaskItems, draws: pd.DataFrame, u_cell: np.ndarray, u_item: np.ndarray, n_groups: int):
    """The partner ``j`` of each draw, by its class."""
    pair_class = draws["pair_class"].to_numpy()
    # split: a cell of Base(i) other than i's own; merge: a cell of Exp(i) other than i's own.
    # Object dtype: exact item ids beside the nulls of the requests that skip nothing.
    # (The ids as an array: a Series assigned to an empty frame would give it the Series' rows.)
    inside = pair_class == INTERSECTION
    partner_cells = [draws.loc[inside, [*KEYS, DRAW]].assign(skip_item_id=draws["i"].to_numpy().astype(object)[inside])]
    for cls, by, order in ((SPLIT, "base_cluster", "exp_cluster"), (MERGE, "exp_cluster", "base_cluster")):
        rows = pair_class == cls
        if not rows.any():
            continue
        requests = draws.loc[rows, [by, order, DRAW]].rename(columns={order: SKIP_PREFIX + order})
        requests["u"] = u_cell[rows]
        wanted = shared(np.unique(key_hash(requests, [by])), broadcast=True)
        frame = items.cell_sums[[*KEYS, "cell_weight"]]
        parts = [dask.delayed(_rows_with_keys)(part, [by], wanted) for part in frame.to_delayed()]
        segments = Segments.build(parts, segment=[by], order=[order], weight="cell_weight", n_groups=n_groups)
        partner_cells.append(segments.draw(requests)[[*KEYS, DRAW]])
    j = draws["i"].to_numpy().copy()  # self pairs
    requests = pd.concat(partner_cells, ignore_index=True)
    if len(requests):
        requests["u"] = u_item[requests[DRAW].to_numpy()]
        chosen = _items_of_cells(items, requests, n_groups)
        j[chosen[DRAW].to_numpy()] = chosen["item_id"].to_numpy()
    assert np.all((pair_class == SELF) | (j != draws["i"].to_numpy())), "a non-self pair drew its vantage item"
    return j


def _rows_with_keys(part: pd.DataFrame, keys: list[str], wanted: np.ndarray) -> pd.DataFrame:
    """The rows whose key hash is wanted (a hash collision only adds rows no request asks for)."""
    return part[np.isin(key_hash(part, keys), wanted)]


def pairs_table(scheme: str, draws: pd.DataFrame) -> pd.DataFrame:
    """The PAIRS table of draws one by one (``i, j, pair_class, stratum`` codes, ``draw``), sorted by
    ``(stratum, i, j)``."""
    counted = (
        draws.groupby(["stratum", "i", "j"], sort=True)
        .agg(pair_class=("pair_class", "first"), draws=(DRAW, "size"))
        .reset_index()
    )
    return pd.DataFrame(
        {
            "i": counted["i"].to_numpy(),
            "j": counted["j"].to_numpy(),
            "pair_class": np.asarray(PAIR_CLASSES, dtype=object)[counted["pair_class"].to_numpy()],
            "stratum": np.asarray(STRATA, dtype=object)[counted["stratum"].to_numpy()],
            "draws": counted["draws"].to_numpy(np.int64),
            "scheme": np.full(len(counted), scheme, dtype=object),
        }
    )
