"""What ``migcheck copy`` found: the records it copied per source partition and its check.

Plain data, rendered by :mod:`migcheck.report.copy`; the copy has no JSON report.
"""

from __future__ import annotations

from dataclasses import dataclass


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
class PartitionCopied:
    partition: int
    records: int
    null_keys: int


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
