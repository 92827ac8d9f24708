"""The command line's parser: its subcommands, their arguments and the arguments' types."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..sampling import SCHEMES
from .common import PROG
from .compare import run_compare
from .estimate import run_estimate
from .impact import run_impact
from .sample import run_sample
from .score import run_score


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="ABCDE clustering-change metrics.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{impact,sample,estimate,compare,score}")

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
        "--recall-base-range",
        nargs=2,
        metavar=("LO", "HI"),
        type=_unit_parameter,
        default=(0.4, 0.8),
        help="the Recall_Base range assumed when --recall-base is not given: DeltaRecall and IQ's "
        "interval is the union of the intervals over it (default 0.4 0.8)",
    )
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
    estimate.add_argument(
        "--scores",
        metavar="SCORES",
        help="i, j, score of every pair of PAIRS: adds the key model_assisted (abcde-spec §15)",
    )
    estimate.add_argument(
        "--score-lambda",
        metavar="L",
        type=_closed_unit,
        default=None,
        help="with --scores: fix every class's lambda (0: the human-only estimates); default tuned",
    )
    estimate.set_defaults(run=run_estimate, subparser=estimate)

    compare = commands.add_parser("compare", help="ground-truth measures of a clustering against a gold one")
    compare.add_argument("truth", metavar="TRUTH", help="item_id, cluster_id[, weight]: the gold clustering")
    compare.add_argument("pred", metavar="PRED", help="item_id, cluster_id: the clustering to evaluate")
    compare.set_defaults(run=run_compare)

    score = commands.add_parser("score", help="the built-in card similarity of every distinct pair")
    score.add_argument(
        "catalogue", metavar="CATALOGUE", help="item_id, title[, description, image_url, url, attributes]"
    )
    score.add_argument("pairs", metavar="PAIRS", help="i, j: the pairs to score (a sample's PAIRS file)")
    score.add_argument("--out", metavar="SCORES", required=True, help="write i, j, score (.csv or .parquet)")
    score.set_defaults(run=run_score)
    return parser


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


def _closed_unit(text: str) -> float:
    value = _parse(float, text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text!r}")
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
