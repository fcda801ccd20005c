"""Rendering reports: text for a terminal, JSON for machines, Markdown for change tickets.

Pure functions from the report (:mod:`migcheck.analysis.model`) to a string;
nothing here does I/O or computes a figure the analysis did not.
"""

from __future__ import annotations

from collections.abc import Callable

from migcheck.analysis.model import Report
from migcheck.report.jsonfmt import render_json
from migcheck.report.markdown import render_markdown
from migcheck.report.text import render_text

_RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
}

#: The formats :func:`render` knows, as the CLI offers them.
FORMATS = tuple(_RENDERERS)


def render(report: Report, fmt: str) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); one entry point for every command."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {FORMATS}") from None
    return renderer(report)
