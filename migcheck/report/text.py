"""The terminal report: per topic its facts, the candidates side by side and the verdict.

Rendered with rich into a plain string: rich markup and emoji codes are off,
so a key like ``[/red]`` or ``:smile:`` is shown as the data it is.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from migcheck.model.analyze import CandidateEntry, Report, TopicEntry
from migcheck.report.formatting import (
    candidate_rows,
    format_count,
    gate_summary,
    mode_line,
    short_count,
    source_line,
    topic_facts,
)

#: Widest old-to-new matrix drawn cell by cell in the terminal; wider ones are
#: in the JSON and Markdown reports (and narrower ones too, if they do not fit).
TEXT_MATRIX_MAX_COLUMNS = 32


def render_text(report: Report, width: int = 100) -> str:
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
    console.print(f"source: {source_line(report)}")
    console.print(f"mode: {mode_line(report)}")
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
        for name, value in topic_facts(topic):
            facts.add_row(name, value)
        console.print(facts)
        if topic["candidates"]:
            console.print()
            table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
            table.add_column(f"{topic['current_partitions']} partitions ->", no_wrap=True)
            for c in topic["candidates"]:
                table.add_column(f"{c['partitions']} partitions", justify="right")
            for name, values in candidate_rows(topic):
                table.add_row(name, *values)
            console.print(table)
            console.print()
            for c in topic["candidates"]:
                _text_candidate(console, topic, c)
        console.print(f"VERDICT: {topic['verdict']['text']}")
    gate = gate_summary(report)
    if gate is not None:
        console.print()
        console.print(f"GATE: {gate}")
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def _text_candidate(console: Console, topic: TopicEntry, cand: CandidateEntry) -> None:
    """One candidate's matrix (when it fits the terminal) and a few of its moved keys."""
    n, m = topic["current_partitions"], cand["partitions"]
    estimated = "; estimated from the sample" if topic["sampled"] else ""
    console.print(
        f"{n} -> {m}: keys by current (rows) and new partition (columns), * stays{estimated}"
    )
    matrix, table = cand["matrix"], None
    if matrix is not None and m <= TEXT_MATRIX_MAX_COLUMNS:
        for fmt in (format_count, short_count):  # exact if it fits, else short counts
            table = _text_matrix(matrix, m, fmt)
            if _natural_width(console, table) <= console.width:
                break
            table = None
    if matrix is None:
        console.print(
            f"  ({n} x {m} matrix: too large to draw; its {len(cand['flows']):,} nonzero cells "
            "are the flows in --format json)"
        )
    elif table is None:
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
