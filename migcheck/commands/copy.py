"""``migcheck copy`` end to end: checkpoint, partitioner, one Spark task per source
partition, verification.

The machinery, and why the copy is exactly once, is in :mod:`migcheck.copy`.
This module decides the order: nothing is written before the partitioner is
chosen and the checkpoint pins it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from migcheck.analysis.errors import spark_errors
from migcheck.commands.options import Connection, SparkSettings
from migcheck.copy.checkpoint import (
    Checkpoint,
    check_destination,
    load_checkpoint,
    parts_dir,
    save_checkpoint,
)
from migcheck.copy.placement import choose_partitioner, spark_key_stats
from migcheck.copy.task import Job, copy_partition
from migcheck.copy.verify import verify
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.model.copy import CopyResult, PartitionCopied


@dataclass
class CopyOptions:
    topic: str
    into: str
    partitioner: str = "auto"
    checkpoint: str | None = None
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


def run_copy(o: CopyOptions) -> tuple[CopyResult, int]:
    """Copy, verify, and the exit code: 0 when the copy verifies, 1 when it does not."""
    client = o.connection.client()
    if o.topic == o.into:
        raise UsageError("--into must differ from --topic")
    source, dest = describe_topics(client, [o.topic, o.into])
    saved = load_checkpoint(o.checkpoint, o.topic, o.into)
    if saved is None and any(p.records for p in dest.partitions):
        raise UsageError(
            f"{o.into} is not empty and no --checkpoint records an earlier copy into it"
        )
    check_destination(o.checkpoint, saved, o.into, dest.partition_count)
    with spark_errors():  # Spark wraps a task's error (a broker gone, a fenced producer)
        result = _copy(o, client, source, dest, saved)
    return result, EXIT_OK if result.verification.ok else EXIT_GATE


def _copy(
    o: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    saved: Checkpoint | None,
) -> CopyResult:
    from migcheck.analysis.spark import get_session

    spark = get_session(o.spark.master, o.spark.conf)
    state = saved.next if saved else {}

    def read_stats(units, names):  # type: ignore[no-untyped-def]
        return spark_key_stats(spark, client, source, units, names)

    partitioner = choose_partitioner(o.partitioner, o.checkpoint, saved, source, read_stats)
    if saved is None:  # a first run: the checkpoint exists from now on, and no old progress
        shutil.rmtree(parts_dir(o.checkpoint, o.topic, o.into), ignore_errors=True)
        _save(o, partitioner, dest, {})
    jobs = _jobs(o, client, source, dest, state, partitioner)
    rdd = spark.sparkContext.parallelize(jobs, max(1, len(jobs)))
    results = sorted(rdd.map(copy_partition).collect())
    done = {j.partition: j.end for j in jobs}
    _save(o, partitioner, dest, {**state, **done})
    verification = verify(spark, client, source, dest, partitioner, done)
    copied = tuple(PartitionCopied(p, n, nulls) for p, n, nulls in results)
    return CopyResult(o.topic, o.into, partitioner, copied, verification)


def _save(o: CopyOptions, partitioner: str, dest: TopicMeta, offsets: dict[int, int]) -> None:
    save_checkpoint(o.checkpoint, o.topic, o.into, partitioner, dest.partition_count, offsets)


def _jobs(
    o: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    state: dict[int, int],
    partitioner: str,
) -> list[Job]:
    """One job per source partition, from where the checkpoint left it to its end now."""
    parts = parts_dir(o.checkpoint, o.topic, o.into)
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
