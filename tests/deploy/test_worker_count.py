"""One web-worker count everywhere: the Dockerfile's CMD (a container started without compose),
the compose file's web command (the production shape) and README's words about them. The
Dockerfile once started 3 while compose and README said 2."""

import json
import re

from .shape import ROOT, compose_read


def _workers(argv: list[str]) -> int:
    return int(argv[argv.index("--workers") + 1])


def test_the_dockerfile_compose_and_readme_start_as_many_web_workers():
    cmd = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    dockerfile = _workers(json.loads(cmd.removeprefix("CMD ")))
    compose = _workers(compose_read()["services"]["web"]["command"].split())
    readme = {int(n) for n in re.findall(r"\((\d+) in compose and the Dockerfile", (ROOT / "README.md").read_text())}
    assert (dockerfile, readme) == (compose, {compose})
