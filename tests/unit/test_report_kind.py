"""Every JSON report says what it is (its first field, ``report``), and ``render`` goes by it.

Reports saved before the field existed still render, their kind told by their fields;
a kind this migcheck does not know is one line, never a traceback.  The reports are the
hand-built ones of tests/support/sample_report.py and an offline plan as the CLI writes it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from oracles import run_cli
from sample_report import app_report, readers_report
from sample_report import report as analyze_report

from migcheck.errors import MigcheckError, ReportFormatError
from migcheck.model.header import ReportKind
from migcheck.report import render
from migcheck.report.schema import kind_of

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"
#: The line scripts/check-report-stable deletes to compare with reports from before it.
KIND_LINE = re.compile(r'^  "report": "[a-z-]*",$')


def _plan_report() -> dict[str, Any]:
    p = run_cli("plan", "--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=3",
                "--format", "json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _first_lines() -> dict[str, str]:
    """Each kind's text report's first line, as its renderer titles it."""
    return {
        "analyze": "migcheck: what moves when the partition count changes",
        "app": "migcheck app: count-<app>",
        "plan": "migcheck plan: offline topology",
        "readers": "migcheck readers: orders",
    }


def _reports() -> dict[str, dict[str, Any]]:
    """A report of each kind, saved as today's migcheck writes it: with its kind."""
    return {
        "analyze": {"report": "analyze", **analyze_report()},
        "app": {"report": "app", **app_report()},
        "plan": _plan_report(),
        "readers": readers_report(),
    }


@pytest.mark.parametrize("kind", ["analyze", "app", "plan", "readers"])
def test_each_kind_renders_as_itself_and_writes_its_kind_first(kind: str) -> None:
    report = _reports()[kind]
    assert render(report, "text").splitlines()[0] == _first_lines()[kind]  # type: ignore[arg-type]
    lines = render(report, "json").splitlines()  # type: ignore[arg-type]
    assert lines[1] == f'  "report": "{kind}",' and KIND_LINE.match(lines[1])
    assert [line for line in lines if KIND_LINE.match(line)] == [lines[1]]  # once, at the top


def test_a_gate_report_naming_an_application_is_not_taken_for_an_app_report() -> None:
    gate = {"report": "analyze", **analyze_report(), "application_id": "shop"}
    assert kind_of(gate) == ReportKind.ANALYZE
    assert render(gate, "text").splitlines()[0] == _first_lines()["analyze"]  # type: ignore[arg-type]


def test_a_report_saved_before_the_kind_field_still_renders_and_gains_it() -> None:
    for kind, saved in _reports().items():
        if kind == "readers":  # written with its kind from the first
            continue
        saved.pop("report")
        assert render(saved, "text").splitlines()[0] == _first_lines()[kind]  # type: ignore[arg-type]
        assert json.loads(render(saved, "json"))["report"] == kind  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["pdf", "", 7, None, ["analyze"]])
def test_an_unknown_kind_is_a_migcheck_error_naming_the_kinds_known(value: object) -> None:
    report = {**analyze_report(), "report": value}
    with pytest.raises(ReportFormatError) as raised:
        render(report, "text")  # type: ignore[arg-type]
    assert isinstance(raised.value, MigcheckError)
    assert str(raised.value) == (
        f"unknown report kind {value!r} (this migcheck knows analyze, app, plan, readers, gate)"
    )


def test_render_command_refuses_an_unknown_kind_in_one_line(tmp_path: Path) -> None:
    saved = tmp_path / "newer.json"
    saved.write_text(json.dumps({**analyze_report(), "report": "migrate"}), encoding="utf-8")
    p = run_cli("render", str(saved))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (
        f"migcheck: error: {saved}: unknown report kind 'migrate' "
        "(this migcheck knows analyze, app, plan, readers, gate)\n"
    )


def test_a_saved_report_rendered_as_json_again_is_the_same_bytes(tmp_path: Path) -> None:
    p = run_cli("plan", "--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=3",
                "--to", "orders=6", "--format", "json")  # fmt: skip
    assert p.returncode == 1, p.stderr  # the change would crash the app
    saved = tmp_path / "plan.json"
    saved.write_text(p.stdout, encoding="utf-8")
    again = run_cli("render", str(saved), "--format", "json")
    assert again.returncode == 0, again.stderr
    assert again.stdout == p.stdout


def test_the_json_of_one_kind_refuses_a_report_of_another() -> None:
    from migcheck.report.registry import REPORTS

    with pytest.raises(ValueError, match="a 'app' report rendered as 'analyze'"):
        REPORTS[ReportKind.ANALYZE].formats["json"]({"report": "app", **analyze_report()})
