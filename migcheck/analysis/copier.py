"""``migcheck copy``: every committed record of a topic into a wider one, exactly once.

Each record goes to the partition the producers' partitioner gives its key
under the destination's count (the same kernels as ``analyze``); null keys,
which no partitioner hashes, go round-robin.  Value, key, timestamp and
headers are copied as they are.  One Spark task copies each source partition
in offset order, so the records of a key (which a hash partitioner keeps in
one source partition) keep their order.

Exactly once, also across a killed run: each task writes its partition in
chunks, one Kafka transaction per chunk, under a ``transactional.id`` that is
the same on every run.  Before a chunk, the task records in its progress file
(beside ``--checkpoint``) the chunk's offsets, the destination's end offsets
and the chunk's first record per destination partition.  After the commit it
records the chunk as done.  A re-run first initialises the same
transactional id, which makes Kafka finish or abort whatever the dead run
left open; a chunk still marked pending then either committed (its first
record is in the destination after the recorded end offsets: the chunk is
skipped) or did not (it is copied again).  Records that producers write to
the destination after they switch do not confuse this: a chunk is found by
its own first record (key, value, timestamp and headers), not by counts.

The verification compares identities (key, timestamp, a digest of value and
headers) of the copied source range with the destination's: each must appear
exactly as often on both sides, on the partition its key belongs to.  Records
producers wrote straight into the destination have identities of their own
and are not counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.hashing.partitioners import PARTITIONERS, UNHASHED, partition_array
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.kafka.producer import open_transactional_producer, transactional_id

#: Records per transaction: a killed copy redoes at most one chunk per partition.
CHUNK = 5_000


@dataclass
class CopyOptions:
    bootstrap: str
    topic: str
    into: str
    command_config: str | None = None
    partitioner: str = "auto"
    checkpoint: str | None = None
    master: str | None = None
    conf: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CopyOutcome:
    summary: str
    exit_code: int


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


def run_copy(o: CopyOptions) -> CopyOutcome:
    client = ClientConfig.load(o.bootstrap, o.command_config)
    if o.topic == o.into:
        raise UsageError("--into must differ from --topic")
    source, dest = describe_topics(client, [o.topic, o.into])
    state = _load_checkpoint(o)
    if state is None and any(p.records for p in dest.partitions):
        raise UsageError(
            f"{o.into} is not empty and no --checkpoint records an earlier copy into it"
        )
    partitioner = o.partitioner if o.partitioner != "auto" else detect_partitioner(client, source)
    if state is None:  # a first run: the checkpoint exists from now on, and no old progress
        shutil.rmtree(_parts_dir(o), ignore_errors=True)
        _save_checkpoint(o, partitioner, {})
    jobs = _jobs(o, client, source, dest, state or {}, partitioner)
    results = _run_jobs(o, jobs)
    done = {j.partition: j.end for j in jobs}
    _save_checkpoint(o, partitioner, {**(state or {}), **done})
    report = verify(o, client, source, dest, partitioner, done)
    return _outcome(o, partitioner, results, report)


# --- checkpoint and progress files ------------------------------------------------


def _parts_dir(o: CopyOptions) -> Path:
    base = o.checkpoint or os.path.join(
        os.environ.get("TMPDIR", "/tmp"), f"migcheck-copy-{o.topic}-{o.into}"
    )
    return Path(f"{base}.parts")


def _load_checkpoint(o: CopyOptions) -> dict[int, int] | None:
    """Source partition -> next offset to copy; None when no copy was checkpointed."""
    if o.checkpoint is None or not os.path.exists(o.checkpoint):
        return None
    try:
        with open(o.checkpoint, encoding="utf-8") as f:
            data = json.load(f)
        pair = (data["topic"], data["into"])
        offsets = {int(p): int(n) for p, n in data["next"].items()}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(
            f"--checkpoint {o.checkpoint}: not a migcheck copy checkpoint ({e})"
        ) from None
    if pair != (o.topic, o.into):
        raise UsageError(
            f"--checkpoint {o.checkpoint} records a copy of {pair[0]} into {pair[1]}, "
            f"not of {o.topic} into {o.into}"
        )
    return offsets


def write_json_atomically(path: str | Path, data: Any) -> None:
    """Write beside the target, then rename: a reader never sees half a file."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _save_checkpoint(o: CopyOptions, partitioner: str, offsets: dict[int, int]) -> None:
    if o.checkpoint is None:
        return
    data = {
        "topic": o.topic,
        "into": o.into,
        "partitioner": partitioner,
        "next": {str(p): n for p, n in sorted(offsets.items())},
    }
    try:
        write_json_atomically(o.checkpoint, data)
    except OSError as e:
        raise UsageError(f"--checkpoint {o.checkpoint}: {e.strerror}") from None


# --- the partitioner ---------------------------------------------------------------


def detect_partitioner(client: ClientConfig, meta: TopicMeta, per_partition: int = 1000) -> str:
    """The first partitioner (in registry order) that placed every sampled key where it is.

    ``analyze`` decides the same way over all its keys; the copy needs the answer
    before it writes, from the first records of each partition.
    """
    keys: list[bytes] = []
    actual: list[int] = []
    for p, key in _sample_keys(client, meta, per_partition):
        keys.append(key)
        actual.append(p)
    if not keys:
        return "murmur2"  # nothing to place by hash: only null keys, or an empty topic
    for name in PARTITIONERS:
        placed = partition_array(keys, meta.partition_count, name)
        if all(int(a) == b for a, b in zip(placed, actual, strict=True) if a != UNHASHED):
            return name
    raise UsageError(
        f"no known partitioner placed the keys of {meta.name}; pass --partitioner "
        f"(one of {', '.join(PARTITIONERS)})"
    )


def _sample_keys(
    client: ClientConfig, meta: TopicMeta, per_partition: int
) -> Iterator[tuple[int, bytes]]:
    from kafka import TopicPartition

    consumer = open_consumer(client)
    try:
        for part in meta.partitions:
            end = min(part.log_end_offset, part.log_start_offset + per_partition)
            for r in read_records(
                consumer, TopicPartition(meta.name, part.partition), part.log_start_offset, end
            ):
                if r.key is not None:
                    yield part.partition, r.key
    finally:
        consumer.close(autocommit=False)


def read_records(consumer: Any, tp: Any, start: int, end: int) -> Iterator[Any]:
    """The committed records of ``tp`` in ``[start, end)``, in offset order."""
    consumer.assign([tp])
    consumer.seek(tp, start)
    idle = 0
    while consumer.position(tp) < end:
        polled = consumer.poll(timeout_ms=1000, max_records=CHUNK).get(tp, [])
        if not polled:
            idle += 1
            if idle > 30:
                raise UsageError(f"{tp.topic}-{tp.partition}: no records before offset {end}")
            continue
        idle = 0
        for r in polled:
            if r.offset >= end:
                return
            yield r


# --- the Spark jobs ------------------------------------------------------------------


def _jobs(
    o: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    state: dict[int, int],
    partitioner: str,
) -> list[Job]:
    parts = _parts_dir(o)
    parts.mkdir(parents=True, exist_ok=True)
    return [
        Job(
            client,
            o.topic,
            o.into,
            p.partition,
            max(state.get(p.partition, 0), p.log_start_offset),
            p.log_end_offset,
            dest.partition_count,
            partitioner,
            str(parts / f"{p.partition}.json"),
        )
        for p in source.partitions
    ]


def _run_jobs(o: CopyOptions, jobs: list[Job]) -> list[tuple[int, int, int]]:
    """Each job in its own Spark task: (partition, records copied, null keys)."""
    from migcheck.analysis.spark import get_session

    spark = get_session(o.master, o.conf)
    rdd = spark.sparkContext.parallelize(jobs, max(1, len(jobs)))
    return sorted(rdd.map(copy_partition).collect())


def copy_partition(job: Job) -> tuple[int, int, int]:
    """Copy one source partition, chunk by chunk (runs in a Spark task)."""
    from kafka import TopicPartition

    producer = open_transactional_producer(
        job.client, transactional_id(job.topic, job.into, job.partition)
    )
    consumer = open_consumer(job.client)
    try:
        progress = _resolve(job, consumer, _read_progress(job))
        start = max(job.start, progress.get("next", 0))
        copied = nulls = 0
        tp = TopicPartition(job.topic, job.partition)
        rr = progress.get("round_robin", job.partition)
        records = read_records(consumer, tp, start, job.end) if start < job.end else iter(())
        for chunk in _chunks(records):
            rr, n_null = _copy_chunk(job, producer, consumer, chunk, rr)
            copied += len(chunk)
            nulls += n_null
        return job.partition, copied, nulls
    finally:
        producer.close()
        consumer.close(autocommit=False)


def _chunks(records: Iterator[Any]) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for r in records:
        chunk.append(r)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _targets(job: Job, chunk: list[Any], rr: int) -> tuple[list[int], int, int]:
    """Each record's destination partition; unhashed keys round-robin from ``rr``."""
    placed = partition_array([r.key for r in chunk], job.into_partitions, job.partitioner)
    out = []
    nulls = 0
    for p in placed:
        if p == UNHASHED:
            out.append(rr % job.into_partitions)
            rr += 1
            nulls += 1
        else:
            out.append(int(p))
    return out, rr, nulls


def _copy_chunk(
    job: Job, producer: Any, consumer: Any, chunk: list[Any], rr: int
) -> tuple[int, int]:
    targets, next_rr, nulls = _targets(job, chunk, rr)
    first: dict[str, list[Any]] = {}
    for r, q in zip(chunk, targets, strict=True):
        first.setdefault(str(q), identity(r))
    ends = _dest_ends(consumer, job, [int(q) for q in first])
    pending = {"from": chunk[0].offset, "to": chunk[-1].offset + 1, "first": first, "ends": ends}
    _write_progress(job, {"next": chunk[0].offset, "round_robin": rr, "pending": pending})
    producer.begin_transaction()
    for r, q in zip(chunk, targets, strict=True):
        producer.send(
            job.into,
            key=r.key,
            value=r.value,
            partition=q,
            timestamp_ms=r.timestamp,
            headers=list(r.headers or []),
        )
    producer.commit_transaction()
    _write_progress(job, {"next": chunk[-1].offset + 1, "round_robin": next_rr, "pending": None})
    return next_rr, nulls


def identity(r: Any) -> list[Any]:
    """What tells one copied record from another: key, timestamp, value and headers."""
    return [
        None if r.key is None else r.key.hex(),
        r.timestamp,
        digest(r.value, r.headers),
    ]


def digest(value: bytes | None, headers: Any) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    h.update(b"\x00" if value is None else b"\x01" + value)
    for name, v in headers or []:
        h.update(b"\x02" + name.encode() + b"\x03" + (v or b""))
    return h.hexdigest()


def _dest_ends(consumer: Any, job: Job, partitions: list[int]) -> dict[str, int]:
    from kafka import TopicPartition

    tps = [TopicPartition(job.into, q) for q in partitions]
    return {str(tp.partition): off for tp, off in consumer.end_offsets(tps).items()}


def _read_progress(job: Job) -> dict[str, Any]:
    try:
        with open(job.progress, encoding="utf-8") as f:
            return dict(json.load(f))
    except FileNotFoundError:
        return {}


def _write_progress(job: Job, data: dict[str, Any]) -> None:
    write_json_atomically(job.progress, data)


def _resolve(job: Job, consumer: Any, progress: dict[str, Any]) -> dict[str, Any]:
    """A pending chunk of a dead run: committed if its first record reached the destination.

    The producer was initialised first, so Kafka has already committed or aborted
    that chunk's transaction: what the destination shows now is final.
    """
    pending = progress.get("pending")
    if not pending:
        return progress
    committed = any(
        _find(consumer, job, int(q), pending["ends"][q], rec) for q, rec in pending["first"].items()
    )
    resolved = {
        "next": pending["to"] if committed else pending["from"],
        "round_robin": progress.get("round_robin", job.partition),
        "pending": None,
    }
    _write_progress(job, resolved)
    return resolved


def _find(consumer: Any, job: Job, q: int, start: int, wanted: list[Any]) -> bool:
    from kafka import TopicPartition

    tp = TopicPartition(job.into, q)
    end = consumer.end_offsets([tp])[tp]
    return any(identity(r) == wanted for r in read_records(consumer, tp, start, end))


# --- verification ------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    records: int  # source records in the copied range
    missing: int  # source identities with fewer copies in the destination
    duplicated: int  # ... with more
    misplaced: int  # destination records of the copy on another partition than their key's


def verify(
    o: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    partitioner: str,
    done: dict[int, int],
) -> Verification:
    """Identities of the copied source range against the whole destination, in Spark."""
    from migcheck.analysis.copyverify import compare

    fresh = {m.name: m for m in describe_topics(client, [dest.name])}[dest.name]
    result: Verification = compare(o.master, o.conf, client, source, fresh, partitioner, done)
    return result


def _outcome(
    o: CopyOptions, partitioner: str, results: list[tuple[int, int, int]], v: Verification
) -> CopyOutcome:
    copied = sum(n for _, n, _ in results)
    nulls = sum(n for _, _, n in results)
    ok = v.missing == 0 and v.duplicated == 0 and v.misplaced == 0
    lines = [
        f"migcheck copy: {o.topic} -> {o.into} (partitioner {partitioner})",
        f"copied this run: {copied} records ({nulls} with a null key, round-robin)",
        *(f"  source partition {p}: {n}" for p, n, _ in results),
        f"verified: {v.records} source records; missing {v.missing}, duplicated "
        f"{v.duplicated}, misplaced {v.misplaced}: {'OK' if ok else 'FAILED'}",
    ]
    return CopyOutcome("\n".join(lines) + "\n", EXIT_OK if ok else EXIT_GATE)
