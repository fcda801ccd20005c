"""Rendering a report dict as text (terminal), JSON (machines) or Markdown (change tickets).

Pure functions: each takes the report dict (the ``--format json`` schema, see
``docs/report-schema.md``) and returns a string.  Nothing here reads Kafka or
computes a number the analysis did not; estimates are shown with their 95%
intervals exactly as the report holds them.
"""

from __future__ import annotations

import html
import io
import json
from typing import Any

from rich.console import Console
from rich.table import Table

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")

#: Largest matrix drawn cell by cell in the terminal; larger ones are in JSON/Markdown.
TEXT_MATRIX_MAX = 24

#: Largest matrix whose SVG cells carry their counts as text.
SVG_TEXT_MAX = 16


def format_bytes(n: float) -> str:
    """Bytes in binary units: ``0 B``, ``1023 B``, ``1.0 KiB``, ``1.5 MiB``."""
    value = float(n)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _count(n: float) -> str:
    return f"{round(n):,}"


def _pct(x: float) -> str:
    return f"{x:.1%}"


def estimate(value: float, interval: list[float] | None, fmt: Any = _count) -> str:
    """An exact figure as is; an estimate as ``~912 (95%: 850 to 980)``."""
    if interval is None:
        return fmt(value)
    return f"~{fmt(value)} (95%: {fmt(interval[0])} to {fmt(interval[1])})"


def render_json(report: dict[str, Any]) -> str:
    """The report as stable, indented JSON (the documented schema, in its key order)."""
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


# --- shared rows ---------------------------------------------------------------------


def _candidate_rows(topic: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The side-by-side comparison: one row per measure, one column per candidate."""
    cands = topic["candidates"]
    return [
        ("moved keys", [estimate(c["moved_keys"], c["moved_keys_interval"]) for c in cands]),
        (
            "moved fraction",
            [estimate(c["moved_fraction"], c["moved_fraction_interval"], _pct) for c in cands],
        ),
        ("expected (uniform hashing)", [_pct(c["expected_moved_fraction"]) for c in cands]),
        (
            "moved records",
            [estimate(c["moved_records"], c["moved_records_interval"]) for c in cands],
        ),
        (
            "moved bytes",
            [estimate(c["moved_bytes"], c["moved_bytes_interval"], format_bytes) for c in cands],
        ),
        ("skew of new partitions (max/mean keys)", [f"{c['skew']:.2f}" for c in cands]),
    ]


def _facts(topic: dict[str, Any]) -> list[tuple[str, str]]:
    conf = topic["conformance"]
    partitioner = topic["partitioner"] or "none identified"
    if topic["partitioner_forced"]:
        partitioner += " (forced)"
    by = ", ".join(
        f"{name} {_pct(c)}"
        for name, c in topic["conformance_by_partitioner"].items()
        if c is not None
    )
    state = (
        "live state (latest record per key, tombstones dropped)"
        if topic["state"] == "live"
        else "every record (delete policy)"
    )
    return [
        ("cleanup.policy", topic["cleanup_policy"]),
        ("partitions now", str(topic["current_partitions"])),
        (
            "partitioner",
            partitioner
            + ("" if conf is None else f", conformance {_pct(conf)}")
            + (f" (scored: {by})" if by else ""),
        ),
        (
            "records scanned",
            f"{topic['records_scanned']:,} of {topic['records_total']:,}"
            + (" (sampled)" if topic["sampled"] else ""),
        ),
        ("null-key records", f"{topic['null_key_records']:,}"),
        ("unhashed records", f"{topic['unhashed_records']:,}"),
        (
            "non-conforming",
            f"{topic['non_conforming_keys']:,} keys, {topic['non_conforming_records']:,} records",
        ),
        ("distinct keys", estimate(topic["distinct_keys"], topic["distinct_keys_interval"])),
        (
            "state counted",
            f"{state}: {topic['state_records']:,} records, {format_bytes(topic['state_bytes'])}",
        ),
    ]


# --- text ------------------------------------------------------------------------------


def render_text(report: dict[str, Any], width: int = 100) -> str:
    """A terminal report: per topic its facts, the candidates side by side and the verdict."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    source = report["source"]
    where = source.get("bootstrap_servers") or source.get("path")
    mode = (
        "full scan"
        if report["mode"] == "full"
        else (f"sample of {report['sample_per_partition']:,} records per partition")
    )
    console.print(f"migcheck {report['migcheck_version']}: {source['kind']} {where}, {mode}")
    for topic in report["topics"]:
        console.print()
        console.rule(f"topic {topic['topic']}", align="left")
        facts = Table.grid(padding=(0, 2))
        for name, value in _facts(topic):
            facts.add_row(name, value)
        console.print(facts)
        if topic["candidates"]:
            table = Table(show_edge=False)
            table.add_column(f"{topic['current_partitions']} partitions ->")
            for c in topic["candidates"]:
                table.add_column(str(c["partitions"]), justify="right")
            for name, values in _candidate_rows(topic):
                table.add_row(name, *values)
            console.print(table)
            for c in topic["candidates"]:
                _text_matrix(console, topic, c)
        console.print(f"VERDICT: {topic['verdict']['text']}")
    gate = report.get("gate") or {}
    if gate.get("fail_if_moved") or gate.get("max_moved_fraction") is not None:
        console.print()
        console.print("GATE: FAILED, " + gate["reason"] if gate.get("failed") else "GATE: passed")
    return console.file.getvalue()  # type: ignore[attr-defined]


def _text_matrix(console: Console, topic: dict[str, Any], cand: dict[str, Any]) -> None:
    m, n = cand["partitions"], topic["current_partitions"]
    if m > TEXT_MATRIX_MAX or n > TEXT_MATRIX_MAX:
        console.print(f"{n} -> {m}: matrix too wide for the terminal, see --format markdown/json")
    else:
        table = Table(
            title=f"keys from partition (row) to partition (column), {n} -> {m}",
            show_edge=False,
            title_justify="left",
        )
        table.add_column("")
        for j in range(m):
            table.add_column(str(j), justify="right")
        for i, row in enumerate(cand["matrix"]):
            table.add_row(str(i), *(_count(v) if v else "." for v in row))
        console.print(table)
    sample = cand["moved_key_sample"]
    if sample:
        shown = ", ".join(
            f"{s['key']} ({s['partition']}->{s['new_partition']})" for s in sample[:5]
        )
        console.print(f"moved keys, e.g.: {shown}")


# --- markdown --------------------------------------------------------------------------


def _md(text: Any) -> str:
    """Escape a value for a Markdown table cell (pipes, HTML, newlines)."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any]) -> str:
    """A report to paste into a change ticket or pull request, with a heatmap per candidate."""
    source = report["source"]
    where = source.get("bootstrap_servers") or source.get("path")
    out = [
        "# migcheck: partition change report",
        "",
        f"- source: {source['kind']} `{where}`",
        f"- mode: {report['mode']}"
        + (
            f" ({report['sample_per_partition']:,} records per partition; figures are "
            "estimates with 95% intervals)"
            if report["mode"] == "sample"
            else ""
        ),
        f"- proposed partition counts: {', '.join(str(c) for c in report['candidates'])}",
        f"- generated {report['generated_at']} by migcheck {report['migcheck_version']}",
        "",
        "## Summary",
        "",
        "| topic | now | to | moved keys | moved fraction | moved bytes | verdict |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for t in report["topics"]:
        if not t["candidates"]:
            out.append(
                f"| {_md(t['topic'])} | {t['current_partitions']} | - | - | - | - | "
                f"{_md(t['verdict']['level'])} |"
            )
        for c in t["candidates"]:
            out.append(
                f"| {_md(t['topic'])} | {t['current_partitions']} | {c['partitions']} | "
                f"{_md(estimate(c['moved_keys'], c['moved_keys_interval']))} | "
                f"{_md(estimate(c['moved_fraction'], c['moved_fraction_interval'], _pct))} | "
                f"{_md(estimate(c['moved_bytes'], c['moved_bytes_interval'], format_bytes))} | "
                f"{_md(t['verdict']['level'])} |"
            )
    gate = report.get("gate") or {}
    if gate.get("fail_if_moved") or gate.get("max_moved_fraction") is not None:
        out += ["", f"**Gate: {'FAILED: ' + _md(gate['reason']) if gate['failed'] else 'passed'}**"]

    for t in report["topics"]:
        out += ["", f"## Topic `{_md(t['topic'])}`", "", f"**{_md(t['verdict']['text'])}**", ""]
        out += ["| fact | value |", "| --- | --- |"]
        out += [f"| {_md(k)} | {_md(v)} |" for k, v in _facts(t)]
        if not t["candidates"]:
            continue
        out += [
            "",
            "| "
            + " | ".join(
                [
                    f"{t['current_partitions']} partitions →",
                    *(str(c["partitions"]) for c in t["candidates"]),
                ]
            )
            + " |",
            "| --- |" + " ---: |" * len(t["candidates"]),
        ]
        out += [
            f"| {_md(name)} | " + " | ".join(_md(v) for v in values) + " |"
            for name, values in _candidate_rows(t)
        ]
        for c in t["candidates"]:
            n, m = t["current_partitions"], c["partitions"]
            out += ["", f"### {n} → {m} partitions", ""]
            out.append(
                heatmap_svg(
                    c["matrix"], f"{t['topic']}: keys from partition to partition, {n} → {m}"
                )
            )
            out += [
                "",
                "Outlined cells keep their partition number; every key elsewhere moves.",
                "",
                "<details><summary>Partition matrix (keys), rows: current partition, "
                "columns: new partition</summary>",
                "",
            ]
            out.append("| from \\ to | " + " | ".join(str(j) for j in range(m)) + " |")
            out.append("| ---: |" + " ---: |" * m)
            out += [
                f"| {i} | " + " | ".join(str(v) for v in row) + " |"
                for i, row in enumerate(c["matrix"])
            ]
            out += ["", "</details>"]
            if c["moved_key_sample"]:
                out += ["", "| moved key | hex | from | to |", "| --- | --- | ---: | ---: |"]
                out += [
                    f"| {_md(s['key'])} | `{s['key_hex'][:64]}` | {s['partition']} | "
                    f"{s['new_partition']} |"
                    for s in c["moved_key_sample"]
                ]
    return "\n".join(out) + "\n"


def heatmap_svg(
    matrix: list[list[int]],
    title: str,
    row_label: str = "current partition",
    col_label: str = "new partition",
) -> str:
    """A self-contained SVG heatmap: one rect per cell, white to dark blue by count.

    Cells where the partition number stays the same (row == column) are outlined,
    so a reader sees at a glance what stays and what moves.
    """
    rows = len(matrix)
    cols = len(matrix[0]) if rows else 0
    cell = max(4, min(36, 720 // max(cols, 1), 480 // max(rows, 1)))
    left, top = 56, 40
    width, height = left + cols * cell + 12, top + rows * cell + 12
    peak = max((v for row in matrix for v in row), default=0) or 1
    with_text = rows <= SVG_TEXT_MAX and cols <= SVG_TEXT_MAX
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" role="img">',
        f"<title>{esc(title)}</title>",
        f'<text x="{left}" y="14">{esc(col_label)} →</text>',
        f'<text x="12" y="{top + rows * cell / 2}" transform="rotate(-90 12 '
        f'{top + rows * cell / 2})" text-anchor="middle">{esc(row_label)} →</text>',
    ]
    if with_text:
        parts += [
            f'<text x="{left + j * cell + cell / 2}" y="{top - 6}" text-anchor="middle">{j}</text>'
            for j in range(cols)
        ]
        parts += [
            f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" text-anchor="end">{i}</text>'
            for i in range(rows)
        ]
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            shade = v / peak
            r, g, b = (round(255 - shade * (255 - c)) for c in (8, 48, 107))
            stroke = ' stroke="#d62728" stroke-width="2"' if i == j else ""
            parts.append(
                f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell}" '
                f'height="{cell}" fill="rgb({r},{g},{b})"{stroke}/>'
            )
            if with_text and v:
                colour = "#fff" if shade > 0.5 else "#000"
                parts.append(
                    f'<text x="{left + j * cell + cell / 2}" y="{top + i * cell + cell / 2 + 4}" '
                    f'text-anchor="middle" fill="{colour}">{v}</text>'
                )
    parts.append("</svg>")
    return "".join(parts)


#: The formats :func:`render` knows, as the CLI offers them.
FORMATS = ("text", "json", "markdown")


def render(report: dict[str, Any], fmt: str) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`)."""
    renderers = {"text": render_text, "json": render_json, "markdown": render_markdown}
    return renderers[fmt](report)
