"""The ``python -m metrics_core`` command line (the contract is ``metrics-cli.md``).

``sample --batch B`` draws batch ``B`` of an experiment (abcde-spec §10; batch 0 is the first
sample of ``--seed``); ``estimate`` accepts concatenated batch files, whose repeated pairs add
their draws, and prints with every estimate its confidence sequence ``cs_low``/``cs_high``
(§9, tightest at ``--horizon`` judged draws, default the draws in PAIRS) and its unsure range
``unsure_low``/``unsure_high`` (§12).

Each subcommand reads and validates all its inputs, computes, writes its output
files (all or none) and only then prints its JSON to stdout. Bad input exits with
status 2 and one line on stderr, ``metrics_core: error: <file>: <place>: <problem>``,
with nothing on stdout and no output file. Undefined numbers are JSON ``null``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import (
    IMPACT_METRICS,
    PAIR_CLASSES,
    SCHEMES,
    STRATA,
    PairSample,
    Population,
    SampleError,
    batch_rng,
    estimate_quality,
    impact_metrics,
    impact_per_base_cluster,
    impact_per_exp_cluster,
    impact_per_item,
    sample_pairs,
    verdicts_from_judgements,
)
from .derived import derived_metrics
from .external import EXTERNAL_MEASURES, external_measures_from_population
from .io import (
    InputError,
    ItemTable,
    check_output_path,
    read_items,
    read_judgements,
    read_pairs,
    read_truth_and_prediction,
    write_tables,
)
from .io.gold_pairs import read_gold_pairs
from .rater_aware import estimate_quality_rater_aware

PROG = "metrics_core"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the exit status (0 success, 2 bad input or usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "sample" and args.diff_share is not None and args.scheme != "stratified":
        args.subparser.error("--diff-share is only meaningful with --scheme stratified")
    if args.command == "estimate" and args.gold and not args.raters:
        args.subparser.error("--gold is only meaningful with --raters dawid-skene")
    if getattr(args, "scheduler", None) and args.engine != "dask":
        parser.error("--scheduler is only meaningful with --engine dask")
    try:
        result = args.run(args)
    except InputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if result is not None:
        # allow_nan=False: a NaN that escaped json_number is a bug, never output.
        try:
            print(json.dumps(result, allow_nan=False), flush=True)
        except BrokenPipeError:
            # The reader (say `| head`) went away: not an error of ours. Python's documented
            # remedy: point stdout at devnull so that the exit flush does not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def lean_allocation() -> None:
    """Give freed buffers back to the system at once, for a one-shot process on large inputs.

    pyarrow's default pool (mimalloc or jemalloc) keeps freed memory for reuse, and glibc's
    malloc raises its mmap threshold after large frees, keeping freed arrays in the heap: the
    chunks of a column read, once combined, would stay resident. The system pool and a fixed
    1 MiB mmap threshold return every large buffer when it is freed.
    """
    import ctypes

    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    try:
        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD (glibc)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator's defaults stand


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="ABCDE clustering-change metrics.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{impact,sample,estimate,compare}")

    impact = commands.add_parser("impact", help="exact impact metrics of Base -> Exp")
    impact.add_argument("items", metavar="ITEMS", help="item_id, base_cluster, exp_cluster[, weight]")
    impact.add_argument("--per-item", metavar="OUT", help="write the per-item table (.csv or .parquet)")
    impact.add_argument("--per-cluster", metavar="OUT", help="write the per-cluster table (.csv or .parquet)")
    _engine_arguments(impact)
    impact.set_defaults(run=run_impact)

    sample = commands.add_parser("sample", help="draw item pairs for human judgement")
    sample.add_argument("items", metavar="ITEMS")
    sample.add_argument("--pairs", metavar="S", type=_positive_int, required=True, help="number of draws")
    sample.add_argument("--seed", metavar="K", type=_seed, required=True)
    sample.add_argument("--scheme", choices=SCHEMES, default="jaccard")
    sample.add_argument(
        "--diff-share",
        metavar="F",
        type=_open_unit,
        default=None,
        help="share of draws for the diff stratum (stratified only; default 0.5)",
    )
    sample.add_argument(
        "--batch",
        metavar="B",
        type=_seed,
        default=0,
        help="draw batch B of the experiment (default 0: the first sample); batches depend only on "
        "(K, B) and are independent, so their PAIRS files concatenated are one larger sample",
    )
    sample.add_argument("--out", metavar="PAIRS", required=True)
    _engine_arguments(sample)
    sample.set_defaults(run=run_sample, subparser=sample)

    estimate = commands.add_parser("estimate", help="quality estimates from judged pairs")
    estimate.add_argument("items", metavar="ITEMS")
    estimate.add_argument("pairs", metavar="PAIRS")
    estimate.add_argument("judgements", metavar="JUDGEMENTS")
    estimate.add_argument("--confidence", type=_open_unit, default=0.95)
    estimate.add_argument(
        "--horizon",
        metavar="H",
        type=_positive_int,
        default=None,
        help="planned judged draws of the whole sample, where the confidence sequences are tightest "
        "(default: the number of draws in PAIRS)",
    )
    # DeltaRecall and IQ (MQM): their bootstrap and the diagram's parameters.
    estimate.add_argument("--seed", metavar="K", type=_seed, default=0, help="bootstrap seed (default 0)")
    estimate.add_argument("--n-boot", metavar="B", type=_positive_int, default=1000, help="bootstrap replicates")
    estimate.add_argument("--recall-base", metavar="R", type=_unit_parameter, help="Recall_Base; default 0.6/0.8")
    estimate.add_argument("--precision-base", metavar="P", type=_unit_parameter, help="Precision_Base: Variant 2")
    estimate.add_argument(
        "--raters",
        choices=("dawid-skene",),
        default=None,
        help="also estimate from each pair's posterior under a Dawid-Skene model of the raters "
        "(JUDGEMENTS needs a rater column); adds the key rater_aware",
    )
    estimate.add_argument(
        "--gold", metavar="GOLD", help="with --raters: gold pairs i, j, answer (their verdicts are in JUDGEMENTS)"
    )
    estimate.set_defaults(run=run_estimate, subparser=estimate)

    compare = commands.add_parser("compare", help="ground-truth measures of a clustering against a gold one")
    compare.add_argument("truth", metavar="TRUTH", help="item_id, cluster_id[, weight]: the gold clustering")
    compare.add_argument("pred", metavar="PRED", help="item_id, cluster_id: the clustering to evaluate")
    compare.set_defaults(run=run_compare)
    return parser


# ---------------------------------------------------------------------------- subcommands


def _engine_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--engine",
        choices=("memory", "dask"),
        default="memory",
        help="memory: one machine's numpy (default); dask: partitioned Parquet on a Dask cluster",
    )
    command.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="the Dask scheduler to use (e.g. tcp://host:8786); default: a local cluster on this machine",
    )


def run_impact(args: argparse.Namespace) -> dict:
    if args.engine == "dask":
        return _on_dask(args, run_impact_dask)
    outputs = [path for path in (args.per_item, args.per_cluster) if path]
    for path in outputs:
        check_output_path(path)
    if len(outputs) == 2 and os.path.abspath(outputs[0]) == os.path.abspath(outputs[1]):
        raise InputError(args.per_cluster, "--per-item and --per-cluster name the same file")
    items = read_items(args.items)
    population = items.to_population()
    if not args.per_item:
        items = items.without_labels()  # the population holds their codes
    tables = {}
    if args.per_item:
        tables[args.per_item] = per_item_columns(items, population)
    if args.per_cluster:
        tables[args.per_cluster] = per_cluster_columns(population)
    result = impact_json(impact_metrics(population), items.dropped_items)
    write_tables(tables)
    return result


def run_sample(args: argparse.Namespace) -> None:
    if args.engine == "dask":
        return _on_dask(args, run_sample_dask)
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
    write_tables({args.out: pairs_columns(items, sample)})


def _on_dask(args: argparse.Namespace, run: Callable[[argparse.Namespace], Any]) -> Any:
    """Run on the scheduler at ``--scheduler``, or on a local cluster started for this command."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(args.items, "--engine dask needs Dask: pip install 'abcde-rater[dask]'") from None
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if args.scheduler:
        with Client(args.scheduler):
            return run(args)
    with LocalCluster(dashboard_address=None) as cluster, Client(cluster):
        return run(args)


def run_impact_dask(args: argparse.Namespace) -> dict:
    """``impact --engine dask``: ITEMS and the OUT tables are Parquet datasets (folders or URLs)."""
    from . import dask_backend

    outputs = [path for path in (args.per_item, args.per_cluster) if path]
    for path in outputs:
        _check_dataset_output(path)
    if len(outputs) == 2 and os.path.abspath(outputs[0]) == os.path.abspath(outputs[1]):
        raise InputError(args.per_cluster, "--per-item and --per-cluster name the same folder")
    items = dask_backend.read_items(args.items)
    result = impact_json(dask_backend.impact_metrics(items), 0)
    if args.per_item:
        dask_backend.write_parquet(dask_backend.impact_per_item(items), args.per_item)
    if args.per_cluster:
        dask_backend.write_parquet(dask_backend.impact_per_cluster(items), args.per_cluster)
    return result


def run_sample_dask(args: argparse.Namespace) -> None:
    """``sample --engine dask``: ITEMS is a Parquet dataset; PAIRS (O(S) rows) a .csv or .parquet file."""
    from . import dask_backend

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
    write_tables({args.out: {name: pairs[name].to_numpy() for name in pairs.columns}})


def _check_dataset_output(path: str) -> None:
    """A Parquet dataset is written as a new folder; URLs are the storage's business."""
    if "://" in path:
        return
    if os.path.exists(path):
        raise InputError(path, "cannot write: it exists already (the dask engine writes a new folder)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(path, f"cannot write: folder {folder!r} does not exist")


def run_estimate(args: argparse.Namespace) -> dict:
    items = read_items(args.items)
    pairs = read_pairs(args.pairs)
    judgements = read_judgements(args.judgements, with_rater=bool(args.raters))
    gold = read_gold_pairs(args.gold) if args.gold else None
    population = items.to_population()
    i, j = (_positions(items, pairs.path, name, ids, len(pairs)) for name, ids in (("i", pairs.i), ("j", pairs.j)))
    try:
        sample = PairSample.from_columns(
            population,
            scheme=pairs.scheme,
            i=i,
            j=j,
            draws=pairs.draws,
            pair_class=pairs.pair_class,
            stratum=pairs.stratum,
            repeated=True,
        )
    except SampleError as exc:
        pair = f"pair ({pairs.i[exc.row].as_py()!r}, {pairs.j[exc.row].as_py()!r})"
        raise InputError.at_row(pairs.path, exc.row, f"{pair}: {exc.problem}", n_rows=len(pairs)) from None
    judged_i, judged_j = (
        _positions(items, judgements.path, name, ids, len(judgements))
        for name, ids in (("i", judgements.i), ("j", judgements.j))
    )
    verdicts = verdicts_from_judgements(judged_i, judged_j, judgements.verdict)
    quality = estimate_quality(population, sample, verdicts, confidence=args.confidence, horizon=args.horizon)
    derived = derived_metrics(
        population,
        sample,
        verdicts,
        rng=np.random.default_rng(args.seed),
        confidence=args.confidence,
        recall_base=args.recall_base,
        precision_base=args.precision_base,
        n_boot=args.n_boot,
    )
    result = {
        "scheme": quality.scheme,
        "confidence": quality.confidence,
        "exact": impact_json(impact_metrics(population), items.dropped_items)["metrics"],
        "estimates": quality.as_dict()["estimates"] | {name: e.as_dict() for name, e in derived.estimates.items()},
        "derived": derived.details_dict(),
    }
    if args.raters:
        result["rater_aware"] = _rater_aware_json(args, items, population, sample, judged_i, judged_j, judgements, gold)
    return result


def _rater_aware_json(args, items, population, sample, judged_i, judged_j, judgements, gold) -> dict:
    """``estimate --raters dawid-skene``: the estimates from the pairs' posteriors and the raters' matrices."""
    gold_i, gold_j, answers = (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0, dtype=object),)
    if gold is not None:
        gold_i, gold_j = (_positions(items, gold.path, name, getattr(gold, name), len(gold)) for name in ("i", "j"))
        answers = gold.answer
    # A stream of its own, so that the derived metrics' bootstrap is the same with or without it.
    rng = np.random.default_rng(np.random.SeedSequence(args.seed).spawn(2)[1])
    aware = estimate_quality_rater_aware(
        population,
        sample,
        i=judged_i,
        j=judged_j,
        verdict=judgements.verdict,
        rater=judgements.rater.to_numpy(zero_copy_only=False),
        gold_i=gold_i,
        gold_j=gold_j,
        gold_answer=answers,
        rng=rng,
        n_boot=args.n_boot,
        confidence=args.confidence,
        horizon=args.horizon,
    )
    return aware.as_dict()


def run_compare(args: argparse.Namespace) -> dict:
    items = read_truth_and_prediction(args.truth, args.pred)
    measures = external_measures_from_population(items.to_population())
    return {
        "items": len(items),
        "dropped_items": int(items.dropped_items),
        "metrics": {
            name: None if measures[name] is None else json_number(measures[name]) for name in EXTERNAL_MEASURES
        },
    }


# ---------------------------------------------------------------------------- outputs


def impact_json(metrics: Any, dropped_items: int) -> dict:
    """The ``impact`` JSON object, keys in the contract's order."""
    return {
        "items": int(metrics.items),
        "affected_items": int(metrics.affected_items),
        "total_weight": json_number(metrics.total_weight),
        "dropped_items": int(dropped_items),
        "metrics": {name: json_number(metrics.metrics[name]) for name in IMPACT_METRICS},
    }


def per_item_columns(items: ItemTable, population: Population) -> dict[str, Any]:
    """``item_id, base_cluster, exp_cluster, weight, affected``, then the per-item metrics."""
    per_item = impact_per_item(population)
    columns: dict[str, Any] = {
        "item_id": items.item_id,
        "base_cluster": items.base_cluster,
        "exp_cluster": items.exp_cluster,
        "weight": items.weight,
        "affected": per_item["Affected"],
    }
    columns.update({name: per_item[name] for name in IMPACT_METRICS if name in per_item})
    return columns


def per_cluster_columns(population: Population) -> dict[str, Any]:
    """One row per Base cluster then per Exp cluster, with the IMPACT_METRICS of its items."""
    tables = (("base", impact_per_base_cluster(population)), ("exp", impact_per_exp_cluster(population)))
    columns: dict[str, Any] = {
        "clustering": np.concatenate([np.full(len(table), name, dtype=object) for name, table in tables]),
        "cluster_id": _cluster_ids([table.labels for _, table in tables]),
    }
    for field in ("items", "affected_items", "weight"):
        columns[field] = np.concatenate([getattr(table, field) for _, table in tables])
    for name in IMPACT_METRICS:
        columns[name] = np.concatenate([table.metrics[name] for _, table in tables])
    return columns


def pairs_columns(items: ItemTable, sample: PairSample) -> dict[str, Any]:
    """The PAIRS file: item ids, class and stratum names, draw counts, the scheme."""
    return {
        "i": items.item_ids_at(sample.i),
        "j": items.item_ids_at(sample.j),
        "pair_class": np.asarray(PAIR_CLASSES, dtype=object)[sample.pair_class],
        "stratum": np.asarray(STRATA, dtype=object)[sample.stratum],
        "draws": sample.draws,
        "scheme": np.full(len(sample), sample.scheme, dtype=object),
    }


def json_number(value: float) -> float | None:
    """JSON has no NaN or infinity: an undefined number is ``null``."""
    value = float(value)
    return value if math.isfinite(value) else None


def _cluster_ids(labels: list[np.ndarray]) -> np.ndarray:
    """Base and Exp cluster ids in one column: integers if both are, else text."""
    if all(part.dtype.kind in "iu" for part in labels):
        return np.concatenate(labels)
    return np.concatenate([part if part.dtype.kind == "O" else part.astype(str).astype(object) for part in labels])


def _positions(items: ItemTable, path: str, column: str, ids: Any, n_rows: int) -> np.ndarray:
    positions = items.positions_of(ids)
    unknown = np.flatnonzero(positions < 0)
    if len(unknown):
        row = int(unknown[0])
        problem = f"{column} {ids[row].as_py()!r} is not an item_id of {items.path}"
        raise InputError.at_row(path, row, problem, n_rows=n_rows)
    return positions


# ---------------------------------------------------------------------------- argument types


def _positive_int(text: str) -> int:
    value = _parse(int, text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _seed(text: str) -> int:
    value = _parse(int, text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _open_unit(text: str) -> float:
    value = _parse(float, text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text!r}")
    return value


def _unit_parameter(text: str) -> float:
    value = _parse(float, text)
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return value


def _parse(kind: Callable[[str], Any], text: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a valid {kind.__name__}: {text!r}") from None
