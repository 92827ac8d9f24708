"""Running ``python -m metrics_core`` as users do, for the command-line tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(*args, cwd=REPO):
    return subprocess.run(
        [sys.executable, "-m", "metrics_core", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def run_json(*args):
    done = run(*args)
    assert (done.returncode, done.stderr) == (0, "")
    return json.loads(done.stdout)


def write(path, text):
    path.write_text(text)
    return path


def approx(value):
    return pytest.approx(value, rel=1e-12, abs=1e-15)
