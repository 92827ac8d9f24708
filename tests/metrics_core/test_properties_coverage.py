"""Every public callable of metrics_core has a property-based test (issue 32, item 5).

A function or method of ``metrics_core.__all__`` must be used (called, passed or looked up; a
mention in a docstring or comment does not count) in some ``tests/metrics_core/test_properties_*.py``
file, and every Hypothesis test of those files runs at least ``PROPERTY_EXAMPLES`` examples. A new
public entry point without a property test fails here. Classes (results, errors) and constants are
exempt.
"""

import ast
import importlib
import inspect
from pathlib import Path

import metrics_core
from tests.metrics_core.strategies import PROPERTY_EXAMPLES

HERE = Path(__file__).parent
PROPERTY_FILES = sorted(HERE.glob("test_properties_*.py"))


def names_used(source: str) -> set[str]:
    """The identifiers a module's code uses: names and attribute names, not strings, docstrings or comments."""
    used = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
    return used


def public_callables() -> list[str]:
    return [
        name
        for name in metrics_core.__all__
        if callable(getattr(metrics_core, name)) and not inspect.isclass(getattr(metrics_core, name))
    ]


def test_the_detector_counts_code_and_not_docstrings():
    source = '"""estimate_quality in a docstring."""\n# settle_plan in a comment\nx = metrics_core.decide(q)\nfit_dawid_skene()\n'
    used = names_used(source)
    assert {"decide", "fit_dawid_skene"} <= used and not {"estimate_quality", "settle_plan"} & used


def test_every_public_callable_is_used_by_a_property_test():
    assert len(PROPERTY_FILES) >= 4 and len(public_callables()) >= 40
    used = set().union(*(names_used(path.read_text()) for path in PROPERTY_FILES))
    missing = [name for name in public_callables() if name not in used]
    assert not missing, (
        f"public metrics_core callables without a property-based test in tests/metrics_core/test_properties_*.py: "
        f"{', '.join(missing)}"
    )


def test_every_property_test_runs_at_least_the_agreed_examples():
    tests = 0
    for path in PROPERTY_FILES:
        module = importlib.import_module(f"tests.metrics_core.{path.stem}")
        for name, test in vars(module).items():
            if name.startswith("test_") and getattr(test, "is_hypothesis_test", False):
                tests += 1
                examples = test._hypothesis_internal_use_settings.max_examples
                assert examples >= PROPERTY_EXAMPLES, f"{path.name}::{name} runs {examples} examples"
    assert tests >= 30
