"""``migcheck copy``'s summary, as the terminal shows it."""

from __future__ import annotations

from migcheck.model.copy import CopyResult
from migcheck.untrusted import visible


def render_copy_summary(r: CopyResult) -> str:
    """What was copied per source partition, then the verification's counts and verdict."""
    v = r.verification
    lines = [
        f"migcheck copy: {visible(r.topic)} -> {visible(r.into)} (partitioner {r.partitioner})",
        f"copied this run: {r.copied} records ({r.null_keys} with a null key, round-robin)",
        *(f"  source partition {p.partition}: {p.records}" for p in r.partitions),
        f"verified: {v.records} source records; missing {v.missing}, duplicated "
        f"{v.duplicated}, misplaced {v.misplaced}: {'OK' if v.ok else 'FAILED'}",
    ]
    return "\n".join(lines) + "\n"
