"""The old-to-new partition matrix as a self-contained SVG heatmap (for the HTML report;
Markdown gets a Mermaid sankey instead, since GitHub and GitLab strip inline SVG).

Everything from the data is XML-escaped, and characters XML 1.0 forbids are
shown escaped (:mod:`migcheck.untrusted`), so a hostile key or topic name can neither
break nor script the SVG.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from migcheck.report.formatting import ARROW, short_count
from migcheck.untrusted import html_text

#: Largest matrix (rows and columns) whose SVG cells carry their counts as text.
SVG_TEXT_MAX = 16

#: The grid's size: a cell is at most CELL_MAX px, and a large matrix shrinks its cells to
#: fit GRID_WIDTH x GRID_HEIGHT, so that the whole SVG (labels included) is about 640 px
#: wide at most and a count in a cell reads at the page's own text size.
CELL_MAX = 48
GRID_WIDTH = 560
GRID_HEIGHT = 480

_WHITE = (255, 255, 255)
_DARK_BLUE = (8, 48, 107)  # the dark end of ColorBrewer's sequential "Blues"
_STAYS = "#d62728"


def _xml(text: object) -> str:
    """Text for an XML attribute or element: escaped, one line, and no character XML 1.0
    forbids (:func:`migcheck.untrusted.html_text` shows every control character)."""
    return html_text(text)


def _fill(count: float, peak: float) -> tuple[str, float]:
    """The cell's colour and its shade in [0, 1]: white for 0, then light to dark blue.

    A non-zero cell starts at a visible tint, so one key among millions is not
    drawn as white as an empty cell.
    """
    shade = 0.0 if count <= 0 or peak <= 0 else 0.12 + 0.88 * min(count / peak, 1.0)
    r, g, b = (round(w - shade * (w - d)) for w, d in zip(_WHITE, _DARK_BLUE, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}", shade


def _tick_step(cell: int, need: float) -> int:
    """Label every step-th row or column, the smallest 1-2-5 step whose labels do not collide."""
    for exponent in itertools.count():
        for base in (1, 2, 5):
            step = base * 10**exponent
            if step * cell >= need:
                return step
    raise AssertionError("unreachable")


def heatmap_svg(
    matrix: Sequence[Sequence[int]],
    title: str,
    row_label: str = "current partition",
    col_label: str = "new partition",
) -> str:
    """A self-contained SVG heatmap of a partition matrix: one ``<rect>`` per cell.

    White to dark blue by count / max count; the cells where row == column
    (keys that keep their partition number) are outlined in red and drawn last,
    so their outline is not painted over.  Small matrices carry each count as
    text; large ones shrink their cells to 4 px and label every few rows and
    columns only.  The grid's corner is always at (60, 44) in the SVG, so a cell
    can be found in a screenshot (``tests/integration/test_render_browsers.py``).
    One element per line and no blank line, so the SVG is one HTML block.
    """
    rows = len(matrix)
    cols = max((len(row) for row in matrix), default=0)
    cell = max(4, min(CELL_MAX, GRID_WIDTH // max(cols, 1), GRID_HEIGHT // max(rows, 1)))
    with_text = rows <= SVG_TEXT_MAX and cols <= SVG_TEXT_MAX
    peak = max((v for row in matrix for v in row), default=0)
    left, top = 60, 44
    grid_w, grid_h = cols * cell, rows * cell
    width, height = max(left + grid_w + 12, 400), top + grid_h + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13" '
        f'role="img" aria-label="{_xml(title)}">',
        f"<title>{_xml(title)}</title>",
        f'<text x="{left}" y="14">{_xml(col_label)} {ARROW}</text>',
        f'<text x="14" y="{top + grid_h / 2:g}" transform="rotate(-90 14 {top + grid_h / 2:g})" '
        f'text-anchor="middle">{_xml(row_label)} {ARROW}</text>',
        f'<text x="{left}" y="{top + grid_h + 20}">white: 0, darkest: {peak:,} keys; '
        "red outline: stays</text>",
    ]
    x_step = _tick_step(cell, 8 * len(str(max(cols - 1, 0))) + 5)
    y_step = _tick_step(cell, 15)
    parts += [
        f'<text x="{left + j * cell + cell / 2:g}" y="{top - 6}" text-anchor="middle">{j}</text>'
        for j in range(0, cols, x_step)
    ]
    parts += [
        f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 5:g}" text-anchor="end">{i}</text>'
        for i in range(0, rows, y_step)
    ]
    stroke = 2 if cell >= 12 else 1
    cells = [(i, j, v) for i, row in enumerate(matrix) for j, v in enumerate(row)]
    # Empty cells inherit the group's white: most cells of a large matrix are empty
    # (a key in partition i can only go to j with i = j mod gcd), so this keeps it small.
    # Small cells get no grid line, which would grey the whole picture.
    grid = ' stroke="#e6e6e6" stroke-width="1"' if cell >= 12 else ""
    parts.append(f'<g fill="#ffffff"{grid}>')
    for i, j, v in sorted(cells, key=lambda c: c[0] == c[1]):  # the diagonal last
        fill = f' fill="{_fill(v, peak)[0]}"' if v > 0 else ""
        outline = f' stroke="{_STAYS}" stroke-width="{stroke}"' if i == j else ""
        parts.append(
            f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell}" height="{cell}"'
            f"{fill}{outline}/>"
        )
    parts.append("</g>")
    # the matrix's edge, as a path so that every <rect> is a cell
    parts.append(
        f'<path d="M{left} {top}h{grid_w}v{grid_h}h-{grid_w}Z" fill="none" stroke="#999999"/>'
    )
    if with_text:
        for i, j, v in cells:
            if v:
                colour = "#ffffff" if _fill(v, peak)[1] > 0.55 else "#1a1a1a"
                x, y = left + j * cell + cell / 2, top + i * cell + cell / 2 + 5
                parts.append(
                    f'<text x="{x:g}" y="{y:g}" text-anchor="middle" font-size="13" '
                    f'fill="{colour}">{short_count(v)}</text>'
                )
    parts.append("</svg>")
    return "\n".join(parts)
