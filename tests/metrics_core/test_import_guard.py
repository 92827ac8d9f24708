"""metrics_core never imports Django, the app or Dask, except the Dask backend (which may import Dask);
its modules import one another without a circle, and no private name of another module."""

import ast
from pathlib import Path

import metrics_core
from tests import import_graph

PACKAGE = Path(metrics_core.__file__).resolve().parent
FORBIDDEN = {"django", "raterapp", "dask", "distributed"}
DASK = {"dask", "distributed"}


def imported_roots(path: Path) -> set[str]:
    """The top-level package of every absolute import in the module, at any depth of its code."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_imported_roots_sees_nested_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from distributed import Client\n    import django.db\n")
    assert imported_roots(module) == {"distributed", "django"}


def test_metrics_core_imports_no_django_raterapp_or_dask_outside_its_dask_backend():
    backend = PACKAGE / "dask_backend"
    offending = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        allowed = DASK if backend in path.parents else set()
        bad = (imported_roots(path) & FORBIDDEN) - allowed
        if bad:
            offending[str(path.relative_to(PACKAGE))] = sorted(bad)
    assert offending == {}


def test_metrics_core_has_no_import_circle():
    """Imports inside functions count: a circle hidden in a late import is still a circle."""
    assert import_graph.circles(PACKAGE) == []


def test_the_circle_finder_finds_one(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import f\n")
    (package / "b.py").write_text("def f():\n    from pkg.c import g\n")
    (package / "c.py").write_text("from . import a\nfrom ._hidden import _secret\n")
    (package / "_hidden.py").write_text("_secret = 1\n")
    assert import_graph.circles(package) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert import_graph.private_imports(package) == [("pkg.c", "pkg._hidden", "_secret")]


def test_no_metrics_core_module_imports_a_private_name_of_another():
    assert import_graph.private_imports(PACKAGE) == []
