"""``migcheck migrate``: one long-lived process widens a topic online (:mod:`migcheck.online`).

It checks the options and the readers, makes the new topic (and a stateful app's shadow
outputs) and readies the copy: the phase *start* of :mod:`migcheck.online.sequence`.  Then
it walks the phases' table (:func:`migcheck.online.steps.walk`) with the operator at the
manual steps, each phase run with the forward copy's I/O or the reverse copy's.  A run
that finds the cut-over record resumes at the recorded phase (:mod:`migcheck.online.record`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from migcheck.analysis.errors import spark_errors
from migcheck.apps.discovery import app_model, discover_app
from migcheck.apps.online import check_online, online_outputs
from migcheck.apps.sets import refuse_split_set
from migcheck.apps.strategy import direct_stores
from migcheck.commands.app import candidate
from migcheck.commands.copy import (
    CopyOptions,
    PreparedCopy,
    follow_io,
    prepare_copy,
)
from migcheck.commands.groups_runbook import plain_groups
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.commands.runbook import internal_after, state_moves
from migcheck.commands.shadow_state import StateMoves, choose_shadow_state
from migcheck.copy.checkpoint import (
    check_destination,
    load_checkpoint,
)
from migcheck.copy.follow import follow
from migcheck.copy.verify import verify_ranges
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.frameworks.registry import FRAMEWORKS, STATEFUL_KINDS, label
from migcheck.frameworks.topology import read_topology
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import describe_group
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.model.copy import Ranges, Verification
from migcheck.model.migrate import CUTOVER_TIMEOUT_S, MigrateResult, ShadowStart, ShadowState
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import StateMove
from migcheck.online.follower import Follower, following
from migcheck.online.hooks import hooks_in
from migcheck.online.phases import AppPlan, MigrateIO, Plan, mirror
from migcheck.online.record import Resumed, resumable, same_migration, write_record
from migcheck.online.sequence import Copy, State, Way
from migcheck.online.steps import Hooks, Lanes, Migration, first_run, resumed_run, walk
from migcheck.online.world import Operator, open_migrate_io
from migcheck.online.writes import (
    create_new_topic,
    create_shadow_output,
)
from migcheck.readers.discovery import Found, described, find_group, find_readers


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
    #: the stateful apps of the topic (``--application-id``, repeatable): each gets a shadow
    application_ids: tuple[str, ...] = ()
    shadow_application_id: str | None = None  # one app's: default <application id>-p<N>
    outputs: tuple[str, ...] = ()  # one app's output topics (or from its topology)
    #: each app's Topology#describe() file, by app id: its sinks are its outputs
    topologies: Mapping[str, str] = field(default_factory=dict)
    downstream_groups: tuple[str, ...] = ()
    max_shadow_lag: int = 10_000
    left: tuple[str, ...] = ()  # --leave-group: readers left on the old topic on purpose
    hooks_dir: str | None = None  # --hooks-dir: an executable per phase (online/hooks.py)
    accept_lost_history: bool = False  # a shadow may rebuild from sources that lost records
    shadow_state: ShadowState = ShadowState.AUTO  # the shadow's state: moved or rebuilt
    complete_after_s: float | None = None  # the rollback window's length; None: asked
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


def run_migrate(options: MigrateOptions, operator: Operator) -> Outcome[MigrateResult]:
    """The whole migration, then the rollback window: exit 0 once it completed or rolled
    back, 1 when it stopped early.  A migration whose cut-over is recorded resumes at the
    recorded phase (:mod:`migcheck.online.record`)."""
    resumed = resumable(options.checkpoint)
    client = options.connection.client()
    (source,) = describe_topics(client, [options.topic])
    if options.to <= source.partition_count:
        raise UsageError(f"--to {options.to}: {options.topic} already has {source.partition_count}")
    into = options.into or f"{options.topic}-p{options.to}"
    apps = _app_plans(options, client, source, into, resumed)
    groups = _groups(options, client, apps)
    saved = load_checkpoint(options.checkpoint, options.topic, into)
    dest = create_new_topic(client, source, into, options.to, copy_saved=saved is not None)
    for old, new in (pair for app in apps for pair in app.outputs):
        create_shadow_output(client, old, new)
    check_destination(options.checkpoint, saved, into, dest.partition_count)
    copy = _following_copy(options, options.topic, into, options.partitioner, options.checkpoint)
    with spark_errors():
        prepared = prepare_copy(copy, client, source, dest, saved)
        if resumed is None:
            for app in apps:
                _state_moves(options).pin(client, app)
        plan = Plan(
            options.topic, into, groups, (options.max_lag_records, options.max_lag_s),
            options.cutover_timeout_s, options.yes, apps, options.complete_after_s,
            tuple(dict.fromkeys(options.left)),
        )  # fmt: skip
        m = _migration(options, plan, prepared.spec.partitioner, resumed, operator)
        lanes = _lanes(options, client, prepared, m, operator)
        record = functools.partial(write_record, options.checkpoint)
        result = walk(m, lanes, record, _telling(operator, hooks_in(options.hooks_dir)))
    return Outcome(result, EXIT_OK if result.stopped is None else EXIT_GATE)


def _migration(
    options: MigrateOptions,
    plan: Plan,
    partitioner: str,
    resumed: Resumed | None,
    operator: Operator,
) -> Migration:
    """A first run, or a run resuming the recorded migration (the same one, else refused)
    at its recorded phase."""
    if resumed is None:
        return first_run(plan, partitioner)
    same_migration(resumed, plan)
    operator.say(f"resuming after the cut-over recorded in {resumed.path}")
    reversing = Path(_reverse_checkpoint(options)).exists()
    hops = resumed.hops(plan)
    return resumed_run(
        plan, partitioner, resumed.state, resumed.barrier, hops, reversing, resumed.changelog_ends
    )


def _telling(operator: Operator, hooks: Hooks) -> Hooks:
    """The walk's hooks, the operator told first which state the walk enters: where the
    run stands, for the control socket's status."""

    def run(state: State, m: Migration, io: MigrateIO) -> str | None:
        operator.entered(state, io.lag)
        return hooks(state, m, io)

    return run


def _lanes(
    options: MigrateOptions,
    client: ClientConfig,
    prepared: PreparedCopy,
    m: Migration,
    operator: Operator,
) -> Lanes:
    """Each copy's I/O as the walk asks for it: the forward copy (following on its thread,
    or stopped at a resumed run's barrier), or the reverse copy from the barrier's ends."""

    @contextlib.contextmanager
    def lane(copy: Copy, running: bool) -> Iterator[MigrateIO]:
        plan = m.plan
        mover = None
        if copy is Copy.FORWARD:
            this, apps, starts = prepared, plan.apps, None
            said = f"copy: following {plan.topic} into {plan.into}"
            mover = _state_moves(options).mover(client)
        else:
            barrier = m.barriers[Way.FORWARD]
            this, apps = _reverse_copy(options, client, m), mirror(plan).apps
            starts = (barrier.new, barrier.old)
            said = f"reverse copy: following {plan.into} into {plan.topic}"
        with (
            following(this.state, _follow(this, client), running) as follower,
            open_migrate_io(
                client, this.topics, follower, _verify(this, client), apps, operator, starts, mover
            ) as io,
        ):
            if running:
                operator.say(said)
            yield io

    return lane


def _follow(prepared: PreparedCopy, client: ClientConfig) -> Callable[[Follower], None]:
    """The copy's follow as the follower runs it on its thread: until its stop, each
    checkpoint saved through it, its lag reported to it."""

    def run(follower: Follower) -> None:
        rounds = replace(prepared.rounds, save=follower.saved(prepared.rounds.save))
        with follow_io(client, prepared.topics, follower.stop, follower.reported) as io:
            follow(prepared.state, rounds, io, interval_s=1.0)

    return run


def _verify(
    prepared: PreparedCopy, client: ClientConfig
) -> Callable[[Ranges, Ranges], Verification]:
    """One copied range's check, in Spark, with the copy's partitioner."""
    dest = prepared.topics[1]
    return lambda src, dst: verify_ranges(
        prepared.spark, client, src, dst, dest.partition_count, prepared.spec.partitioner
    )


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


def _reverse_copy(options: MigrateOptions, client: ClientConfig, m: Migration) -> PreparedCopy:
    """The reverse copy: the new topic into the old one from the barrier's ends, its
    checkpoint beside the forward one's, each record placed as the forward copy pinned."""
    plan = m.plan
    new, old = describe_topics(client, [plan.into, plan.topic])
    path = _reverse_checkpoint(options)
    copy = _following_copy(options, plan.into, plan.topic, m.result.partitioner, path)
    saved = load_checkpoint(path, plan.into, plan.topic)
    return prepare_copy(copy, client, new, old, saved, starts=m.barriers[Way.FORWARD].new)


def _state_moves(options: MigrateOptions) -> StateMoves:
    """The seeded shadow's changelog moves, on the migration's cluster and Spark."""
    return StateMoves(options.checkpoint, options.connection, options.spark)


def _reverse_checkpoint(options: MigrateOptions) -> str:
    """The reverse copy's checkpoint, beside the forward one's."""
    return f"{options.checkpoint}.reverse"


def _app_plans(
    options: MigrateOptions,
    client: ClientConfig,
    source: TopicMeta,
    into: str,
    resumed: Resumed | None,
) -> tuple[AppPlan, ...]:
    """Each stateful app of the topic (``--application-id``, repeatable) and its shadow
    (:func:`_app_plan`), the one a resumed run's first run started; what names one app's
    parts (its outputs, its shadow's id) refused with several, in one line."""
    ids = tuple(dict.fromkeys(options.application_ids))
    if not ids:
        if options.outputs or options.downstream_groups or options.topologies:
            raise UsageError(
                "--output-topic, --topology and --downstream-group need --application-id"
            )
        return ()
    if len(ids) > 1 and (options.outputs or options.shadow_application_id):
        raise UsageError(
            "--output-topic and --shadow-application-id name one app's: with several "
            "--application-id, give each app's outputs as --topology APP_ID=FILE, and its "
            "shadow takes the id APP_ID-pN"
        )
    unknown = sorted(set(options.topologies) - set(ids))
    if unknown:
        raise UsageError(f"--topology {unknown[0]}=...: no such --application-id")
    apps = tuple(_app_plan(options, client, source, into, resumed, app) for app in ids)
    for group in options.downstream_groups:
        _downstream(client, group, [o for a in apps for o, _ in a.outputs])
    outputs = [new for a in apps for _, new in a.outputs]
    if len(set(outputs)) < len(outputs):
        raise UsageError("two apps write the same output topic: move them one at a time")
    shadows = {} if resumed is None else resumed.shadow_ids
    return tuple(replace(a, shadow_id=shadows.get(a.app_id) or a.shadow_id) for a in apps)


def _app_plan(
    options: MigrateOptions,
    client: ClientConfig,
    source: TopicMeta,
    into: str,
    resumed: Resumed | None,
    app: str,
) -> AppPlan:
    """One stateful app and its shadow, each part checked: the app reads the topic, it can
    move online (:func:`~migcheck.apps.online.check_online`: a fresh run only checks its
    history, a ``resumed`` one's shadow is built or seeded already), each output exists;
    its downstream groups those that read one of its outputs; its state moved or rebuilt
    (:func:`~migcheck.commands.shadow_state.choose_shadow_state`)."""
    found = find_group(client, app)
    if found is None or not found.group.reads(source.name):
        raise UsageError(f"--application-id {app}: no such app reads {source.name}")
    kind = _stateful(found)
    topology = read_topology(options.topologies.get(app))
    disc = discover_app(client, app, topology, [source.name], FRAMEWORKS[kind])
    model = app_model(disc, topology)  # a join's other side must widen with the topic
    state, movable = choose_shadow_state(options.shadow_state, disc, model, topology, resumed, app)
    # a resumed run's shadow is built already, and a moved state lost nothing
    shadow_line = check_online(
        ONLINE_ROUTE, disc, topology,
        options.accept_lost_history or resumed is not None or state is ShadowState.MOVE,
        f"--shadow-state {ShadowState.MOVE}" if movable else "",
    )  # fmt: skip
    direct = {source.name: direct_stores(model, source.name).stores}
    refuse_split_set("migrate", app, candidate(model, direct, options.to), [source.name])
    outputs = online_outputs(ONLINE_ROUTE, options.outputs, topology)
    describe_topics(client, outputs)  # each must exist: a missing one is refused here
    # a framework that names its shadow itself (ksqlDB's new query): found once started
    named = disc.facts.framework.shadow_id
    shadow = options.shadow_application_id or (named(app, options.to) if named else "")
    pairs = tuple((o, f"{o}-p{options.to}") for o in outputs)
    moves: tuple[StateMove, ...] = ()
    if state is ShadowState.MOVE:
        counts = internal_after(model, {source.name: options.to})
        moves = state_moves(disc, model, client, shadow, counts, reads={source.name: into})
    moved = tuple(m.changelog for m in moves)
    start = shadow_line(ShadowStart(app, shadow, source.name, into, pairs, moved))
    downstream = tuple(
        g for g in dict.fromkeys(options.downstream_groups) if _reads_any(client, g, outputs)
    )
    return AppPlan(
        app, shadow, pairs, downstream, options.max_shadow_lag, start, disc.facts.framework,
        state, moves,
    )  # fmt: skip


def _reads_any(client: ClientConfig, group: str, topics: list[str]) -> bool:
    info = describe_group(client, group)
    return info is not None and any(info.reads(t) for t in topics)


#: How migrate names itself in the refusals of an app it cannot move online.
ONLINE_ROUTE = "migrate's shadow"


def _stateful(found: Found) -> ReaderKind:
    """The app's framework, if it keeps state; a stateless reader moves with --group."""
    kind = found.evidence.kind
    if kind not in STATEFUL_KINDS:
        raise UsageError(
            f"--application-id {found.group.group_id}: {label(kind)} keeps no state; move "
            "it with --group"
        )
    return kind


def _downstream(client: ClientConfig, group: str, outputs: list[str]) -> None:
    if not _reads_any(client, group, outputs):
        raise UsageError(
            f"--downstream-group {group}: no such group reads any of the app's outputs "
            f"({', '.join(outputs) or 'none'})"
        )


def _groups(
    options: MigrateOptions, client: ClientConfig, apps: tuple[AppPlan, ...]
) -> tuple[str, ...]:
    """The plain groups to move: named, or found reading the topic (the apps and their
    shadows left out); with an app, none found is no error."""
    skip = tuple(i for app in apps for i in (app.app_id, app.shadow_id))
    if apps and not options.groups:
        found = plain_groups(client, options.topic, (), skip=(*skip, *options.left), none_ok=True)
    elif options.groups:
        found = plain_groups(client, options.topic, options.groups)
    else:
        found = plain_groups(client, options.topic, (), skip=options.left)
    moved = tuple(f.group.group_id for f in found)
    _refuse_unnamed(client, options.topic, {*moved, *skip, *options.left})
    return moved


def _refuse_unnamed(client: ClientConfig, topic: str, known: set[str]) -> None:
    """Every reader of the topic is moved, the app, or left on purpose: one nobody named
    (a group, an assign() consumer's committed offsets, a Connect sink's group) would keep
    the reverse copy waiting, silently, and read no new record after the switch."""
    unnamed = [f for f in find_readers(client, [topic])[topic] if f.group.group_id not in known]
    if unnamed:
        listed = ", ".join(described(unnamed))
        raise UsageError(
            f"{topic} is also read by {listed}: name each with --group to move it, or "
            f"--leave-group to leave it on {topic} (the reverse copy keeps it current until "
            "the migration completes)"
        )
