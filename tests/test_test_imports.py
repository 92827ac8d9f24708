"""No module under tests/ imports from a test module (issue 36): what several modules share lives in a
helper module (``tests/raterapp/helpers/``, ``tests/metrics_core/helpers.py``, ...) or, for a
fixture, in a conftest.py. Importing a test module runs it twice over (pytest collects the names it
brings, and an imported fixture changes the importer's tests), and ties one test module to
another's insides."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Imports still waiting for their move (issue 36): none. The test fails on a line that no longer matches.
ALLOWED: set[str] = set()


def imports_of_test_modules(source: str, module: str) -> list[str]:
    """Every import in ``source`` (the module ``module``, dotted), at any depth, of a module whose file
    name starts with ``test_`` or of a name ``test_...``: ``from x.test_y import z``,
    ``from x import test_y``, ``import x.test_y``, relative ones resolved against ``module``."""
    package = module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            parts = (package[: len(package) - node.level + 1] if node.level else []) + (
                node.module.split(".") if node.module else []
            )
            names = [alias.name for alias in node.names]
            if any(part.startswith("test_") for part in parts) or any(name.startswith("test_") for name in names):
                found.append(f"from {'.'.join(parts)} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found += [
                f"import {alias.name}"
                for alias in node.names
                if any(part.startswith("test_") for part in alias.name.split("."))
            ]
    return found


def offenders(root: Path = ROOT) -> set[str]:
    """``"path: import"`` for every import of a test module in every module under ``root``/tests."""
    found = set()
    for path in sorted((root / "tests").rglob("*.py")):
        relative = path.relative_to(root)
        module = ".".join(relative.with_suffix("").parts)
        for statement in imports_of_test_modules(path.read_text(), module):
            found.add(f"{relative.as_posix()}: {statement}")
    return found


def test_the_finder_sees_every_form():
    source = """
from tests.a.test_b import c
from tests.a import test_b
import tests.a.test_b
from tests.a.helpers import c, d

def late():
    from .test_e import f
    from ..x import test_g
"""
    assert imports_of_test_modules(source, "tests.a.test_h") == [
        "from tests.a.test_b import c",
        "from tests.a import test_b",
        "import tests.a.test_b",
        "from tests.a.test_e import f",
        "from tests.x import test_g",
    ]


def test_no_module_imports_from_a_test_module():
    found = offenders()
    assert sorted(found - ALLOWED) == [], "move these helpers to a helper module or a conftest.py"
    assert sorted(ALLOWED - found) == [], "these imports are gone: remove them from ALLOWED"
