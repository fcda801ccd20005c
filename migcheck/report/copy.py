"""``migcheck copy``'s summary, as the terminal shows it and as JSON, and its progress."""

from __future__ import annotations

import json

from migcheck.model.copy import CopyLag, CopyLagLine, CopyResult, CopySummary
from migcheck.untrusted import visible
from migcheck.version import __version__


def render_copy_summary(r: CopyResult) -> str:
    """What was copied per source partition, then the verification's counts and verdict."""
    v = r.verification
    lines = [
        f"migcheck copy: {visible(r.topic)} -> {visible(r.into)} (partitioner {r.partitioner})",
        f"copied this run: {r.copied} records ({r.null_keys} with a null key, round-robin)",
        *_read_once(r),
        *(f"  source partition {p.partition}: {p.records}" for p in r.partitions),
        f"verified: {v.records} source records; missing {v.missing}, duplicated "
        f"{v.duplicated}, misplaced {v.misplaced}: {'OK' if v.ok else 'FAILED'}",
    ]
    return "\n".join(lines) + "\n"


def _read_once(r: CopyResult) -> list[str]:
    """How much of the source was read once, for the detection and the copy together."""
    if not r.from_detection:
        return []
    return [f"read once: {r.from_detection} of them from the read that detected the partitioner"]


def copy_summary(r: CopyResult) -> CopySummary:
    """The summary as docs/report-schema.md's "Copy summary" documents it."""
    v = r.verification
    return {
        "migcheck_version": __version__,
        "topic": r.topic,
        "into": r.into,
        "partitioner": r.partitioner,
        "copied": r.copied,
        "null_keys": r.null_keys,
        "from_detection": r.from_detection,
        "partitions": [
            {
                "partition": p.partition,
                "records": p.records,
                "null_keys": p.null_keys,
                "from_detection": p.from_detection,
            }
            for p in r.partitions
        ],
        "verification": {
            "records": v.records,
            "missing": v.missing,
            "duplicated": v.duplicated,
            "misplaced": v.misplaced,
            "ok": v.ok,
        },
    }


def render_copy_json(r: CopyResult) -> str:
    """The summary as one line of JSON (names from the cluster escaped by the encoder):
    after a follow's lag lines, the output stays JSON Lines."""
    return json.dumps(copy_summary(r)) + "\n"


def render_copy_lag_text(lag: CopyLag) -> str:
    """A follow's lag at one interval: "lag: 1,204 records, 0.4 s behind"."""
    behind = "copying the history" if lag.seconds is None else f"{lag.seconds:.1f} s behind"
    return f"lag: {lag.records:,} records, {behind}\n"


def copy_lag_line(lag: CopyLag) -> CopyLagLine:
    """A follow's lag as docs/report-schema.md's "Copy lag" documents it."""
    seconds = None if lag.seconds is None else round(lag.seconds, 3)
    return {"records_behind": lag.records, "seconds_behind": seconds}


def render_copy_lag_json(lag: CopyLag) -> str:
    return json.dumps(copy_lag_line(lag)) + "\n"


#: A follow's lag line per ``--format``.
LAG_FORMATS = {"text": render_copy_lag_text, "json": render_copy_lag_json}


def copy_progress(done: int, total: int, written: int, seconds: float) -> str:
    """What a copy has written, its rate so far and the time the rest takes at that rate
    (unknown before the first chunk ends): "12.5 MiB, 41,200 records/s, 1:05 left"."""
    mib = f"{written / 2**20:,.1f} MiB"
    if done <= 0 or seconds <= 0:
        return f"{mib}, rate not known yet"
    rate = done / seconds
    left = int((total - done) / rate)
    return f"{mib}, {rate:,.0f} records/s, {left // 60}:{left % 60:02d} left"
