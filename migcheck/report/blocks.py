"""A report as a sequence of blocks, laid out as plain text or as Markdown.

The ``app`` and ``plan`` reports each say once, as blocks, what they show;
these two layouts are all that differs between their text and Markdown forms,
so a value never reaches one format and misses the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from migcheck.report.markdown import md_escape, md_table


@dataclass(frozen=True)
class Block:
    kind: str  # "h" heading, "p" paragraph, "code" verbatim, "list", "table"
    text: str = ""
    items: Sequence[str] = ()
    header: Sequence[str] = ()
    rows: Sequence[Sequence[str]] = ()


def blocks_text(blocks: Iterable[Block]) -> str:
    """Plain text for a terminal or a CI log: underlined headings, aligned tables."""
    out: list[str] = []
    for b in blocks:
        if b.kind == "h":
            out += ["", b.text, "-" * len(b.text)]
        elif b.kind in ("p", "code"):
            out.append(("    " if b.kind == "code" else "") + b.text)
        elif b.kind == "list":
            out += [f"  - {item}" for item in b.items]
        else:
            out += _text_table(b.header, b.rows)
    return "\n".join(out).strip("\n") + "\n"


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    lines = [
        "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)).rstrip()
        for row in [header, *rows]
    ]
    return ["", *lines]


def blocks_markdown(blocks: Iterable[Block]) -> str:
    """Markdown for a change ticket: every value escaped where it lands."""
    out: list[str] = []
    first = True
    for b in blocks:
        if b.kind == "h":
            out += ["", ("# " if first else "## ") + md_escape(b.text), ""]
            first = False
        elif b.kind == "p":
            out += [md_escape(b.text), ""]
        elif b.kind == "code":
            fence = "````" if "```" in b.text else "```"
            out += [fence, b.text.replace("\n", " "), fence, ""]
        elif b.kind == "list":
            out += [f"- {md_escape(item)}" for item in b.items] + [""]
        else:
            cells = [[md_escape(x) for x in row] for row in b.rows]
            out += [*md_table([md_escape(h) for h in b.header], ["---"] * len(b.header), cells), ""]
    return "\n".join(out).strip("\n") + "\n"
