"""The README stands alone: every link in it resolves inside the repository or is a web address."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_every_readme_link_resolves_inside_the_repository():
    links = LINK.findall((ROOT / "README.md").read_text())
    assert "docs/cli.md" in links
    for link in links:
        if re.match(r"https?://", link):
            assert "../shared" not in link, link
            continue
        target = (ROOT / link.split("#", 1)[0]).resolve()
        assert target.is_relative_to(ROOT), f"{link} leaves the repository"
        assert target.exists(), f"{link} does not exist"


def test_the_cli_reference_lives_in_the_repository():
    text = (ROOT / "docs" / "cli.md").read_text()
    for option in ("--batch", "--horizon", "cs_low", "unsure_low", "--engine", "--scheduler", "--seed", "--n-boot"):
        assert option in text, option
    assert "../shared" not in text and "abcde-spec" not in text
