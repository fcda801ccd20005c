"""``migcheck migrate``: one long-lived process widens a topic online (:mod:`migcheck.online`).

It creates the new topic (and a Kafka Streams app's shadow outputs), runs the copy's
follow on a thread of its own, checks each copied range as it goes, and drives the
phases of :mod:`migcheck.online.phases` with the operator at the manual steps: the
shadow's start, the producers' pause and switch, each group's stop and start.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from migcheck.analysis.errors import spark_errors
from migcheck.commands.copy import CopyOptions, PreparedCopy, follow_io, prepare_copy
from migcheck.commands.groups_runbook import plain_groups
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.copy.checkpoint import Checkpoint, check_destination, load_checkpoint
from migcheck.copy.follow import follow
from migcheck.copy.verify import settled, verify_ranges
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.frameworks.registry import FRAMEWORKS, STATEFUL_KINDS, label
from migcheck.frameworks.topology import Topology, output_topics, read_topology
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import describe_group, topics_with_prefix
from migcheck.kafka.metadata import (
    TopicEnds,
    TopicMeta,
    cleanup_policies,
    describe_topics,
    replication_factor,
    topic_configs,
    topic_exists,
)
from migcheck.model.copy import CopyLag, Verification
from migcheck.model.migrate import CUTOVER_TIMEOUT_S, MigrateResult, RolledBack, ShadowStart
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.readers import ReaderKind
from migcheck.model.topics import is_repartition_name
from migcheck.online.barrier import SourceEnds
from migcheck.online.phases import (
    CHECK_EVERY_S,
    AppPlan,
    Barrier,
    CheckFailed,
    Decision,
    MigrateIO,
    Plan,
    Stopped,
    complete,
    cut_over,
    mirror,
    move_downstream,
    move_groups,
    reverse_may_start,
    rollback_window,
    settle_old_app,
    start_shadow,
    switch,
    wait_until_ready,
)
from migcheck.online.record import (
    Resumed,
    Stage,
    ended,
    keep,
    keep_rollback,
    resumable,
    same_migration,
)
from migcheck.online.writes import commit_offsets, create_topic
from migcheck.readers.discovery import Found, find_group, find_readers
from migcheck.streams.streamtime import changelogs, refuse_stream_time


@dataclass
class MigrateOptions:
    """Everything ``migcheck migrate`` was asked."""

    topic: str
    to: int
    checkpoint: str
    groups: tuple[str, ...] = ()
    into: str | None = None
    partitioner: PartitionerChoice = PartitionerChoice.AUTO
    max_lag_records: int = 10_000
    max_lag_s: float = 2.0
    cutover_timeout_s: float = CUTOVER_TIMEOUT_S
    yes: bool = False
    application_id: str | None = None  # a Kafka Streams app of the topic: it gets a shadow
    shadow_application_id: str | None = None  # default <application id>-p<N>
    outputs: tuple[str, ...] = ()  # the app's output topics (or from --topology)
    topology: str | None = None  # the app's Topology#describe(): its sinks
    downstream_groups: tuple[str, ...] = ()
    max_shadow_lag: int = 10_000
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


@dataclass(frozen=True)
class Operator:
    """The person at the terminal (or their automation): ``ask`` prints a ``MANUAL:``
    line and says whether they answered y, ``choose`` returns their answer, ``say``
    prints a line of progress."""

    ask: Callable[[str], bool]
    choose: Callable[[str], str]
    say: Callable[[str], None]


def run_migrate(options: MigrateOptions, operator: Operator) -> Outcome[MigrateResult]:
    """The whole migration, then the rollback window: exit 0 once it completed or rolled
    back, 1 when it stopped early.  A migration whose cut-over is recorded resumes after
    its barrier (:mod:`migcheck.online.record`)."""
    resumed = resumable(options.checkpoint)
    client = options.connection.client()
    (source,) = describe_topics(client, [options.topic])
    if options.to <= source.partition_count:
        raise UsageError(f"--to {options.to}: {options.topic} already has {source.partition_count}")
    into = options.into or f"{options.topic}-p{options.to}"
    app = _app_plan(options, client, source, into)
    if app is not None and resumed is not None and resumed.shadow_id:
        app = replace(app, shadow_id=resumed.shadow_id)  # the one the first run started
    groups = _groups(options, client, app)
    saved = load_checkpoint(options.checkpoint, options.topic, into)
    dest = _destination(client, source, into, options.to, saved)
    for old, new in app.outputs if app else ():
        _shadow_output(client, old, new)
    check_destination(options.checkpoint, saved, into, dest.partition_count)
    copy = _following_copy(options, options.topic, into, options.partitioner, options.checkpoint)
    with spark_errors():
        prepared = prepare_copy(copy, client, source, dest, saved)
        plan = Plan(
            options.topic, into, groups, (options.max_lag_records, options.max_lag_s),
            options.cutover_timeout_s, options.yes, app,
        )  # fmt: skip
        if resumed is not None:
            same_migration(resumed, plan)
        kept = functools.partial(keep, options.checkpoint, plan)
        with (
            _following(prepared, client, (source, dest), running=resumed is None) as follower,
            _world(prepared, client, follower, app, operator, kept) as io,
        ):
            if resumed is None:
                operator.say(f"copy: following {options.topic} into {into}")
                result, plan, barrier = _phases(plan, prepared, io)
            else:
                operator.say(f"resuming after the cut-over recorded in {resumed.path}")
                reversing = Path(_reverse_checkpoint(options)).exists()
                result, barrier = _resume(plan, prepared, resumed, io, reversing)
        if barrier is None:
            return Outcome(result, EXIT_GATE)
        return _afterwards(options, client, plan, barrier, result, operator)


def _following_copy(
    options: MigrateOptions, topic: str, into: str, partitioner: str, checkpoint: str
) -> CopyOptions:
    """A copy's follow on the migration's cluster and Spark: the forward one, or the
    reverse one with the partitioner the forward one pinned."""
    return CopyOptions(
        topic=topic, into=into, partitioner=PartitionerChoice(partitioner), checkpoint=checkpoint,
        follow=True,
        connection=options.connection, spark=options.spark,
    )  # fmt: skip


def _afterwards(
    options: MigrateOptions,
    client: ClientConfig,
    plan: Plan,
    barrier: Barrier,
    result: MigrateResult,
    operator: Operator,
) -> Outcome[MigrateResult]:
    """The rollback window: a reverse copy keeps the old topic current from the barrier on
    (the forward copy has stopped: the two never run together), until the operator
    completes or rolls back."""
    new, old = describe_topics(client, [plan.into, plan.topic])
    path = _reverse_checkpoint(options)
    copy = _following_copy(options, plan.into, plan.topic, result.partitioner, path)
    saved = load_checkpoint(path, plan.into, plan.topic)
    prepared = prepare_copy(copy, client, new, old, saved, starts=barrier.new)
    starts = (barrier.new, barrier.old)
    back = mirror(plan)
    kept = functools.partial(keep_rollback, options.checkpoint)
    with (
        _following(prepared, client, (new, old)) as follower,
        _world(prepared, client, follower, back.app, operator, kept, starts) as io,
    ):
        operator.say(f"reverse copy: following {plan.into} into {plan.topic}")
        try:
            if rollback_window(plan, io) is Decision.COMPLETE:
                complete(plan, io)
                ended(options.checkpoint, Stage.COMPLETE)
                return Outcome(replace(result, completed=True), EXIT_OK)
            wait_until_ready(back, io)
            again = cut_over(back, io)
            hops = settle_old_app(back, again, io)
            groups = move_groups(back, again, io)
            downstream = move_downstream(back, hops, io)
        except (Stopped, CheckFailed) as e:
            return Outcome(replace(result, stopped=str(e)), EXIT_GATE)
    ended(options.checkpoint, Stage.ROLLED_BACK)
    rolled = RolledBack(again.took_s, tuple(groups), tuple(downstream))
    return Outcome(replace(result, rolled_back=rolled), EXIT_OK)


def _reverse_checkpoint(options: MigrateOptions) -> str:
    """The reverse copy's checkpoint, beside the forward one's."""
    return f"{options.checkpoint}.reverse"


def _phases(
    plan: Plan, prepared: PreparedCopy, io: MigrateIO
) -> tuple[MigrateResult, Plan, Barrier | None]:
    """The forward migration up to the rollback window; no barrier when it stopped."""
    result = MigrateResult(
        plan.topic, plan.into, prepared.spec.partitioner,
        shadow=plan.app.shadow_id if plan.app else None,
    )  # fmt: skip
    try:
        plan = start_shadow(plan, io)
        result = replace(result, shadow=plan.app.shadow_id if plan.app else None)
        wait_until_ready(plan, io)
        barrier = cut_over(plan, io)
        result = replace(result, old_ends=barrier.old, new_ends=barrier.new,
                         cutover_s=barrier.took_s)  # fmt: skip
        result = _after_switch(plan, barrier, result, io)
    except (Stopped, CheckFailed) as e:
        return replace(result, stopped=str(e)), plan, None
    return result, plan, barrier


def _resume(
    plan: Plan, prepared: PreparedCopy, resumed: Resumed, io: MigrateIO, reversing: bool
) -> tuple[MigrateResult, Barrier | None]:
    """A run that stopped after its barrier, resumed there: the switch asked again, then
    every step after it (a group already moved is left where it is); the forward copy
    does not run again.  ``reversing``: the reverse copy had started."""
    barrier = resumed.barrier
    result = MigrateResult(
        plan.topic, plan.into, prepared.spec.partitioner,
        old_ends=barrier.old, new_ends=barrier.new, cutover_s=barrier.took_s,
        shadow=plan.app.shadow_id if plan.app else None,
    )  # fmt: skip
    try:
        switch(plan, io)
        result = _after_switch(plan, barrier, result, io, reversing)
    except (Stopped, CheckFailed) as e:
        return replace(result, stopped=str(e)), None
    return result, barrier


def _after_switch(
    plan: Plan, barrier: Barrier, result: MigrateResult, io: MigrateIO, reversing: bool = False
) -> MigrateResult:
    """Steps 5 to 7, then the wait for the reverse copy's start."""
    hops = settle_old_app(plan, barrier, io)
    result = replace(result, groups=tuple(move_groups(plan, barrier, io)))
    result = replace(result, downstream=tuple(move_downstream(plan, hops, io)))
    reverse_may_start(plan, barrier, io, reversing)
    return result


def _app_plan(
    options: MigrateOptions, client: ClientConfig, source: TopicMeta, into: str
) -> AppPlan | None:
    """The stateful app and its shadow, each part checked: the app reads the topic and its
    framework has a shadow route (Kafka Streams, ksqlDB), the topic holds its whole
    history (the shadow's state is right only then), each output exists, and each
    downstream group reads one of them."""
    app = options.application_id
    if app is None:
        if options.outputs or options.downstream_groups or options.topology:
            raise UsageError(
                "--output-topic, --topology and --downstream-group need --application-id"
            )
        return None
    found = find_group(client, app)
    if found is None or not found.group.reads(source.name):
        raise UsageError(f"--application-id {app}: no such app reads {source.name}")
    kind, shadow_line = _framework(found)
    trimmed = [p.partition for p in source.partitions if p.log_start_offset > 0]
    if trimmed:
        raise UsageError(
            f"{source.name} no longer holds its whole history (log start offset above 0 on "
            f"partitions {trimmed}): a shadow would rebuild wrong state; use "
            "runbook --strategy new-topic"
        )
    topology = read_topology(options.topology)
    _stream_time(client, kind, app, topology)
    outputs = _outputs(options, topology)
    describe_topics(client, outputs)  # each must exist: a missing one is refused here
    for group in options.downstream_groups:
        _downstream(client, group, outputs)
    # ksqlDB names a new query itself: its shadow is found once started
    named = kind is ReaderKind.KAFKA_STREAMS
    shadow = options.shadow_application_id or (f"{app}-p{options.to}" if named else "")
    pairs = tuple((o, f"{o}-p{options.to}") for o in outputs)
    start = shadow_line(ShadowStart(app, shadow, source.name, into, pairs))
    return AppPlan(
        app, shadow, pairs, tuple(dict.fromkeys(options.downstream_groups)),
        options.max_shadow_lag, start,
    )  # fmt: skip


def _framework(found: Found) -> tuple[ReaderKind, Callable[[ShadowStart], str]]:
    """The app's framework, if it has a shadow route; else one line says why not."""
    kind = found.evidence.kind
    if kind not in STATEFUL_KINDS:
        raise UsageError(
            f"--application-id {found.group.group_id}: {label(kind)} keeps no state; move "
            "it with --group"
        )
    framework = FRAMEWORKS[kind]
    if framework.shadow is None:
        raise UsageError(
            f"--application-id {found.group.group_id} is {framework.label}: "
            f"{framework.online_refusal}"
        )
    return framework.kind, framework.shadow


def _stream_time(
    client: ClientConfig, kind: ReaderKind, app: str, topology: Topology | None
) -> None:
    """Refused in one line when the app's results depend on stream time
    (:mod:`migcheck.streams.streamtime`): its changelogs' policies, and its topology."""
    internal = FRAMEWORKS[kind].internal_topics(app, topics_with_prefix(client, ""))
    policies = cleanup_policies(client, changelogs(internal))  # configs only, no offsets
    refuse_stream_time(f"--application-id {app}", app, policies, topology)


def _outputs(options: MigrateOptions, topology: Topology | None) -> list[str]:
    """The app's output topics: named, or its topology's sinks but its repartition
    topics (internal, named by Kafka Streams after the app)."""
    if options.outputs:
        return [o for o in dict.fromkeys(options.outputs) if o]
    if topology is None:
        raise UsageError(
            "--application-id: name the app's output topics with --output-topic (repeatable; "
            "--output-topic '' if it writes none) or give its --topology"
        )
    return output_topics(topology)


def _downstream(client: ClientConfig, group: str, outputs: list[str]) -> None:
    info = describe_group(client, group)
    if info is None or not any(info.reads(o) for o in outputs):
        raise UsageError(
            f"--downstream-group {group}: no such group reads any of the app's outputs "
            f"({', '.join(outputs) or 'none'})"
        )


def _groups(options: MigrateOptions, client: ClientConfig, app: AppPlan | None) -> tuple[str, ...]:
    """The plain groups to move: named, or found reading the topic (the app and its
    shadow left out); with an app, none found is no error."""
    skip = (app.app_id, app.shadow_id) if app else ()
    if app and not options.groups:
        found = plain_groups(client, options.topic, (), skip=skip, none_ok=True)
    else:
        found = plain_groups(client, options.topic, options.groups)
    return tuple(f.group.group_id for f in found)


def _shadow_output(client: ClientConfig, old: str, new: str) -> None:
    """The shadow's output: made like the app's own (its count, configs, replication)."""
    if topic_exists(client, new):
        return
    (meta,) = describe_topics(client, [old])
    create_topic(
        client, new, meta.partition_count, replication_factor(client, old),
        topic_configs(client, old),
    )  # fmt: skip


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
    prepared: PreparedCopy,
    client: ClientConfig,
    topics: tuple[TopicMeta, TopicMeta],
    running: bool = True,
) -> Iterator[_Follower]:
    """The follow running on its thread while the phases run; stopped and joined after.
    Not ``running``: a resumed run's forward copy, stopped at the barrier for good."""
    follower = _Follower(prepared)
    if not running:
        yield follower
        return
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


#: A check's counts, summed over the ranges checked since the last report.
_COUNTS = ("records", "missing", "duplicated", "misplaced")


class _Checker:
    """Checks the copy range by range: from where the last check ended to the follow's
    last consistent mark, or to the barrier's ends.  While the operator takes their time
    at the pause's prompt, :meth:`checking` goes on checking in the background, so that
    a postponed cut-over's own check stays small; what it found is reported with the
    next check the phases ask for."""

    def __init__(
        self,
        prepared: PreparedCopy,
        client: ClientConfig,
        follower: _Follower,
        starts: tuple[dict[int, int], dict[int, int]] | None,
    ) -> None:
        self.prepared, self.client, self.follower = prepared, client, follower
        source, dest = prepared.topics
        self.src_from = {p.partition: p.log_start_offset for p in source.partitions}
        self.dst_from = {p.partition: p.log_start_offset for p in dest.partitions}
        if starts is not None:  # the reverse copy: both topics from the barrier on
            self.src_from, self.dst_from = dict(starts[0]), dict(starts[1])
        self.lock = threading.Lock()  # one check at a time: the ranges follow each other
        self.unreported: list[Verification] = []

    def check(self, old: dict[int, int] | None, new: dict[int, int] | None) -> Verification:
        with self.lock:
            found = [*self.unreported, self._check(old, new)]
            self.unreported = []
        return Verification(*(sum(getattr(v, f) for v in found) for f in _COUNTS))

    @contextlib.contextmanager
    def checking(self) -> Iterator[None]:
        """Every :data:`CHECK_EVERY_S`, the copied range since the last check, on a thread
        of its own, until the block ends (a check in flight finishes first)."""
        done = threading.Event()

        def run() -> None:
            while not done.wait(CHECK_EVERY_S):
                with self.lock:
                    self.unreported.append(self._check(None, None))

        thread = threading.Thread(target=run, name="migcheck-check", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _check(self, old: dict[int, int] | None, new: dict[int, int] | None) -> Verification:
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
    app: AppPlan | None,
    operator: Operator,
    taken: Callable[[Barrier], None],
    starts: tuple[dict[int, int], dict[int, int]] | None = None,
) -> Iterator[MigrateIO]:
    """The phases' I/O on the cluster, the follow and the operator; ``taken`` keeps a
    barrier before its switch is asked."""
    source, dest = prepared.topics
    ends = TopicEnds(client, source.name)  # the phases' own: a client is for one thread
    # each topic an app's lag is counted on, its clients kept open: the barrier asks ten
    # times a second
    opened: dict[str, TopicEnds] = {}

    def highs(topic: str) -> dict[int, int]:
        if topic not in opened:
            opened[topic] = TopicEnds(client, topic)
        return opened[topic].high()

    checker = _Checker(prepared, client, follower, starts)
    apps = (app.app_id, app.shadow_id) if app else ()

    def source_ends() -> SourceEnds:
        return SourceEnds(ends.high(), ends.stable())

    def topic_ends(topic: str) -> dict[int, int]:
        meta = settled(client, topic)
        return {p.partition: p.log_end_offset for p in meta.partitions}

    def committed(group: str, topic: str) -> dict[int, int]:
        info = describe_group(client, group)
        found = info.committed if info else {}
        return {p: o for (t, p), o in found.items() if t == topic}

    def has_members(group: str) -> bool:
        info = describe_group(client, group)
        return bool(info and info.members)

    def lag() -> CopyLag | None:
        follower.raise_error()
        return follower.lag

    io = MigrateIO(
        ask=operator.ask,
        choose=operator.choose,
        say=operator.say,
        lag=lag,
        check=checker.check,
        checking=checker.checking,
        source_ends=source_ends,
        copied_to=follower.copied_to,
        stop_copy=follower.stop.set,
        ends=topic_ends,
        app_lag=lambda app_id, topic: app_lag(client, app_id, topic, highs, apps),
        shadows=lambda: [
            f.group.group_id
            for f in find_readers(client, [dest.name])[dest.name]
            if f.evidence.kind in STATEFUL_KINDS
        ],
        committed=committed,
        has_members=has_members,
        readers=lambda topic: [
            f.group.group_id
            for f in find_readers(client, [topic])[topic]
            if any(t == topic for m in f.group.members for t, _ in m.partitions)
        ],
        set_offsets=lambda group, topic, offsets: commit_offsets(client, group, topic, offsets),
        taken=taken,
        wait=time.sleep,  # between looks at the broker: nothing to wait on but time
        clock=time.monotonic,
    )
    try:
        yield io
    finally:
        ends.close()
        for opened_ends in opened.values():
            opened_ends.close()


def app_lag(
    client: ClientConfig,
    app: str,
    topic: str,
    highs: Callable[[str], dict[int, int]],
    others: tuple[str, ...] = (),
) -> int:
    """How many records the Kafka Streams app ``app`` has still to read of ``topic`` and
    of its own repartition topics, by its committed offsets (none committed: from 0).
    The offsets are read before the ends: lag 0 then means every record written by the
    time of the look was read, and, since a Streams app flushes its writes before it
    commits, its outputs hold every result of them."""
    info = describe_group(client, app)
    committed = info.committed if info else {}
    theirs = tuple(f"{o}-" for o in others if o != app)  # a shadow <app>-pN shares the prefix
    internal = [
        t
        for t in topics_with_prefix(client, f"{app}-")
        if is_repartition_name(t) and not t.startswith(theirs)
    ]
    return sum(
        max(0, end - committed.get((t, p), 0))
        for t in (topic, *internal)
        for p, end in highs(t).items()
    )
