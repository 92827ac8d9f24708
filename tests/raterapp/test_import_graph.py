"""The layers import one way (docs/style.md, "The shape"): read from the source with ``ast``,
so that an import inside a function counts as much as one at the top."""

import ast
from pathlib import Path

import raterapp

ROOT = Path(raterapp.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it, as an absolute dotted name; for
    ``from X import Y`` both X and X.Y (Y may be a submodule)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def graph() -> dict[str, set[str]]:
    return {module_name(path): imported(path) for path in ROOT.rglob("*.py") if "migrations" not in path.parts}


def under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def edges(importer: str, target: str) -> set[tuple[str, str]]:
    """(module under ``importer``, the module it imports under ``target``), submodules collapsed
    to the deepest module that exists."""
    modules = graph()
    found = set()
    for module, names in modules.items():
        if not under(module, importer):
            continue
        for name in names:
            if under(name, target):
                while name not in modules and "." in name:
                    name = name.rsplit(".", 1)[0]
                found.add((module, name))
    return found


def test_the_import_graph_is_read_from_every_module():
    modules = graph()
    assert "raterapp.selectors.judging" in modules and "raterapp.services.scheduling" in modules
    assert ("raterapp.services.outbox", "raterapp.services.scheduling") in edges("raterapp.services.outbox", "raterapp")
    assert "raterapp.services.judging.errors" in imported(ROOT / "services" / "judging" / "queue.py")


def test_no_selector_imports_a_service():
    assert edges("raterapp.selectors", "raterapp.services") == set()


def test_models_import_no_service_and_no_selector():
    assert edges("raterapp.models", "raterapp.services") == set()
    assert edges("raterapp.models", "raterapp.selectors") == set()


def test_services_reach_tasks_through_the_scheduling_module_only():
    assert edges("raterapp.services", "raterapp.tasks") == {("raterapp.services.scheduling", "raterapp.tasks")}


def test_tasks_do_not_import_the_scheduling_module():
    assert edges("raterapp.tasks", "raterapp.services.scheduling") == set()
