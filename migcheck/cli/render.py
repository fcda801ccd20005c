"""``migcheck render``: a saved JSON report again, e.g. as Markdown for a change ticket."""

from __future__ import annotations

import json
from typing import Any

import click

from migcheck.cli.common import command_output, output_option, report_format_option, write_text
from migcheck.errors import ReportFormatError, UsageError
from migcheck.model.header import ReportKind
from migcheck.report.registry import REPORTS
from migcheck.report.schema import check_report, kind_of


@click.command("render")
@click.argument("report", type=click.Path(exists=True, dir_okay=False))
@report_format_option
@output_option
def render_cmd(report: str, fmt: str, output: str | None) -> None:
    """Render a saved JSON REPORT (of analyze, app or plan) again, e.g. as Markdown."""
    data = _load(report)
    kind = _kind(report, data)
    try:
        check_report(data, REPORTS[kind].model)
        text = command_output().formats[fmt](data)
    except (ReportFormatError, KeyError, TypeError, ValueError, IndexError) as e:
        raise UsageError(f"{report}: incomplete migcheck JSON report ({_detail(e)})") from None
    write_text(text, output)


def _detail(error: Exception) -> str:
    """What is wrong in the report, in words (no exception class name on the line)."""
    if isinstance(error, KeyError):
        return f"no field {error}"
    if isinstance(error, ReportFormatError):
        return str(error)
    return f"a field of the wrong shape: {error}"


def _load(report: str) -> dict[str, Any]:
    """The saved report's JSON object; one line when it is not one of migcheck's."""
    try:
        with open(report, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError(f"{report}: not a migcheck JSON report ({e})") from None
    if not isinstance(data, dict) or not ({"report", "topics", "recommendation"} & set(data)):
        raise UsageError(f"{report}: not a migcheck JSON report (no 'topics')")
    return data


def _kind(report: str, data: dict[str, Any]) -> ReportKind:
    """Its kind (its ``report`` field, or guessed for a report saved before it); one line
    naming the kinds this migcheck knows when it is another."""
    try:
        return kind_of(data)
    except ReportFormatError as e:
        raise UsageError(f"{report}: {e}") from None
