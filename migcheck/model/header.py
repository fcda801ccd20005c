"""The two fields every report starts with: which migcheck wrote it, and when.

Built in one place so every report writes ``generated_at`` as
docs/report-schema.md promises: UTC, ``YYYY-MM-DDTHH:MM:SSZ``.
"""

from __future__ import annotations

import datetime as dt
from typing import TypedDict

from migcheck.version import __version__

#: ``generated_at``'s format: ISO 8601 in UTC, to the second, with a ``Z``.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class Header(TypedDict):
    migcheck_version: str
    generated_at: str


def report_header(now: dt.datetime | None = None) -> Header:
    """``migcheck_version`` and ``generated_at`` (now, unless ``now`` is given)."""
    when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return {"migcheck_version": __version__, "generated_at": when.strftime(TIMESTAMP_FORMAT)}
