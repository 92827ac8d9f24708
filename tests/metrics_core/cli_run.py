"""Running ``python -m metrics_core`` as users do, for the command-line tests: its input files
written, its output tables read, and a refusal checked."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from metrics_core.cli import main

REPO = Path(__file__).resolve().parents[2]


def run(*args, cwd=REPO):
    """``python -m metrics_core ARGS`` in ``cwd``: its exit status, stdout and stderr. The Dask
    engine runs as its own process, as users run it; the others run :func:`metrics_core.cli.main`
    in this process, the command line's whole path but the interpreter's start, which cost each
    of the suite's hundreds of runs half a second (``test_package.py`` runs the module itself)."""
    argv = [str(arg) for arg in args]
    if "dask" in argv:
        return subprocess.run(
            [sys.executable, "-m", "metrics_core", *argv], cwd=cwd, capture_output=True, text=True, timeout=120
        )
    return _run_in_process(argv, cwd)


def run_one_shot(*args, cwd=REPO) -> tuple[subprocess.CompletedProcess, bool]:
    """``python -m metrics_core ARGS`` as its own one-shot process (``main(one_shot=True)``, which
    keeps pandas out of the numpy engine), and whether pandas was imported in it after all."""
    code = (
        "import sys; from metrics_core.cli import main; status = main(sys.argv[1:], one_shot=True); "
        "print('pandas' in sys.modules, file=sys.stderr); sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    stderr, _, marker = done.stderr.rstrip("\n").rpartition("\n")
    done.stderr = stderr + "\n" if stderr else ""
    return done, marker == "True"


def assert_same_one_shot(*args, outputs=(), cwd=REPO) -> None:
    """The command gives the same status, stdout, stderr and output files in a one-shot process
    without pandas as in this process (which has pandas)."""
    here = run(*args, cwd=cwd)
    files = {path: path.read_bytes() for path in outputs}
    for path in outputs:
        path.unlink()
    done, pandas_loaded = run_one_shot(*args, cwd=cwd)
    assert (done.returncode, done.stdout, done.stderr) == (here.returncode, here.stdout, here.stderr)
    assert not pandas_loaded
    assert {path: path.read_bytes() for path in outputs} == files


def _run_in_process(argv: list[str], cwd) -> subprocess.CompletedProcess:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(stdout))
        stack.enter_context(contextlib.redirect_stderr(stderr))
        stack.enter_context(warnings.catch_warnings())
        # As a new interpreter would: every warning printed to stderr, where the tests look.
        warnings.simplefilter("always")
        warnings.showwarning = _warning_to_stderr
        try:
            status = main(argv)
        except SystemExit as exit:  # argparse's usage errors and --help
            status = exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
    return subprocess.CompletedProcess(["metrics_core", *argv], status, stdout.getvalue(), stderr.getvalue())


def _warning_to_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_json(*args):
    done = run(*args)
    assert (done.returncode, done.stderr) == (0, "")
    return json.loads(done.stdout)


def write(path, text):
    path.write_text(text)
    return path


def approx(value):
    return pytest.approx(value, rel=1e-12, abs=1e-15)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_table(path):
    return (pq.read_table(path) if path.suffix == ".parquet" else pcsv.read_csv(path)).to_pydict()


def assert_refused(done, message, *must_not_exist):
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"metrics_core: error: {message}\n"
    for path in must_not_exist:
        assert not path.exists()
        assert not list(path.parent.glob(f".{path.name}.*"))  # no temporary file left either
