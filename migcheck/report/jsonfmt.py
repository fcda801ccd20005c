"""The JSON report: the stable contract of migcheck's output (docs/report-schema.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from migcheck.model.header import ReportKind
from migcheck.report.schema import ordered


def render_json(report: Mapping[str, Any], kind: ReportKind, model: type) -> str:
    """The report as indented JSON in the documented key order (``model``'s), its kind
    first (the ``report`` field), ending with a newline.

    The kind is the registry's, whose entry renders the report, so every report written
    carries it, also one saved before the field existed and rendered again.  The analysis
    builds its dicts in whatever order its steps finish; the JSON a person diffs between
    two runs should not depend on that.  Strict JSON: a NaN or infinity raises
    ``ValueError`` instead of writing ``NaN``, which ``jq`` and most parsers reject; the
    analysis never produces one.
    """
    if report.get("report", kind) != kind:
        raise ValueError(f"a {report['report']!r} report rendered as {str(kind)!r}")
    stamped = {"report": kind, **report}
    return json.dumps(ordered(stamped, model), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
