"""The report's one definition: the docs, the JSON key order and saved-report checks follow it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sample_report import report as _report

from migcheck.errors import ReportFormatError
from migcheck.model.analyze import Report
from migcheck.model.app import AppLevel, AppReport
from migcheck.model.gate import GateReport, GateVerdict, RuleCode
from migcheck.model.gate import SourceKind as GateSourceKind
from migcheck.report import render
from migcheck.report.schema import DOC_SECTIONS, check_report, fields, typed

DOCS = Path(__file__).resolve().parents[2] / "docs" / "report-schema.md"


def _doc_tables() -> dict[str, list[str]]:
    """Each section heading of the schema doc, with the field names of its table in order."""
    tables: dict[str, list[str]] = {}
    heading = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^#{2,3} (.+)$", line):
            heading = m.group(1).strip()
        elif heading and (m := re.match(r"^\| `([a-z_]+)` \|", line)):
            tables.setdefault(heading, []).append(m.group(1))
    return tables


@pytest.mark.parametrize("section", sorted(DOC_SECTIONS))
def test_schema_doc_lists_exactly_the_fields_in_order(section: str) -> None:
    assert _doc_tables()[section] == list(fields(DOC_SECTIONS[section]))


def test_every_documented_table_is_a_schema_object() -> None:
    assert set(_doc_tables()) == set(DOC_SECTIONS)


def test_json_follows_the_schema_order_for_every_object() -> None:
    parsed = json.loads(render(_report(), "json"))  # type: ignore[arg-type]
    assert list(parsed["gate"]) == ["fail_if_moved", "max_moved_fraction", "failed", "reason"]
    assert list(parsed["topics"][0]["verdict"]) == ["level", "text"]
    assert list(parsed["topics"][0]["partitions"][0]) == [
        "partition",
        "log_start_offset",
        "log_end_offset",
        "records_scanned",
    ]
    assert list(parsed["topics"][0]["candidates"][0]["load"][0]) == ["partition", "keys", "bytes"]


def test_check_report_accepts_a_whole_report_and_names_the_first_gap() -> None:
    check_report(_report(), Report)
    broken = _report()
    del broken["topics"][1]["candidates"][0]["load"][2]["bytes"]
    with pytest.raises(
        ReportFormatError, match=r"no 'topics\[1\]\.candidates\[0\]\.load\[2\]\.bytes'"
    ):
        check_report(broken, Report)
    broken = _report()
    broken["topics"][0]["verdict"] = "moves"
    with pytest.raises(ReportFormatError, match=r"topics\[0\]\.verdict is not an object"):
        check_report(broken, Report)


def test_a_saved_reports_words_become_their_enums_members_and_a_newer_word_stays() -> None:
    """What ``migcheck render`` reads back: JSON strings, as the boundary receives them."""
    saved = json.loads(
        '{"verdict": "DATA_LOSS", "passed": false, "notes": [], "changes": [{"verdict": "CRASH",'
        ' "rules": [{"code": "MC201", "verdict": "CRASH"}, {"code": "MC999", "verdict": "NEW"}],'
        ' "readers": [{"kind": "kafka-streams", "verdict": "SAFE", "rules": ["MC202"]}],'
        ' "source": {"kind": "change"}, "moved": null, "acceptance": null}]}'
    )
    back = typed(saved, GateReport)
    change = back["changes"][0]
    assert back["verdict"] is GateVerdict.DATA_LOSS and change["verdict"] is GateVerdict.CRASH
    assert change["rules"][0]["code"] is RuleCode.APP_CRASHES
    assert change["rules"][1] == {"code": "MC999", "verdict": "NEW"}  # a newer report's
    assert type(change["rules"][1]["code"]) is str
    assert change["readers"][0]["verdict"] is GateVerdict.SAFE
    assert change["readers"][0]["rules"] == [RuleCode.APP_SPLITS_STATE]
    assert change["readers"][0]["kind"] == "kafka-streams"  # a plain string field stays one
    assert change["source"]["kind"] is GateSourceKind.CHANGE and change["moved"] is None
    app = typed(
        {"verdict": "CORRUPT", "candidates": [{"reasons": [{"level": "CRASH"}]}]}, AppReport
    )
    assert app["verdict"] is AppLevel.CORRUPT
    assert app["candidates"][0]["reasons"][0]["level"] is AppLevel.CRASH
    assert json.dumps(back) == json.dumps(saved)  # the same JSON again
