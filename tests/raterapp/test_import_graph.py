"""The layers import one way (docs/style.md, "The shape"): read from the source with ``ast``,
so that an import inside a function counts as much as one at the top."""

from pathlib import Path

import raterapp
from tests import import_graph

ROOT = Path(raterapp.__file__).parent


def graph() -> dict[str, set[str]]:
    return import_graph.graph(ROOT)


def imported(path: Path) -> set[str]:
    return import_graph.imported(path, ROOT)


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


def test_no_service_imports_the_tasks():
    """Tasks import services; services start tasks by name (services/scheduling.py, task_names.py)."""
    assert edges("raterapp.services", "raterapp.tasks") == set()
    assert ("raterapp.services.scheduling", "raterapp.task_names") in edges("raterapp.services.scheduling", "raterapp")


def test_raterapp_has_no_import_circle():
    """Imports inside functions count: a circle hidden in a late import is still a circle."""
    assert import_graph.circles(ROOT) == []


def test_every_task_is_registered_under_its_constant_and_routed():
    from celery import current_app
    from django.conf import settings

    from raterapp import task_names

    names = {value for key, value in vars(task_names).items() if key.isupper()}
    registered = {name for name in current_app.tasks if name.startswith("raterapp.")}
    assert names == registered
    routed = {name for name in settings.CELERY_TASK_ROUTES}
    assert routed <= names


def test_no_raterapp_module_imports_a_private_name_of_another():
    assert import_graph.private_imports(ROOT) == []
