"""The README a newcomer finishes (issue 43): short, its links and anchors alive, and
naming the two set-up commands and the install route.

The README once grew to over 1,000 lines; the details moved to docs/, so what holds it
together now is links, and a moved heading silently breaks one.  Anchors follow GitHub's
rule (lower case, punctuation dropped, spaces to hyphens, ``-1``, ``-2`` for repeats).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = sorted([README, *(REPO / "docs").rglob("*.md")])

#: An inline link or image: [text](target) or [text](target "title").
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+).+?\1")


def outside_fences(text: str) -> list[str]:
    """The lines outside fenced code blocks (a fence closes with a line of at least its
    opener's run of the same character): a link or heading there is only text."""
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
            else:
                out.append(line)
        elif closes(line, m, fence):
            fence = None
    return out


def closes(line: str, m: re.Match[str] | None, fence: str) -> bool:
    """Whether ``line`` (its fence match ``m``) closes the block ``fence`` opened."""
    run = m.group(1) if m else ""
    return line.strip() == run != "" and run[0] == fence[0] and len(run) >= len(fence)


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading's text: inline markup and punctuation dropped,
    lower case, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def heading_anchors(page: Path) -> set[str]:
    """The anchors of ``page``'s headings, code spans kept as text (GitHub keeps their
    words: ``## `migcheck app`: ...`` is ``#migcheck-app-...``)."""
    found: set[str] = set()
    seen: Counter[str] = Counter()
    for line in outside_fences(page.read_text()):
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            base = github_anchor(h.group(1))
            found.add(f"{base}-{seen[base]}" if seen[base] else base)
            seen[base] += 1
    return found


def links(page: Path) -> list[str]:
    """The targets of the inline links in ``page``'s prose (code spans are not links)."""
    lines = (CODE_SPAN.sub("", line) for line in outside_fences(page.read_text()))
    return [m.group(1) for line in lines for m in LINK.finditer(line)]


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)


def test_github_anchor_follows_githubs_rule() -> None:
    # Worked by hand from GitHub's rendering of headings in this repository.
    assert github_anchor("Exit codes") == "exit-codes"
    assert github_anchor("The cache under `~/.cache/migcheck`") == "the-cache-under-cachemigcheck"
    assert (
        github_anchor("The `migcheck partition --format json` output")
        == "the-migcheck-partition---format-json-output"
    )


def test_the_readme_is_at_most_350_lines() -> None:
    assert len(README.read_text().splitlines()) <= 350


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in filter(relative, links(page)):
        path, _, anchor = target.partition("#")
        file = (page.parent / unquote(path)).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in heading_anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert broken == []


def test_the_readme_names_the_set_up_commands_and_the_install_route() -> None:
    text = README.read_text()
    for command in ("./scripts/demo", "./scripts/test", "pip install .", "pipx install ."):
        assert command in text, command
    assert re.search(r"The tool is then `migcheck`", text)


def test_the_readme_shows_one_example_of_every_command() -> None:
    text = README.read_text()
    for command in ("partition", "analyze", "readers", "app", "plan", "runbook", "copy", "gate"):
        assert f"$ migcheck {command} " in text, command
    assert "$ migcheck render " in text
