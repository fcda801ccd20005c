"""What ``migcheck copy`` found: the records it copied per source partition and its check.

Plain data, rendered by :mod:`migcheck.report.copy`: as text, or as the JSON summary
typed here (:class:`CopySummary`, documented in docs/report-schema.md; no ``from
__future__ import annotations``, as in :mod:`migcheck.model.header`, so the schema reads
its fields).
"""

from dataclasses import dataclass
from typing import TypedDict

#: (topic, partition, first offset, end offset) of each range a copy's check reads.
Ranges = list[tuple[str, int, int, int]]


@dataclass(frozen=True)
class Verification:
    """The copy's check: source identities against the destination's."""

    records: int  # source records in the copied range
    missing: int  # source identities with fewer copies in the destination
    duplicated: int  # ... with more
    misplaced: int  # destination records of the copy on another partition than their key's

    @property
    def ok(self) -> bool:
        return self.missing == 0 and self.duplicated == 0 and self.misplaced == 0


@dataclass(frozen=True)
class CopyLag:
    """How far ``copy --follow`` is behind its source at one reporting interval (the
    measure is :mod:`migcheck.copy.follow`'s)."""

    records: int  # offsets committed in the source and not copied yet
    seconds: float | None  # on the copy's clock; None while the history is being copied


@dataclass(frozen=True)
class PartitionCopied:
    partition: int
    records: int
    null_keys: int
    from_detection: int = 0  # of them, taken from the partitioner's detection read


@dataclass(frozen=True)
class CopyResult:
    """One run of ``migcheck copy``: what it copied this run, and how it verified."""

    topic: str
    into: str
    partitioner: str
    partitions: tuple[PartitionCopied, ...]
    verification: Verification

    @property
    def copied(self) -> int:
        return sum(p.records for p in self.partitions)

    @property
    def null_keys(self) -> int:
        return sum(p.null_keys for p in self.partitions)

    @property
    def from_detection(self) -> int:
        return sum(p.from_detection for p in self.partitions)


class CopyPartitionEntry(TypedDict):
    partition: int
    records: int
    null_keys: int
    from_detection: int


class CopyVerificationEntry(TypedDict):
    records: int
    missing: int
    duplicated: int
    misplaced: int
    ok: bool


class CopyLagLine(TypedDict):
    records_behind: int
    seconds_behind: float | None


class CopySummary(TypedDict):
    migcheck_version: str
    topic: str
    into: str
    partitioner: str
    copied: int
    null_keys: int
    from_detection: int
    partitions: list[CopyPartitionEntry]
    verification: CopyVerificationEntry
