"""``migcheck copy``: every committed record of a topic into a wider one, exactly once.

Each record goes to the partition the producers' partitioner gives its key
under the destination's count (the same kernels as ``analyze``, and the same
choice: the first partitioner that placed every key read, never a sample, so
each key sits in one source partition).  Null keys, which no partitioner
hashes, go round-robin.  Value, key, timestamp and headers are copied as they
are.  One Spark task copies each source partition in offset order, so the
records of a key keep their order.  The checkpoint pins the partitioner and the
destination's count: a catch-up places keys as the first run did.

Exactly once, also across a killed run: each task writes its partition in
chunks, one Kafka transaction per chunk, under a ``transactional.id`` that is
the same on every run.  Before a chunk, the task records in its progress file
(beside ``--checkpoint``) the chunk's source offsets and the destination's end
offsets; after the commit it records the chunk as done.  A re-run first
initialises the same transactional id, which makes Kafka finish or abort
whatever the dead run left open, so the destination is final.  A chunk still
marked pending is then read again from the source and placed again: it
committed if all its records are in the destination, in order, after the
recorded end offsets (skipped), else it did not (copied again).  The end
offsets alone prove nothing once producers write to the destination, and one
record proves nothing either: another task could have written an equal one.
So no two tasks share a key (a key sits in one source partition) and, when the
destination is at least as wide, no two tasks send null keys to the same
partition (:func:`unhashed_share`): what a task finds in its partitions after
those offsets, equal to its chunk, is its chunk.  Left open: producers writing
exact twins of source records (same key, value, headers and timestamp) into
the destination, a narrower destination whose chunk holds only null-key
records all equalled by other tasks', and a forced ``--partitioner`` that
leaves a key in several source partitions (then its order is not kept either).

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

from migcheck.analysis.aggregate import KeyStats, score_partitioners
from migcheck.analysis.model import KeyLayout
from migcheck.analysis.verdicts import AUTO_CANDIDATES, PartitionerScore, choose_placement
from migcheck.errors import EXIT_GATE, EXIT_OK, MigcheckError, UsageError
from migcheck.hashing.partitioners import PARTITIONERS, UNHASHED, partition_array
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.kafka.producer import open_transactional_producer, transactional_id
from migcheck.kafka.reader import WorkUnit, read_range

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
    partitions: int  # the source's partition count


def run_copy(o: CopyOptions) -> CopyOutcome:
    client = ClientConfig.load(o.bootstrap, o.command_config)
    if o.topic == o.into:
        raise UsageError("--into must differ from --topic")
    source, dest = describe_topics(client, [o.topic, o.into])
    saved = _load_checkpoint(o)
    if saved is None and any(p.records for p in dest.partitions):
        raise UsageError(
            f"{o.into} is not empty and no --checkpoint records an earlier copy into it"
        )
    try:
        return _copy(o, client, source, dest, saved)
    except MigcheckError:
        raise
    except Exception as e:  # Spark wraps a task's error (a broker gone, a fenced producer)
        from migcheck.analysis.pipeline import spark_error_message

        raise MigcheckError(spark_error_message(e)) from None


def _copy(
    o: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    saved: Checkpoint | None,
) -> CopyOutcome:
    if saved and saved.partitions not in (None, dest.partition_count):
        raise UsageError(
            f"--checkpoint {o.checkpoint} copied into {saved.partitions} partitions and "
            f"{o.into} now has {dest.partition_count}: keys would be placed two ways"
        )
    state = saved.next if saved else {}
    partitioner = choose_copy_partitioner(o, client, source, saved)
    if saved is None:  # a first run: the checkpoint exists from now on, and no old progress
        shutil.rmtree(_parts_dir(o), ignore_errors=True)
        _save_checkpoint(o, partitioner, dest, {})
    jobs = _jobs(o, client, source, dest, state, partitioner)
    results = _run_jobs(o, jobs)
    done = {j.partition: j.end for j in jobs}
    _save_checkpoint(o, partitioner, dest, {**state, **done})
    report = verify(o, client, source, dest, partitioner, done)
    return _outcome(o, partitioner, results, report)


# --- checkpoint and progress files ------------------------------------------------


def _parts_dir(o: CopyOptions) -> Path:
    base = o.checkpoint or os.path.join(
        os.environ.get("TMPDIR", "/tmp"), f"migcheck-copy-{o.topic}-{o.into}"
    )
    return Path(f"{base}.parts")


@dataclass(frozen=True)
class Checkpoint:
    """What an earlier run recorded: the next source offset per partition, the
    partitioner it placed keys with and the destination's partition count (None
    in a checkpoint that did not record them)."""

    next: dict[int, int]
    partitioner: str | None
    partitions: int | None


def _load_checkpoint(o: CopyOptions) -> Checkpoint | None:
    """The checkpoint of an earlier copy of this pair; None when no copy was checkpointed."""
    if o.checkpoint is None or not os.path.exists(o.checkpoint):
        return None
    try:
        with open(o.checkpoint, encoding="utf-8") as f:
            data = json.load(f)
        pair = (data["topic"], data["into"])
        offsets = {int(p): int(n) for p, n in data["next"].items()}
        partitioner = data.get("partitioner")
        partitions = None if data.get("partitions") is None else int(data["partitions"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise UsageError(
            f"--checkpoint {o.checkpoint}: not a migcheck copy checkpoint ({e})"
        ) from None
    if pair != (o.topic, o.into):
        raise UsageError(
            f"--checkpoint {o.checkpoint} records a copy of {pair[0]} into {pair[1]}, "
            f"not of {o.topic} into {o.into}"
        )
    if partitioner is not None and partitioner not in PARTITIONERS:
        raise UsageError(f"--checkpoint {o.checkpoint}: unknown partitioner {partitioner!r}")
    return Checkpoint(offsets, partitioner, partitions)


def write_json_atomically(path: str | Path, data: Any) -> None:
    """Write beside the target, then rename: a reader never sees half a file."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _save_checkpoint(
    o: CopyOptions, partitioner: str, dest: TopicMeta, offsets: dict[int, int]
) -> None:
    if o.checkpoint is None:
        return
    data = {
        "topic": o.topic,
        "into": o.into,
        "partitioner": partitioner,
        "partitions": dest.partition_count,
        "next": {str(p): n for p, n in sorted(offsets.items())},
    }
    try:
        write_json_atomically(o.checkpoint, data)
    except OSError as e:
        raise UsageError(f"--checkpoint {o.checkpoint}: {e.strerror}") from None


# --- the partitioner ---------------------------------------------------------------


def choose_copy_partitioner(
    o: CopyOptions, client: ClientConfig, source: TopicMeta, saved: Checkpoint | None
) -> str:
    """The partitioner this run places keys with, decided before anything is written.

    A later run keeps the checkpoint's partitioner: another one would put a key's
    new records away from its history, so it is refused.  Otherwise the choice is
    ``analyze``'s (:func:`~migcheck.analysis.verdicts.choose_placement`) over every
    key read, never a sample: a key placed by no hash may sit in several source
    partitions, and then neither its placement nor its order can be kept.  A forced
    ``--partitioner`` is used as given.  With ``auto``, a later run checks that the
    records that arrived since were placed by the checkpoint's partitioner too.
    """
    pinned = saved.partitioner if saved else None
    if pinned and o.partitioner not in ("auto", pinned):
        raise UsageError(
            f"--checkpoint {o.checkpoint} placed keys with {pinned}: a later run must use "
            f"the same partitioner, or a key's new records land away from its history"
        )
    if o.partitioner != "auto":
        return o.partitioner
    start = saved.next if saved else {}
    ranges = {
        p.partition: (max(start.get(p.partition, 0), p.log_start_offset), p.log_end_offset)
        for p in source.partitions
    }
    units = [WorkUnit(source.name, p, a, b) for p, (a, b) in ranges.items() if a < b]
    stats = _key_stats(o, client, source, units, pinned)
    if stats is None:  # no keyed record: nothing is placed by hash, all go round-robin
        return pinned or "murmur2"
    return _placed_every_key(source, stats, pinned)


def _placed_every_key(source: TopicMeta, stats: KeyStats, pinned: str | None) -> str:
    """``pinned`` if it placed every key read, else the first of ``analyze``'s choices
    that did; a refusal when none did."""
    scores = stats.scores[KeyLayout.PLAIN]
    if pinned is not None:
        score = scores[pinned]
        if score.hashed == 0 or score.placed_every_key:
            return pinned
        raise UsageError(
            f"records that arrived in {source.name} since the last copy are not all placed "
            f"by {pinned} ({_percent(score)} of keys are); pass --partitioner {pinned} to "
            "copy them anyway"
        )
    name, _ = choose_placement("auto", stats.scores)
    if name is None:
        best = max(scores, key=lambda n: scores[n].conformance or 0.0)
        raise UsageError(
            f"no known partitioner placed every key of {source.name} (best: {best}, "
            f"{_percent(scores[best])} of keys); a custom partitioner or explicit "
            "partitions? Force one with --partitioner"
        )
    return name


def _percent(score: PartitionerScore) -> str:
    return f"{100 * (score.conformance or 0.0):.1f}%"


def _key_stats(
    o: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    units: list[WorkUnit],
    pinned: str | None,
) -> KeyStats | None:
    """Partitioner scores of every key in ``units``, read and scored as ``analyze`` does;
    None when there is no keyed record."""
    if not units:
        return None
    from migcheck.analysis.kafkasource import jvm_records
    from migcheck.analysis.spark import get_session

    records, _ = jvm_records(get_session(o.master, o.conf), client, units)
    names = [pinned] if pinned else list(AUTO_CANDIDATES)
    return score_partitioners(records, [source], names).get(source.name)


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
            source.partition_count,
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
    producer = open_transactional_producer(
        job.client, transactional_id(job.topic, job.into, job.partition)
    )
    consumer = open_consumer(job.client)
    try:
        progress = _resolve(job, consumer, _read_progress(job))
        start = max(job.start, progress.get("next", 0))
        copied = nulls = 0
        rr = progress.get("round_robin", job.partition)
        records = read_range(consumer, job.topic, job.partition, start, job.end)
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
    """Each record's destination partition; unhashed keys round-robin from ``rr`` over
    :func:`unhashed_share`."""
    placed = partition_array([r.key for r in chunk], job.into_partitions, job.partitioner)
    share = unhashed_share(job.partition, job.partitions, job.into_partitions)
    out = []
    nulls = 0
    for p in placed:
        if p == UNHASHED:
            out.append(share[rr % len(share)])
            rr += 1
            nulls += 1
        else:
            out.append(int(p))
    return out, rr, nulls


def unhashed_share(partition: int, partitions: int, into_partitions: int) -> list[int]:
    """The destination partitions that source ``partition``'s unhashed records (null keys)
    go round-robin over: those equal to it modulo the source's count.

    When the destination is at least as wide, no two tasks then write an unhashed
    record to the same partition, and hashed keys never share one across tasks (each
    key sits in one source partition), so whatever a task finds of its own records
    in a partition it writes to was written by it: see :func:`_resolve`.  Narrower,
    each task takes one partition, shared.
    """
    return list(range(partition, into_partitions, partitions)) or [partition % into_partitions]


def _copy_chunk(
    job: Job, producer: Any, consumer: Any, chunk: list[Any], rr: int
) -> tuple[int, int]:
    targets, next_rr, nulls = _targets(job, chunk, rr)
    ends = _dest_ends(consumer, job, sorted(set(targets)))
    pending = {"from": chunk[0].offset, "to": chunk[-1].offset + 1, "ends": ends}
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
    targets, next_rr, _ = _targets(job, chunk, rr)
    wanted: dict[int, list[list[Any]]] = {}
    for r, q in zip(chunk, targets, strict=True):
        wanted.setdefault(q, []).append(identity(r))
    ends = pending["ends"]
    if any(str(q) not in ends for q in wanted):
        raise UsageError(
            f"{job.progress}: an interrupted chunk placed otherwise than this migcheck "
            "places it; finish the copy with the migcheck version that started it"
        )
    committed = all(
        _holds_in_order(consumer, job, q, int(ends[str(q)]), ids) for q, ids in wanted.items()
    )
    resolved = {
        "next": pending["to"] if committed else pending["from"],
        "round_robin": next_rr if committed else rr,
        "pending": None,
    }
    _write_progress(job, resolved)
    return resolved


def _reread(job: Job, consumer: Any, start: int, end: int) -> list[Any]:
    """The source records ``[start, end)`` of an interrupted chunk, exactly as first read."""
    chunk = list(read_range(consumer, job.topic, job.partition, start, end))
    if not chunk or chunk[0].offset != start or chunk[-1].offset != end - 1:
        raise UsageError(
            f"{job.topic}-{job.partition}: the records {start}-{end - 1} of an interrupted "
            "chunk are no longer there (retention?); cannot tell whether they were copied"
        )
    return chunk


def _holds_in_order(consumer: Any, job: Job, q: int, start: int, wanted: list[Any]) -> bool:
    """Whether partition ``q`` of the destination holds ``wanted`` in order from ``start``
    (other records may sit between them)."""
    from kafka import TopicPartition

    tp = TopicPartition(job.into, q)
    end = consumer.end_offsets([tp])[tp]
    i = 0
    for r in read_range(consumer, job.into, q, start, end):
        if identity(r) == wanted[i]:
            i += 1
            if i == len(wanted):
                return True
    return False


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
