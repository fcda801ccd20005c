"""The JSON report: the stable contract of migcheck's output (docs/report-schema.md)."""

from __future__ import annotations

import json

from migcheck.model.analyze import Report
from migcheck.model.app import AppReport
from migcheck.model.plan import PlanReport
from migcheck.report.schema import ordered


def render_json(report: Report | AppReport | PlanReport) -> str:
    """The report as indented JSON in the documented key order, ending with a newline.

    The analysis builds its dicts in whatever order its steps finish; the JSON a
    person diffs between two runs should not depend on that.  Strict JSON: a NaN
    or infinity raises ``ValueError`` instead of writing ``NaN``, which ``jq`` and
    most parsers reject; the analysis never produces one.
    """
    return json.dumps(ordered(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
