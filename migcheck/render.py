"""Rendering a report dict as text (terminal), JSON (machines) or Markdown (change tickets).

Pure functions: each takes the report dict (the ``--format json`` schema in
``docs/report-schema.md``) and returns a string.  Nothing here does I/O or
computes a figure the analysis did not; estimates (sampled topics) are always
shown with their interval, so nobody takes an extrapolation for a count.

Everything that comes from the data (topic names, keys, verdicts, paths) is
escaped for where it lands: rich markup and emoji codes are off in the
terminal, Markdown punctuation and HTML are escaped in Markdown, XML in SVG.
"""

from __future__ import annotations

import html
import io
import itertools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

#: The formats :func:`render` knows, as the CLI offers them.
FORMATS = ("text", "json", "markdown")

#: Widest old-to-new matrix drawn cell by cell in the terminal; wider ones are
#: in the JSON and Markdown reports (and narrower ones too, if they do not fit).
TEXT_MATRIX_MAX_COLUMNS = 32

#: Largest matrix (rows and columns) whose SVG cells carry their counts as text.
SVG_TEXT_MAX = 16

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_DASH = "\u2013"  # en dash between interval bounds
_ARROW = "\u2192"

# --- number formatting ---------------------------------------------------------------


def format_bytes(n: float) -> str:
    """Bytes in binary units (``0 B``, ``1023 B``, ``1.0 KiB``, ``1.5 MiB``).

    Rounds before choosing the unit, so a value just under a boundary reads
    ``1.0 MiB`` rather than ``1024.0 KiB``.  Exact bytes stay in the JSON.
    """
    if abs(round(n)) < 1024:
        return f"{round(n)} B"
    value = float(n)
    for unit in _UNITS[1:]:
        value /= 1024
        if abs(round(value, 1)) < 1024 or unit == _UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_count(n: float) -> str:
    """A count with thousands separators; estimates arrive as floats and are rounded."""
    return f"{round(n):,}"


def format_fraction(x: float) -> str:
    """A share as a percentage that never rounds a movement away.

    ``0.0%`` would read as "nothing moves" when 3 keys of a million do, which
    is the one thing a migration check must not say; so tiny non-zero shares
    read ``<0.1%`` and almost-all reads ``>99.9%``.
    """
    if 0 < x < 0.0005:
        return "<0.1%"
    if 0.9995 <= x < 1:
        return ">99.9%"
    return f"{x:.1%}"


def format_estimate(
    value: float,
    interval: Sequence[float] | None,
    fmt: Callable[[float], str] = format_count,
    label: str = "95%",
    approx: bool = False,
) -> str:
    """An exact figure as is; an estimate as ``~912 (95%: 850-980)``, with an en dash.

    The interval is what marks a figure as an estimate in the schema.  ``approx``
    marks an estimate the report carries no interval for (e.g. a sampled
    topic's state size) with ``~`` alone.
    """
    if interval is None:
        return ("~" if approx else "") + fmt(value)
    lo, hi = interval
    return f"~{fmt(value)} ({label}: {fmt(lo)}{_DASH}{fmt(hi)})"


def _short(n: float) -> str:
    """A count in at most four characters (``9999``, ``12k``, ``1.2M``) for heatmap cells."""
    n = round(n)
    if abs(n) < 10_000:
        return str(n)
    for unit, div in (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)):
        x = n / div
        if abs(x) < 9.95:
            return f"{x:.1f}{unit}"
        if abs(x) < 999.5:
            return f"{x:.0f}{unit}"
    return f"{n:.0e}"


# --- JSON ------------------------------------------------------------------------------

#: The documented key order of each object in the schema (docs/report-schema.md).
#: The analysis builds its dicts in whatever order its steps finish; the JSON a
#: person diffs between two runs should not depend on that.
_KEY_ORDER: dict[str, tuple[str, ...]] = {
    "report": (
        "migcheck_version",
        "generated_at",
        "source",
        "mode",
        "sample_per_partition",
        "candidates",
        "topics",
        "gate",
    ),
    "source": ("kind", "bootstrap_servers", "path"),
    "topic": (
        "topic",
        "cleanup_policy",
        "current_partitions",
        "partitioner",
        "partitioner_forced",
        "predictable",
        "conformance",
        "conformance_by_partitioner",
        "records_total",
        "records_scanned",
        "null_key_records",
        "unhashed_records",
        "non_conforming_records",
        "non_conforming_keys",
        "sampled",
        "distinct_keys",
        "distinct_keys_interval",
        "state",
        "state_records",
        "state_bytes",
        "partitions",
        "candidates",
        "verdict",
    ),
    "partition": ("partition", "log_start_offset", "log_end_offset", "records_scanned"),
    "candidate": (
        "partitions",
        "moved_keys",
        "moved_keys_interval",
        "moved_fraction",
        "moved_fraction_interval",
        "expected_moved_fraction",
        "moved_records",
        "moved_records_interval",
        "moved_bytes",
        "moved_bytes_interval",
        "matrix",
        "load",
        "skew",
        "moved_key_sample",
    ),
    "load": ("partition", "keys", "bytes"),
    "moved_key": ("key", "key_hex", "partition", "new_partition"),
    "verdict": ("level", "text"),
    "gate": ("fail_if_moved", "max_moved_fraction", "failed", "reason"),
}

#: Which kind of object a field holds (for a list: each item's kind).
_CHILD_KIND: dict[tuple[str, str], str] = {
    ("report", "source"): "source",
    ("report", "topics"): "topic",
    ("report", "gate"): "gate",
    ("topic", "partitions"): "partition",
    ("topic", "candidates"): "candidate",
    ("topic", "verdict"): "verdict",
    ("candidate", "load"): "load",
    ("candidate", "moved_key_sample"): "moved_key",
}


def _ordered(value: Any, kind: str) -> Any:
    """``value`` with its keys in documented order; unknown keys follow in their own order."""
    if isinstance(value, list | tuple):
        return [_ordered(v, kind) for v in value]
    if not isinstance(value, dict):
        return value
    order = _KEY_ORDER[kind]
    keys = [k for k in order if k in value] + [k for k in value if k not in order]
    return {
        k: _ordered(value[k], _CHILD_KIND[(kind, k)]) if (kind, k) in _CHILD_KIND else value[k]
        for k in keys
    }


def render_json(report: dict[str, Any]) -> str:
    """The report as indented JSON in the documented key order, ending with a newline.

    Strict JSON: a NaN or infinity raises ``ValueError`` instead of writing
    ``NaN``, which ``jq`` and most parsers reject; the analysis never produces one.
    """
    ordered = _ordered(report, "report")
    return json.dumps(ordered, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --- what text and Markdown share ------------------------------------------------------


def _source(report: dict[str, Any]) -> str:
    source = report["source"]
    if source.get("kind") == "kafka":
        return f"Kafka at {source.get('bootstrap_servers')}"
    if source.get("kind") == "file":
        return f"key file {source.get('path')}"
    return ", ".join(f"{k} {v}" for k, v in source.items())


def _mode(report: dict[str, Any]) -> str:
    if report["mode"] == "full":
        return "full scan: every record read, figures are exact"
    per = report.get("sample_per_partition")
    size = f"up to {per:,} records per partition" if per else "a sample"
    return f"sample of {size}; estimates are marked ~ with their intervals"


def _gate(report: dict[str, Any]) -> str | None:
    """The gate's outcome in one line, or None when no gate was set."""
    gate = report.get("gate") or {}
    rules = []
    if gate.get("fail_if_moved"):
        rules.append("--fail-if-moved")
    if gate.get("max_moved_fraction") is not None:
        rules.append(f"--max-moved-fraction {format_fraction(gate['max_moved_fraction'])}")
    if not rules and not gate.get("failed"):
        return None
    rule = f" ({', '.join(rules)})" if rules else ""
    if gate.get("failed"):
        return f"FAILED{rule}: {gate.get('reason') or 'no reason given'}"
    return f"passed{rule}"


def _facts(topic: dict[str, Any]) -> list[tuple[str, str]]:
    """The facts a reviewer checks before trusting a topic's prediction, as (name, value)."""
    sampled = bool(topic["sampled"])
    name = topic["partitioner"]
    if name is None:
        name = "none identified" if not topic["predictable"] else "none needed (no keyed records)"
    if topic["partitioner_forced"]:
        name += " (forced with --partitioner)"
    conformance = topic["conformance"]
    if conformance is not None:
        name += f", conformance {format_fraction(conformance)}"
    scored = ", ".join(
        f"{p} {format_fraction(c)}"
        for p, c in (topic.get("conformance_by_partitioner") or {}).items()
        if c is not None
    )
    if scored:
        name += f" (scored: {scored})"
    state = (
        "live state (latest record per key, tombstones dropped)"
        if topic["state"] == "live"
        else "every keyed record (delete policy)"
    )
    records = format_estimate(topic["state_records"], None, approx=sampled)
    size = format_estimate(topic["state_bytes"], None, format_bytes, approx=sampled)
    return [
        ("cleanup.policy", topic["cleanup_policy"]),
        ("partitioner", name),
        (
            "records scanned",
            f"{topic['records_scanned']:,} of {topic['records_total']:,}"
            + (" (sampled)" if sampled else ""),
        ),
        ("null-key records", f"{topic['null_key_records']:,} (not hashed, not predicted)"),
        ("unhashed records", f"{topic['unhashed_records']:,}"),
        (
            "non-conforming",
            f"{topic['non_conforming_keys']:,} keys, {topic['non_conforming_records']:,} records",
        ),
        (
            "distinct keys",
            # certain bounds (seen .. seen + unread records), not a 95% interval
            format_estimate(
                topic["distinct_keys"], topic["distinct_keys_interval"], label="bounds"
            ),
        ),
        ("state counted", f"{state}: {records} records, {size}"),
    ]


def _candidate_rows(topic: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The side-by-side comparison: one row per measure, one column per candidate."""
    cands = topic["candidates"]
    return [
        (
            "moved keys",
            [format_estimate(c["moved_keys"], c["moved_keys_interval"]) for c in cands],
        ),
        (
            "moved fraction",
            [
                format_estimate(c["moved_fraction"], c["moved_fraction_interval"], format_fraction)
                for c in cands
            ],
        ),
        (
            "expected (uniform hashing)",
            [format_fraction(c["expected_moved_fraction"]) for c in cands],
        ),
        (
            "moved records",
            [format_estimate(c["moved_records"], c["moved_records_interval"]) for c in cands],
        ),
        (
            "moved bytes",
            [
                format_estimate(c["moved_bytes"], c["moved_bytes_interval"], format_bytes)
                for c in cands
            ],
        ),
        ("skew (max/mean keys)", [f"{c['skew']:.2f}" for c in cands]),
    ]


# --- text ------------------------------------------------------------------------------


def render_text(report: dict[str, Any], width: int = 100) -> str:
    """A terminal report: per topic its facts, the candidates side by side and the verdict.

    Rendered with rich into a string without colour or markup, so the same text
    reads right on a terminal, in a CI log and in a file; trailing spaces that
    rich pads tables with are stripped.
    """
    out = io.StringIO()
    console = Console(
        file=out,
        width=width,
        color_system=None,
        force_terminal=False,
        force_jupyter=False,
        force_interactive=False,
        legacy_windows=False,
        markup=False,  # a key like "[bold]" or "[/x]" is data, not markup
        emoji=False,  # nor is ":smile:"
        highlight=False,
    )
    console.print(
        f"migcheck {report['migcheck_version']} report, generated {report['generated_at']}"
    )
    console.print(f"source: {_source(report)}")
    console.print(f"mode: {_mode(report)}")
    counts = ", ".join(str(c) for c in report["candidates"])
    console.print(f"proposed partition counts: {counts}")
    for topic in report["topics"]:
        console.print()
        console.rule(
            f"topic {topic['topic']}: {topic['current_partitions']} partitions", align="left"
        )
        facts = Table.grid(padding=(0, 2))
        facts.add_column(no_wrap=True)
        facts.add_column()
        for name, value in _facts(topic):
            facts.add_row(name, value)
        console.print(facts)
        if topic["candidates"]:
            console.print()
            table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
            table.add_column(f"{topic['current_partitions']} partitions ->", no_wrap=True)
            for c in topic["candidates"]:
                table.add_column(f"{c['partitions']} partitions", justify="right")
            for name, values in _candidate_rows(topic):
                table.add_row(name, *values)
            console.print(table)
            console.print()
            for c in topic["candidates"]:
                _text_candidate(console, topic, c)
        console.print(f"VERDICT: {topic['verdict']['text']}")
    gate = _gate(report)
    if gate is not None:
        console.print()
        console.print(f"GATE: {gate}")
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def _text_candidate(console: Console, topic: dict[str, Any], cand: dict[str, Any]) -> None:
    """One candidate's matrix (when it fits the terminal) and a few of its moved keys."""
    n, m = topic["current_partitions"], cand["partitions"]
    estimated = "; estimated from the sample" if topic["sampled"] else ""
    console.print(
        f"{n} -> {m}: keys by current (rows) and new partition (columns), * stays{estimated}"
    )
    table = None
    if m <= TEXT_MATRIX_MAX_COLUMNS:
        for fmt in (format_count, _short):  # exact if it fits, else short counts
            table = _text_matrix(cand["matrix"], m, fmt)
            if _natural_width(console, table) <= console.width:
                break
            table = None
    if table is None:
        console.print(
            f"  ({n} x {m} matrix: too wide for {console.width} columns; "
            "it is in --format json and --format markdown)"
        )
    else:
        console.print(table)
    sample = cand["moved_key_sample"][:5]
    if sample:
        console.print(f"moved keys at {m} partitions, e.g.:")
        for s in sample:  # one per line: a key is never wrapped into its neighbour
            console.print(f"  {s['key']}  ({s['partition']} -> {s['new_partition']})")
    console.print()


def _natural_width(console: Console, table: Table) -> int:
    """The table's width without squeezing (rich's measure is capped at the console width)."""
    unbounded = console.options.update(max_width=1_000_000)
    return Measurement.get(console, unbounded, table).maximum


def _text_matrix(matrix: list[list[int]], cols: int, fmt: Callable[[float], str]) -> Table:
    # no padding: the box's blank column separator is space enough between numbers
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=0)
    table.add_column("", justify="right", no_wrap=True)
    for j in range(cols):
        table.add_column(str(j), justify="right", no_wrap=True)
    for i, row in enumerate(matrix):
        cells = [
            (fmt(v) if v or i == j else ".") + ("*" if i == j else "") for j, v in enumerate(row)
        ]
        table.add_row(str(i), *cells)
    return table


# --- Markdown --------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _md(value: object) -> str:
    """A value as literal Markdown text, safe in a table cell.

    HTML-escaped (so ``<script>`` is text), Markdown punctuation backslash-escaped
    (so ``*x*`` or a ``|`` in a key neither formats nor splits a table cell), and
    on one line (a newline would end the table row).
    """
    text = re.sub(r"[\r\n]+", " ", str(value)).strip()
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _md_table(
    header: Sequence[str], align: Sequence[str], rows: Sequence[Sequence[str]]
) -> list[str]:
    """Lines of a Markdown table; cells must already be escaped."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """A report to paste into a change ticket or pull request.

    Summary first (what a reviewer decides on), then per topic the facts, the
    candidates side by side, and per candidate a heatmap of where keys go, the
    same numbers in a collapsible table (for screen readers and for renderers
    that strip inline SVG) and a sample of moved keys.
    """
    out = [
        "# migcheck: what moves when the partition count changes",
        "",
        f"- **Source:** {_md(_source(report))}",
        f"- **Mode:** {_md(_mode(report))}",
        f"- **Proposed partition counts:** {', '.join(str(c) for c in report['candidates'])}",
        f"- **Generated:** {_md(report['generated_at'])} by migcheck "
        f"{_md(report['migcheck_version'])}",
    ]
    gate = _gate(report)
    if gate is not None:
        out.append(f"- **Gate:** {_md(gate)}")

    rows = []
    for t in report["topics"]:
        name, now, level = _md(t["topic"]), str(t["current_partitions"]), _md(t["verdict"]["level"])
        if not t["candidates"]:
            rows.append([name, now, "-", "-", "-", "-", level])
        for c in t["candidates"]:
            rows.append(
                [
                    name,
                    now,
                    str(c["partitions"]),
                    _md(format_estimate(c["moved_keys"], c["moved_keys_interval"])),
                    _md(
                        format_estimate(
                            c["moved_fraction"], c["moved_fraction_interval"], format_fraction
                        )
                    ),
                    _md(format_estimate(c["moved_bytes"], c["moved_bytes_interval"], format_bytes)),
                    level,
                ]
            )
    out += ["", "## Summary", ""]
    out += _md_table(
        [
            "topic",
            "partitions now",
            "proposed",
            "moved keys",
            "moved fraction",
            "moved bytes",
            "verdict",
        ],
        ["---", "---:", "---:", "---:", "---:", "---:", "---"],
        rows,
    )
    for t in report["topics"]:
        out += _md_topic(t)
    return "\n".join(out) + "\n"


def _md_topic(t: dict[str, Any]) -> list[str]:
    n = t["current_partitions"]
    out = ["", f"## Topic {_md(t['topic'])}", "", f"**{_md(t['verdict']['text'])}**", ""]
    out += _md_table(["fact", "value"], ["---", "---"], [[_md(k), _md(v)] for k, v in _facts(t)])
    if not t["candidates"]:
        return out
    out += ["", f"### {n} partitions {_ARROW} candidates side by side", ""]
    out += _md_table(
        [f"from {n} partitions", *(f"{c['partitions']} partitions" for c in t["candidates"])],
        ["---", *(["---:"] * len(t["candidates"]))],
        [[_md(name), *(_md(v) for v in values)] for name, values in _candidate_rows(t)],
    )
    for c in t["candidates"]:
        m = c["partitions"]
        estimated = " (estimated from the sample)" if t["sampled"] else ""
        out += ["", f"### {n} {_ARROW} {m} partitions", ""]
        out.append(
            heatmap_svg(
                c["matrix"],
                f"{t['topic']}: keys from current partition (row) to new partition (column), "
                f"{n} {_ARROW} {m}{estimated}",
            )
        )
        out += [
            "",
            "Darker cells hold more keys. Keys in the red-outlined cells keep their partition "
            f"number; every other key moves{_md(estimated)}.",
            "",
            "<details><summary>Partition matrix as numbers (keys; rows: current partition, "
            "columns: new partition)</summary>",
            "",
        ]
        out += _md_table(
            ["from \\\\ to", *(str(j) for j in range(m))],
            ["---:"] * (m + 1),
            [[str(i), *(str(v) for v in row)] for i, row in enumerate(c["matrix"])],
        )
        out += ["", "</details>"]
        if c["moved_key_sample"]:
            out += ["", f"Moved keys at {m} partitions (sample):", ""]
            out += _md_table(
                ["key", "key (hex)", "from", "to"],
                ["---", "---", "---:", "---:"],
                [
                    [
                        _md(s["key"]),
                        "`" + _clip(s["key_hex"], 64) + "`",
                        str(s["partition"]),
                        str(s["new_partition"]),
                    ]
                    for s in c["moved_key_sample"]
                ],
            )
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


# --- SVG heatmap -----------------------------------------------------------------------

#: Characters XML 1.0 forbids even as references; they would make the SVG unparseable.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

_WHITE = (255, 255, 255)
_DARK_BLUE = (8, 48, 107)  # the dark end of ColorBrewer's sequential "Blues"
_STAYS = "#d62728"


def _xml(text: object) -> str:
    """Text for an XML attribute or element: escaped, valid XML 1.0 characters, one line."""
    one_line = re.sub(r"[\r\n\t]+", " ", str(text))
    return html.escape(_XML_INVALID.sub("\ufffd", one_line), quote=True)


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
    matrix: list[list[int]],
    title: str,
    row_label: str = "current partition",
    col_label: str = "new partition",
) -> str:
    """A self-contained SVG heatmap of a partition matrix: one ``<rect>`` per cell.

    White to dark blue by count / max count; the cells where row == column
    (keys that keep their partition number) are outlined in red and drawn last,
    so their outline is not painted over.  Small matrices carry each count as
    text; large ones shrink their cells to 4 px and label every few rows and
    columns only.  One element per line and no blank line: Markdown keeps an
    HTML block intact up to the first blank line.
    """
    rows = len(matrix)
    cols = max((len(row) for row in matrix), default=0)
    cell = max(4, min(36, 720 // max(cols, 1), 480 // max(rows, 1)))
    with_text = rows <= SVG_TEXT_MAX and cols <= SVG_TEXT_MAX
    peak = max((v for row in matrix for v in row), default=0)
    left, top = 60, 44
    grid_w, grid_h = cols * cell, rows * cell
    width, height = max(left + grid_w + 12, 340), top + grid_h + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" '
        f'role="img" aria-label="{_xml(title)}">',
        f"<title>{_xml(title)}</title>",
        f'<text x="{left}" y="14">{_xml(col_label)} {_ARROW}</text>',
        f'<text x="14" y="{top + grid_h / 2:g}" transform="rotate(-90 14 {top + grid_h / 2:g})" '
        f'text-anchor="middle">{_xml(row_label)} {_ARROW}</text>',
        f'<text x="{left}" y="{top + grid_h + 20}">white: 0, darkest: {peak:,} keys; '
        "red outline: stays</text>",
    ]
    x_step = _tick_step(cell, 7 * len(str(max(cols - 1, 0))) + 4)
    y_step = _tick_step(cell, 13)
    parts += [
        f'<text x="{left + j * cell + cell / 2:g}" y="{top - 6}" text-anchor="middle">{j}</text>'
        for j in range(0, cols, x_step)
    ]
    parts += [
        f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4:g}" text-anchor="end">{i}</text>'
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
                x, y = left + j * cell + cell / 2, top + i * cell + cell / 2 + 4
                parts.append(
                    f'<text x="{x:g}" y="{y:g}" text-anchor="middle" font-size="10" '
                    f'fill="{colour}">{_short(v)}</text>'
                )
    parts.append("</svg>")
    return "\n".join(parts)


# --- dispatch --------------------------------------------------------------------------


def render(report: dict[str, Any], fmt: str) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); one mapping for every command."""
    renderers: dict[str, Callable[[dict[str, Any]], str]] = {
        "text": render_text,
        "json": render_json,
        "markdown": render_markdown,
    }
    try:
        renderer = renderers[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {FORMATS}") from None
    return renderer(report)
