"""Record batches (format v2) as a broker stores them, built by kafka-python's own classes.

kafka-python's ``MemoryRecordsBuilder`` writes a producer's batch; what only a broker
sets is written into its header here through kafka-python's own header layout
(``DefaultRecordBase.HEADER_STRUCT``): the base offset, the leader epoch, LogAppendTime and
the control flag of a transaction marker, the CRC-32C then computed again by kafka-python's
own function.  Nothing here comes from migcheck.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

from kafka.record.default_records import DefaultRecordBase as Layout
from kafka.record.memory_records import MemoryRecordsBuilder
from kafka.record.util import calc_crc32c

#: Kafka's compression codecs, by the id a batch's attributes carry.
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

_FIELDS = {"base_offset": 0, "leader_epoch": 2, "attributes": 5, "max_timestamp": 8}


@dataclass(frozen=True)
class Record:
    """One record to append: ``value`` None is a tombstone, ``key`` None a null key;
    ``gap`` offsets are skipped before it (as compaction leaves them)."""

    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    gap: int = 0


def batch(
    base_offset: int,
    records: list[Record],
    codec: str = "none",
    producer_id: int = -1,
    transactional: bool = False,
    leader_epoch: int = 0,
    log_append_time: int | None = None,
) -> bytes:
    """``records`` in one batch from ``base_offset``; with ``log_append_time`` the broker's
    timestamp type and time."""
    builder = MemoryRecordsBuilder(
        magic=2,
        compression_type=CODECS[codec],
        batch_size=1 << 24,
        transactional=transactional,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
    )
    for r in records:
        builder.skip(r.gap)
        assert builder.append(r.timestamp, r.key, r.value, list(r.headers)) is not None
    builder.close()
    changes: dict[str, int] = {"base_offset": base_offset, "leader_epoch": leader_epoch}
    if log_append_time is not None:
        attributes = _header(bytes(builder.buffer()))[_FIELDS["attributes"]]
        changes |= {
            "attributes": attributes | Layout.TIMESTAMP_TYPE_MASK,
            "max_timestamp": log_append_time,
        }
    return _patched(bytes(builder.buffer()), changes)


def marker(base_offset: int, producer_id: int, abort: bool, leader_epoch: int = 0) -> bytes:
    """A transaction marker: a control batch of one record (key: version 0 and type, 0 for
    an abort; value: version 0 and the coordinator epoch)."""
    key = struct.pack(">hh", 0, 0 if abort else 1)
    value = struct.pack(">hi", 0, 7)
    built = batch(base_offset, [Record(1, key, value)], producer_id=producer_id,
                  transactional=True, leader_epoch=leader_epoch)  # fmt: skip
    attributes = _header(built)[_FIELDS["attributes"]]
    return _patched(built, {"attributes": attributes | Layout.CONTROL_MASK})


def random_records(rng: random.Random, n: int, start_ts: int = 1_700_000_000_000) -> list[Record]:
    """Keys of 0 to 40 bytes (a few null), compressible values of 0 to 300 bytes (a few
    tombstones), a few headers and compaction gaps, timestamps not in order."""
    out = []
    for i in range(n):
        key = None if rng.random() < 0.05 else rng.randbytes(rng.randrange(0, 41))
        value = None if rng.random() < 0.05 else b"v" * rng.randrange(0, 301)
        headers = (("trace", rng.randbytes(8)),) if rng.random() < 0.2 else ()
        gap = rng.randrange(1, 4) if i and rng.random() < 0.1 else 0
        out.append(Record(start_ts + i * 3 - rng.randrange(0, 50), key, value, headers, gap))
    return out


def _header(buf: bytes) -> tuple[int, ...]:
    return Layout.HEADER_STRUCT.unpack_from(buf)


def _patched(buf: bytes, changes: dict[str, int]) -> bytes:
    """``buf`` with header ``changes``, its CRC computed again."""
    fields = list(_header(buf))
    for name, value in changes.items():
        fields[_FIELDS[name]] = value
    out = bytearray(buf)
    Layout.HEADER_STRUCT.pack_into(out, 0, *fields)
    crc = calc_crc32c(memoryview(out)[Layout.ATTRIBUTES_OFFSET :])
    struct.pack_into(">I", out, Layout.CRC_OFFSET, crc)
    return bytes(out)


def offsets(built: bytes) -> tuple[int, int]:
    """A batch's first and last offsets (its header's base offset and last offset delta)."""
    header = _header(built)
    return header[0], header[0] + header[6]


def random_log(rng: random.Random, start: int = 0) -> tuple[list[bytes], list[tuple[int, int]]]:
    """A partition's batches from offset ``start``, in random codecs, and the (producer id,
    first offset) of each aborted transaction, as a fetch lists them: plain batches and
    transactions of three producers, interleaved, committed or aborted by their markers
    (one may stay open), leader epochs rising, some batches in LogAppendTime."""
    batches: list[bytes] = []
    aborted: list[tuple[int, int]] = []
    open_: dict[int, bool] = {}  # a producer in a transaction: whether it will abort
    offset, epoch = start, rng.randrange(0, 5)
    for _ in range(rng.randrange(1, 9)):
        producer = rng.choice([-1, 1, 2, 3])
        epoch += rng.random() < 0.2
        if producer in open_ and rng.random() < 0.4:
            built = marker(offset, producer, abort=open_.pop(producer), leader_epoch=epoch)
        else:
            if producer >= 0 and producer not in open_:
                open_[producer] = rng.random() < 0.5
                if open_[producer]:
                    aborted.append((producer, offset))
            append_time = 1_800_000_000_000 + offset if rng.random() < 0.2 else None
            built = batch(offset, random_records(rng, rng.randrange(1, 60)),
                          rng.choice(list(CODECS)), producer_id=producer,
                          transactional=producer >= 0, leader_epoch=epoch,
                          log_append_time=append_time)  # fmt: skip
        batches.append(built)
        offset = offsets(built)[1] + 1
    return batches, aborted
