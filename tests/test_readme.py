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


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_contents_list_every_section_and_each_anchor_is_a_heading():
    text = (ROOT / "README.md").read_text()
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # a code block's # is a comment
    headings = re.findall(r"^(##+) (.+)$", prose, flags=re.MULTILINE)
    sections = [_slug(title) for level, title in headings if level == "##" and title != "Contents"]
    contents = prose.split("\n## Contents\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"\]\(#([^)]+)\)", contents)
    assert [anchor for anchor in listed if anchor in sections] == sections
    anchors = {_slug(title) for _, title in headings}
    assert [anchor for anchor in re.findall(r"\]\(#([^)]+)\)", prose) if anchor not in anchors] == []


def test_the_commands_heading_counts_its_commands():
    """It said "Two commands" over three."""
    text = (ROOT / "README.md").read_text()
    numbers = {"Two": 2, "Three": 3, "Four": 4}
    word, block = re.search(r"^## (\w+) commands\n\n```\n(.*?)```", text, flags=re.MULTILINE | re.DOTALL).groups()
    assert numbers[word] == len(block.strip().splitlines())
