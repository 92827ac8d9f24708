"""``python -m metrics_core``: see :mod:`metrics_core.cli` and ``metrics-cli.md``."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
