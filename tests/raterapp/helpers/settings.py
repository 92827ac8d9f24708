"""The settings module as ``.env.example`` and a fresh interpreter give it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def env_example() -> dict[str, str]:
    lines = (ROOT / ".env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def settings_loaded(environment: dict[str, str], *names: str, tmp_path: Path) -> dict:
    """The named settings of ``raterapp.settings`` loaded in a fresh interpreter with only ``environment``
    (and a DATA_DIR in ``tmp_path`` unless given)."""
    code = (
        "import json, sys, raterapp.settings as s; "
        "print(json.dumps({n: getattr(s, n, None) for n in sys.argv[1:]}, default=str))"
    )
    base = {"PATH": os.environ["PATH"], "DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run(
        [sys.executable, "-c", code, *names],
        cwd=tmp_path,
        env={**base, **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode:
        raise RuntimeError(result.stderr.strip().splitlines()[-1])
    return json.loads(result.stdout)
