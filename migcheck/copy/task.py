"""One Spark task's copy of one source partition: chunked transactions, and the recovery
of the chunk a dead run may have left half committed.

The decisions are pure (:func:`holds_in_order`, :func:`settled`); the task around
them reads the source, writes the destination and keeps the progress file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from migcheck.copy.checkpoint import read_progress, write_progress
from migcheck.copy.errors import RecoveryError
from migcheck.copy.identity import Identity, identity
from migcheck.copy.placement import targets, unhashed_share
from migcheck.copy.producer import open_transactional_producer, transactional_id
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.reader import read_range

#: Records per transaction: a killed copy redoes at most one chunk per partition.
CHUNK = 5_000


@dataclass(frozen=True)
class Job:
    """One Spark task's share: a source partition from ``start`` to ``end``."""

    client: ClientConfig
    topic: str
    into: str
    partition: int
    start: int
    end: int
    into_partitions: int
    partitioner: str
    progress: str  # this partition's progress file
    partitions: int  # the source's partition count


def copy_partition(job: Job) -> tuple[int, int, int]:
    """Copy one source partition, chunk by chunk (runs in a Spark task):
    (partition, records copied, null keys)."""
    producer = open_transactional_producer(
        job.client, transactional_id(job.topic, job.into, job.partition)
    )
    consumer = open_consumer(job.client)
    try:
        progress = _resolve(job, consumer, read_progress(job.progress))
        start = max(job.start, progress.get("next", 0))
        copied = nulls = 0
        rr = progress.get("round_robin", job.partition)
        records = read_range(consumer, job.topic, job.partition, start, job.end)
        for chunk in chunks(records, CHUNK):
            rr, n_null = _copy_chunk(job, producer, consumer, chunk, rr)
            copied += len(chunk)
            nulls += n_null
        return job.partition, copied, nulls
    finally:
        producer.close()
        consumer.close(autocommit=False)


def chunks(records: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``records`` in lists of ``size`` (the last one shorter)."""
    chunk: list[Any] = []
    for r in records:
        chunk.append(r)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _targets(job: Job, chunk: list[Any], rr: int) -> tuple[list[int], int, int]:
    share = unhashed_share(job.partition, job.partitions, job.into_partitions)
    return targets([r.key for r in chunk], job.partitioner, share, job.into_partitions, rr)


def _copy_chunk(
    job: Job, producer: Any, consumer: Any, chunk: list[Any], rr: int
) -> tuple[int, int]:
    placed, next_rr, nulls = _targets(job, chunk, rr)
    ends = _dest_ends(consumer, job, sorted(set(placed)))
    pending = {"from": chunk[0].offset, "to": chunk[-1].offset + 1, "ends": ends}
    write_progress(job.progress, {"next": chunk[0].offset, "round_robin": rr, "pending": pending})
    producer.begin_transaction()
    for r, q in zip(chunk, placed, strict=True):
        producer.send(
            job.into,
            key=r.key,
            value=r.value,
            partition=q,
            timestamp_ms=r.timestamp,
            headers=list(r.headers or []),
        )
    producer.commit_transaction()
    done = {"next": chunk[-1].offset + 1, "round_robin": next_rr, "pending": None}
    write_progress(job.progress, done)
    return next_rr, nulls


def _dest_ends(consumer: Any, job: Job, partitions: list[int]) -> dict[str, int]:
    from kafka import TopicPartition

    tps = [TopicPartition(job.into, q) for q in partitions]
    return {str(tp.partition): off for tp, off in consumer.end_offsets(tps).items()}


# --- recovery of a dead run's chunk -------------------------------------------------


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


def settled(pending: dict[str, Any], rr: int, next_rr: int, committed: bool) -> dict[str, Any]:
    """The progress after a pending chunk is settled: past it when it committed, at its
    start (to copy it again, from the same round-robin position) when it did not."""
    return {
        "next": pending["to"] if committed else pending["from"],
        "round_robin": next_rr if committed else rr,
        "pending": None,
    }


def check_placed_as_recorded(path: str, wanted: Iterable[int], ends: dict[str, Any]) -> None:
    """Refuse to settle a chunk this migcheck places in partitions the dead run did not
    record: its records would be looked for in the wrong places."""
    if any(str(q) not in ends for q in wanted):
        raise RecoveryError(
            f"{path}: an interrupted chunk placed otherwise than this migcheck "
            "places it; finish the copy with the migcheck version that started it"
        )


def _resolve(job: Job, consumer: Any, progress: dict[str, Any]) -> dict[str, Any]:
    """A pending chunk of a dead run: committed if all of it is in the destination.

    The producer was initialised first, so Kafka has already committed or aborted
    that chunk's transaction: what the destination shows now is final.  The chunk
    is read again from the source (its records never change) and placed as it was
    (the same round-robin start).  It committed if, in every destination partition
    it writes to, all its records appear in order after the end offset recorded
    before it began.  One record proves nothing: another task may have written an
    equal one there meanwhile (two null-key records with the same value and
    timestamp in two source partitions).
    """
    pending = progress.get("pending")
    if not pending:
        return progress
    rr = progress.get("round_robin", job.partition)
    chunk = _reread(job, consumer, pending["from"], pending["to"])
    placed, next_rr, _ = _targets(job, chunk, rr)
    wanted: dict[int, list[Identity]] = {}
    for r, q in zip(chunk, placed, strict=True):
        wanted.setdefault(q, []).append(identity(r))
    ends = pending["ends"]
    check_placed_as_recorded(job.progress, wanted, ends)
    committed = all(
        holds_in_order(_destination(consumer, job, q, int(ends[str(q)])), ids)
        for q, ids in wanted.items()
    )
    resolved = settled(pending, rr, next_rr, committed)
    write_progress(job.progress, resolved)
    return resolved


def _reread(job: Job, consumer: Any, start: int, end: int) -> list[Any]:
    """The source records ``[start, end)`` of an interrupted chunk, exactly as first read."""
    chunk = list(read_range(consumer, job.topic, job.partition, start, end))
    if not chunk or chunk[0].offset != start or chunk[-1].offset != end - 1:
        raise RecoveryError(
            f"{job.topic}-{job.partition}: the records {start}-{end - 1} of an interrupted "
            "chunk are no longer there (retention?); cannot tell whether they were copied"
        )
    return chunk


def _destination(consumer: Any, job: Job, q: int, start: int) -> Iterator[Identity]:
    """The identities of destination partition ``q`` from ``start`` to its end."""
    from kafka import TopicPartition

    tp = TopicPartition(job.into, q)
    end = consumer.end_offsets([tp])[tp]
    return (identity(r) for r in read_range(consumer, job.into, q, start, end))
