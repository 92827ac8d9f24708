"""``python -m metrics_core``: see :mod:`metrics_core.cli` and ``metrics-cli.md``."""

import sys

from .cli import REUSE_BELOW, lean_allocation, main

if __name__ == "__main__":
    lean_allocation(reuse_below=REUSE_BELOW.get(sys.argv[1] if len(sys.argv) > 1 else "", 0))
    raise SystemExit(main(one_shot=True))
