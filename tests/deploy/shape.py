"""The production shape as the repository describes it: the Dockerfile's environment and build
commands, and docker-compose.yml's services with their commands and environment, read from the
files themselves so that the tests run what a deployment runs (no container runtime here)."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# What a container gets from outside the files: a PATH to the installed tools (the test's .venv
# stands for the image's Python), HOME, and the machine's OpenBLAS settings (see the env notes).
PASSED_THROUGH = ("HOME", "LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@dataclass
class Dockerfile:
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    run: list[str] = field(default_factory=list)


def dockerfile_read(path: Path = ROOT / "Dockerfile") -> Dockerfile:
    """ENV, WORKDIR and RUN instructions, in order (continuation lines joined)."""
    text = path.read_text().replace("\\\n", " ")
    image = Dockerfile()
    for line in text.splitlines():
        instruction, _, rest = line.strip().partition(" ")
        if instruction == "ENV":
            image.env.update(pair.split("=", 1) for pair in shlex.split(rest))
        elif instruction == "WORKDIR":
            image.workdir = rest.strip()
        elif instruction == "RUN":
            image.run.append(rest.strip())
    return image


def env_file_read(path: Path) -> dict[str, str]:
    """A compose env file: NAME=VALUE lines, comments and blank lines skipped."""
    pairs = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value.strip().strip("'\"")
    return pairs


def compose_read(path: Path = ROOT / "docker-compose.yml") -> dict:
    return yaml.safe_load(path.read_text())


def base_environment() -> dict[str, str]:
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return env


class Substitutions:
    """Ordered string replacements from the container world to this machine's (service host names,
    ports, volume paths), each of which must apply somewhere: a test notices when the files change."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.pairs = pairs
        self.used: set[str] = set()

    def __call__(self, text: str) -> str:
        for old, new in self.pairs:
            if old in text:
                self.used.add(old)
                text = text.replace(old, new)
        return text

    def unused(self) -> list[str]:
        return [old for old, _ in self.pairs if old not in self.used]
