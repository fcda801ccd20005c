"""The ``migcheck analyze`` report as text, Markdown and HTML, from one description of it.

:func:`_blocks` says once what the report shows: the run, a summary row per
topic and candidate with the gate's outcome (what a reviewer decides on), then
per topic its verdict, the facts to check before trusting it, the candidates
side by side and, per candidate, where the keys go and a sample of moved keys.
The two renderers only lay those blocks out, so a figure never reaches one
format and misses the other.  Keys arrive as the analysis made them readable
(UTF-8 text or ``0x``-hex, cut at 64 characters); each layout escapes them.
"""

from __future__ import annotations

from collections.abc import Iterator

from migcheck.model.analyze import CandidateEntry, MovedKey, Report, TopicEntry
from migcheck.report.badge import Badge, worst
from migcheck.report.blocks import Block, blocks_markdown, blocks_text
from migcheck.report.formatting import (
    ARROW,
    bounds_rows,
    candidate_rows,
    format_bytes,
    format_estimate,
    format_fraction,
    gate_summary,
    keys_label,
    mode_line,
    source_line,
    topic_facts,
)
from migcheck.report.htmlpage import blocks_html
from migcheck.untrusted import Name

#: A sample key's hex is cut at the length at which its text is cut.
_HEX_SHOWN = 64

_SUMMARY = (
    "topic",
    "partitions now",
    "proposed",
    "moved keys",
    "moved fraction",
    "moved bytes",
    "verdict",
)


def _blocks(r: Report) -> Iterator[Block]:
    yield Block("h", "migcheck: what moves when the partition count changes")
    yield Block(
        "list",
        items=[
            f"source: {source_line(r)}",
            f"mode: {mode_line(r)}",
            f"proposed partition counts: {', '.join(map(str, r['candidates']))}",
            f"generated {r['generated_at']} by migcheck {r['migcheck_version']}",
        ],
    )
    yield Block("h", "Summary")
    gate = gate_summary(r)
    if gate is not None:
        yield Block("p", f"GATE: {gate}")
    rows = [row for t in r["topics"] for row in _summary_rows(t)]
    yield Block("table", header=_SUMMARY, rows=rows, align="lrrrrrl")
    for t in r["topics"]:
        yield from _topic(t)


def _summary_rows(t: TopicEntry) -> list[list[str]]:
    """One row per candidate; a topic without candidates (nothing predicted) still has one."""
    name, now, level = t["topic"], str(t["current_partitions"]), str(t["verdict"]["level"])
    if not t["candidates"]:
        return [[name, now, "-", "-", "-", "-", level]]
    return [
        [
            name,
            now,
            str(c["partitions"]),
            format_estimate(
                c["moved_keys"], c["moved_keys_interval"], label=keys_label(c, "moved_keys")
            ),
            format_estimate(c["moved_fraction"], c["moved_fraction_interval"], format_fraction),
            format_estimate(c["moved_bytes"], c["moved_bytes_interval"], format_bytes),
            level,
        ]
        for c in t["candidates"]
    ]


def _topic(t: TopicEntry) -> Iterator[Block]:
    n, cands = t["current_partitions"], t["candidates"]
    yield Block("h", f"Topic {t['topic']}: {n} partitions")
    yield Block("p", f"VERDICT: {t['verdict']['text']}")
    yield Block("table", header=("fact", "value"), rows=topic_facts(t))
    if not cands:
        return
    yield Block("sub", f"{n} partitions {ARROW} candidates side by side")
    yield Block(
        "table",
        header=(f"from {n} partitions", *(f"{c['partitions']} partitions" for c in cands)),
        rows=[(name, *values) for name, values in candidate_rows(t)],
        align="l" + "r" * len(cands),
    )
    bounds = bounds_rows(t)
    if bounds:
        yield Block(
            "details",
            "Certain bounds: whatever the unread records hold",
            header=("figure", *(f"{c['partitions']} partitions" for c in cands)),
            rows=[(name, *values) for name, values in bounds],
            align="l" + "r" * len(cands),
        )
    for c in cands:
        yield from _candidate(t, c)


def _candidate(t: TopicEntry, c: CandidateEntry) -> Iterator[Block]:
    """Where the keys go (the dense matrix only when the report carries it) and some that move."""
    n, m = t["current_partitions"], c["partitions"]
    yield Block("sub", f"{n} {ARROW} {m} partitions")
    if c["matrix"] is None:
        yield Block(
            "p",
            f"{n} x {m} matrix: too large to draw ({n * m:,} cells); its "
            f"{len(c['flows']):,} nonzero cells are the flows of --format json.",
        )
    else:
        estimated = ", estimated from the sample" if t["sampled"] else ""
        yield Block(
            "figure",
            f"{t['topic']}, {n} {ARROW} {m}: keys by current partition (row) "
            f"and new partition (column){estimated}",
            matrix=c["matrix"],
        )
    if c["moved_key_sample"]:
        yield Block(
            "table",
            f"Moved keys at {m} partitions (sample):",
            header=("key", "key (hex)", "from", "to"),
            rows=[_moved_row(s) for s in c["moved_key_sample"]],
            align="llrr",
        )


def _moved_row(s: MovedKey) -> list[str]:
    hexed = s["key_hex"]
    if len(hexed) > _HEX_SHOWN:
        hexed = hexed[: _HEX_SHOWN - 1] + "\u2026"
    return [Name(s["key"]), hexed, str(s["partition"]), str(s["new_partition"])]


def render_analyze_text(report: Report, width: int = 100) -> str:
    """The report for a terminal or a CI log: plain text, tables wrapped to ``width``."""
    return blocks_text(_blocks(report), width)


def render_analyze_markdown(report: Report) -> str:
    """The report for a change ticket or pull request: every value escaped where it lands,
    each matrix as a Mermaid sankey of its flows and a shaded table of its numbers
    (GitHub and GitLab strip inline SVG; ``--format html`` draws the heatmap)."""
    return blocks_markdown(_blocks(report))


def render_analyze_html(report: Report) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG), for a browser;
    the worst topic's verdict first, as a badge."""
    verdict = worst(str(t["verdict"]["level"]) for t in report["topics"])
    names = ", ".join(t["topic"] for t in report["topics"])
    return blocks_html(_blocks(report), Badge(verdict, names) if verdict else None)
