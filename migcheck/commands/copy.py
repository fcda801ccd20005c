"""``migcheck copy`` end to end: checkpoint, partitioner, the rounds, verification.

The machinery, and why the copy is exactly once, is in :mod:`migcheck.copy`.
This module decides the order: nothing is written before the partitioner is
chosen and the checkpoint pins it, and the driver records each round in the
checkpoint before its Spark job runs (:func:`migcheck.copy.rounds.run_rounds`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
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
from migcheck.copy.errors import CountChangedError
from migcheck.copy.follow import FollowIO, follow, in_driver
from migcheck.copy.held import new_run
from migcheck.copy.latest import Keep, Latest, latest_offsets, pinned_until
from migcheck.copy.placement import (
    choose_partitioner,
    detect_partitioner,
    spark_key_stats,
    spark_records_placed,
)
from migcheck.copy.producer import Producers
from migcheck.copy.rounds import CHUNK, ChunkResult, RoundIO, run_rounds, starting_state
from migcheck.copy.task import (
    CopyCounters,
    CopySpec,
    launch_in_driver,
    launch_round,
    new_counters,
)
from migcheck.copy.verify import verify
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit
from migcheck.kafka.metadata import TopicEnds, TopicMeta, describe_topics, high_watermarks
from migcheck.model.copy import CopyLag, CopyResult, PartitionCopied
from migcheck.model.partitioner import PartitionerChoice


@dataclass
class CopyOptions:
    """Everything ``migcheck copy`` was asked."""

    topic: str
    into: str
    partitioner: PartitionerChoice = PartitionerChoice.AUTO
    checkpoint: str | None = None
    follow: bool = False  # after the history, the tail, until SIGTERM or SIGINT
    check_placement: bool = False  # a --partitioner given is checked against every record
    latest_per_key: bool = False  # only each key's latest record (copy.latest)
    reporting_interval_ms: int = 5000  # how often a follow reports its lag
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


#: Shows a copy's progress: given the tasks' counters and the records to copy, it returns
#: a context manager for the rounds.
CopyProgress = Callable[[CopyCounters, int], AbstractContextManager[object]]


def _ignore_lag(lag: CopyLag) -> None:
    return None


def run_copy(
    options: CopyOptions,
    progress: CopyProgress | None = None,
    on_lag: Callable[[CopyLag], None] = _ignore_lag,
) -> Outcome[CopyResult]:
    """Copy, verify, and the exit code: 0 when the copy verifies, 1 when it does not.
    A follow reports its lag to ``on_lag`` until a signal stops it, then verifies what it
    copied."""
    client = options.connection.client()
    if options.topic == options.into:
        raise UsageError("--into must differ from --topic")
    if options.check_placement and options.partitioner is PartitionerChoice.AUTO:
        raise UsageError(
            "--check-placement checks a --partitioner given; without one the copy detects "
            "the partitioner from every record already"
        )
    if options.follow and options.latest_per_key:
        raise UsageError(
            "--latest-per-key copies each key's latest record of what the source holds "
            "when the copy starts; a --follow's keys go on changing"
        )
    if options.follow and options.checkpoint is None:
        raise UsageError("--follow needs --checkpoint: a stopped follow resumes from it")
    if options.reporting_interval_ms <= 0:
        raise UsageError("--reporting-interval must be a positive number of milliseconds")
    source, dest = describe_topics(client, [options.topic, options.into])
    saved = load_checkpoint(options.checkpoint, options.topic, options.into)
    if saved is None and any(p.records for p in dest.partitions):
        raise UsageError(
            f"{options.into} is not empty and no --checkpoint records an earlier copy into it"
        )
    check_destination(options.checkpoint, saved, options.into, dest.partition_count)
    with spark_errors():  # Spark wraps a task's error (a broker gone, a fenced producer)
        result = _copy(options, client, source, dest, saved, progress, on_lag)
    return Outcome(result, EXIT_OK if result.verification.ok else EXIT_GATE)


@dataclass(frozen=True)
class PreparedCopy:
    """A copy ready to run: its Spark session, the pair and the pinned partitioner
    (``spec``), the state to start from, the rounds' I/O and the tasks' counters."""

    spark: Any
    spec: CopySpec
    topics: tuple[TopicMeta, TopicMeta]  # the source and the destination, as they were
    state: Checkpoint
    rounds: RoundIO
    counters: CopyCounters
    latest: Latest | None = None  # a latest-per-key copy's records to keep


def prepare_copy(
    options: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    saved: Checkpoint | None,
    starts: dict[int, int] | None = None,
    done: dict[int, int] | None = None,
) -> PreparedCopy:
    """The session, the partitioner chosen (nothing is written before the checkpoint pins
    it), the starting state and the rounds' I/O: what ``copy`` and ``migrate`` share.
    ``starts``: where each source partition's copy begins, if not at its log's start
    (``migrate``'s reverse copy begins at the barrier); ``done``: where it ends, which a
    latest-per-key copy reads to ``done`` before it writes and pins (copy.latest)."""
    from migcheck.analysis.scan.plan import short_jvm
    from migcheck.analysis.spark import get_session

    until = done if options.latest_per_key else None  # refused before any read:
    pinned_until(options.checkpoint, saved, until, any(p.records for p in dest.partitions))
    spark = get_session(
        options.spark.master,
        options.spark.conf,
        short_run=short_jvm(source.records),
        bootstrap=client.bootstrap_servers,
        remote=options.spark.remote,
    )

    run = new_run()  # the detection's read holds the records for this run's tasks

    def read_stats(units, names):
        return spark_key_stats(spark, client, source, units, names, dest.partition_count, run)

    def placed_by(units: list[WorkUnit], name: str) -> bool:
        return spark_records_placed(spark, client, source, units, name, run)

    partitioner = choose_partitioner(
        options.partitioner, options.checkpoint, saved, source, read_stats,
        options.check_placement, placed_by,
    )  # fmt: skip
    log_starts = starts or {p.partition: p.log_start_offset for p in source.partitions}
    state = starting_state(saved, partitioner, dest.partition_count, log_starts)
    latest = None if until is None else latest_offsets(spark, client, source, until, run)
    state = state if until is None else replace(state, until=until)
    spec = CopySpec(
        client,
        options.topic,
        options.into,
        partitioner,
        source.partition_count,
        dest.partition_count,
        run,
    )
    counters = new_counters(spark)
    rounds = _round_io(options, spark, spec, counters, latest.keep if latest else None)
    return PreparedCopy(spark, spec, (source, dest), state, rounds, counters, latest)


def detected_partitioner(
    settings: SparkSettings, client: ClientConfig, source: TopicMeta, into_partitions: int
) -> str | None:
    """The partitioner that placed every keyed record of ``source``, detected from all of
    its records as ``copy`` detects it (:func:`~migcheck.copy.placement.detect_partitioner`,
    a tie judged at ``into_partitions``), read-only: nothing is held for a copy.  None
    where no record has a key; :class:`~migcheck.copy.errors.PlacementError` where no
    partitioner placed them all."""
    from migcheck.analysis.scan.plan import short_jvm
    from migcheck.analysis.spark import get_session

    spark = get_session(
        settings.master,
        settings.conf,
        short_run=short_jvm(source.records),
        bootstrap=client.bootstrap_servers,
        remote=settings.remote,
    )

    def read_stats(units, names):
        return spark_key_stats(spark, client, source, units, names, into_partitions)

    return detect_partitioner(source, read_stats)


def _copy(
    options: CopyOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    saved: Checkpoint | None,
    progress: CopyProgress | None,
    on_lag: Callable[[CopyLag], None],
) -> CopyResult:
    if not options.follow:
        done = {q.partition: q.log_end_offset for q in source.partitions}
        return copy_until(options, client, (source, dest), saved, done, progress)
    p = prepare_copy(options, client, source, dest, saved)
    with _stop_on_signals() as stop, follow_io(client, (source, dest), stop, on_lag) as io:
        state, copied = follow(p.state, p.rounds, io, options.reporting_interval_ms / 1000)
    done = {q.partition: state.next.get(q.partition, 0) for q in source.partitions}
    return _verified(options, client, p, done, copied)


def copy_until(
    options: CopyOptions,
    client: ClientConfig,
    topics: tuple[TopicMeta, TopicMeta],
    saved: Checkpoint | None,
    done: dict[int, int],
    progress: CopyProgress | None = None,
) -> CopyResult:
    """The copy of each source partition up to its offset in ``done``, then verified:
    ``copy``'s, up to the ends it found, and ``migrate``'s move of a changelog, up to the
    ends recorded once the old app settled."""
    p = prepare_copy(options, client, *topics, saved, done=done)
    total = sum(max(0, end - p.state.next.get(q, end)) for q, end in done.items())
    cut = None
    if p.latest is not None:
        total = p.latest.records_from(p.state.next)
        cut = p.latest.cut(p.state.next, CHUNK)  # the grid the detection held its read on
    with progress(p.counters, total) if progress else contextlib.nullcontext():
        _, copied = run_rounds(p.state, done, p.rounds, cut=cut)
    return _verified(options, client, p, done, copied)


def _verified(
    options: CopyOptions,
    client: ClientConfig,
    p: PreparedCopy,
    done: dict[int, int],
    copied: dict[int, tuple[int, int, int]],
) -> CopyResult:
    """What the copy wrote up to ``done``, checked; a copy without a checkpoint leaves no
    temporary one behind."""
    (source, dest), partitioner = p.topics, p.spec.partitioner
    if options.checkpoint is None:  # done: a re-run is refused (not empty), so nothing resumes it
        with contextlib.suppress(OSError):
            os.unlink(temporary_checkpoint(options.topic, options.into))
    keep = p.latest.keep if p.latest else None
    verification = verify(p.spark, client, source, dest, partitioner, done, keep)
    partitions = tuple(PartitionCopied(q, *copied.get(q, (0, 0, 0))) for q in sorted(done))
    return CopyResult(options.topic, options.into, partitioner, partitions, verification)


def _round_io(
    options: CopyOptions, spark: Any, spec: CopySpec, counters: CopyCounters, keep: Keep | None
) -> RoundIO:
    """The driver's I/O for the rounds: the destination's ends, a Spark job per round
    (copying only ``keep``'s records, if given), and the checkpoint (``--checkpoint``, or
    a temporary one) as the only recovery state."""
    path = options.checkpoint or temporary_checkpoint(options.topic, options.into)
    into = range(spec.into_partitions)
    if options.follow:
        launch = _follow_launch(spark, spec, counters)
    else:

        def launch(state: Checkpoint, resumed: bool) -> list[ChunkResult]:
            return launch_round(spark, spec, state, resumed, counters, keep)

    return RoundIO(
        ends=lambda: high_watermarks(spec.client, options.into, into),
        launch=launch,
        save=lambda state: save_checkpoint(path, options.topic, options.into, state),
    )


def _follow_launch(
    spark: Any, spec: CopySpec, counters: CopyCounters
) -> Callable[[Checkpoint, bool], list[ChunkResult]]:
    """A follow's rounds: a small one in the driver, its producers kept open between
    rounds; a large one as a Spark job, whose tasks initialise the same ids and so fence
    the driver's producers, which are dropped first."""
    producers = Producers(spec.client)

    def launch(state: Checkpoint, resumed: bool) -> list[ChunkResult]:
        if in_driver(state):
            return launch_in_driver(spec, state, resumed, producers)
        producers.clear()
        return launch_round(spark, spec, state, resumed, counters)

    return launch


@contextlib.contextmanager
def follow_io(
    client: ClientConfig,
    topics: tuple[TopicMeta, TopicMeta],
    stop: threading.Event,
    on_lag: Callable[[CopyLag], None],
) -> Iterator[FollowIO]:
    """A follow's I/O (:mod:`migcheck.copy.follow`): the source's stable ends through a
    client kept open while it runs, the partition counts checked, ``stop`` ending it, the
    lag to ``on_lag``; what ``copy --follow`` and ``migrate`` share."""
    ends = TopicEnds(client, topics[0].name)
    try:
        yield FollowIO(
            ends=ends.stable,
            check=lambda: _same_counts(client, topics),
            wait=stop.wait,
            stopped=stop.is_set,
            report=on_lag,
        )
    finally:
        ends.close()


def _same_counts(client: ClientConfig, topics: tuple[TopicMeta, TopicMeta]) -> None:
    """Stop a follow whose source or destination changed its partition count meanwhile."""
    now = describe_topics(client, [t.name for t in topics])
    for was, meta, why in zip(topics, now, _COUNT_CHANGED, strict=True):
        if meta.partition_count != was.partition_count:
            raise CountChangedError(
                f"{meta.name} went from {was.partition_count} to {meta.partition_count} "
                f"partitions during the follow: {why}"
            )


#: Why a follow stops when the source's count changes, and when the destination's does.
_COUNT_CHANGED = (
    "its keys now sit in two partitions and their order cannot be kept; copy it again "
    "into a fresh topic once its count is final",
    "keys would be placed two ways; copy again into a fresh topic",
)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event that SIGTERM and SIGINT set, so that a follow ends after the round in
    flight has committed; a second signal interrupts at once (the checkpoint makes that
    safe too).  The handlers before are restored: nothing stays patched.  Off the main
    thread, where Python cannot take signals, the event is never set by one."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {s: signal.signal(s, handle) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
