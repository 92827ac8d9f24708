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

import importlib.abc
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..blas_threads import use_one_blas_thread
from ..io import InputError
from ..results import json_number
from .arguments import build_parser
from .common import PROG, impact_json

__all__ = ["PROG", "REUSE_BELOW", "build_parser", "impact_json", "json_number", "lean_allocation", "main"]


def main(argv: Sequence[str] | None = None, *, one_shot: bool = False) -> int:
    """Run one subcommand; returns the exit status (0 success, 2 bad input or usage).

    ``one_shot``: the process ends with the command (``python -m metrics_core``), so process-wide
    settings that only serve the command may be made (the numpy engine keeps pandas out, see below;
    BLAS runs on one thread, :mod:`metrics_core.blas_threads`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if one_shot:
        use_one_blas_thread()
    if one_shot and getattr(args, "engine", None) != "dask":
        _keep_pandas_out()
    if args.command == "sample" and args.diff_share is not None and args.scheme != "stratified":
        args.subparser.error("--diff-share is only meaningful with --scheme stratified")
    if args.command == "estimate" and args.score_lambda is not None and not args.scores:
        args.subparser.error("--score-lambda is only meaningful with --scores")
    if args.command == "estimate" and args.gold and not args.raters:
        args.subparser.error("--gold is only meaningful with --raters dawid-skene")
    if args.command == "estimate" and args.recall_base_range[0] > args.recall_base_range[1]:
        args.subparser.error("argument --recall-base-range: LO must not exceed HI")
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


class _NoPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ModuleNotFoundError(f"{name} is kept out of this process", name=name)


def _keep_pandas_out() -> None:
    """Make pandas unimportable in this process. pyarrow imports it, when installed, on its first
    conversion from or to numpy or Python values, only to recognise pandas objects, of which the
    numpy engine's commands have none: 0.2-0.3 s of CPU a run (a tenth of ``sample``'s on 10M
    items, most of a run on small files). pyarrow remembers that pandas is missing for the rest of
    the process, hence one-shot only. Nothing the numpy engine runs needs pandas: its one use,
    finding missing labels among Python objects (:mod:`metrics_core.agreement.codes`), has a numpy
    path for a process without pandas."""
    if "pandas" not in sys.modules:
        sys.meta_path.insert(0, _NoPandas())


def lean_allocation(*, reuse_below: int = 0) -> None:
    """Give freed buffers back to the system at once, for a one-shot process on large inputs.

    pyarrow's default pool (mimalloc or jemalloc) keeps freed memory for reuse, and glibc's
    malloc raises its mmap threshold after large frees, keeping freed arrays in the heap: the
    chunks of a column read, once combined, would stay resident. The system pool and a fixed
    1 MiB mmap threshold return every large buffer when it is freed.

    ``reuse_below`` (bytes, :data:`REUSE_BELOW` by command) keeps freed buffers smaller than that in
    the heap for the next ones: ``estimate`` makes hundreds of temporaries the size of its draws,
    each of which would otherwise be a new mapping that the kernel zeroes page by page (a third of
    its CPU time on 1M draws); buffers the size of the items are still returned at once.
    """
    import ctypes

    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, max(1 << 20, reuse_below))  # M_MMAP_THRESHOLD (glibc)
        if reuse_below:
            libc.mallopt(-1, 8 * reuse_below)  # M_TRIM_THRESHOLD: free heap kept for reuse, at most this
    except (OSError, AttributeError):
        pass  # not glibc: its allocator's defaults stand


# Per command, the size below which freed buffers are kept for reuse (see lean_allocation); 32 MiB is
# glibc's own ceiling for its dynamic threshold, and the draws' temporaries of 1M draws are 8 MiB.
# sample and compare gain too (the Parquet reader's 8 MiB batches, the draws': 10-15% of their CPU
# on 10M items); impact does not, and keeps its working state lowest without. score gains a sixth
# of its time on 1M pairs (its blocks of pairs' gathered bitsets, a few MiB each).
REUSE_BELOW = {"estimate": 32 << 20, "sample": 32 << 20, "compare": 32 << 20, "score": 32 << 20}
