"""A report as a sequence of blocks, laid out as plain text or as Markdown.

Each report (``analyze``, ``app``, ``plan``) says once, as blocks, what it
shows; these two layouts are all that differs between its text and Markdown
forms, so a value never reaches one format and misses the other.  Everything
from the data is escaped where it lands in Markdown: HTML, Markdown punctuation
and line breaks in text and table cells.  A figure is a Mermaid sankey and a shaded
table in Markdown (GitHub and GitLab strip inline SVG); the HTML layout
(:mod:`migcheck.report.htmlpage`) draws it as an SVG heatmap.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from migcheck.report.formatting import format_count, short_count
from migcheck.report.mermaid import grouping_note, sankey_block
from migcheck.untrusted import Name, html_text, markdown, md_code, md_fence, visible

#: Widest partition matrix drawn cell by cell as text; wider ones are in the JSON
#: and Markdown reports (and narrower ones too, if they do not fit the width).
TEXT_MATRIX_MAX_COLUMNS = 32

#: Widest partition matrix shown as a shaded table in Markdown; wider ones are collapsed.
TABLE_MATRIX_MAX_COLUMNS = 16


@dataclass(frozen=True)
class Block:
    """One piece of a report, for either layout.

    ``kind`` is ``"h"`` (heading), ``"sub"`` (sub-heading), ``"p"`` (paragraph),
    ``"code"`` (verbatim), ``"list"`` (``items``), ``"table"`` (``header`` and
    ``rows``, titled ``text`` if set; ``align`` holds an ``l`` or ``r`` per
    column, ``l`` where it is short), ``"details"`` (a table a reader opens on purpose:
    collapsed in Markdown and HTML, left out of text) or ``"figure"`` (a partition ``matrix``,
    keys from current partition (row) to new partition (column), titled ``text``:
    a sankey and a shaded table in Markdown, a heatmap in HTML, aligned numbers in text).
    """

    kind: str
    text: str = ""
    items: Sequence[str] = ()
    header: Sequence[str] = ()
    rows: Sequence[Sequence[str]] = ()
    align: str = ""
    matrix: Sequence[Sequence[int]] = ()


def md_table(
    header: Sequence[str], align: Sequence[str], rows: Sequence[Sequence[str]]
) -> list[str]:
    """Lines of a Markdown table; cells must already be escaped."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


# --- text -------------------------------------------------------------------------------


def blocks_text(blocks: Iterable[Block], width: int | None = None) -> str:
    """Plain text for a terminal or a CI log: underlined headings, aligned tables.

    With a ``width``, paragraphs, list items and table cells wrap to fit it, and
    a matrix that does not fit is left to the other formats (a number is never
    squeezed); without one, each line is as long as its content.
    """
    out: list[str] = []
    for b in blocks:
        out += _TEXT[b.kind](_visible(b), width)
    return "\n".join(out).strip("\n") + "\n"


def _visible(b: Block) -> Block:
    """The block with every value shown on one line, control characters escaped: a
    name from the cluster can neither start a line of its own nor drive the terminal."""
    return replace(
        b,
        text=visible(b.text),
        items=[visible(x) for x in b.items],
        header=[visible(x) for x in b.header],
        rows=[[_keep_name(x, visible(x)) for x in row] for row in b.rows],
    )


def _wrap(text: str, width: int | None, first: str = "", rest: str = "") -> list[str]:
    """``text`` as lines of at most ``width``; options and keys are not split at hyphens."""
    if width is None:
        return [first + text]
    lines = textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )
    return lines or [first]


def _keep_name(value: str, shown: str) -> str:
    return Name(shown) if isinstance(value, Name) else shown


def _text_heading(b: Block, width: int | None) -> list[str]:
    lines = _wrap(b.text, width)
    return ["", *lines, "-" * max(map(len, lines))]


def _text_sub(b: Block, width: int | None) -> list[str]:
    return ["", *_wrap(b.text + ":", width)]


def _text_list(b: Block, width: int | None) -> list[str]:
    return [line for item in b.items for line in _wrap(item, width, "  - ", "    ")]


def _text_table(b: Block, width: int | None) -> list[str]:
    table = [[str(x) for x in row] for row in (b.header, *b.rows)]
    widths = [max(map(len, col)) for col in zip(*table, strict=False)]
    if width is not None:
        widths = _fit(table, widths, width - 2 * (len(widths) - 1))
    align = b.align.ljust(len(widths), "l")
    lines = ["", *(_wrap(b.text, width) if b.text else [])]
    for row in table:
        cells = [
            (textwrap.wrap(x, w, break_on_hyphens=False) or [""]) if len(x) > w else [x]
            for x, w in zip(row, widths, strict=False)
        ]
        for k in range(max(map(len, cells))):
            parts = [c[k] if k < len(c) else "" for c in cells]
            lines.append(_aligned(parts, widths, align, "  "))
    return lines


def _fit(table: list[list[str]], widths: list[int], room: int) -> list[int]:
    """Column widths whose sum fits ``room``: the widest column that can still wrap at
    a space gives way first; words are broken only when no column can."""
    longest_word = [
        max((len(w) for x in col for w in x.split()), default=1)
        for col in zip(*table, strict=False)
    ]
    widths = list(widths)
    while sum(widths) > room:
        i = max(range(len(widths)), key=lambda i: (widths[i] > longest_word[i], widths[i]))
        if widths[i] <= 1:
            break
        widths[i] -= 1
    return widths


def _aligned(cells: Sequence[str], widths: Sequence[int], align: str, sep: str) -> str:
    padded = (
        x.rjust(w) if a == "r" else x.ljust(w)
        for x, w, a in zip(cells, widths, align, strict=False)
    )
    return sep.join(padded).rstrip()


def _text_figure(b: Block, width: int | None) -> list[str]:
    """The matrix, exact if it fits, else in short counts, else a line saying where it is."""
    rows, cols = len(b.matrix), max(map(len, b.matrix), default=0)
    if cols <= TEXT_MATRIX_MAX_COLUMNS:
        for fmt in (format_count, short_count):
            lines = _text_matrix(b.matrix, cols, fmt)
            if width is None or max(map(len, lines)) <= width:
                return ["", *_wrap(f"{b.text}; * stays", width), *lines]
    note = (
        f"{rows} x {cols} matrix: too wide to draw as text; "
        "it is in --format json and --format markdown."
    )
    return _wrap(note, width)


def _text_matrix(
    matrix: Sequence[Sequence[int]], cols: int, fmt: Callable[[float], str]
) -> list[str]:
    """Right-aligned counts one space apart; ``*`` marks the keys that stay, ``.`` no key."""
    table = [["", *map(str, range(cols))]]
    table += [
        [str(i), *(_cell(v, i == j, fmt) for j, v in enumerate(row))]
        for i, row in enumerate(matrix)
    ]
    widths = [max(map(len, col)) for col in zip(*table, strict=False)]
    return [_aligned(row, widths, "r" * len(widths), " ") for row in table]


def _cell(count: int, stays: bool, fmt: Callable[[float], str]) -> str:
    return (fmt(count) if count or stays else ".") + ("*" if stays else "")


def _text_code(b: Block, width: int | None) -> list[str]:
    return ["    " + b.text]  # verbatim: an error message is searched for as printed


_TEXT: dict[str, Callable[[Block, int | None], list[str]]] = {
    "h": _text_heading,
    "sub": _text_sub,
    "p": lambda b, width: _wrap(b.text, width),
    "code": _text_code,
    "list": _text_list,
    "table": _text_table,
    "figure": _text_figure,
    "details": lambda b, width: [],  # what a user opens on purpose: JSON, Markdown, HTML
}


# --- Markdown ---------------------------------------------------------------------------


def blocks_markdown(blocks: Iterable[Block]) -> str:
    """Markdown for a change ticket: every value escaped where it lands."""
    out: list[str] = []
    first = True
    for b in blocks:
        if b.kind == "h":
            out += ["", ("# " if first else "## ") + markdown(b.text), ""]
            first = False
        else:
            out += _MARKDOWN[b.kind](b)
    return "\n".join(out).strip("\n") + "\n"


def _md_code(b: Block) -> list[str]:
    return [*md_fence([visible(b.text)]), ""]


def _md_table(b: Block) -> list[str]:
    align = b.align.ljust(len(b.header), "l")
    title = [markdown(b.text), ""] if b.text else []
    return [
        *title,
        *md_table(
            [markdown(h, line_start=False) for h in b.header],
            ["---:" if a == "r" else "---" for a in align],
            [[_md_cell_text(x) for x in row] for row in b.rows],
        ),
        "",
    ]


def _md_cell_text(value: str) -> str:
    if isinstance(value, Name):
        return md_code(value, in_table=True)
    return markdown(value, line_start=False)


def _md_figure(b: Block) -> list[str]:
    """The flows as a Mermaid sankey (the picture GitHub and GitLab draw; they strip
    inline SVG), then the matrix as a shaded table of numbers, collapsed when wide."""
    if not any(v > 0 for row in b.matrix for v in row):  # mermaid refuses an empty sankey
        return [markdown(b.text), "", "No keys: nothing flows.", "", *_md_matrix(b.matrix)]
    note = grouping_note(b.matrix)
    return [
        markdown(b.text),
        "",
        *sankey_block(b.matrix),
        "",
        "Keys flow from their current partition (left) to their new one (right); a key "
        "from pN (now) to pN (new) keeps its partition number, every other key moves."
        + (f" {note}" if note else ""),
        "",
        *_md_matrix(b.matrix),
    ]


#: The heatmap table's shades: a cell's share of the largest cell, by quarters.
_SHADES = "\u2591\u2592\u2593\u2588"


def _md_cell(count: int, peak: int, stays: bool) -> str:
    """A heatmap-like cell: its shade and count, bold where keys keep their partition."""
    if count <= 0:
        return "\u00b7"
    shade = _SHADES[min(3, max(0, math.ceil(4 * count / peak) - 1))]
    return f"**{shade} {count}**" if stays else f"{shade} {count}"


def _md_matrix(matrix: Sequence[Sequence[int]]) -> list[str]:
    """The matrix as a table: shaded in view up to :data:`TABLE_MATRIX_MAX_COLUMNS`
    columns, else plain numbers in a collapsed ``<details>``, since nobody scans it."""
    cols = max(map(len, matrix), default=0)
    header = ["from \\\\ to", *map(str, range(cols))]
    if cols > TABLE_MATRIX_MAX_COLUMNS:
        numbers = md_table(
            header, ["---:"] * (cols + 1), [[str(i), *map(str, r)] for i, r in enumerate(matrix)]
        )
        summary = "Partition matrix as numbers (keys; rows: current, columns: new partition)"
        return [f"<details><summary>{summary}</summary>", "", *numbers, "", "</details>", ""]
    peak = max((v for row in matrix for v in row), default=0)
    rows = [
        [str(i), *(_md_cell(v, peak, i == j) for j, v in enumerate(row))]
        for i, row in enumerate(matrix)
    ]
    legend = (
        "Rows: current partition; columns: new partition. Shade: a cell's share of the "
        "largest (\u2591 up to 25%, \u2592 50%, \u2593 75%, \u2588 more); bold: keys "
        "that keep their partition number."
    )
    return [legend, "", *md_table(header, ["---:"] * (cols + 1), rows), ""]


_MARKDOWN: dict[str, Callable[[Block], list[str]]] = {
    "sub": lambda b: ["", "### " + markdown(b.text), ""],
    "p": lambda b: [markdown(b.text), ""],
    "code": _md_code,
    "list": lambda b: [*(f"- {markdown(item)}" for item in b.items), ""],
    "table": _md_table,
    "figure": _md_figure,
    "details": lambda b: [
        f"<details><summary>{html_text(b.text)}</summary>",
        "",
        *_md_table(replace(b, text="")),
        "</details>",
        "",
    ],
}
