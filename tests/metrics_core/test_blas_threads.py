"""BLAS on one thread in the product's processes (metrics_core/blas_threads.py): the function, and the
Django processes (web, workers, tests) that call it when the app is ready. Each check runs in a fresh
interpreter started with two BLAS threads, so that it fails if the limit is not applied."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def blas_threads_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter with two BLAS threads asked for; the BLAS thread counts
    before it (``before``) and after it (``after``)."""
    script = (
        "import json, numpy\n"
        "from metrics_core.blas_threads import blas_threads\n"
        "before = blas_threads()\n" + code + "\nprint(json.dumps({'before': before, 'after': blas_threads()}))\n"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_use_one_blas_thread_limits_numpys_blas_to_one_thread():
    counts = blas_threads_after("from metrics_core.blas_threads import use_one_blas_thread\nuse_one_blas_thread()")
    assert counts["before"] == [2], counts  # numpy's OpenBLAS, at the two threads asked for
    assert counts["after"] == [1], counts


def test_a_django_process_computes_with_one_blas_thread():
    counts = blas_threads_after(
        "import os, django\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'raterapp.settings')\n"
        "os.environ.setdefault('SECRET_KEY', 'x')\ndjango.setup()"
    )
    assert counts == {"before": [2], "after": [1]}, counts


def test_the_command_line_computes_with_one_blas_thread(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("item_id,base_cluster,exp_cluster,weight\na,1,1,1\nb,1,2,1\nc,2,2,1\n")
    counts = blas_threads_after(
        "import contextlib, io\nfrom metrics_core.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['impact', {str(items)!r}], one_shot=True) == 0"
    )
    assert counts == {"before": [2], "after": [1]}, counts
