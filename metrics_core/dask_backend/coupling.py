"""Coupled sampling on Dask (abcde-spec §11): a later experiment's draws keep an earlier one's pairs.

The rule is the in-memory one, :func:`metrics_core.sampling.coupling.coupled_stratum_draws`, applied
stratum by stratum with the same stream: the earlier draws' permutation, the keep uniforms, then the
residual and the extra draws. Only where the numbers come from differs: items are matched by id (both
populations are named by item ids), the probabilities are :func:`~metrics_core.sampling.coupling.
pair_probabilities_of` of the rows and cells of the pairs asked about (read where the items are, O(S)
rows on the driver), and the proposals are this backend's ordinary draws (:func:`.sampling.draw_rows`)
in a random order of the same stream, so that their sequence is i.i.d. as the rule assumes. Given the
same proposals the draws are the in-memory engine's, draw for draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .._validation import one_of
from ..masses import INTERSECTION, MERGE, SELF, SPLIT, item_class_masses
from ..sampling import SCHEME_STRATA, SCHEMES, STRATA, allocate_draws
from ..sampling.coupling import CouplingLaws, coupled_stratum_draws, pair_probabilities_of
from ..sampling.draw import sampling_arguments
from .context import cells_of, class_totals
from .items import KEYS, DaskItems, cell_mass_inputs
from .sampling import draw_rows as dask_draw_rows
from .sampling import pairs_table
from .segments import DRAW, shared


@dataclass(frozen=True, eq=False)
class DaskCoupledSample:
    """A coupled sample as the PAIRS table (:func:`.sampling.sample_pairs`' columns), with the draws
    ``coupled`` (those that had an earlier draw to keep) and ``kept``."""

    pairs: pd.DataFrame
    coupled: int
    kept: int


def couple_sample(
    items: DaskItems,
    *,
    n_draws: int,
    scheme: str,
    rng: np.random.Generator,
    source_items: DaskItems,
    source_pairs: pd.DataFrame,
    diff_share: float = 0.5,
) -> DaskCoupledSample:
    """``n_draws`` draws of ``items`` under ``scheme`` coupled to ``source_pairs``, an earlier sample
    of ``source_items`` (its PAIRS table, in the row order it was drawn or stored in), as
    :func:`metrics_core.couple_sample` does in memory. Reproducible from ``rng``'s seed (the app:
    :func:`metrics_core.coupling_rng`).

    Raises :class:`metrics_core.CouplingError` when the earlier sample has a draw of probability 0
    under its population, or (vanishingly rarely) when the residual draws find no acceptance.
    """
    n_draws, rng, diff_share = sampling_arguments(n_draws=n_draws, scheme=scheme, rng=rng, diff_share=diff_share)
    schemes = set(source_pairs["scheme"]) if len(source_pairs) else {scheme}
    if schemes != {scheme}:
        raise ValueError(f"the earlier sample has scheme {sorted(schemes)[0]!r}, not {scheme!r}: no coupling")
    source_stratum = np.array([STRATA.index(name) for name in source_pairs["stratum"]], dtype=np.int8)
    new, source = _Population(items, scheme), _Population(source_items, scheme)
    parts, coupled, kept = [], 0, 0
    for code, count in allocate_draws(scheme, n_draws, diff_share).items():
        rows = np.flatnonzero(source_stratum == code)
        i, j, pair_class, n_kept, n_coupled = coupled_stratum_draws(
            earlier_i=source_pairs["i"].to_numpy()[rows],
            earlier_j=source_pairs["j"].to_numpy()[rows],
            earlier_draws=source_pairs["draws"].to_numpy(np.int64)[rows],
            count=count,
            rng=rng,
            laws=CouplingLaws(
                source_probabilities=partial(source.probabilities, code),
                new_probabilities=partial(new.probabilities, code),
                to_new=_same_ids,
                to_source=_same_ids,
                classes_of=new.classes,
                propose=partial(new.proposals, code),
            ),
        )
        parts.append(pd.DataFrame({"i": i, "j": j, "pair_class": pair_class, "stratum": np.int8(code)}))
        coupled, kept = coupled + n_coupled, kept + n_kept
    draws = pd.concat(parts, ignore_index=True)
    draws[DRAW] = np.arange(len(draws))
    return DaskCoupledSample(pairs_table(scheme, draws), coupled, kept)


def ordinary_draws(
    items: DaskItems, *, scheme: str, stratum: int, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``size`` ordinary draws ``(i, j, pair_class)`` of ``stratum`` (item ids, class codes), the
    proposals of the coupling: this backend's draws in a random order of ``rng``, so that their
    sequence is i.i.d. (the backend lays its draws out by bucket)."""
    draws = dask_draw_rows(items, scheme=scheme, allocation={stratum: size}, rng=rng)
    draws = draws.iloc[rng.permutation(len(draws))]
    return draws["i"].to_numpy(), draws["j"].to_numpy(), draws["pair_class"].to_numpy(np.int8)


def _same_ids(ids: np.ndarray) -> np.ndarray:
    """Both populations name their items by id: an id absent from one has pairs of probability 0 there."""
    return ids


def pair_probabilities(
    items: DaskItems, *, scheme: str, stratum: int, i: Any, j: Any, totals: np.ndarray | None = None
) -> np.ndarray:
    """:func:`metrics_core.pair_probabilities` of the pairs of item ids ``(i, j)``: P(one draw of
    ``stratum`` is the pair) under ``scheme``; 0 for an id not among the items or a pair outside the
    stratum. ``totals``: the scheme's class totals (:func:`.context.class_totals`), when known.
    """
    one_of("scheme", scheme, SCHEMES)
    i, j = np.asarray(i), np.asarray(j)
    pairs = _pairs_of(items, i, j)
    rows = np.flatnonzero(np.isin(pairs.pair_class, SCHEME_STRATA[scheme][stratum]))
    cells = pairs.cells.iloc[rows]
    w_i, w_j = pairs.w_i[rows], pairs.w_j[rows]
    masses = item_class_masses(scheme, **cell_mass_inputs(cells), weight=w_i, total_weight=items.total_weight)
    return pair_probabilities_of(
        scheme=scheme,
        stratum=stratum,
        n_pairs=len(i),
        rows=rows,
        pair_class=pairs.pair_class[rows],
        masses=masses,
        w_i=w_i,
        w_j=w_j,
        sets={
            "both": cells["cell_weight"].to_numpy(float),
            "split": cells["set_split"].to_numpy(float),
            "merge": cells["set_merge"].to_numpy(float),
        },
        totals=class_totals(items, scheme) if totals is None else totals,
    )


class _Population:
    """One population on Dask as the coupling asks about it: pairs of item ids."""

    def __init__(self, items: DaskItems, scheme: str):
        self.items, self.scheme = items, scheme
        self._totals: np.ndarray | None = None

    def probabilities(self, stratum: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        if self._totals is None:
            self._totals = class_totals(self.items, self.scheme)
        return pair_probabilities(self.items, scheme=self.scheme, stratum=stratum, i=i, j=j, totals=self._totals)

    def classes(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return _pairs_of(self.items, i, j).pair_class

    def proposals(self, stratum: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return ordinary_draws(self.items, scheme=self.scheme, stratum=stratum, size=size, rng=rng)


def _pairs_of(items: DaskItems, i: np.ndarray, j: np.ndarray) -> _Pairs:
    """The class of each pair (−1 outside the population), its items' weights and ``i``'s cell."""
    if not len(i):
        return _Pairs(np.zeros(0, np.int8), np.zeros(0), np.zeros(0), items.cells._meta)
    rows = _item_rows(items, np.concatenate((np.asarray(i), np.asarray(j))))
    vi, vj = rows.reindex(pd.Index(i)), rows.reindex(pd.Index(j))
    present = vi["weight"].notna().to_numpy() & vj["weight"].notna().to_numpy()
    same_base = (vi["base_cluster"].to_numpy() == vj["base_cluster"].to_numpy()) & present
    same_exp = (vi["exp_cluster"].to_numpy() == vj["exp_cluster"].to_numpy()) & present
    same_item = (np.asarray(i) == np.asarray(j)) & present
    pair_class = np.select(
        [same_item, same_base & same_exp, same_base, same_exp], [SELF, INTERSECTION, SPLIT, MERGE], default=-1
    ).astype(np.int8)
    keys = vi[KEYS].reset_index(drop=True)[present].astype(rows[KEYS].dtypes.to_dict())
    cells = cells_of(items, keys).set_index(np.flatnonzero(present)).reindex(range(len(present)))
    affected = cells["affected"].fillna(False).to_numpy(bool)
    pair_class[~affected] = -1
    weight = lambda rows: rows["weight"].to_numpy(float, na_value=0.0)  # noqa: E731
    return _Pairs(pair_class, weight(vi), weight(vj), cells.reset_index(drop=True))


@dataclass(frozen=True, eq=False)
class _Pairs:
    pair_class: np.ndarray
    w_i: np.ndarray
    w_j: np.ndarray
    cells: pd.DataFrame  # the cell table's row of each pair's vantage cell (nulls where absent)


def _item_rows(items: DaskItems, ids: Any) -> pd.DataFrame:
    """``base_cluster, exp_cluster, weight`` (this backend's units) of the items among ``ids``,
    indexed by ``item_id``; an id not among the items is left out."""
    wanted = pd.Index(pd.unique(np.asarray(ids)))
    frame = items.frame[["item_id", *KEYS, "weight"]]
    found = frame.map_partitions(_rows_with_ids, shared(wanted), meta=frame._meta).compute()
    return found.set_index("item_id")


def _rows_with_ids(part: pd.DataFrame, wanted: pd.Index) -> pd.DataFrame:
    return part[part["item_id"].isin(wanted)]
