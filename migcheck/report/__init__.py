"""Rendering reports: text for a terminal, JSON for machines, Markdown for change tickets,
HTML for a browser.

Pure functions from the report (:mod:`migcheck.model.analyze`) to a string;
nothing here does I/O or computes a figure the analysis did not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from migcheck.model.analyze import Report
from migcheck.model.app import AppReport
from migcheck.model.plan import PlanReport
from migcheck.report.analyze import (
    render_analyze_html,
    render_analyze_markdown,
    render_analyze_text,
)
from migcheck.report.app import render_app_html, render_app_markdown, render_app_text
from migcheck.report.jsonfmt import render_json
from migcheck.report.plan import render_plan_html, render_plan_markdown, render_plan_text
from migcheck.report.schema import report_class

_RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": render_analyze_text,
    "json": render_json,
    "markdown": render_analyze_markdown,
    "html": render_analyze_html,
}
_APP_RENDERERS: dict[str, Callable[[AppReport], str]] = {
    "text": render_app_text,
    "json": render_json,  # type: ignore[dict-item]  # any report: keys ordered by its class
    "markdown": render_app_markdown,
    "html": render_app_html,
}

_PLAN_RENDERERS: dict[str, Callable[[PlanReport], str]] = {
    "text": render_plan_text,
    "json": render_json,  # type: ignore[dict-item]
    "markdown": render_plan_markdown,
    "html": render_plan_html,
}
_BY_CLASS: dict[type, dict[str, Any]] = {
    Report: _RENDERERS,
    AppReport: _APP_RENDERERS,
    PlanReport: _PLAN_RENDERERS,
}

#: The formats :func:`render` knows, as the CLI offers them.
FORMATS = tuple(_RENDERERS)


def render(report: Report | AppReport | PlanReport, fmt: str) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); one entry point for every command,
    ``analyze``'s, ``app``'s and ``plan``'s reports alike (told apart by
    :func:`report_class`)."""
    renderers = _BY_CLASS[report_class(report)]
    try:
        renderer = renderers[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {FORMATS}") from None
    return renderer(report)
