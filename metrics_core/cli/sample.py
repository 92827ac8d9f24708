"""``sample``: draw item pairs for judgement, written as a PAIRS file in draw order (abcde-spec §14)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..io import InputError, ItemTable, check_output_path, read_items, write_tables
from ..sampling import PAIR_CLASSES, STRATA, PairSample, batch_rng, sample_pairs
from .common import on_dask
from .order import in_draw_order


def run_sample(args: argparse.Namespace) -> None:
    if args.engine == "dask":
        return on_dask(args, run_sample_dask)
    check_output_path(args.out)
    items = read_items(args.items)
    population = items.to_population()
    items = items.without_labels()  # the population holds their codes
    if not population.cell_affected().any():
        raise InputError(args.items, "no item is affected (Base and Exp are identical): nothing to sample")
    diff_share = 0.5 if args.diff_share is None else args.diff_share
    sample = sample_pairs(
        population,
        n_draws=args.pairs,
        scheme=args.scheme,
        rng=batch_rng(seed=args.seed, batch=args.batch),
        diff_share=diff_share,
    )
    write_tables({args.out: in_draw_order(pairs_columns(items, sample), seed=args.seed, batch=args.batch)})


def run_sample_dask(args: argparse.Namespace) -> None:
    """``sample --engine dask``: ITEMS is a Parquet dataset; PAIRS (O(S) rows) a .csv or .parquet file."""
    from .. import dask_backend

    check_output_path(args.out)
    items = dask_backend.read_items(args.items)
    diff_share = 0.5 if args.diff_share is None else args.diff_share
    try:
        pairs = dask_backend.sample_pairs(
            items,
            n_draws=args.pairs,
            scheme=args.scheme,
            rng=batch_rng(seed=args.seed, batch=args.batch),
            diff_share=diff_share,
        )
    except ValueError as exc:
        if "nothing to sample" not in str(exc):
            raise
        raise InputError(args.items, "no item is affected (Base and Exp are identical): nothing to sample") from None
    columns = {name: pairs[name].to_numpy() for name in pairs.columns}
    write_tables({args.out: in_draw_order(columns, seed=args.seed, batch=args.batch)})


def pairs_columns(items: ItemTable, sample: PairSample) -> dict[str, Any]:
    """The PAIRS file: item ids, class and stratum names, draw counts, the scheme (then
    :func:`.order.in_draw_order` adds ``batch`` and ``positions``)."""
    return {
        "i": items.item_ids_at(sample.i),
        "j": items.item_ids_at(sample.j),
        "pair_class": np.asarray(PAIR_CLASSES, dtype=object)[sample.pair_class],
        "stratum": np.asarray(STRATA, dtype=object)[sample.stratum],
        "draws": sample.draws,
        "scheme": np.full(len(sample), sample.scheme, dtype=object),
    }
