"""``migcheck migrate``: one long-lived process widens a topic, or a set of topics, online
(:mod:`migcheck.online`).

It checks the options and the readers, makes each new topic (and a stateful app's shadow
outputs) and readies one copy per topic: the phase *start* of
:mod:`migcheck.online.sequence`.  A set (``--topic`` repeated: every side of a join, every
topic its apps and groups read together) is cut over at one barrier.  Then
it walks the phases' table (:func:`migcheck.online.steps.walk`) with the operator at the
manual steps, each phase run with the forward copy's I/O or the reverse copy's.  A run
that finds the cut-over record resumes at the recorded phase (:mod:`migcheck.online.record`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from migcheck.analysis.errors import spark_errors
from migcheck.apps.discovery import app_model, discover_app
from migcheck.apps.online import check_online, online_outputs
from migcheck.apps.sets import apart_refusal, refuse_split_set
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
    Checkpoint,
    check_destination,
    load_checkpoint,
)
from migcheck.copy.follow import follow
from migcheck.copy.verify import verify_ranges
from migcheck.errors import EXIT_GATE, EXIT_OK, Refused, UsageError
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
from migcheck.online.world import CopyLane, Operator, open_migrate_io
from migcheck.online.writes import (
    create_new_topic,
    create_shadow_output,
)
from migcheck.readers.discovery import Found, described, find_group, find_readers


@dataclass
class MigrateOptions:
    """Everything ``migcheck migrate`` was asked."""

    topics: tuple[str, ...]  # the set: each widened to ``to``, all at one barrier
    to: int
    checkpoint: str
    groups: tuple[str, ...] = ()
    into: str | None = None  # one topic's new name; each of a set's is <topic>-p<to>
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
    topics = tuple(dict.fromkeys(options.topics))
    if options.into is not None and len(topics) > 1:
        raise UsageError("--into names one topic's new topic: a set's are each TOPIC-pN")
    sources = describe_topics(client, list(topics))
    for source in sources:
        if options.to <= source.partition_count:
            raise UsageError(
                f"--to {options.to}: {source.name} already has {source.partition_count}"
            )
    pairs = tuple((t, options.into or f"{t}-p{options.to}") for t in topics)
    apps = _app_plans(options, client, pairs, resumed)
    groups, reads = _groups(options, client, apps, topics)
    # each copy's checkpoint, read once: every new topic is made and checked against its
    # own before any copy starts
    saved = tuple(load_checkpoint(_copy_path(options, old), old, new) for old, new in pairs)
    sides = tuple(zip(sources, pairs, saved, strict=True))
    dests = tuple(_new_topic(options, client, s, new, kept) for s, (_, new), kept in sides)
    for old, new in (pair for app in apps for pair in app.outputs):
        create_shadow_output(client, old, new)
    with spark_errors():
        prepared = tuple(
            _forward_copy(options, client, s, d, kept)
            for (s, _, kept), d in zip(sides, dests, strict=True)
        )
        partitioners = {p.topics[0].name: p.spec.partitioner for p in prepared}
        _refuse_apart(apps, partitioners)
        if resumed is None:
            for app in apps:
                _state_moves(options).pin(client, app)
        plan = Plan(
            pairs, groups, (options.max_lag_records, options.max_lag_s),
            options.cutover_timeout_s, options.yes, apps, options.complete_after_s,
            tuple(dict.fromkeys(options.left)), reads,
        )  # fmt: skip
        m = _migration(options, plan, partitioners, resumed, operator)
        lanes = _lanes(options, client, prepared, m, operator)
        record = functools.partial(write_record, options.checkpoint)
        result = walk(m, lanes, record, _telling(operator, hooks_in(options.hooks_dir)))
    return Outcome(result, EXIT_OK if result.stopped is None else EXIT_GATE)


def _forward_copy(
    options: MigrateOptions,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    saved: Checkpoint | None,
) -> PreparedCopy:
    """One topic's copy into its new one, from its checkpoint (``saved``): each topic's
    partitioner detected from its own producers' records (or --partitioner)."""
    path = _copy_path(options, source.name)
    copy = _following_copy(options, source.name, dest.name, options.partitioner, path)
    return prepare_copy(copy, client, source, dest, saved)


def _new_topic(
    options: MigrateOptions,
    client: ClientConfig,
    source: TopicMeta,
    into: str,
    saved: Checkpoint | None,
) -> TopicMeta:
    """One topic's new one, made (or found, as its copy's checkpoint ``saved`` left it),
    checked against that checkpoint."""
    dest = create_new_topic(client, source, into, options.to, copy_saved=saved is not None)
    check_destination(_copy_path(options, source.name), saved, into, dest.partition_count)
    return dest


def _copy_path(options: MigrateOptions, topic: str) -> str:
    """One topic's copy's checkpoint: the migration's own for one topic (as before sets),
    else beside it, named after the topic (a topic's name is a safe file name: Kafka's
    legal characters, never ``.`` or ``..``)."""
    if len(set(options.topics)) == 1:
        return options.checkpoint
    return f"{options.checkpoint}.{topic}"


def _refuse_apart(apps: tuple[AppPlan, ...], partitioners: Mapping[str, str]) -> None:
    """An app joining several topics of the set whose producers place keys by different
    partitioners is refused in one line (``apart_refusal``): its join is already broken,
    and each copy keeps its own topic's placement."""
    for app in apps:
        placed: dict[str, str | None] = {old: partitioners[old] for old, _ in app.reads}
        refusal = apart_refusal(app.app_id, placed)
        if refusal:
            raise Refused(refusal)


def _migration(
    options: MigrateOptions,
    plan: Plan,
    partitioners: dict[str, str],
    resumed: Resumed | None,
    operator: Operator,
) -> Migration:
    """A first run, or a run resuming the recorded migration (the same one, else refused)
    at its recorded phase."""
    if resumed is None:
        return first_run(plan, partitioners)
    same_migration(resumed, plan)
    operator.say(f"resuming after the cut-over recorded in {resumed.path}")
    reversing = any(Path(_reverse_path(options, t)).exists() for t in plan.olds)
    hops = resumed.hops(plan)
    return resumed_run(
        plan, partitioners, resumed.state, resumed.barrier, hops, reversing,
        resumed.changelog_ends,
    )  # fmt: skip


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
    prepared: tuple[PreparedCopy, ...],
    m: Migration,
    operator: Operator,
) -> Lanes:
    """The copies' I/O as the walk asks for it: the forward copies (each following on its
    thread, or stopped at a resumed run's barrier), or the reverse copies from the
    barrier's ends."""

    @contextlib.contextmanager
    def lane(copy: Copy, running: bool) -> Iterator[MigrateIO]:
        plan = m.plan
        mover = None
        if copy is Copy.FORWARD:
            these, apps = prepared, plan.apps
            starts: dict[str, tuple[dict[int, int], dict[int, int]] | None] = {}
            said, mover = "copy", _state_moves(options).mover(client)
        else:
            barrier = m.barriers[Way.FORWARD]
            these = tuple(_reverse_copy(options, client, m, old, new) for old, new in plan.topics)
            apps, said = mirror(plan).apps, "reverse copy"
            starts = {new: (barrier.new[new], barrier.old[old]) for old, new in plan.topics}
        with contextlib.ExitStack() as stack:
            lanes = tuple(
                CopyLane(
                    this.topics,
                    stack.enter_context(following(this.state, _follow(this, client), running)),
                    _verify(this, client),
                    starts.get(this.topics[0].name),
                )
                for this in these
            )
            io = stack.enter_context(open_migrate_io(client, lanes, apps, operator, mover))
            if running:
                for this in these:
                    source, dest = this.topics
                    operator.say(f"{said}: following {source.name} into {dest.name}")
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


def _reverse_copy(
    options: MigrateOptions, client: ClientConfig, m: Migration, old: str, new: str
) -> PreparedCopy:
    """One topic's reverse copy: the new topic into the old one from the barrier's ends,
    its checkpoint beside the forward one's, each record placed as the forward copy
    pinned."""
    new_meta, old_meta = describe_topics(client, [new, old])
    path = _reverse_path(options, old)
    copy = _following_copy(options, new, old, m.result.partitioners[old], path)
    saved = load_checkpoint(path, new, old)
    starts = m.barriers[Way.FORWARD].new[new]
    return prepare_copy(copy, client, new_meta, old_meta, saved, starts=starts)


def _state_moves(options: MigrateOptions) -> StateMoves:
    """The seeded shadow's changelog moves, on the migration's cluster and Spark."""
    return StateMoves(options.checkpoint, options.connection, options.spark)


def _reverse_path(options: MigrateOptions, topic: str) -> str:
    """One topic's reverse copy's checkpoint, beside its forward one's."""
    return f"{_copy_path(options, topic)}.reverse"


def _app_plans(
    options: MigrateOptions,
    client: ClientConfig,
    pairs: tuple[tuple[str, str], ...],
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
    apps = tuple(_app_plan(options, client, pairs, resumed, app) for app in ids)
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
    pairs: tuple[tuple[str, str], ...],
    resumed: Resumed | None,
    app: str,
) -> AppPlan:
    """One stateful app and its shadow, each part checked: the app reads topics of the
    set, and every topic joined with them is in it; it can move online
    (:func:`~migcheck.apps.online.check_online`: a fresh run only checks its history, a
    ``resumed`` one's shadow is built or seeded already), each output exists;
    its downstream groups those that read one of its outputs; its state moved or rebuilt
    (:func:`~migcheck.commands.shadow_state.choose_shadow_state`)."""
    found = find_group(client, app)
    reads = tuple(p for p in pairs if found is not None and found.group.reads(p[0]))
    if found is None or not reads:
        olds = ", ".join(old for old, _ in pairs)
        raise UsageError(f"--application-id {app}: no such app reads {olds}")
    names = [old for old, _ in reads]
    kind = _stateful(found)
    topology = read_topology(options.topologies.get(app))
    disc = discover_app(client, app, topology, names, FRAMEWORKS[kind])
    model = app_model(disc, topology)  # a join's other side must widen with the topic
    state, movable = choose_shadow_state(options.shadow_state, disc, model, topology, resumed, app)
    # a resumed run's shadow is built already, and a moved state lost nothing
    shadow_line = check_online(
        ONLINE_ROUTE, disc, topology,
        options.accept_lost_history or resumed is not None or state is ShadowState.MOVE,
        f"--shadow-state {ShadowState.MOVE}" if movable else "",
    )  # fmt: skip
    direct = {t: direct_stores(model, t).stores for t in names}
    refuse_split_set("migrate", app, candidate(model, direct, options.to), names, sets=True)
    outputs = online_outputs(ONLINE_ROUTE, options.outputs, topology)
    describe_topics(client, outputs)  # each must exist: a missing one is refused here
    # a framework that names its shadow itself (ksqlDB's new query): found once started
    named = disc.facts.framework.shadow_id
    shadow = options.shadow_application_id or (named(app, options.to) if named else "")
    moves: tuple[StateMove, ...] = ()
    if state is ShadowState.MOVE:
        counts = internal_after(model, dict.fromkeys(names, options.to))
        moves = state_moves(disc, model, client, shadow, counts, reads=dict(reads))
    moved = tuple(m.changelog for m in moves)
    outs = tuple((o, f"{o}-p{options.to}") for o in outputs)
    start = shadow_line(ShadowStart(app, shadow, reads, outs, moved))
    downstream = tuple(
        g for g in dict.fromkeys(options.downstream_groups) if _reads_any(client, g, outputs)
    )
    return AppPlan(
        app, shadow, outs, downstream, options.max_shadow_lag, start, disc.facts.framework,
        state, moves, reads,
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
    options: MigrateOptions,
    client: ClientConfig,
    apps: tuple[AppPlan, ...],
    topics: tuple[str, ...],
) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The plain groups to move, and the topics of the set each reads: named, or found
    reading a topic (the apps and their shadows left out); with an app, none found is no
    error.  Every other reader of a topic is refused (:func:`_refuse_unnamed`)."""
    skip = tuple(i for app in apps for i in (app.app_id, app.shadow_id))
    reads: dict[str, list[str]] = {}
    for group in dict.fromkeys(options.groups):  # each named one looked at once
        info = describe_group(client, group)
        reads[group] = [t for t in topics if info is not None and info.reads(t)]
        # checked on a topic it reads, or refused on the first, in plain_groups' words
        plain_groups(client, (*reads[group], topics[0])[0], (group,))
    for topic in topics if not options.groups else ():
        found = plain_groups(client, topic, (), skip=(*skip, *options.left), none_ok=True)
        for f in found:
            reads.setdefault(f.group.group_id, []).append(topic)
    if not options.groups and not reads and not apps:
        plain_groups(client, topics[0], (), skip=options.left)  # none: refused there
    _refuse_unnamed(client, topics, {*reads, *skip, *options.left})
    return tuple(reads), {g: tuple(ts) for g, ts in reads.items()}


def _refuse_unnamed(client: ClientConfig, topics: Sequence[str], known: set[str]) -> None:
    """Every reader of each topic is moved, the app, or left on purpose: one nobody named
    (a group, an assign() consumer's committed offsets, a Connect sink's group) would keep
    the reverse copy waiting, silently, and read no new record after the switch.  The
    groups are described once for every topic."""
    for topic, found in find_readers(client, topics).items():
        unnamed = [f for f in found if f.group.group_id not in known]
        if unnamed:
            listed = ", ".join(described(unnamed))
            raise UsageError(
                f"{topic} is also read by {listed}: name each with --group to move it, or "
                f"--leave-group to leave it on {topic} (the reverse copy keeps it current "
                "until the migration completes)"
            )
