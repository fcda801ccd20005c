"""``migcheck render``: a saved JSON report again, e.g. as Markdown for a change ticket."""

from __future__ import annotations

import json

import click

from migcheck.cli.common import output_option, report_format_option, write_text
from migcheck.errors import ReportFormatError, UsageError
from migcheck.report import render
from migcheck.report.schema import check_report


@click.command("render")
@click.argument("report", type=click.Path(exists=True, dir_okay=False))
@report_format_option
@output_option
def render_cmd(report: str, fmt: str, output: str | None) -> None:
    """Render a saved JSON REPORT (of analyze, app or plan) again, e.g. as Markdown."""
    try:
        with open(report, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError(f"{report}: not a migcheck JSON report ({e})") from None
    if not isinstance(data, dict) or not ("topics" in data or "recommendation" in data):
        raise UsageError(f"{report}: not a migcheck JSON report (no 'topics')")
    try:
        check_report(data)
        text = render(data, fmt)  # type: ignore[arg-type]
    except (ReportFormatError, KeyError, TypeError, ValueError, IndexError) as e:
        detail = str(e) if isinstance(e, ReportFormatError) else repr(e)
        raise UsageError(f"{report}: incomplete migcheck JSON report ({detail})") from None
    write_text(text, output)
