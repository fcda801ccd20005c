"""What tells one copied record from another: key, timestamp and a digest of value and
headers.  The recovery of a dead chunk and the verification compare the same identity."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from migcheck.kafka.fetch import read_range

#: One record's identity: the key as hex (None for a null key), its timestamp, the digest.
Identity = list[Any]


def identity(r: Any) -> Identity:
    """The identity of a record read by :func:`migcheck.kafka.fetch.read_range`."""
    return [
        None if r.key is None else r.key.hex(),
        r.timestamp,
        digest(r.value, r.headers),
    ]


def digest(value: bytes | None, headers: Any) -> str:
    """SHA-1 of the value and headers, with markers so that a null value, an empty one and
    a header's bytes can never run together into the same input."""
    h = hashlib.sha1(usedforsecurity=False)
    h.update(b"\x00" if value is None else b"\x01" + value)
    for name, v in headers or []:
        h.update(b"\x02" + name.encode() + b"\x03" + (v or b""))
    return h.hexdigest()


def identities(
    consumer: Any, topic: str, partition: int, start: int, end: int
) -> Iterator[Identity]:
    """The identities of ``topic``-``partition``'s committed records in ``[start, end)``."""
    return (identity(r) for r in read_range(consumer, topic, partition, start, end))
