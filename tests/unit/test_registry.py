"""One table says how every command's result is written: ``report/registry.py``'s OUTPUTS.

A command of the CLI (``cli/main.py``'s COMMANDS) without an entry there, or whose entry
lacks a model, a renderer for a format the command offers, or a documented schema for its
JSON, fails here, before any user runs it.
"""

from __future__ import annotations

import typing

import click
import pytest

from migcheck.cli.main import COMMANDS, cli
from migcheck.model.analyze import Report
from migcheck.model.app import AppReport
from migcheck.model.gate import GateReport
from migcheck.model.header import ReportKind
from migcheck.model.plan import PlanReport
from migcheck.model.readers import ReadersReport
from migcheck.report.registry import FORMATS, OUTPUTS, REPORTS
from migcheck.report.schema import DOC_SECTIONS


def _command(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None, name
    return command


def _offered(command: click.Command) -> list[str]:
    """The formats a command offers: its ``--format`` choices, else its one text output."""
    option = next((p for p in command.params if p.name == "fmt"), None)
    return list(option.type.choices) if option else ["text"]  # type: ignore[attr-defined]


def test_every_command_has_its_entry_and_every_entry_its_command() -> None:
    assert set(OUTPUTS) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_entry_holds_a_model_a_renderer_per_format_and_the_schema_of_its_json(
    name: str,
) -> None:
    command, entry = _command(name), OUTPUTS[name]
    assert command.name == name  # the CLI finds the entry by the running command's name
    models = typing.get_args(entry.model) or (entry.model,)
    assert all(m.__module__.startswith("migcheck.model.") for m in models), models
    assert sorted(entry.formats) == sorted(_offered(command))
    assert all(callable(renderer) for renderer in entry.formats.values())
    if "json" in entry.formats:
        assert entry.schema, f"{name} writes JSON that docs/report-schema.md does not document"
        assert all(section in DOC_SECTIONS for section in entry.schema)
    else:
        assert entry.schema == ()


def test_each_json_report_kind_is_documented_by_its_own_model() -> None:
    assert set(REPORTS) == set(ReportKind)
    assert {kind: DOC_SECTIONS[REPORTS[kind].schema[0]] for kind in ReportKind} == {
        ReportKind.ANALYZE: Report,
        ReportKind.APP: AppReport,
        ReportKind.PLAN: PlanReport,
        ReportKind.READERS: ReadersReport,
        ReportKind.GATE: GateReport,
    }
    assert all(tuple(REPORTS[kind].formats) == FORMATS for kind in ReportKind)


def test_render_reads_back_every_kind_of_json_report() -> None:
    assert typing.get_args(OUTPUTS["render"].model) == (
        Report,
        AppReport,
        PlanReport,
        ReadersReport,
        GateReport,
    )
    assert OUTPUTS["render"].schema == (
        "Top level",
        "App report",
        "Plan report",
        "Readers report",
        "Gate report",
    )
    assert tuple(OUTPUTS["render"].formats) == FORMATS
