"""What every JSON report says about itself: its kind, which migcheck wrote it, and when.

Built in one place so every report writes ``generated_at`` as
docs/report-schema.md promises: UTC, ``YYYY-MM-DDTHH:MM:SSZ``.  No ``from __future__
import annotations`` here: a TypedDict tells ``NotRequired`` fields apart only from
evaluated annotations.
"""

import datetime as dt
from enum import StrEnum
from typing import NotRequired, TypedDict

from migcheck.version import __version__

#: ``generated_at``'s format: ISO 8601 in UTC, to the second, with a ``Z``.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class ReportKind(StrEnum):
    """Which command wrote a JSON report: the name it is registered under
    (:data:`migcheck.report.registry.OUTPUTS`), which renders it."""

    ANALYZE = "analyze"
    APP = "app"
    PLAN = "plan"
    READERS = "readers"
    GATE = "gate"


class Kind(TypedDict):
    """A JSON report's first field: what it is, so a reader (and ``migcheck render``) need
    not guess from the fields it holds.  The JSON renderer writes it from the registry
    entry that renders the report; absent in reports saved before it existed."""

    report: NotRequired[ReportKind]


class Header(TypedDict):
    migcheck_version: str
    generated_at: str


def report_header(now: dt.datetime | None = None) -> Header:
    """``migcheck_version`` and ``generated_at`` (now, unless ``now`` is given)."""
    when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return {"migcheck_version": __version__, "generated_at": when.strftime(TIMESTAMP_FORMAT)}
