"""``migcheck migrate``: one long-lived process widens a topic online (:mod:`migcheck.online`).

It creates the new topic, runs the copy's follow on a thread of its own, checks each
copied range as it goes, and drives the phases of :mod:`migcheck.online.phases` with the
operator at the manual steps: the producers' pause and switch, each group's stop and
start.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from migcheck.analysis.errors import spark_errors
from migcheck.commands.copy import CopyOptions, PreparedCopy, follow_io, prepare_copy
from migcheck.commands.groups_runbook import plain_groups
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.copy.checkpoint import Checkpoint, check_destination, load_checkpoint
from migcheck.copy.follow import follow
from migcheck.copy.verify import settled, verify_ranges
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import describe_group
from migcheck.kafka.metadata import (
    TopicEnds,
    TopicMeta,
    describe_topics,
    replication_factor,
    topic_configs,
    topic_exists,
)
from migcheck.model.copy import CopyLag, Verification
from migcheck.model.migrate import MigrateResult
from migcheck.online.barrier import SourceEnds
from migcheck.online.phases import (
    CheckFailed,
    MigrateIO,
    Plan,
    Stopped,
    cut_over,
    move_groups,
    wait_until_ready,
)
from migcheck.online.writes import commit_offsets, create_topic


@dataclass
class MigrateOptions:
    """Everything ``migcheck migrate`` was asked."""

    topic: str
    to: int
    checkpoint: str
    groups: tuple[str, ...] = ()
    into: str | None = None
    partitioner: str = "auto"
    max_lag_records: int = 1000
    cutover_timeout_s: float = 5.0
    yes: bool = False
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


def run_migrate(
    options: MigrateOptions, ask: Callable[[str], bool], say: Callable[[str], None]
) -> Outcome[MigrateResult]:
    """The whole migration; exit 0 once every group moved, 1 when it stopped early."""
    client = options.connection.client()
    (source,) = describe_topics(client, [options.topic])
    if options.to <= source.partition_count:
        raise UsageError(f"--to {options.to}: {options.topic} already has {source.partition_count}")
    into = options.into or f"{options.topic}-p{options.to}"
    found = plain_groups(client, options.topic, options.groups)
    groups = tuple(f.group.group_id for f in found)
    saved = load_checkpoint(options.checkpoint, options.topic, into)
    dest = _destination(client, source, into, options.to, saved)
    check_destination(options.checkpoint, saved, into, dest.partition_count)
    copy = CopyOptions(
        topic=options.topic,
        into=into,
        partitioner=options.partitioner,
        checkpoint=options.checkpoint,
        follow=True,
        connection=options.connection,
        spark=options.spark,
    )
    with spark_errors():
        prepared = prepare_copy(copy, client, source, dest, saved)
        plan = Plan(
            options.topic, into, groups, options.max_lag_records,
            options.cutover_timeout_s, options.yes,
        )  # fmt: skip
        with (
            _following(prepared, client, (source, dest)) as follower,
            _world(prepared, client, follower, ask, say) as io,
        ):
            say(f"copy: following {options.topic} into {into}")
            return _phases(plan, prepared, io)


def _phases(plan: Plan, prepared: PreparedCopy, io: MigrateIO) -> Outcome[MigrateResult]:
    result = MigrateResult(plan.topic, plan.into, prepared.spec.partitioner)
    try:
        wait_until_ready(plan, io)
        barrier = cut_over(plan, io)
        result = replace(result, old_ends=barrier.old, new_ends=barrier.new,
                         cutover_s=barrier.took_s)  # fmt: skip
        moved = move_groups(plan, barrier, io)
    except (Stopped, CheckFailed) as e:
        return Outcome(replace(result, stopped=str(e)), EXIT_GATE)
    return Outcome(replace(result, groups=tuple(m.group for m in moved)), EXIT_OK)


def _destination(
    client: ClientConfig, source: TopicMeta, into: str, count: int, saved: Checkpoint | None
) -> TopicMeta:
    """The new topic: created like the source (its own configs, its replication) unless it
    exists; one that exists must be empty, or the checkpoint's copy."""
    if not topic_exists(client, into):
        replication = replication_factor(client, source.name)
        create_topic(client, into, count, replication, topic_configs(client, source.name))
    (existing,) = describe_topics(client, [into])
    if saved is None and any(p.records for p in existing.partitions):
        raise UsageError(f"{into} is not empty and --checkpoint records no earlier copy into it")
    return existing


class _Follower:
    """The copy's follow on a thread of its own, stopped by an event.  It keeps, for the
    phases, the last settled state (how far the copy has copied), the last consistent
    mark (a round's start: the source's next offsets and the new topic's ends, with every
    copy of a record before the first below the second), the latest lag, and an error."""

    def __init__(self, prepared: PreparedCopy) -> None:
        self.stop = threading.Event()
        self.changed = threading.Condition()
        self.state = prepared.state
        self.mark: tuple[dict[int, int], dict[int, int]] | None = None
        self.lag: CopyLag | None = None
        self.error: BaseException | None = None

    def saved(self, save: Callable[[Checkpoint], None]) -> Callable[[Checkpoint], None]:
        def recording(state: Checkpoint) -> None:
            save(state)
            with self.changed:
                if state.pending is not None:
                    self.mark = (dict(state.next), dict(state.pending.ends))
                else:
                    self.state = state
                self.changed.notify_all()

        return recording

    def reported(self, lag: CopyLag) -> None:
        self.lag = lag

    def copied_to(self, ends: dict[int, int], deadline: float) -> bool:
        """Whether the copy settles up to ``ends`` before ``deadline`` (monotonic)."""

        def there() -> bool:
            nexts = self.state.next
            return self.error is not None or all(nexts.get(p, 0) >= e for p, e in ends.items())

        with self.changed:
            reached = self.changed.wait_for(there, max(0.0, deadline - time.monotonic()))
        self.raise_error()
        return bool(reached)

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error


@contextlib.contextmanager
def _following(
    prepared: PreparedCopy, client: ClientConfig, topics: tuple[TopicMeta, TopicMeta]
) -> Iterator[_Follower]:
    """The follow running on its thread while the phases run; stopped and joined after."""
    follower = _Follower(prepared)
    rounds = replace(prepared.rounds, save=follower.saved(prepared.rounds.save))

    def run() -> None:
        try:
            with follow_io(client, topics, follower.stop, follower.reported) as io:
                follow(prepared.state, rounds, io, interval_s=1.0)
        except BaseException as e:
            follower.error = e
        finally:
            with follower.changed:
                follower.changed.notify_all()

    thread = threading.Thread(target=run, name="migcheck-follow", daemon=True)
    thread.start()
    try:
        yield follower
    finally:
        follower.stop.set()
        thread.join()
    follower.raise_error()


class _Checker:
    """Checks the copy range by range: from where the last check ended to the follow's
    last consistent mark, or to the barrier's ends."""

    def __init__(self, prepared: PreparedCopy, client: ClientConfig, follower: _Follower) -> None:
        self.prepared, self.client, self.follower = prepared, client, follower
        source, dest = prepared.topics
        self.src_from = {p.partition: p.log_start_offset for p in source.partitions}
        self.dst_from = {p.partition: p.log_start_offset for p in dest.partitions}

    def check(self, old: dict[int, int] | None, new: dict[int, int] | None) -> Verification:
        self.follower.raise_error()
        if old is None or new is None:
            with self.follower.changed:
                mark = self.follower.mark
            if mark is None:
                return Verification(0, 0, 0, 0)
            old, new = mark
        if old == self.src_from or any(old[q] < self.src_from[q] for q in old):
            return Verification(0, 0, 0, 0)  # nothing new since: a mark from before the last
        p = self.prepared
        source, dest = p.topics
        v = verify_ranges(
            p.spark, self.client,
            [(source.name, q, self.src_from[q], old[q]) for q in sorted(old)],
            [(dest.name, q, self.dst_from[q], new[q]) for q in sorted(new)],
            dest.partition_count, p.spec.partitioner,
        )  # fmt: skip
        self.src_from, self.dst_from = dict(old), dict(new)
        return v


@contextlib.contextmanager
def _world(
    prepared: PreparedCopy,
    client: ClientConfig,
    follower: _Follower,
    ask: Callable[[str], bool],
    say: Callable[[str], None],
) -> Iterator[MigrateIO]:
    """The phases' I/O on the cluster, the follow and the operator."""
    source, dest = prepared.topics
    parts = [p.partition for p in source.partitions]
    ends = TopicEnds(client, source.name)  # the phases' own: a client is for one thread
    checker = _Checker(prepared, client, follower)

    def source_ends() -> SourceEnds:
        return SourceEnds(ends.high(), ends.stable())

    def new_ends() -> dict[int, int]:
        meta = settled(client, dest.name)
        return {p.partition: p.log_end_offset for p in meta.partitions}

    def committed(group: str) -> dict[int, int | None]:
        info = describe_group(client, group)
        found = info.committed if info else {}
        return {p: found.get((source.name, p)) for p in parts}

    def has_members(group: str) -> bool:
        info = describe_group(client, group)
        return bool(info and info.members)

    def lag() -> CopyLag | None:
        follower.raise_error()
        return follower.lag

    io = MigrateIO(
        ask=ask,
        say=say,
        lag=lag,
        check=checker.check,
        source_ends=source_ends,
        copied_to=follower.copied_to,
        stop_copy=follower.stop.set,
        new_ends=new_ends,
        committed=committed,
        has_members=has_members,
        set_offsets=lambda group, offsets: commit_offsets(client, group, dest.name, offsets),
        wait=time.sleep,  # between looks at the broker: nothing to wait on but time
        clock=time.monotonic,
    )
    try:
        yield io
    finally:
        ends.close()
