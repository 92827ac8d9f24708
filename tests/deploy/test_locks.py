"""The hashed locks: every pin hashed, the image's set the same versions as the tested set, and
every dependency of pyproject.toml's extras in them (run `make lock` after changing one)."""

import importlib.util
import re
import tomllib
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;]+)(?:\s*;\s*([^\\]+?))?\s*\\?$")


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_read(name: str) -> dict[tuple[str, str], str]:
    """(package, environment marker) → version; every pin followed by at least one hash."""
    lines = (ROOT / "requirements" / name).read_text().splitlines()
    pins = {}
    for number, line in enumerate(lines):
        match = PIN.match(line)
        if match:
            assert lines[number + 1].strip().startswith("--hash=sha256:"), f"{name}: {line} has no hash"
            pins[(_normalised(match[1]), (match[3] or "").strip())] = match[2]
    return pins


def _requirements(extra: str | None = None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {_normalised(re.split(r"[\[<>=;! ]", requirement, maxsplit=1)[0]) for requirement in names}


def test_the_locks_pin_every_dependency_with_hashes():
    dev, image = lock_read("dev.lock"), lock_read("image.lock")
    assert _requirements() | _requirements("web") | _requirements("dev") <= {name for name, _ in dev}
    assert _requirements() | _requirements("web") | _requirements("dask") <= {name for name, _ in image}


def test_the_image_runs_the_versions_the_tests_ran():
    dev, image = lock_read("dev.lock"), lock_read("image.lock")
    assert {key: version for key, version in image.items() if dev.get(key) != version} == {}


def test_make_install_and_the_image_install_from_the_locks():
    makefile, dockerfile = (ROOT / "Makefile").read_text(), (ROOT / "Dockerfile").read_text()
    assert "LOCK := requirements/dev.lock" in makefile and "--require-hashes -r $(LOCK)" in makefile
    # The installer too: uv, pinned with its hashes, installed by pip before it installs anything.
    assert "UV_LOCK := requirements/uv.lock" in makefile
    assert "$(BIN)/pip install --quiet --require-hashes -r $(UV_LOCK)" in makefile
    assert [name for name, _ in lock_read("uv.lock")] == ["uv"]
    assert "$(LOCK_COMPILE) requirements/uv.in" in makefile  # and make lock pins it again
    assert "pip install --no-cache-dir --require-hashes -r requirements/image.lock" in dockerfile


def test_make_install_compiles_the_bytecode():
    """As pip does: a process that may not write bytecode (PYTHONDONTWRITEBYTECODE) would otherwise
    compile every module it imports, at every start. A module that nothing imports shows it."""
    never_imported = Path(django.__file__).parent / "contrib" / "admin" / "tests.py"
    assert Path(importlib.util.cache_from_source(str(never_imported))).exists()
