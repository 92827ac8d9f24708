"""A package's import graph, read from its source with ``ast`` (an import inside a function counts
as much as one at the top), for the guard tests of raterapp and metrics_core: its edges, its
circles, and the private names one module imports from another."""

from __future__ import annotations

import ast
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` in the package whose folder is ``root``."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_nodes(path: Path, root: Path):
    """(absolute module, names imported from it or None) of every import in the module."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            yield base, [alias.name for alias in node.names]


def imported(path: Path, root: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it, as an absolute dotted name; for
    ``from X import Y`` both X and X.Y (Y may be a submodule)."""
    names = set()
    for base, members in _import_nodes(path, root):
        names.add(base)
        names.update(f"{base}.{member}" for member in members or ())
    return names


def graph(root: Path, *, skip: tuple[str, ...] = ("migrations",)) -> dict[str, set[str]]:
    """Module -> every module it imports (see :func:`imported`), for the package at ``root``."""
    return {
        module_name(path, root): imported(path, root)
        for path in root.rglob("*.py")
        if not set(skip) & set(path.relative_to(root).parts)
    }


def module_edges(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a name collapsed to the deepest module that
    exists), leaving out a module's own parent packages (Python runs them first anyway)."""
    modules = graph(root)
    edges = {}
    for module, names in modules.items():
        targets = set()
        for name in names:
            while name not in modules and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in modules and name != module and not module.startswith(name + "."):
                targets.add(name)
        edges[module] = targets
    return edges


def circles(root: Path) -> list[list[str]]:
    """The import circles of the package: its strongly connected components of more than one module."""
    edges = module_edges(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in edges[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def private_imports(root: Path) -> list[tuple[str, str, str]]:
    """(importer, module, name) of every ``_name`` one module of the package imports from another."""
    found = []
    for path in sorted(root.rglob("*.py")):
        importer = module_name(path, root)
        for base, members in _import_nodes(path, root):
            for member in members or ():
                private = member.startswith("_") and not member.startswith("__")
                if private and base.split(".")[0] == root.name and base != importer:
                    found.append((importer, base, member))
    return found
