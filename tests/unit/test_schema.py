"""The report's one definition: the docs, the JSON key order and saved-report checks follow it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sample_report import report as _report

from migcheck.errors import ReportFormatError
from migcheck.model.analyze import Report
from migcheck.report import render
from migcheck.report.schema import DOC_SECTIONS, check_report, fields

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
