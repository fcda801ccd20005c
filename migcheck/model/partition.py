"""``migcheck partition``'s answer: each key's partition today and under a proposed count.

A lookup, not a report: its ``--format json`` is the list of rows alone (no header and
no ``report`` kind), documented in ``docs/report-schema.md`` like the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict


class KeyRow(TypedDict):
    key: str
    key_hex: str
    partition: int | None  # None: the partitioner places this key without hashing it
    new_partition: NotRequired[int | None]  # with --to
    moved: NotRequired[bool | None]  # with --to; None when the key is not hashed


@dataclass(frozen=True)
class Placements:
    """The keys looked up, at the topic's count and the proposed one (``--to``)."""

    partitions: int
    to: int | None
    rows: list[KeyRow]
