"""docs/rules.md holds one page per rule code, under the anchor the reports link to.

The reports link ``docs/rules.md#<Rule.anchor>``: a code without its section, or a section
under another anchor, is a dead link in every PR comment that cites it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migcheck.model.gate import GATE_RULES

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
CODE = re.compile(r"\bMC\d{3}\b")


def _lines_outside_fences() -> list[str]:
    """The doc's lines, with fenced code blocks left out (a ``## x`` in a fence is no
    heading)."""
    out: list[str] = []
    fenced = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading's text: lower case, punctuation but ``-`` and ``_``
    dropped, each space a ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _sections() -> dict[str, list[str]]:
    """Each ``## `` section's anchor and its lines (a repeated anchor keeps the first; the
    count test below sees every heading)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in _lines_outside_fences():
        if line.startswith("## "):
            current = sections.setdefault(github_anchor(line[3:]), [])
        elif current is not None:
            current.append(line)
    return sections


def _headings() -> list[str]:
    return [line[3:].strip() for line in _lines_outside_fences() if line.startswith("## ")]


def test_the_anchor_helper_agrees_with_githubs_rule() -> None:
    # Hand-written from how GitHub names headings' anchors.
    assert github_anchor("MC101") == "mc101"
    assert github_anchor("Accepting a finding") == "accepting-a-finding"
    assert github_anchor("`migcheck gate` rule codes") == "migcheck-gate-rule-codes"


@pytest.mark.parametrize("code", sorted(GATE_RULES))
def test_every_code_has_exactly_one_section_under_its_anchor(code: str) -> None:
    anchors = [github_anchor(h) for h in _headings()]
    assert anchors.count(GATE_RULES[code].anchor) == 1


@pytest.mark.parametrize("code", sorted(GATE_RULES))
def test_every_section_says_what_happens_why_and_the_fix(code: str) -> None:
    body = "\n".join(_sections()[GATE_RULES[code].anchor])
    for part in ("**What happens.**", "**Why.**", "**Fix.**"):
        assert part in body, f"{code}: {part} missing"
    assert f"Verdict `{GATE_RULES[code].verdict.value}`" in body


def test_no_section_names_a_code_missing_from_rules() -> None:
    named = {c for h in _headings() for c in CODE.findall(h)}
    assert named - set(GATE_RULES) == set()
    # Nor does any text or link: a code cited in the doc is a code the gate can cite.
    cited = set(CODE.findall(DOC.read_text(encoding="utf-8")))
    assert cited - set(GATE_RULES) == set()


def test_every_in_page_link_has_its_anchor() -> None:
    anchors = set(_sections())
    links = set(re.findall(r"\]\(#([^)]+)\)", DOC.read_text(encoding="utf-8")))
    assert links - anchors == set()


def test_the_index_table_says_what_rules_say() -> None:
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in _lines_outside_fences()
        if line.startswith("| [MC")
    ]
    expected = [
        [
            f"[{r.code}](#{r.anchor})",
            f"`{r.verdict.value}`",
            "yes" if r.blocks else "no",
            r.title,
        ]
        for r in GATE_RULES.values()
    ]
    assert rows == expected


def test_a_blocking_code_says_how_to_accept_it_and_a_silent_one_says_it_never_blocks() -> None:
    sections = _sections()
    for rule in GATE_RULES.values():
        body = "\n".join(sections[rule.anchor])
        if rule.blocks:
            assert f"`verdict: {rule.code}`" in body, rule.code
        else:
            assert "never blocking" in body, rule.code
