"""Settle a chunk of a source partition, and copy it if it never committed: what a round's
Spark task does for each chunk of its share (:func:`shares`), one after another.

Every attempt at a chunk does the same, whether it is the first, a retry on another
worker after an executor was lost, or a task of a later run that resumes a killed
driver's round: it gets its chunk, its round-robin position and the destination's
recorded ends from the driver (:class:`ChunkJob`), never from a local disk.  It
first initialises the partition's stable transactional id, which fences a zombie
attempt and makes Kafka finish or abort the transaction it left open, so the
destination is final.  It then reads the chunk again from the source (or takes it
from the partitioner's detection read, which held it on this task's disk:
:mod:`migcheck.copy.held`) and places it as recorded.  Where an earlier attempt may
have run (a round resumed from a killed run, or Spark's retry:
:func:`_may_have_run`), it reads the destination back: if, in every destination
partition it writes to, all its records appear in order after the recorded end
offset, the chunk committed and is skipped.  Otherwise it is copied in one
transaction.  One record proves nothing: another task may have written an equal one
(two null-key records with the same value and timestamp in two source partitions),
which is why tasks never share a partition for their records
(:func:`~migcheck.copy.placement.unhashed_share`).

The decisions are pure (:func:`holds_in_order`, :func:`written_since`,
:func:`check_placed_as_recorded`); the task around them reads and writes Kafka.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from migcheck.analysis.session import TaskCounter, reaches_driver, task_counter, task_slots
from migcheck.copy.checkpoint import Checkpoint, Chunk
from migcheck.copy.errors import RecoveryError, UnwritableError
from migcheck.copy.held import release, take
from migcheck.copy.identity import Identity, identities, identity
from migcheck.copy.latest import Keep, chunk_slice
from migcheck.copy.placement import targets, unhashed_share
from migcheck.copy.producer import (
    Producers,
    kafka_python_writes,
    librdkafka_writes,
    open_released_producer,
    open_transactional_producer,
    transactional_id,
    write_transaction,
    write_transaction_released,
)
from migcheck.copy.rounds import ChunkResult, round_robin_of
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.fetch import WorkUnit, pack_units, read_whole, records_in, task_count
from migcheck.kafka.metadata import high_watermarks
from migcheck.kafka.recordbatch import WholeChunk


@dataclass(frozen=True)
class CopySpec:
    """What every task of a copy shares: the pair, the partitioner and both counts."""

    client: ClientConfig
    topic: str
    into: str
    partitioner: str
    partitions: int  # the source's partition count
    into_partitions: int
    held: str | None = None  # the run whose detection held chunks (copy.held), if any


@dataclass(frozen=True)
class ChunkJob:
    """One task's share of a round, exactly as the driver recorded it in the checkpoint."""

    spec: CopySpec
    partition: int
    chunk: Chunk
    round_robin: int  # where the chunk's null keys start round-robin
    ends: dict[int, int]  # every destination partition's end offset before the round
    resumed: bool = True  # the round was a killed run's: an attempt of it may have run
    keep: np.ndarray | None = None  # a latest-per-key copy's offsets of the chunk to copy

    @property
    def where(self) -> str:
        return f"{self.spec.topic}-{self.partition} offsets {self.chunk.start}-{self.chunk.end - 1}"


def chunk_jobs(
    spec: CopySpec, state: Checkpoint, resumed: bool = True, keep: Keep | None = None
) -> list[ChunkJob]:
    """The tasks of the round ``state`` records: one per chunk, with its recorded position
    (``resumed``: the round is a killed run's) and, for a latest-per-key copy, the offsets
    it keeps of its chunk, no more (:mod:`migcheck.copy.latest`)."""
    if state.pending is None:
        return []
    r = state.pending

    def kept(p: int, c: Chunk) -> np.ndarray | None:
        return None if keep is None else chunk_slice(keep, p, c.start, c.end)

    return [
        ChunkJob(spec, p, c, round_robin_of(state, p), r.ends, resumed, kept(p, c))
        for p, c in sorted(r.chunks.items())
    ]


@dataclass(frozen=True)
class CopyCounters:
    """The records and bytes (keys and values) the tasks settle, for a progress bar:
    accumulators, which it reads as each task ends (:func:`shares`); on a session without
    them, counters the driver adds each round's results to (:func:`settled`)."""

    records: TaskCounter
    bytes: TaskCounter

    def settled(self, results: Iterable[ChunkResult]) -> None:
        """Add a round's results, where the tasks' own adds do not reach the driver."""
        if reaches_driver(self.records):
            return
        for result in results:
            self.records.add(result.records)
            self.bytes.add(result.bytes)


def new_counters(spark: Any) -> CopyCounters:
    return CopyCounters(task_counter(spark), task_counter(spark))


def launch_round(
    spark: Any,
    spec: CopySpec,
    state: Checkpoint,
    resumed: bool,
    counters: CopyCounters | None = None,
    keep: Keep | None = None,
) -> list[ChunkResult]:
    """Run the recorded round as one Spark job, each chunk's result: a task per core (more
    where a round is large), each settling its share of the chunks (:func:`shares`) one
    after another.

    Why a share, not a task per chunk: a task costs Spark about a tenth of a second
    beyond its chunk, and a 5 M-record copy on two cores ran 120 of them
    (docs/benchmarks.md).  A retried task settles its whole share again, each chunk as
    any retry does (:func:`_may_have_run`).  A ``mapInArrow`` job over a row per share, as
    the detection's read tasks are, so that Spark hands its tasks the Python workers those
    left, their imports and compiled kernels loaded: an RDD job starts workers of its own."""
    import pyarrow as pa

    parts = shares(chunk_jobs(spec, state, resumed, keep), task_slots(spark))
    settle = settle_chunk  # without accumulators, the driver counts the results (settled)
    if counters is not None and reaches_driver(counters.records):
        settle = functools.partial(_counted, counters=counters)

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column("id").to_pylist():
                for job in parts[i]:
                    result = settle(job)
                    row = [pa.array([getattr(result, name)]) for name in _RESULT_NAMES]
                    yield pa.RecordBatch.from_arrays(row, _RESULT_NAMES)

    ids = spark.range(0, len(parts), 1, max(1, len(parts)))  # a row, and a task, per share
    results = [ChunkResult(**row.asDict()) for row in ids.mapInArrow(run, _RESULT_DDL).collect()]
    if counters is not None:
        counters.settled(results)
    return results


#: The offsets a task's share of a round holds, about, at most: its records reach the
#: progress bar when the task ends, and a failed task settles its share again.  A round of
#: 24 chunks of :data:`~migcheck.copy.rounds.CHUNK` is a task per core on two cores; one of
#: 1,000 partitions is 50 tasks.
SHARE_OFFSETS = 1_000_000


def shares(jobs: Sequence[ChunkJob], cores: int, most: int = SHARE_OFFSETS) -> list[list[ChunkJob]]:
    """A round's chunks over tasks of about equal offsets, each task's in offset order
    (:func:`~migcheck.kafka.fetch.pack_units`: largest first, each to the task with the
    least so far), as many tasks as :func:`~migcheck.kafka.fetch.task_count` gives for
    ``cores`` and at most about ``most`` offsets each."""
    by_partition = {job.partition: job for job in jobs}  # a round has a chunk per partition
    units = [WorkUnit(j.spec.topic, j.partition, j.chunk.start, j.chunk.end) for j in jobs]
    tasks = task_count(records_in(units), cores, most)
    return [[by_partition[u.partition] for u in share] for share in pack_units(units, tasks)]


#: A :class:`ChunkResult` as a row of the round's job, field by field (Arrow's types for
#: Python's ints and bools, which ``pa.array`` infers).
_RESULT_COLUMNS = (
    ("partition", "long"),
    ("records", "long"),
    ("null_keys", "long"),
    ("round_robin", "long"),
    ("committed", "boolean"),
    ("bytes", "long"),
    ("held", "boolean"),
)
_RESULT_NAMES = [name for name, _ in _RESULT_COLUMNS]
_RESULT_DDL = ", ".join(f"{name} {kind}" for name, kind in _RESULT_COLUMNS)


#: Threads a driver settles a round's chunks with: a chunk's time is mostly waiting on the
#: brokers (a fetch, a commit), so a few overlap it on any machine.
DRIVER_THREADS = 8


def launch_in_driver(
    spec: CopySpec, state: Checkpoint, resumed: bool, producers: Producers
) -> list[ChunkResult]:
    """Run the recorded round in the driver, its chunks on a few threads, each through its
    id's producer kept open in ``producers``: for a follow's tail, whose rounds are small
    and frequent, a Spark job and a producer initialised per chunk cost seconds a round
    (docs/benchmarks.md, "The follow").  The chunks are settled exactly as tasks settle
    them; a round this run recorded has no earlier attempt, since nothing retries here."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = chunk_jobs(spec, state, resumed)
    with ThreadPoolExecutor(max(1, min(DRIVER_THREADS, len(jobs)))) as pool:
        return list(pool.map(lambda job: settle_chunk(job, producers), jobs))


def _counted(job: ChunkJob, counters: CopyCounters) -> ChunkResult:
    result = settle_chunk(job)
    counters.records.add(result.records)
    counters.bytes.add(result.bytes)
    return result


def settle_chunk(job: ChunkJob, producers: Producers | None = None) -> ChunkResult:
    """Settle and, unless an earlier attempt committed it, copy one chunk: in a Spark task,
    or in the driver with its ``producers`` kept open (:func:`launch_in_driver`)."""
    s = job.spec
    txn_id = transactional_id(s.topic, s.into, job.partition)
    in_driver = producers is not None
    producer = producers.get(txn_id) if producers else open_transactional_producer(s.client, txn_id)
    consumer = _Consumer(s.client)
    try:
        chunk, held = _chunk_records(job, consumer)
        if job.keep is not None:
            chunk = chunk.only(job.keep)
        placed, next_rr, nulls = _targets(job, chunk)
        may_have_run = job.resumed if in_driver else _may_have_run(job)
        committed = len(chunk) > 0 and may_have_run and _committed(job, consumer, chunk, placed)
        if len(chunk) and not committed:
            if librdkafka_writes(chunk.timestamps()):
                write_transaction(producer, s.into, chunk.fields(), placed)
            elif kafka_python_writes(chunk.records):
                if producers:
                    producers.forget(txn_id)  # the released producer's initialisation fences it
                _write_released(s.client, txn_id, s.into, chunk.records, placed)
            else:
                raise UnwritableError(
                    f"{job.where}: a record with a timestamp of 0 or less and one with a "
                    "null header value, or with neither key nor value, in one chunk: "
                    "neither librdkafka nor kafka-python writes both as they are; nothing "
                    "of the chunk was written"
                )
        release(s.held, job.partition, job.chunk.start)
        return ChunkResult(job.partition, len(chunk), nulls, next_rr, committed, chunk.size(), held)
    except BaseException:
        if producers:
            producers.forget(txn_id)  # a failed transaction's producer is never reused
        raise
    finally:
        consumer.close()


def _write_released(
    client: ClientConfig, txn_id: str, into: str, records: Sequence[Any], placed: list[int]
) -> None:
    released = open_released_producer(client, txn_id)
    try:
        write_transaction_released(released, into, records, placed)
    finally:
        released.close()


class _Consumer:
    """A kafka-python consumer opened on first use: a first attempt whose chunk reads
    records needs none (its bootstrap and version probe cost each of a copy's hundred
    tasks tens of milliseconds), a retry or a resumed round reads the destination back."""

    def __init__(self, client: ClientConfig) -> None:
        self.client, self._open = client, None

    def __call__(self) -> Any:
        if self._open is None:
            self._open = open_consumer(self.client)
        return self._open

    def close(self) -> None:
        if self._open is not None:
            self._open.close(autocommit=False)


def _chunk_records(job: ChunkJob, consumer: _Consumer) -> tuple[WholeChunk, bool]:
    """The chunk's records, and whether they were taken from the detection's read
    (:mod:`migcheck.copy.held`) rather than read again."""
    c = job.chunk
    held = take(job.spec.held, job.partition, c.start, c.end)
    if held is not None:
        return held, True
    return _reread(job, consumer), False


def _reread(job: ChunkJob, consumer: _Consumer) -> WholeChunk:
    """The chunk's committed source records; they never change, so every attempt reads
    the same ones (or takes them from the detection's read: :mod:`migcheck.copy.held`).
    Gone to retention, the survivors still settle it (a transaction commits all its
    records or none); with none left nothing can tell, so it is refused."""
    s, c = job.spec, job.chunk
    records = read_whole(s.client, s.topic, job.partition, c.start, c.end)
    if not len(records) and _log_start(consumer(), s.topic, job.partition) > c.start:
        raise RecoveryError(
            f"{job.where}: the records of a chunk in flight are no longer there (retention?); "
            "cannot tell whether they were copied"
        )
    return records


def _log_start(consumer: Any, topic: str, partition: int) -> int:
    from kafka import TopicPartition

    tp = TopicPartition(topic, partition)
    return int(consumer.beginning_offsets([tp])[tp])


def _may_have_run(job: ChunkJob) -> bool:
    """Whether an earlier attempt may have written the chunk: its round is a killed run's,
    or this task is Spark's retry of it (outside a Spark task: assume so).  A first
    attempt in a round this run recorded has no predecessor, so it skips reading back what
    the round's other tasks wrote into the partitions it writes to: 16% of a 5 M-record
    copy's time (docs/benchmarks.md)."""
    from pyspark import TaskContext

    task = TaskContext.get()  # a round's stage reads no shuffle: Spark never resubmits it
    return job.resumed or task is None or task.attemptNumber() > 0


def _targets(job: ChunkJob, chunk: WholeChunk) -> tuple[list[int], int, int]:
    s = job.spec
    share = unhashed_share(job.partition, s.partitions, s.into_partitions)
    return targets(chunk.keys(), s.partitioner, share, s.into_partitions, job.round_robin)


def _committed(job: ChunkJob, consumer: _Consumer, chunk: WholeChunk, placed: list[int]) -> bool:
    """Whether an earlier attempt committed the chunk: all of it, in order, after the
    recorded ends, read up to where the destination ends now."""
    s = job.spec
    check_placed_as_recorded(job.where, set(placed), job.ends)
    now = high_watermarks(s.client, s.into, sorted(set(placed)))
    if not written_since(set(placed), job.ends, now):
        return False
    return all(
        holds_in_order(identities(consumer(), s.into, q, job.ends[q], now[q]), ids)
        for q, ids in wanted_by_partition(chunk.records, placed).items()
    )


# --- the pure decisions of settling a chunk ------------------------------------------


def wanted_by_partition(records: Iterable[Any], placed: Iterable[int]) -> dict[int, list[Identity]]:
    """The chunk's record identities, per destination partition, in source order."""
    wanted: dict[int, list[Identity]] = {}
    for r, q in zip(records, placed, strict=True):
        wanted.setdefault(q, []).append(identity(r))
    return wanted


def written_since(partitions: Collection[int], ends: dict[int, int], now: dict[int, int]) -> bool:
    """Whether every partition the chunk writes to grew since the round began: if one did
    not, the chunk never committed there, and no record need be read."""
    return all(now[q] > ends[q] for q in partitions)


def holds_in_order(found: Iterable[Identity], wanted: list[Identity]) -> bool:
    """Whether ``found`` (a destination partition's records from the recorded end offset)
    holds ``wanted`` in order; other records may sit between them."""
    i = 0
    for ident in found:
        if ident == wanted[i]:
            i += 1
            if i == len(wanted):
                return True
    return False


def check_placed_as_recorded(where: str, partitions: Iterable[int], ends: dict[int, int]) -> None:
    """Refuse to settle a chunk placed in partitions whose end the round did not record:
    its records would be looked for from an unknown offset."""
    if any(q not in ends for q in partitions):
        raise RecoveryError(
            f"{where}: a chunk in flight placed otherwise than this migcheck places it; "
            "finish the copy with the migcheck version that started it"
        )
