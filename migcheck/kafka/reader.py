"""Reading records: work units over offset ranges, read by a groupless consumer.

Each (topic, partition, offset range) is a :class:`WorkUnit`; Spark runs one
task per packed group of units (see :mod:`migcheck.analysis.sources`), and each
task yields Arrow batches of :data:`RECORD_SCHEMA`.  Records are read with
``isolation_level=read_committed``, so aborted transactions never count.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.metadata import TopicMeta

#: What every reader yields, one row per record.  A null ``key`` is a null key;
#: a null ``value_size`` is a tombstone (null value).
RECORD_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("key", pa.binary()),
        ("key_size", pa.int32()),
        ("value_size", pa.int32()),
        ("timestamp", pa.int64()),
    ]
)

#: The same schema in Spark's DDL, for ``mapInArrow``.
RECORD_DDL = (
    "topic string, partition int, offset long, key binary, key_size int, value_size int, "
    "timestamp long"
)


# --- work units ------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class WorkUnit:
    """One Spark task's share: ``topic``/``partition`` offsets ``[start, end)``."""

    topic: str
    partition: int
    start: int
    end: int


def plan_units(
    metas: Iterable[TopicMeta],
    sample_per_partition: int | None,
    chunk_records: int = 200_000,
    windows: int = 8,
) -> list[WorkUnit]:
    """Split each partition's offset range into units.

    Full scan: consecutive chunks of ``chunk_records`` offsets, so big partitions
    spread over tasks.  Sample: a partition with more than ``sample_per_partition``
    offsets is read in ``windows`` evenly spaced windows that add up to about
    ``sample_per_partition`` records, so the sample sees old and new data alike.
    """
    units: list[WorkUnit] = []
    for meta in metas:
        for p in meta.partitions:
            start, end = p.log_start_offset, p.log_end_offset
            size = end - start
            if size <= 0:
                continue
            if sample_per_partition is None or size <= sample_per_partition:
                for s in range(start, end, chunk_records):
                    units.append(WorkUnit(meta.name, p.partition, s, min(s + chunk_records, end)))
                continue
            count = max(1, min(windows, sample_per_partition))
            width = max(1, sample_per_partition // count)
            gap = (size - width) / max(1, count - 1)
            for i in range(count):
                s = start + round(i * gap) if count > 1 else start
                units.append(WorkUnit(meta.name, p.partition, s, min(s + width, end)))
    return units


# --- reading records ---------------------------------------------------------------

_BATCH_ROWS = 50_000


def read_units(
    client: ClientConfig, units: Iterable[WorkUnit], idle_timeout_s: float = 30.0
) -> Iterator[pa.RecordBatch]:
    """Yield the committed records of ``units`` as Arrow batches (runs inside Spark tasks).

    One consumer serves all the units of a task: connecting costs more than
    reading a small partition.  A unit ends at its end offset; compaction gaps,
    transaction markers and aborted records simply do not appear.  A partition
    that stops answering for ``idle_timeout_s`` fails the task rather than
    hanging it.
    """
    # A sample window is a few thousand records: a 1 MiB fetch holds one, where the
    # default 8 MiB fetched (and with kafka-python's prefetch, often decoded) far more.
    consumer = open_consumer(client, max_partition_fetch_bytes=1024 * 1024)
    try:
        for unit in units:
            yield from _read_unit(consumer, unit, idle_timeout_s)
    finally:
        consumer.close(autocommit=False)


def read_range(
    consumer: Any, topic: str, partition: int, start: int, end: int, idle_timeout_s: float = 30.0
) -> Iterator[Any]:
    """The committed records (kafka-python ``ConsumerRecord``) of ``topic``-``partition`` in
    ``[start, end)``, in offset order: the one polling loop every kafka-python read uses.

    Compaction gaps, transaction markers and aborted records simply do not appear.
    It never asks for more records than the range still holds: kafka-python decodes
    lazily, so records past the end are neither decoded nor thrown away.  A partition
    that stops answering for ``idle_timeout_s`` raises :class:`ReadError` rather than
    hanging.
    """
    from kafka import TopicPartition

    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek(tp, start)
    last_progress = time.monotonic()
    while (position := consumer.position(tp)) < end:
        wanted = min(10_000, end - position)
        polled = consumer.poll(timeout_ms=1000, max_records=wanted).get(tp, [])
        if not polled:
            if time.monotonic() - last_progress > idle_timeout_s:
                raise ReadError(
                    f"{topic}-{partition}: no records between offset {position} and {end} "
                    f"for {idle_timeout_s:.0f}s"
                )
            continue
        last_progress = time.monotonic()
        for r in polled:
            if r.offset >= end:
                return
            yield r


def _read_unit(consumer: Any, unit: WorkUnit, idle_timeout_s: float) -> Iterator[pa.RecordBatch]:
    """One unit's records, in batches of at most ``_BATCH_ROWS`` rows."""
    cols = _empty_columns()
    for r in read_range(consumer, unit.topic, unit.partition, unit.start, unit.end, idle_timeout_s):
        cols["offset"].append(r.offset)
        cols["key"].append(r.key)
        cols["key_size"].append(None if r.key is None else len(r.key))
        cols["value_size"].append(None if r.value is None else len(r.value))
        cols["timestamp"].append(r.timestamp)
        if len(cols["offset"]) >= _BATCH_ROWS:
            yield _batch(unit, cols)
            cols = _empty_columns()
    if cols["offset"]:
        yield _batch(unit, cols)


def _empty_columns() -> dict[str, list[Any]]:
    return {name: [] for name in RECORD_SCHEMA.names}


def pack_units(units: list[WorkUnit], tasks: int) -> list[list[WorkUnit]]:
    """Share units out over at most ``tasks`` tasks of about equal size (largest first)."""
    bins: list[list[WorkUnit]] = [[] for _ in range(max(1, min(tasks, len(units))))]
    sizes = [0] * len(bins)
    for unit in sorted(units, key=lambda u: u.end - u.start, reverse=True):
        i = sizes.index(min(sizes))
        bins[i].append(unit)
        sizes[i] += unit.end - unit.start
    return [b for b in bins if b]


def _batch(unit: WorkUnit, cols: dict[str, list[Any]]) -> pa.RecordBatch:
    n = len(cols["offset"])
    cols["topic"] = [unit.topic] * n
    cols["partition"] = [unit.partition] * n
    return pa.RecordBatch.from_pydict(cols, schema=RECORD_SCHEMA)
