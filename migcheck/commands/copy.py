"""``migcheck copy`` end to end: checkpoint, partitioner, the rounds, verification.

The machinery, and why the copy is exactly once, is in :mod:`migcheck.copy`.
This module decides the order: nothing is written before the partitioner is
chosen and the checkpoint pins it, and the driver records each round in the
checkpoint before its Spark job runs (:func:`migcheck.copy.rounds.run_rounds`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from migcheck.analysis.errors import spark_errors
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.copy.checkpoint import (
    Checkpoint,
    check_destination,
    load_checkpoint,
    save_checkpoint,
    temporary_checkpoint,
)
from migcheck.copy.placement import choose_partitioner, spark_key_stats
from migcheck.copy.rounds import RoundIO, run_rounds, starting_state
from migcheck.copy.task import CopyCounters, CopySpec, launch_round, new_counters
from migcheck.copy.verify import verify
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import TopicMeta, describe_topics, high_watermarks
from migcheck.model.copy import CopyResult, PartitionCopied


@dataclass
class CopyOptions:
    """Everything ``migcheck copy`` was asked."""

    topic: str
    into: str
    partitioner: str = "auto"
    checkpoint: str | None = None
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


#: Shows a copy's progress: given the tasks' counters and the records to copy, it returns
#: a context manager for the rounds.
CopyProgress = Callable[[CopyCounters, int], AbstractContextManager[object]]


def _no_progress(counters: CopyCounters, total: int) -> AbstractContextManager[object]:
    return contextlib.nullcontext()


def run_copy(options: CopyOptions, progress: CopyProgress = _no_progress) -> Outcome[CopyResult]:
    """Copy, verify, and the exit code: 0 when the copy verifies, 1 when it does not."""
    client = options.connection.client()
    if options.topic == options.into:
        raise UsageError("--into must differ from --topic")
    source, dest = describe_topics(client, [options.topic, options.into])
    saved = load_checkpoint(options.checkpoint, options.topic, options.into)
    if saved is None and any(p.records for p in dest.partitions):
        raise UsageError(
            f"{options.into} is not empty and no --checkpoint records an earlier copy into it"
        )
    check_destination(options.checkpoint, saved, options.into, dest.partition_count)
    with spark_errors():  # Spark wraps a task's error (a broker gone, a fenced producer)
        result = _copy(options, client, source, dest, saved, progress)
    return Outcome(result, EXIT_OK if result.verification.ok else EXIT_GATE)


def _copy(
    options: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    saved: Checkpoint | None,
    progress: CopyProgress,
) -> CopyResult:
    from migcheck.analysis.spark import get_session

    spark = get_session(
        options.spark.master, options.spark.conf, bootstrap=client.bootstrap_servers
    )

    def read_stats(units, names):
        return spark_key_stats(spark, client, source, units, names, dest.partition_count)

    partitioner = choose_partitioner(
        options.partitioner, options.checkpoint, saved, source, read_stats
    )
    log_starts = {p.partition: p.log_start_offset for p in source.partitions}
    state = starting_state(saved, partitioner, dest.partition_count, log_starts)
    spec = CopySpec(
        client,
        options.topic,
        options.into,
        partitioner,
        source.partition_count,
        dest.partition_count,
    )
    done = {p.partition: p.log_end_offset for p in source.partitions}
    counters = new_counters(spark)
    total = sum(max(0, end - state.next.get(p, end)) for p, end in done.items())
    with progress(counters, total):
        _, copied = run_rounds(state, done, _round_io(options, spark, spec, counters))
    if options.checkpoint is None:  # done: a re-run is refused (not empty), so nothing resumes it
        with contextlib.suppress(OSError):
            os.unlink(temporary_checkpoint(options.topic, options.into))
    verification = verify(spark, client, source, dest, partitioner, done)
    partitions = tuple(PartitionCopied(p, *copied.get(p, (0, 0))) for p in sorted(done))
    return CopyResult(options.topic, options.into, partitioner, partitions, verification)


def _round_io(options: CopyOptions, spark: Any, spec: CopySpec, counters: CopyCounters) -> RoundIO:
    """The driver's I/O for the rounds: the destination's ends, a Spark job per round, and
    the checkpoint (``--checkpoint``, or a temporary one) as the only recovery state."""
    path = options.checkpoint or temporary_checkpoint(options.topic, options.into)
    into = range(spec.into_partitions)
    return RoundIO(
        ends=lambda: high_watermarks(spec.client, options.into, into),
        launch=lambda state, resumed: launch_round(spark, spec, state, resumed, counters),
        save=lambda state: save_checkpoint(path, options.topic, options.into, state),
    )
