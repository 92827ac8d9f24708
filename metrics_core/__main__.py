"""``python -m metrics_core``: see :mod:`metrics_core.cli` and ``metrics-cli.md``."""

from .cli import lean_allocation, main

if __name__ == "__main__":
    lean_allocation()
    raise SystemExit(main())
