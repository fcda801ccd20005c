"""A report's blocks as one self-contained HTML page (``--format html``).

The page carries everything it shows: inline CSS, each figure as an inline SVG
heatmap (:mod:`migcheck.report.svg`), no script, no font, no external asset, so
it opens the same from a ticket's attachment, a CI artifact or a laptop offline.
Everything from the data is HTML-escaped where it lands (the SVG escapes its
own text).  Each heatmap sits in ``<div class="heatmap" id="heatmap-K">`` (K from
1 in page order) with its grid at a fixed place inside the SVG, so a reader can
link to it and a test can find a cell in a screenshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from migcheck.report.badge import Badge, badge_html
from migcheck.report.blocks import Block
from migcheck.report.svg import heatmap_svg
from migcheck.untrusted import Name, html_text

#: Plain, print-friendly styling; system fonts only (no web font to fetch).
_CSS = """
body { margin: 0; background: #ffffff; color: #1f2328;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1400px; box-sizing: border-box; padding: 20px 32px; overflow-wrap: break-word; }
p, li { max-width: 100ch; }
h1 { font-size: 24px; margin: 0 0 12px; overflow-wrap: anywhere; }
h2 { font-size: 19px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de;
  overflow-wrap: anywhere; }
h3 { font-size: 16px; margin: 20px 0 6px; overflow-wrap: anywhere; }
.verdict { margin: 0 0 12px; font-size: 16px; }
.badge { display: inline-block; color: #ffffff; font-weight: 700; font-size: 20px;
  letter-spacing: 0.04em; padding: 4px 14px; border-radius: 6px; margin-right: 8px; }
.scroll { overflow-x: auto; max-width: 100%; margin: 6px 0 14px; }
table { border-collapse: collapse; }
caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; vertical-align: top; min-width: 6em; }
th { background: #f6f8fa; text-align: left; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name, td:first-child { white-space: nowrap; }
pre { background: #f6f8fa; padding: 8px 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
figure { margin: 8px 0 16px; }
figcaption { font-weight: 600; margin-bottom: 4px; overflow-wrap: anywhere; }
.heatmap { margin: 0; padding: 0; overflow-x: auto; max-width: 100%; }
.heatmap svg { display: block; }
details { margin: 6px 0; }
@media (max-width: 700px) { main { padding: 12px 12px; } h1 { font-size: 20px; } }
""".strip()


def blocks_html(blocks: Iterable[Block], badge: Badge | None = None) -> str:
    """The whole page: its title is the first heading's text; the verdict's ``badge``,
    when the report has one, comes first, where a reader looks before anything else."""
    body: list[str] = [badge_html(badge)] if badge else []
    title = ""
    figures = 0
    for b in blocks:
        if b.kind == "h":
            level = 2 if title else 1  # the first heading is the page's, as in Markdown
            body.append(f"<h{level}>{_e(b.text)}</h{level}>")
            title = title or b.text
        elif b.kind == "figure":
            figures += 1
            body.append(_figure(b, figures))
        else:
            body.append(_HTML[b.kind](b))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title>",
            f"<style>\n{_CSS}\n</style>",
            "</head>",
            "<body><main>",
            *body,
            "</main></body>",
            "</html>",
            "",
        ]
    )


def _e(value: object) -> str:
    return html_text(value)


def _list(b: Block) -> str:
    return "<ul>\n" + "\n".join(f"<li>{_e(item)}</li>" for item in b.items) + "\n</ul>"


def _table(b: Block) -> str:
    align = b.align.ljust(len(b.header), "l")
    return _html_table(b.header, b.rows, align, caption=b.text, header_align=align)


def _html_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    align: str,
    caption: str = "",
    header_align: str = "",
) -> str:
    """A table, in a box that scrolls sideways when the page is narrower than the table;
    a column aligned ``r`` is right-aligned with tabular digits, and a name (a topic, a
    group id) stays on one line rather than breaking at its hyphens."""
    cls = [' class="r"' if a == "r" else "" for a in align]
    hcls = [' class="r"' if a == "r" else "" for a in header_align.ljust(len(header), "l")]
    lines = ['<div class="scroll"><table>']
    if caption:
        lines.append(f"<caption>{_e(caption)}</caption>")
    lines.append(
        "<tr>"
        + "".join(f"<th{c}>{_e(h)}</th>" for h, c in zip(header, hcls, strict=False))
        + "</tr>"
    )
    lines += [
        "<tr>" + "".join(_cell(x, c) for x, c in zip(row, cls, strict=False)) + "</tr>"
        for row in rows
    ]
    return "\n".join([*lines, "</table></div>"])


def _cell(value: str, cls: str) -> str:
    """A cell; a figure's interval, ``~5,900 (95%: 5,700-6,150)``, goes on a line of its own
    below the figure, each unbroken, so a number never splits across lines."""
    if cls:
        return f"<td{cls}>{'<br>('.join(_e(part) for part in value.split(' ('))}</td>"
    if isinstance(value, Name):
        cls = ' class="name"'
    return f"<td{cls}>{_e(value)}</td>"


def _figure(b: Block, number: int) -> str:
    """The heatmap, its legend and the same numbers in a collapsed table."""
    cols = max(map(len, b.matrix), default=0)
    numbers = _html_table(
        ["from \\ to", *map(str, range(cols))],
        [[str(i), *map(str, row)] for i, row in enumerate(b.matrix)],
        "r" * (cols + 1),
        header_align="r" * (cols + 1),
    )
    return "\n".join(
        [
            "<figure>",
            f"<figcaption>{_e(b.text)}</figcaption>",
            f'<div class="heatmap" id="heatmap-{number}">',
            heatmap_svg(b.matrix, b.text),
            "</div>",
            "<p>Darker cells hold more keys. Keys in the red-outlined cells keep their "
            "partition number; every other key moves.</p>",
            "<details><summary>Partition matrix as numbers (keys; rows: current partition, "
            "columns: new partition)</summary>",
            numbers,
            "</details>",
            "</figure>",
        ]
    )


_HTML: dict[str, Callable[[Block], str]] = {
    "sub": lambda b: f"<h3>{_e(b.text)}</h3>",
    "p": lambda b: f"<p>{_e(b.text)}</p>",
    "code": lambda b: f"<pre><code>{_e(b.text)}</code></pre>",
    "list": _list,
    "table": _table,
    "details": lambda b: (
        f"<details><summary>{_e(b.text)}</summary>\n" + _table(replace(b, text="")) + "\n</details>"
    ),
}
