"""Every command's output, in one table: the model it returns, a renderer per format, the
sections of ``docs/report-schema.md`` that document its JSON, and its lines on stderr.

The CLI renders each command's result through the command's entry in :data:`OUTPUTS`
(by the command's name), and :func:`render` (``migcheck render``) finds a saved JSON
report's entry by its kind.  A new command adds its entry here; ``tests/unit/test_registry.py``
fails while a command of the CLI (``migcheck.cli.main.COMMANDS``) has none, or its
entry lacks a model, a renderer for a format the command offers, or a documented schema
for its JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from migcheck.model.analyze import Report
from migcheck.model.app import AppReport
from migcheck.model.copy import CopyResult
from migcheck.model.gate import GateReport
from migcheck.model.header import ReportKind
from migcheck.model.migrate import MigrateResult
from migcheck.model.partition import Placements
from migcheck.model.plan import PlanReport
from migcheck.model.readers import ReadersReport
from migcheck.model.runbook import Runbook, SplitRefusal
from migcheck.model.server import ConnectServer
from migcheck.model.warm import Warmth
from migcheck.report.analyze import (
    render_analyze_html,
    render_analyze_markdown,
    render_analyze_text,
)
from migcheck.report.app import render_app_html, render_app_markdown, render_app_text
from migcheck.report.copy import render_copy_json, render_copy_summary
from migcheck.report.gate import render_gate_html, render_gate_markdown, render_gate_text
from migcheck.report.jsonfmt import render_json
from migcheck.report.migrate import render_migrate_text
from migcheck.report.partition import render_partition_json, render_partition_text
from migcheck.report.plan import render_plan_html, render_plan_markdown, render_plan_text
from migcheck.report.readers import (
    render_readers_html,
    render_readers_markdown,
    render_readers_text,
)
from migcheck.report.runbook import render_runbook_markdown, render_runbook_sh
from migcheck.report.schema import kind_of, typed
from migcheck.report.server import render_server_text
from migcheck.report.warm import render_warm_text
from migcheck.report.why import analyze_lines, app_lines, gate_lines, plan_lines, runbook_lines

#: A result (a command's model object) as the text of one format.
Renderer = Callable[[Any], str]
#: Why a result makes its command exit non-zero: one line each for stderr.
Why = Callable[[Any], list[str]]

#: The formats of every JSON report, as ``--format`` offers them, the default first.
FORMATS = ("text", "json", "markdown", "html")


def _nothing(result: object) -> list[str]:
    """No stderr line: the output says it all (the copy's summary ends with its verdict)."""
    return []


@dataclass(frozen=True)
class Output:
    """How one command's result is written."""

    model: Any  # the model/ type the command's Outcome holds (a union where it varies)
    formats: Mapping[str, Renderer]  # --format's value -> its renderer
    schema: tuple[str, ...] = ()  # docs/report-schema.md's sections of its JSON's top level
    why: Why = _nothing


def _report(
    kind: ReportKind,
    model: type,
    section: str,
    why: Why,
    text: Renderer,
    markdown: Renderer,
    html: Renderer,
) -> tuple[ReportKind, Output]:
    """A JSON report's entry: its four formats in :data:`FORMATS`' order, its JSON
    written with its kind."""
    as_json: Renderer = partial(render_json, kind=kind, model=model)
    formats = {"text": text, "json": as_json, "markdown": markdown, "html": html}
    return kind, Output(model, formats, (section,), why)


#: The JSON reports, by their kind (their ``report`` field).
REPORTS: dict[ReportKind, Output] = dict(
    [
        _report(
            ReportKind.ANALYZE,
            Report,
            "Top level",
            analyze_lines,
            render_analyze_text,
            render_analyze_markdown,
            render_analyze_html,
        ),
        _report(
            ReportKind.APP,
            AppReport,
            "App report",
            app_lines,
            render_app_text,
            render_app_markdown,
            render_app_html,
        ),
        _report(
            ReportKind.PLAN,
            PlanReport,
            "Plan report",
            plan_lines,
            render_plan_text,
            render_plan_markdown,
            render_plan_html,
        ),
        _report(
            ReportKind.READERS,
            ReadersReport,
            "Readers report",
            _nothing,  # it lists and judges; it exits 0
            render_readers_text,
            render_readers_markdown,
            render_readers_html,
        ),
        _report(
            ReportKind.GATE,
            GateReport,
            "Gate report",
            gate_lines,
            render_gate_text,
            render_gate_markdown,
            render_gate_html,
        ),
    ]
)


def render(report: Report | AppReport | PlanReport | ReadersReport | GateReport, fmt: str) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`): one entry point for every JSON
    report, ``analyze``'s, ``app``'s and ``plan``'s alike, found in :data:`REPORTS` by
    its kind (:func:`~migcheck.report.schema.kind_of`: an unknown one is a
    :class:`~migcheck.errors.ReportFormatError`).  A saved report's words become its
    enums' members here, at the boundary (:func:`~migcheck.report.schema.typed`)."""
    output = REPORTS[kind_of(report)]
    try:
        renderer = output.formats[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {FORMATS}") from None
    return renderer(typed(report, output.model))


#: Every command's output, by the command's name (``migcheck.cli.main.COMMANDS``).
OUTPUTS: dict[str, Output] = {
    "partition": Output(
        Placements,
        {"text": render_partition_text, "json": render_partition_json},
        ("Key placement",),
    ),
    # A ReportKind is a str (StrEnum); mypy holds a dict's key type invariant.
    **REPORTS,  # type: ignore[dict-item]
    "render": Output(  # a saved JSON report of any kind, again
        Report | AppReport | PlanReport | ReadersReport | GateReport,
        {fmt: partial(render, fmt=fmt) for fmt in FORMATS},
        tuple(section for output in REPORTS.values() for section in output.schema),
    ),
    "runbook": Output(
        Runbook | SplitRefusal,
        {"markdown": render_runbook_markdown, "sh": render_runbook_sh},
        why=runbook_lines,
    ),
    "copy": Output(
        CopyResult,
        {"text": render_copy_summary, "json": render_copy_json},
        ("Copy summary", "Copy lag"),
    ),
    "migrate": Output(MigrateResult, {"text": render_migrate_text}),
    "warm": Output(Warmth, {"text": render_warm_text}),
    "server": Output(ConnectServer, {"text": render_server_text}),
}
