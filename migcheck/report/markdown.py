"""The Markdown report, for a change ticket or pull request.

Everything from the data is escaped where it lands: HTML, Markdown
punctuation and line breaks in text and table cells, XML in the SVG.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from migcheck.model.analyze import CandidateEntry, Report, TopicEntry
from migcheck.report.formatting import (
    ARROW,
    candidate_rows,
    format_bytes,
    format_estimate,
    format_fraction,
    gate_summary,
    mode_line,
    source_line,
    topic_facts,
)
from migcheck.report.svg import heatmap_svg

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md_escape(value: object) -> str:
    """A value as literal Markdown text, safe in a table cell.

    HTML-escaped (so ``<script>`` is text), Markdown punctuation backslash-escaped
    (so ``*x*`` or a ``|`` in a key neither formats nor splits a table cell), and
    on one line (a newline would end the table row).
    """
    text = re.sub(r"[\r\n]+", " ", str(value)).strip()
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def md_table(
    header: Sequence[str], align: Sequence[str], rows: Sequence[Sequence[str]]
) -> list[str]:
    """Lines of a Markdown table; cells must already be escaped."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render_markdown(report: Report) -> str:
    """A report to paste into a change ticket or pull request.

    Summary first (what a reviewer decides on), then per topic the facts, the
    candidates side by side, and per candidate a heatmap of where keys go, the
    same numbers in a collapsible table (for screen readers and for renderers
    that strip inline SVG) and a sample of moved keys.
    """
    out = [
        "# migcheck: what moves when the partition count changes",
        "",
        f"- **Source:** {md_escape(source_line(report))}",
        f"- **Mode:** {md_escape(mode_line(report))}",
        f"- **Proposed partition counts:** {', '.join(str(c) for c in report['candidates'])}",
        f"- **Generated:** {md_escape(report['generated_at'])} by migcheck "
        f"{md_escape(report['migcheck_version'])}",
    ]
    gate = gate_summary(report)
    if gate is not None:
        out.append(f"- **Gate:** {md_escape(gate)}")

    rows = []
    for t in report["topics"]:
        name, now, level = (
            md_escape(t["topic"]),
            str(t["current_partitions"]),
            md_escape(t["verdict"]["level"]),
        )
        if not t["candidates"]:
            rows.append([name, now, "-", "-", "-", "-", level])
        for c in t["candidates"]:
            rows.append(
                [
                    name,
                    now,
                    str(c["partitions"]),
                    md_escape(format_estimate(c["moved_keys"], c["moved_keys_interval"])),
                    md_escape(
                        format_estimate(
                            c["moved_fraction"], c["moved_fraction_interval"], format_fraction
                        )
                    ),
                    md_escape(
                        format_estimate(c["moved_bytes"], c["moved_bytes_interval"], format_bytes)
                    ),
                    level,
                ]
            )
    out += ["", "## Summary", ""]
    out += md_table(
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


def _md_topic(t: TopicEntry) -> list[str]:
    n = t["current_partitions"]
    out = [
        "",
        f"## Topic {md_escape(t['topic'])}",
        "",
        f"**{md_escape(t['verdict']['text'])}**",
        "",
    ]
    out += md_table(
        ["fact", "value"], ["---", "---"], [[md_escape(k), md_escape(v)] for k, v in topic_facts(t)]
    )
    if not t["candidates"]:
        return out
    out += ["", f"### {n} partitions {ARROW} candidates side by side", ""]
    out += md_table(
        [f"from {n} partitions", *(f"{c['partitions']} partitions" for c in t["candidates"])],
        ["---", *(["---:"] * len(t["candidates"]))],
        [[md_escape(name), *(md_escape(v) for v in values)] for name, values in candidate_rows(t)],
    )
    for c in t["candidates"]:
        out += ["", f"### {n} {ARROW} {c['partitions']} partitions", ""]
        out += _md_matrix(t, c) + _md_moved_sample(c)
    return out


def _md_matrix(t: TopicEntry, c: CandidateEntry) -> list[str]:
    """The heatmap and the numbers behind it; only a line when the matrix is too large."""
    n, m = t["current_partitions"], c["partitions"]
    if c["matrix"] is None:
        return [
            f"The {n} {ARROW} {m} matrix is too large to draw ({n * m:,} cells); its "
            f"{len(c['flows']):,} nonzero cells are the `flows` of `--format json`."
        ]
    estimated = " (estimated from the sample)" if t["sampled"] else ""
    out = [
        heatmap_svg(
            c["matrix"],
            f"{t['topic']}: keys from current partition (row) to new partition (column), "
            f"{n} {ARROW} {m}{estimated}",
        ),
        "",
        "Darker cells hold more keys. Keys in the red-outlined cells keep their partition "
        f"number; every other key moves{md_escape(estimated)}.",
        "",
        "<details><summary>Partition matrix as numbers (keys; rows: current partition, "
        "columns: new partition)</summary>",
        "",
    ]
    out += md_table(
        ["from \\\\ to", *(str(j) for j in range(m))],
        ["---:"] * (m + 1),
        [[str(i), *(str(v) for v in row)] for i, row in enumerate(c["matrix"])],
    )
    return [*out, "", "</details>"]


def _md_moved_sample(c: CandidateEntry) -> list[str]:
    if not c["moved_key_sample"]:
        return []
    out = ["", f"Moved keys at {c['partitions']} partitions (sample):", ""]
    return out + md_table(
        ["key", "key (hex)", "from", "to"],
        ["---", "---", "---:", "---:"],
        [
            [
                md_escape(s["key"]),
                "`" + _clip(s["key_hex"], 64) + "`",
                str(s["partition"]),
                str(s["new_partition"]),
            ]
            for s in c["moved_key_sample"]
        ],
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
