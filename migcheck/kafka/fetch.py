"""Reading records: work units over offset ranges, read by a groupless consumer.

Each (topic, partition, offset range) is a :class:`WorkUnit`; Spark runs one
task per packed group of units (see :mod:`migcheck.analysis.scan`): a sample's
keeps each partition's windows together (:func:`pack_units`), a full scan's cuts the
offsets into equal runs (:func:`pack_spans`).  In each task :func:`read_units` yields
Arrow batches of :data:`RECORD_SCHEMA`.  Records are read with
``isolation_level=read_committed``, so aborted transactions never count.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line, open_consumer
from migcheck.kafka.metadata import TopicMeta
from migcheck.kafka.recordbatch import Columns, WholeChunk, columns_of_records, key_array

if TYPE_CHECKING:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.consumer.fetcher import ConsumerRecord

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
#: :data:`RECORD_SCHEMA` with each record's digest of its value and headers (a 64-bit
#: hash as a signed long, as Spark has no unsigned one), for reads that ask for it.
DIGEST_SCHEMA = RECORD_SCHEMA.append(pa.field("digest", pa.int64()))


# --- work units ------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class WorkUnit:
    """One Spark task's share: ``topic``/``partition`` offsets ``[start, end)``; a sample's
    window ``window`` of its partition (-1: not a sample's window)."""

    topic: str
    partition: int
    start: int
    end: int
    window: int = -1


#: A sampled partition is read in this many windows (fewer if the sample is smaller).
SAMPLE_WINDOWS = 8


def sample_windows(sample_per_partition: int, windows: int = SAMPLE_WINDOWS) -> tuple[int, int]:
    """How a partition larger than ``sample_per_partition`` is sampled: the number of
    windows, and each window's width in offsets."""
    count = max(1, min(windows, sample_per_partition))
    return count, max(1, sample_per_partition // count)


def window_starts(units: Iterable[WorkUnit]) -> dict[tuple[str, int], list[int]]:
    """Per (topic, partition) read in a sample's windows: each window's first offset, in
    window order (what :func:`~migcheck.analysis.histories.histories_by_partition` marks
    a key's windows by)."""
    starts: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for u in units:
        if u.window >= 0:
            starts.setdefault((u.topic, u.partition), []).append((u.window, u.start))
    return {tp: [start for _, start in sorted(w)] for tp, w in starts.items()}


def records_in(units: Iterable[WorkUnit]) -> int:
    """The offsets ``units`` span: the records they read, at most (fewer where a topic is
    compacted or transactional)."""
    return sum(u.end - u.start for u in units)


def plan_units(
    metas: Iterable[TopicMeta],
    sample_per_partition: int | None,
    chunk_records: int = 200_000,
    windows: int = SAMPLE_WINDOWS,
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
            count, width = sample_windows(sample_per_partition, windows)
            gap = (size - width) / max(1, count - 1)
            for i in range(count):
                s = start + round(i * gap) if count > 1 else start
                unit = WorkUnit(meta.name, p.partition, s, min(s + width, end), i)
                units.append(unit)
    return units


#: The read tasks' ``retry_backoff_ms`` (see :func:`read_units`).
READ_RETRY_BACKOFF_MS = 10

#: A sample's fetch per partition: a sample window is a few thousand records, which a
#: 1 MiB fetch holds, where the consumer's default 8 MiB fetched far more.
SAMPLE_FETCH_BYTES = 1024 * 1024


# --- reading records ---------------------------------------------------------------


def read_units(
    client: ClientConfig,
    units: Iterable[WorkUnit],
    idle_timeout_s: float = 30.0,
    every_record: bool = False,
    digest: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Yield the committed records of ``units`` as Arrow batches (runs inside Spark tasks).

    One consumer serves all the units of a task: connecting costs more than
    reading a small partition.  Its fetched bytes become columns in compiled code
    (:mod:`migcheck.kafka.recordbatch`, through hook 4 of
    :mod:`~migcheck.kafka.private_hooks`), never a Python object per record; where the
    hooks are fenced off, kafka-python's own records become the same columns, more
    slowly.  A unit ends at its end offset; compaction gaps, transaction markers and
    aborted records simply do not appear.  A partition that stops answering for
    ``idle_timeout_s`` fails the task rather than hanging it.  With ``every_record`` (a
    full scan), records deleted before they were read fail the read: a report must
    never look whole when part of the topic went unread.

    Small partitions are read in groups (:func:`reading_groups`), each group's at once,
    as Kafka's own consumer does: a partition read alone costs a fetch's round trip
    however few records it holds (8 ms each in a profile: 1,709 two-record partitions
    took 5.4 to 8.8 s one after another, 2.2 to 3.7 s in groups of
    :data:`GROUP_MAX_PARTITIONS`).  A group's records are held until it is read, then
    yielded in the units' order, each partition's together as readers expect; a unit
    too big to share a group streams alone.

    With ``digest`` the batches are of :data:`DIGEST_SCHEMA`: a copy's check compares
    records by key, timestamp and this digest, decoded in compiled code as keys are.
    """
    read = read_columns(client, units, idle_timeout_s, every_record, digest, grouped=True)
    for unit, chunk in read:
        yield columns_batch(unit, chunk)


#: The most records a group of :func:`reading_groups` holds.  A group saves round trips,
#: which only small partitions are made of: 12 partitions of 400,000 records read
#: together took 3.2 to 3.5 s against 1.9 s one after another (docs/benchmarks.md).
GROUP_MAX_RECORDS = 20_000

#: The most partitions a group of :func:`reading_groups` polls at once.  Each poll looks
#: at every partition's position, so a group's cost grows with its square: 1,709
#: partitions of two records each took 15 s in groups of 256, 7.7 to 8.7 s in groups of
#: 128 and 2.2 to 3.7 s in groups of 64, against 5.4 to 8.8 s one after another
#: (docs/benchmarks.md).
GROUP_MAX_PARTITIONS = 64


def reading_groups(units: Iterable[WorkUnit]) -> Iterator[list[WorkUnit]]:
    """``units`` cut, in their order, into runs of at most :data:`GROUP_MAX_PARTITIONS`
    partitions and :data:`GROUP_MAX_RECORDS` records (a unit bigger than that alone).
    Lazy: a read that claims partitions as it goes (``analysis/claims.py``) claims one
    group, and one unit more, at a time."""
    group: list[WorkUnit] = []
    partitions: set[tuple[str, int]] = set()
    records = 0
    for unit in units:
        key, size = (unit.topic, unit.partition), unit.end - unit.start
        wider = key not in partitions and len(partitions) >= GROUP_MAX_PARTITIONS
        if group and (wider or records + size > GROUP_MAX_RECORDS):
            yield group
            group, partitions, records = [], set(), 0
        group.append(unit)
        partitions.add(key)
        records += size
    if group:
        yield group


def _held(
    consumer: KafkaConsumer, ends: dict[TopicPartition, int], group: list[WorkUnit],
    idle_timeout_s: float,
) -> Iterator[tuple[WorkUnit, Columns]]:  # fmt: skip
    """Each unit of ``group`` with its chunks, read in rounds, each round the next unit
    of every partition, all fetched at once (a partition has one position at a time),
    and held until the last round."""
    by_partition: dict[tuple[str, int], list[WorkUnit]] = {}
    for unit in group:
        by_partition.setdefault((unit.topic, unit.partition), []).append(unit)
    held: dict[WorkUnit, list[Columns]] = {u: [] for u in group}
    for round_ in itertools.zip_longest(*by_partition.values()):
        live = [u for u in round_ if u is not None]
        _poll_together(live, consumer, ends, idle_timeout_s, held)
    for unit, chunks in held.items():
        yield from ((unit, chunk) for chunk in chunks)


def read_columns(
    client: ClientConfig,
    units: Iterable[WorkUnit],
    idle_timeout_s: float = 30.0,
    every_record: bool = False,
    digest: bool = False,
    bodies: bool = False,
    grouped: bool = False,
) -> Iterator[tuple[WorkUnit, Columns]]:
    """Each unit's committed records through one consumer, as columns (:func:`read_units`'
    read, before the columns become Arrow batches): a unit after another, or, ``grouped``,
    a group's partitions at once (:func:`reading_groups`; one after another where the
    hooks are fenced off).  With ``bodies``, the columns hold each record's value and
    headers too (:func:`~migcheck.kafka.recordbatch.whole_records`), unless the hooks are
    fenced off: kafka-python's own records then become columns without them."""
    from kafka import TopicPartition

    from migcheck.kafka.private_hooks import fetch_columns

    consumer = _reading_consumer(client, every_record)
    ends: dict[TopicPartition, int] = {}
    hooked = fetch_columns(consumer, ends, digest, bodies)
    read = _fetched_columns if hooked else functools.partial(_records_as_columns, digest=digest)

    def one_by_one(units: Iterable[WorkUnit]) -> Iterator[tuple[WorkUnit, Columns]]:
        for unit in units:
            ends[TopicPartition(unit.topic, unit.partition)] = unit.end
            yield from ((unit, chunk) for chunk in read(consumer, unit, idle_timeout_s))

    try:
        if not (grouped and hooked):
            yield from one_by_one(units)
            return
        for group in reading_groups(units):
            if len({(u.topic, u.partition) for u in group}) == 1:
                yield from one_by_one(group)
            else:
                yield from _held(consumer, ends, group, idle_timeout_s)
    finally:
        consumer.close(autocommit=False)


def _reading_consumer(client: ClientConfig, every_record: bool) -> KafkaConsumer:
    """A read's consumer.  A poll with nothing in flight yet (a new consumer, before its
    first fetch) sleeps retry_backoff_ms: kafka-python's 100 ms default was a third of a
    small topic's read task.  A full scan keeps the consumer's 8 MiB fetch
    (open_consumer): it reads each partition to its end, and each fetch is a round trip
    through kafka-python's network thread: fewer round trips, a faster scan; 32 MiB
    gained nothing more (docs/benchmarks.md)."""
    fetch = {} if every_record else {"max_partition_fetch_bytes": SAMPLE_FETCH_BYTES}
    return open_consumer(
        client, retry_backoff_ms=READ_RETRY_BACKOFF_MS, fail_on_deleted=every_record, **fetch
    )


def _fetched_columns(
    consumer: KafkaConsumer, unit: WorkUnit, idle_timeout_s: float
) -> Iterator[Columns]:
    """``unit``'s records as the fetcher's own chunks (``private_hooks.fetch_columns``)."""
    for polled in _polls(consumer, unit.topic, unit.partition, unit.start, unit.end,
                         idle_timeout_s, lambda position: 100):  # fmt: skip
        yield from polled


#: Records per chunk where kafka-python's own records are gathered into columns.
RECORDS_PER_CHUNK = 10_000


def _records_as_columns(
    consumer: KafkaConsumer, unit: WorkUnit, idle_timeout_s: float, digest: bool = False
) -> Iterator[Columns]:
    """``unit``'s records as kafka-python's own (:func:`read_range`), gathered into the
    columns the fetcher's chunks hold: the public path, the same columns, slower.  A
    corrupt batch fails in one line, as the decoder's does."""
    from kafka.errors import CorruptRecordError

    records = read_range(consumer, unit.topic, unit.partition, unit.start, unit.end,
                         idle_timeout_s)  # fmt: skip
    try:
        while chunk := list(itertools.islice(records, RECORDS_PER_CHUNK)):
            yield columns_of_records(chunk, digest)
    except CorruptRecordError as e:
        raise ReadError(f"{unit.topic}-{unit.partition}: {first_line(e)}") from None


def read_range(
    consumer: KafkaConsumer,
    topic: str,
    partition: int,
    start: int,
    end: int,
    idle_timeout_s: float = 30.0,
) -> Iterator[ConsumerRecord]:
    """The committed records (kafka-python ``ConsumerRecord``) of ``topic``-``partition`` in
    ``[start, end)``, in offset order, for the reads that need whole records (copies).

    It never asks for more records than the range still holds: kafka-python decodes
    lazily, so records past the end are neither decoded nor thrown away.
    """
    for polled in _polls(consumer, topic, partition, start, end, idle_timeout_s,
                         lambda position: min(10_000, end - position)):  # fmt: skip
        for r in polled:
            # Its consumer is never hooked (fetch_columns): its polls hold records.
            if r.offset >= end:  # type: ignore[union-attr]
                return
            yield r


def read_whole(
    client: ClientConfig, topic: str, partition: int, start: int, end: int,
    idle_timeout_s: float = 30.0,
) -> WholeChunk:  # fmt: skip
    """The committed records of ``topic``-``partition`` in ``[start, end)``, whole (key,
    value, headers, timestamp), in offset order: what a copy writes.

    Decoded in compiled code (hook 4 of :mod:`~migcheck.kafka.private_hooks`, with
    bodies): kafka-python built a Python object per record and parsed it in Python,
    most of a copy task's time (docs/benchmarks.md).  Where the hooks are fenced off,
    kafka-python's own records (:func:`read_range`), which have the same names.
    """
    from kafka import TopicPartition

    from migcheck.kafka.private_hooks import fetch_columns

    consumer = open_consumer(client, retry_backoff_ms=READ_RETRY_BACKOFF_MS)
    try:
        if not fetch_columns(consumer, {TopicPartition(topic, partition): end}, bodies=True):
            return WholeChunk([], list(read_range(consumer, topic, partition, start, end,
                                                  idle_timeout_s)))  # fmt: skip
        polls = _polls(consumer, topic, partition, start, end, idle_timeout_s, lambda _: 100)
        return WholeChunk([c for polled in polls for c in polled])
    finally:
        consumer.close(autocommit=False)


def _polls(
    consumer: KafkaConsumer,
    topic: str,
    partition: int,
    start: int,
    end: int,
    idle_timeout_s: float,
    max_records: Callable[[int], int],
) -> Iterator[list[ConsumerRecord] | list[Columns]]:
    """The one polling loop of every kafka-python read: each non-empty poll of
    ``topic``-``partition`` from ``start`` until its position reaches ``end``.

    Compaction gaps, transaction markers and aborted records simply do not appear.
    A partition that stops answering for ``idle_timeout_s`` raises :class:`ReadError`
    rather than hanging; one whose topic is deleted under the read raises it as soon as
    the client's metadata no longer has the partition (hook 5 of
    :mod:`~migcheck.kafka.private_hooks`; fenced off, at the idle timeout).
    """
    from kafka import TopicPartition
    from kafka.errors import OffsetOutOfRangeError

    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.resume(tp)  # paused where a group read it (_poll_together) before
    consumer.seek(tp, start)
    last_progress = time.monotonic()
    known = False  # the partition was in the client's metadata (or records came)
    while (position := consumer.position(tp)) < end:
        try:
            polled = consumer.poll(timeout_ms=1000, max_records=max_records(position))
        except OffsetOutOfRangeError:  # only without a reset policy: fail_on_deleted
            raise _out_of_range(topic, partition, position) from None
        polled = polled.get(tp, [])
        if not polled:
            _check_stalled(consumer, tp, position, end, known, last_progress, idle_timeout_s)
            known = True  # in the metadata now: a read that gets nothing still saw it
            continue
        last_progress, known = time.monotonic(), True
        yield polled


def _check_stalled(
    consumer: KafkaConsumer,
    tp: TopicPartition,
    position: int,
    end: int,
    known: bool,
    last_progress: float,
    idle_timeout_s: float,
) -> None:
    """After a poll that brought ``tp`` nothing: raise :class:`ReadError` if its partition
    is gone (hook 5) or nothing came for ``idle_timeout_s``; ``known``: ``tp`` was seen
    in the client's metadata or read from already."""
    from migcheck.kafka.private_hooks import partition_gone

    topic, partition = tp.topic, tp.partition
    gone = partition_gone(consumer, tp)
    # Before the first metadata the topic is unknown too: trust the cache only for a
    # partition seen there or read from, else ask the cluster once (a task that
    # started after the topic went sees it in no metadata at all).
    if gone and not known:
        gone = not _listed(consumer, topic, partition)
    if gone:
        raise ReadError(
            f"{topic}-{partition} was deleted during the read (its records from offset "
            f"{position} on went unread): check that the topic exists "
            f"(kafka-topics --describe --topic {topic}) and run it again"
        )
    if time.monotonic() - last_progress > idle_timeout_s:
        raise ReadError(
            f"{topic}-{partition}: no records between offset {position} and {end} "
            f"for {idle_timeout_s:.0f}s"
        )


def _listed(consumer: KafkaConsumer, topic: str, partition: int) -> bool:
    """Whether the cluster's metadata lists ``topic``-``partition`` (asks the cluster).

    kafka-python 3.0 first waits for a metadata refresh already under way, and that
    refresh, for the topics the consumer is assigned, fails with
    UnknownTopicOrPartitionError once the topic is deleted: that answer says "gone" too
    (seen in CI as "Spark failed: kafka.errors.UnknownTopicOrPartitionError")."""
    from kafka.errors import UnknownTopicOrPartitionError

    try:
        return partition in consumer.partitions_for_topic(topic)
    except UnknownTopicOrPartitionError:
        return False


def _out_of_range(topic: str, partition: int, position: int) -> ReadError:
    """The error of a full scan's fetch below the log start (``fail_on_deleted``)."""
    return ReadError(
        f"{topic}-{partition}: records from offset {position} were deleted during the "
        "read, so it cannot be whole; run it again"
    )


def _poll_together(
    units: list[WorkUnit],
    consumer: KafkaConsumer,
    ends: dict[TopicPartition, int],
    idle_timeout_s: float,
    held: dict[WorkUnit, list[Columns]],
) -> None:
    """Read ``units`` (one per partition) at once into ``held``, each until its position
    reaches its end; a partition done is paused, so nothing more is fetched for it."""
    from kafka import TopicPartition
    from kafka.errors import OffsetOutOfRangeError

    reading = {TopicPartition(u.topic, u.partition): u for u in units}
    consumer.assign(list(reading))
    consumer.resume(*reading)  # paused in the round before
    for tp, unit in reading.items():
        ends[tp] = unit.end
        consumer.seek(tp, unit.start)
    progress = dict.fromkeys(reading, (time.monotonic(), False))  # tp -> (when, known)
    while pending := [tp for tp, u in reading.items() if consumer.position(tp) < u.end]:
        consumer.pause(*(tp for tp in reading if tp not in pending))
        try:
            polled = consumer.poll(timeout_ms=1000, max_records=100)
        except OffsetOutOfRangeError as e:  # only without a reset policy: fail_on_deleted
            ((tp, position),) = list(e.args[0].items())[:1]
            raise _out_of_range(tp.topic, tp.partition, position) from None
        for tp, chunks in polled.items():
            held[reading[tp]].extend(chunks)
            progress[tp] = (time.monotonic(), True)
        for tp in pending:
            when, known = progress[tp]
            if tp not in polled and (not polled or time.monotonic() - when > idle_timeout_s):
                position = consumer.position(tp)
                _check_stalled(consumer, tp, position, reading[tp].end, known, when,
                               idle_timeout_s)  # fmt: skip
                progress[tp] = (when, True)


def task_count(records: int, cores: int, per_task: int) -> int:
    """How many tasks share ``records`` out: a multiple of ``cores``, since a last wave
    with idle cores costs a whole task's time, and each of at most about ``per_task``
    records, so that a wide topic still retries and shows progress a task at a time."""
    return cores * max(1, -(-records // (per_task * cores)))


def pack_units(units: list[WorkUnit], tasks: int) -> list[list[WorkUnit]]:
    """Share units out over at most ``tasks`` tasks of about equal size.

    A partition's units stay together, in offset order, so a task sees every record
    of each partition it reads (it groups them by key itself); partitions are placed
    largest first, each in the task with the least so far.
    """
    groups: dict[tuple[str, int], list[WorkUnit]] = {}
    for unit in sorted(units):
        groups.setdefault((unit.topic, unit.partition), []).append(unit)
    bins: list[list[WorkUnit]] = [[] for _ in range(max(1, min(tasks, len(groups))))]
    sizes = [0] * len(bins)
    for group in sorted(groups.values(), key=lambda g: -records_in(g)):
        i = sizes.index(min(sizes))
        bins[i].extend(group)
        sizes[i] += records_in(group)
    return [sorted(b) for b in bins if b]


def pack_spans(units: list[WorkUnit], tasks: int, grain: int = 1) -> list[list[WorkUnit]]:
    """Cut the units of a full scan into ``tasks`` runs of about equal size, for tasks
    that may read part of a partition (their histories are partial and merged later).

    The units are laid end to end in (topic, partition, offset) order and cut every
    ``total / tasks`` offsets, a unit cut in two where a boundary falls inside it: the
    tasks are of equal size, whatever the units' sizes, and each task reads contiguous
    ranges, one per partition it touches, in offset order, so a partition is split
    (and its keys' histories parted) only where a task ends.  A cut inside a unit falls
    on a multiple of ``grain`` offsets from its start: a copy's detection cuts on the
    copy's chunks, so that each is read, and held, whole (:mod:`migcheck.copy.held`).
    """
    ordered = sorted(units)
    total = records_in(ordered)
    count = max(1, min(tasks, total))
    bins: list[list[WorkUnit]] = [[] for _ in range(count)]
    done = 0
    for unit in ordered:
        start = unit.start
        while start < unit.end:
            i = done * count // total
            cut = _on_grain(unit, start, start + -(-(i + 1) * total // count) - done, grain)
            _append(bins[i], WorkUnit(unit.topic, unit.partition, start, cut))
            done += cut - start
            start = cut
    return [b for b in bins if b]


def _on_grain(unit: WorkUnit, start: int, cut: int, grain: int) -> int:
    """``cut`` of ``unit`` (read from ``start``) moved to the nearest multiple of ``grain``
    from the unit's start past ``start``, at most the unit's end."""
    if grain > 1 and cut < unit.end:
        nearest = unit.start + round((cut - unit.start) / grain) * grain
        cut = max(nearest, unit.start + ((start - unit.start) // grain + 1) * grain)
    return min(unit.end, cut)


def _append(units: list[WorkUnit], unit: WorkUnit) -> None:
    """Append ``unit``, joined to the last one when it continues that one's range."""
    last = units[-1] if units else None
    if last and (last.topic, last.partition, last.end) == (unit.topic, unit.partition, unit.start):
        units[-1] = WorkUnit(unit.topic, unit.partition, last.start, unit.end)
    else:
        units.append(unit)


def columns_batch(unit: WorkUnit, c: Columns) -> pa.RecordBatch:
    """One chunk of decoded records as :data:`RECORD_SCHEMA` (:data:`DIGEST_SCHEMA` with
    its digests), built from its arrays."""
    n = c.n
    keys = key_array(c)
    arrays = [
        pa.repeat(pa.scalar(unit.topic, pa.string()), n),
        pa.repeat(pa.scalar(unit.partition, pa.int32()), n),
        pa.array(c.offsets, pa.int64()),
        keys,
        pa.array(np.diff(c.key_ends, prepend=0), pa.int32(), mask=c.key_null),
        pa.array(c.value_sizes, pa.int32(), mask=c.value_sizes < 0),
        pa.array(c.timestamps, pa.int64()),
    ]
    if c.digests is None:
        return pa.RecordBatch.from_arrays(arrays, schema=RECORD_SCHEMA)
    digests = pa.array(c.digests.view(np.int64), pa.int64())
    return pa.RecordBatch.from_arrays([*arrays, digests], schema=DIGEST_SCHEMA)
