"""``migcheck runbook`` end to end for a stream processor's app (Kafka Streams, ksqlDB,
Quix Streams): discover it, pick the strategy, write its framework's steps.

Read-only like ``migcheck app``: it finds the application's real topics, the
topic's own configs and each source's log start offsets, and judges the
in-place change with the same rules.  ``--strategy auto`` (the default) picks
in place when no store reads the topic directly (:mod:`migcheck.apps.strategy`),
else a new topic.  ``--strategy in-place`` on an app with such stores is refused,
naming those stores and every key whose history would split (a full scan
through the analysis pipeline), unless ``--accept-split-history`` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from migcheck.analysis.errors import spark_errors
from migcheck.apps.build import Model
from migcheck.apps.discovery import (
    Discovery,
    app_model,
    check_read,
    discover_app,
    lost_history,
    only_frameworks,
)
from migcheck.apps.movable import unmovable, unproven_refusal, unproven_why
from migcheck.apps.online import check_online, online_outputs
from migcheck.apps.rules import AppLevel, external_counts, sizes
from migcheck.apps.sets import apart_refusal, must_move_together, refuse_split_set
from migcheck.apps.strategy import Choice, Sizes, choose, direct_stores
from migcheck.commands.analyze import AnalyzeOptions, run_analyze
from migcheck.commands.app import candidate
from migcheck.commands.copy import detected_partitioner
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.copy.errors import PlacementError
from migcheck.errors import EXIT_GATE, EXIT_OK, Refused, UsageError
from migcheck.frameworks.base import Framework
from migcheck.frameworks.registry import (
    AUTO_FRAMEWORK,
    FRAMEWORKS,
    STATEFUL_KINDS,
    WITH_RUNBOOKS,
    framework_said,
    label,
    runbook_steps,
)
from migcheck.frameworks.topology import Topology, read_topology
from migcheck.hashing.keys import printable
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import describe_topics, topic_configs
from migcheck.model.app import MoveTogether, first_error
from migcheck.model.header import report_header
from migcheck.model.history import Trimmed, lost_history_refusal
from migcheck.model.migrate import MigrateTuning, ShadowState
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.readers import Protocol
from migcheck.model.runbook import (
    ASSIGN_TIMEOUT,
    BARRIER_FILE,
    COMMIT_TIMEOUT,
    COPY_BARRIER_FILE,
    GROUP_TIMEOUT,
    LAG_TIMEOUT,
    PeerApp,
    Runbook,
    RunbookFacts,
    SplitRefusal,
    StateMove,
    Step,
    StepRole,
    Strategy,
    Widened,
)
from migcheck.model.topics import check_changes
from migcheck.readers.discovery import Found, described, find_readers
from migcheck.runbook.actions import reprocesses
from migcheck.runbook.online import MIGRATE_TITLE
from migcheck.runbook.together import side_by_side
from migcheck.words import listing


@dataclass
class RunbookOptions:
    """Everything ``migcheck runbook`` was asked."""

    app_id: str
    topic: str
    to: int
    #: the set's other topics, each widened to ``to`` with ``topic`` (``--topic`` repeated,
    #: issue 71): every side of a join in one change
    also: tuple[str, ...] = ()
    topology_file: str | None = None
    new_topic: str | None = None
    #: the set's other topics' copies (``--into`` repeated, in ``also``'s order); empty:
    #: each ``<topic>-p<N>``
    also_into: tuple[str, ...] = ()
    strategy: Strategy = Strategy.AUTO
    state_dir: str | None = None
    group_timeout: int = GROUP_TIMEOUT
    lag_timeout: int = LAG_TIMEOUT
    assign_timeout: int = ASSIGN_TIMEOUT  # --group in place: the groups' runbook's waits
    commit_timeout: int = COMMIT_TIMEOUT
    accept_split_history: bool = False
    accept_lost_history: bool = False  # reprocess sources that lost records, said so
    #: --leave-group: readers of the set's topics left as they are on purpose (the
    #: operator's word); every other reader besides the app is refused (:func:`_refuse_others`)
    left: tuple[str, ...] = ()
    #: the other apps of the same runbook (``--application-id`` repeated): moved with it
    with_apps: tuple[str, ...] = ()
    fixed_repartition: list[str] = field(default_factory=list)
    framework: str = AUTO_FRAMEWORK  # --framework: a ReaderKind's value, on the user's word
    # --strategy online only: what moves at the barrier besides the app
    output_topics: tuple[str, ...] = ()  # empty: the --topology's sinks
    downstream_groups: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    tuning: MigrateTuning = field(default_factory=MigrateTuning)
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)
    #: each copied topic's partitioner as detected so far, by topic: shared by the apps of
    #: one runbook (``replace`` keeps the same dict), so that a topic several apps read is
    #: scanned once
    detected: dict[str, str | None] = field(default_factory=dict)

    @property
    def topics(self) -> list[str]:
        """Every topic of the change, ``topic`` first."""
        return [self.topic, *self.also]

    @property
    def copies(self) -> list[str]:
        """Each topic's wider copy where the route copies: ``--into`` for each, in order,
        else ``<topic>-p<N>``, as ``copy`` and ``migrate`` name it."""
        named = [self.new_topic, *self.also_into] if self.new_topic else []
        return [
            named[at] if at < len(named) else f"{t}-p{self.to}" for at, t in enumerate(self.topics)
        ]


def run_runbook(options: RunbookOptions) -> Outcome[Runbook | SplitRefusal]:
    """The runbook, or the refusal of an in-place change that would split state."""
    topology = read_topology(options.topology_file)
    client = options.connection.client()
    said = framework_said(options.framework)
    disc = discover_app(client, options.app_id, topology, [*options.topics, *options.copies], said)
    only_frameworks(disc, "runbook", WITH_RUNBOOKS)
    options = _own_topics(options, disc)
    topics, copies = options.topics, options.copies
    new_topic = copies[0]
    model = app_model(disc, topology, options.fixed_repartition)
    for topic in topics:
        _check(options, disc, topic)
    check_read(topics, model.app, disc, topology is not None)
    blocked = unmovable(disc, model, topology)
    framework = disc.facts.framework
    lost = lost_history(disc)  # the sources' trimmed partitions, read once
    sizes = route_sizes(disc, model)
    choice = _choose(options, model, framework, lost, blocked is None, sizes)
    _refuse_set(options, disc, choice)
    if choice.strategy is Strategy.MOVE_STATE and blocked is not None:
        raise blocked
    proof = _prove_move(options, disc, model, client, new_topic, choice)
    if proof.unproven:  # auto: as if a store could not move
        choice = _choose(options, model, framework, lost, False)
    copied = choice.strategy is Strategy.NEW_TOPIC or _onto_copy(options)
    for topic, copy in zip(topics, copies, strict=True):
        _check_new_topic(options, disc, copied, topic, copy)
    reads: tuple[tuple[str, str], ...] = ()
    if choice.strategy is not Strategy.ONLINE:  # migrate moves or refuses them itself
        reads = _refuse_others(options, client, copies if copied else None)
        _check_groups(options, disc.facts.protocol, reads)
    if options.also and copied:
        _refuse_apart(options, disc, client, topics)
    movable = blocked is None and not proof.unproven
    move_state = f"--strategy {Strategy.MOVE_STATE}" if movable else ""
    judged = candidate(model, {t: direct_stores(model, t).stores for t in topics}, options.to)
    level = AppLevel(judged["verdict"])
    refuse_split_set("runbook", options.app_id, judged, topics, framework.runbook_sets)
    in_place = choice.strategy is Strategy.IN_PLACE
    stores = _splitting_stores(model, topics, level) if in_place else ()
    may_split = stores is None or bool(stores)  # None: unseen state may split

    def facts_with(split: int | None) -> RunbookFacts:
        facts = _facts(options, disc, model, client, new_topic, level, split, choice)
        also = (Widened(t, disc.topics[t].partition_count, c, topic_configs(client, t))
                for t, c in zip(options.also, copies[1:], strict=True))  # fmt: skip
        together = tuple(
            MoveTogether(topics=list(t.topics), why=t.why) for t in must_move_together(model)
        )
        facts = replace(facts, first_error=first_error(judged), also=tuple(also), together=together)
        facts = replace(facts, group_reads=reads)
        facts = _moved(disc, model, client, facts, proof.placed)
        return _online(options, facts, disc, topology, movable)

    # the history before the split's full scan: a reprocess of what retention deleted is
    # refused whatever splits (a split written anyway rebuilds the state too)
    facts = facts_with(0 if may_split else None)
    _refuse_lost_history(options, lost, facts, move_state, proof.unproven)
    if may_split:
        keys = _split_keys(options)
        if keys and not options.accept_split_history:
            return _refusal(options, level, stores, keys)
        facts = facts_with(len(keys) or None)
    steps = tuple(runbook_steps(facts))
    lost = lost if reprocesses(steps) else ()  # said at the top only where it reprocesses
    return Outcome(Runbook(replace(facts, history_lost=lost), steps, report_header()), EXIT_OK)


def run_apps_runbook(
    options: RunbookOptions, apps: Sequence[str], topologies: Mapping[str, str]
) -> Outcome[Runbook | SplitRefusal]:
    """One runbook for several apps of the topics (``--application-id`` repeated): each
    app's runbook is written and judged as its own (its checks, its refusals), the other
    apps not counted as readers left behind.  Online, one migrate moves them all at its
    one barrier, each app's other steps (ksqlDB's kept statement) before it; offline,
    their procedures are laid side by side (:mod:`migcheck.runbook.together`).  The first
    app's refusal is the answer."""
    written: list[tuple[RunbookFacts, tuple[Step, ...]]] = []
    for app in apps:
        others = tuple(a for a in apps if a != app)
        own = replace(options, app_id=app, topology_file=topologies.get(app), with_apps=others)
        outcome = run_runbook(own)
        report = outcome.report
        if not isinstance(report, Runbook) or not isinstance(report.facts, RunbookFacts):
            return outcome
        written.append((report.facts, report.steps))
    if options.strategy is Strategy.ONLINE:
        return Outcome(_online_apps(written, topologies), EXIT_OK)
    return Outcome(_offline_apps(options, written), EXIT_OK)


def _online_apps(
    written: Sequence[tuple[RunbookFacts, tuple[Step, ...]]], topologies: Mapping[str, str]
) -> Runbook:
    (first, _), *others = written
    peers = tuple(PeerApp(f.app_id, topologies[f.app_id], f.outputs) for f, _ in others)
    moved = all(f.shadow_state is ShadowState.MOVE for f, _ in written)
    facts = replace(
        first,
        peers=peers,
        topology_file=topologies[first.app_id],
        shadow_state=ShadowState.MOVE if moved else None,  # else migrate's auto, per app
    )
    before, migrate = _before_migrate(runbook_steps(facts))
    extra = [s for _, steps in others for s in _before_migrate(steps)[0] if s not in before]
    return Runbook(facts, (*before, *extra, migrate), report_header())


def _offline_apps(
    options: RunbookOptions, written: Sequence[tuple[RunbookFacts, tuple[Step, ...]]]
) -> Runbook:
    """Several apps offline: one framework that writes a set's runbook, one group
    protocol (the script's group tool) and one route (a moved state in place: each app's
    barrier in its own file), else refused in one line; then each app's procedure side
    by side, the topics' change once."""
    (first, _), *others = written
    kinds = {f.kind for f, _ in written}
    if len(kinds) > 1 or not FRAMEWORKS[first.kind].runbook_sets:
        raise UsageError(
            f"runbook: several apps move together offline when they are all Kafka Streams "
            f"apps ({_each(written, lambda f: label(f.kind))}): pass --strategy online, or "
            "write one app's runbook with --leave-group for the others"
        )
    if len({f.protocol for f, _ in written}) > 1:
        raise UsageError(
            f"runbook: several apps move together offline on one group protocol "
            f"({_each(written, lambda f: str(f.protocol))}): pass --strategy online"
        )
    if len({f.strategy for f, _ in written}) > 1:
        raise Refused(
            f"refused: the apps take different routes ({_each(written, lambda f: f.strategy)}), "
            "and their topics change once for all of them: pass one --strategy for every "
            "app (new-topic copies for each)"
        )
    changes = _set_changes(options, written)
    peers = tuple(PeerApp(f.app_id, f.topology_file, verdict=f.verdict) for f, _ in others)
    steps = side_by_side([(f.app_id, steps) for f, steps in written], changes)
    return Runbook(replace(first, peers=peers), steps, report_header())


def _set_changes(
    options: RunbookOptions, written: Sequence[tuple[RunbookFacts, tuple[Step, ...]]]
) -> list[Step]:
    """The topics' change, once for every app, in its steps (onto copies: the copy, then
    the switch): written for every topic of the set (each app's own procedure names only
    the topics it reads), by each app's reason, with every app's sources (whose
    producers the change resumes).  A topic no app reads is refused in one line."""
    widened = {w.topic: w for f, _ in written for w in f.widened}
    unread = [t for t in options.topics if t not in widened]
    if unread:
        raise UsageError(
            f"runbook: none of the apps {listing([f.app_id for f, _ in written])} reads "
            f"{unread[0]}: drop its --topic, or name the app that reads it"
        )
    reads = tuple(dict.fromkeys(r for f, _ in written for r in f.group_reads))
    _refuse_unread_groups(options, reads)
    head, *rest = (widened[t] for t in options.topics)
    first = written[0][0]
    facts = replace(
        first,
        topic=head.topic,
        partitions=head.partitions,
        new_topic=head.new_topic,
        configs=head.configs,
        also=tuple(rest),
        sources=tuple(dict.fromkeys(s for f, _ in written for s in f.sources)),
        group_reads=reads,
        strategy_reason=" ".join(
            dict.fromkeys(f.strategy_reason for f, _ in written if f.strategy_reason)
        ),
    )
    return [s for s in runbook_steps(facts) if s.role is StepRole.CHANGE]


def _each(
    written: Sequence[tuple[RunbookFacts, tuple[Step, ...]]], said: Callable[[RunbookFacts], str]
) -> str:
    """Each app's id and what ``said`` tells of it, as a refusal lists them."""
    return ", ".join(f"{f.app_id}: {said(f)}" for f, _ in written)


def _own_topics(options: RunbookOptions, disc: Discovery) -> RunbookOptions:
    """Of several apps' runbook, each app's own procedure is written for the topics of
    the change it reads (the others' read the rest): its reset, restart and checks name
    no topic it does not read.  One app's runbook is for every topic it was given."""
    if not options.with_apps:
        return options
    reads = set(disc.facts.sources) | set(disc.facts.internal)
    own = [t for t in options.topics if t in reads]
    if not own:
        raise UsageError(
            f"runbook: the app {options.app_id} reads none of {listing(options.topics)}: "
            f"drop its --application-id, or pass --topology {options.app_id}=FILE if it does"
        )
    first, *also = own
    copy_of = dict(zip(options.topics, options.copies, strict=True))
    named = options.new_topic is not None
    return replace(
        options,
        topic=first,
        also=tuple(also),
        new_topic=copy_of[first] if named else None,
        also_into=tuple(copy_of[t] for t in also) if named else (),
    )


def _before_migrate(steps: Sequence[Step]) -> tuple[list[Step], Step]:
    """An online procedure's steps before its migrate, and the migrate, which ends it."""
    *before, last = steps
    if last.title != MIGRATE_TITLE:
        raise ValueError(f"an online procedure ends with its migrate, not {last.title!r}")
    return before, last


def _refuse_lost_history(
    options: RunbookOptions,
    lost: tuple[Trimmed, ...],
    facts: RunbookFacts,
    move_state: str,
    unproven: str,
) -> None:
    """Refused in one line (exit 1) when the procedure rebuilds the app's state from
    sources that lost records, unless --accept-lost-history (model/history.py); the line
    names ``move_state`` where the app's state can move instead, and why it cannot where
    only a changelog's records showed it (``unproven``)."""
    if lost and not options.accept_lost_history and reprocesses(runbook_steps(facts)):
        route = f"--strategy {facts.strategy}"
        why = unproven and unproven_why(unproven)
        raise Refused(lost_history_refusal(options.app_id, lost, route, move_state, why))


@dataclass(frozen=True)
class MoveProof:
    """What a move's changelogs' records proved when the runbook was written: each one's
    partitioner (None: no keyed record to tell it by), or why one conforms to none."""

    placed: Mapping[str, PartitionerChoice | None] = field(default_factory=dict)
    unproven: str = ""  # the copy's detection's words, its best partitioner and share


def _prove_move(
    options: RunbookOptions,
    disc: Discovery,
    model: Model,
    client: ClientConfig,
    new_topic: str,
    choice: Choice,
) -> MoveProof:
    """Where the state moves (asked, or chosen by auto): each changelog's partitioner
    detected from all of its records as ``migcheck copy`` detects it (read-only; a tie
    judged at its count after the change), so that the move is never assumed to conform.
    One that conforms to none refuses the move asked by name in one line; auto is told
    why, and chooses as though a store could not move."""
    if choice.strategy is not Strategy.MOVE_STATE:
        return MoveProof()
    counts = _internal(options, disc, model, new_topic, None, choice)[1]
    placed: dict[str, PartitionerChoice | None] = {}
    with spark_errors():
        for meta in describe_topics(client, _changelogs(model)):
            try:
                found = detected_partitioner(options.spark, client, meta, counts[meta.name])
            except PlacementError as e:
                if options.strategy is Strategy.MOVE_STATE:
                    raise unproven_refusal(options.app_id, e.why) from None
                return MoveProof(unproven=e.why)
            placed[meta.name] = PartitionerChoice(found) if found else None
    return MoveProof(placed)


def _moved(
    disc: Discovery,
    model: Model,
    client: ClientConfig,
    facts: RunbookFacts,
    placed: Mapping[str, PartitionerChoice | None],
) -> RunbookFacts:
    """``--strategy move-state``: the id the app restarts under, each store's changelog
    moved into that id's at its count after the change by the partitioner its records
    proved (``placed``), the new id's internal topics with their counts, and the sources'
    history in offsets (what a reprocess would read)."""
    if facts.strategy is not Strategy.MOVE_STATE:
        return facts
    moved_id = disc.facts.framework.moved_id
    if moved_id is None:  # unmovable() refused every framework without one
        raise ValueError(f"{disc.facts.framework.name} names no new application id")
    new_id, app, counts = moved_id(facts.app_id, facts.to), model.app, facts.expected_internal
    reads = {w.topic: facts.target_of(w) for w in facts.widened if facts.target_of(w) != w.topic}
    renamed = {
        restarted_name(app.framework, new_id, app.framework.internal(new_id, disc.facts.bare(t)),
                       reads): n
        for t, n in counts.items()
    }  # fmt: skip
    moves = state_moves(disc, model, client, new_id, counts, placed, reads)
    sources = [p for t in disc.facts.sources if t in disc.topics for p in disc.topics[t].partitions]
    return replace(
        facts,
        moved_app_id=new_id,
        moves=moves,
        expected_internal=renamed,
        history=sum(p.log_end_offset for p in sources),
        history_gone=sum(p.log_start_offset for p in sources),
    )


def state_moves(
    disc: Discovery,
    model: Model,
    client: ClientConfig,
    new_id: str,
    counts: Mapping[str, int],
    placed: Mapping[str, PartitionerChoice | None] | None = None,
    reads: Mapping[str, str] | None = None,
) -> tuple[StateMove, ...]:
    """Each store's changelog moved into ``new_id``'s, at its count after the change
    (``counts``, by the old changelog's name), by the partitioner its records proved
    (``placed``, by the same name; none given: the copy detects it): ``runbook --strategy
    move-state``'s, and ``migrate``'s shadow seeded with moved state.  ``reads`` names the
    copy ``new_id`` reads in place of each source it renames (none: every source as it
    is): the moved changelog is the one the app restarted there restores from."""
    app, placed = model.app, placed or {}
    return tuple(
        replace(
            _move(disc, client, store, app.changelog(store),
                  restarted_name(app.framework, new_id, app.framework.changelog(new_id, store),
                                 reads or {}),
                  counts[app.changelog(store)]),
            partitioner=placed.get(app.changelog(store)),
        )
        for store in _stores(model)
    )  # fmt: skip


def restarted_name(
    framework: Framework, new_id: str, internal: str, reads: Mapping[str, str]
) -> str:
    """``new_id``'s internal topic ``internal`` as the app names it when it restarts on the
    copies ``reads`` names in place of its sources (``Framework.renamed``): an unnamed
    table's store, and so its changelog, is named after the topic it reads, so the moved
    state must go under the copy's name or the restarted app would restore nothing."""
    if framework.renamed is None or not reads:
        return internal
    return framework.renamed(new_id, internal, reads)


def _stores(model: Model) -> list[str]:
    """The stores whose state moves: each task's, once (a global store restores from its
    source topic)."""
    subs = model.app.topology.subtopologies
    return list(dict.fromkeys(s for sub in subs if not sub.is_global for s in sub.stores))


def _changelogs(model: Model) -> list[str]:
    """The changelogs a move of the app's state copies, one per store."""
    return [model.app.changelog(store) for store in _stores(model)]


def route_sizes(disc: Discovery, model: Model) -> Sizes:
    """What a move and a reprocess would read, from the offsets discovery read: the
    changelogs' records (end - start, at most what a move copies) and the sources'."""
    metas = [disc.topics[t] for t in _changelogs(model) if t in disc.topics]
    sources = [disc.topics[t] for t in disc.facts.sources if t in disc.topics]
    return Sizes(sum(m.records for m in metas), sum(m.records for m in sources))


def internal_after(model: Model, counts: Mapping[str, int]) -> Mapping[str, int]:
    """A Kafka Streams app's internal topics and their counts once each topic of
    ``counts`` has its count there, as Streams creates them (the reset deletes them; a
    new id starts without)."""
    return sizes(model.app, {**external_counts(model.app), **counts}).internal


def _move(
    disc: Discovery, client: ClientConfig, store: str, changelog: str, into: str, count: int
) -> StateMove:
    """One changelog's move: created like it (its own configs, compacted), at ``count``."""
    configs = {**topic_configs(client, changelog)}
    configs.setdefault("cleanup.policy", "compact")
    meta = disc.topics.get(changelog)
    offsets = meta.offsets.values() if meta else ()
    return StateMove(store, changelog, into, count, configs, sum(e - s for s, e in offsets))


def _online(
    options: RunbookOptions,
    facts: RunbookFacts,
    disc: Discovery,
    topology: Topology | None,
    movable: bool,
) -> RunbookFacts:
    """The readers ``--strategy online`` moves besides the app, once the app can move online
    (:func:`~migcheck.apps.online.check_online`, as migrate decides it).  Where a source
    lost records and every store can move (``movable``), migrate seeds the shadow with the
    moved state (``--shadow-state move``), as its auto would, named in the runbook."""
    if facts.strategy is not Strategy.ONLINE:  # the CLI refuses their options (cli/runbook.py)
        return facts
    route = "--strategy online"
    moved = movable and bool(lost_history(disc))
    accepted = options.accept_lost_history or moved  # a moved state loses nothing
    check_online(route, disc, topology, accepted)
    outputs = online_outputs(route, options.output_topics, topology)
    return replace(
        facts,
        outputs=tuple(outputs),
        downstream=tuple(dict.fromkeys(options.downstream_groups)),
        groups=tuple(dict.fromkeys(options.groups)),
        left=tuple(dict.fromkeys(options.left)),
        tuning=options.tuning,
        shadow_state=ShadowState.MOVE if moved else None,
    )


def _splitting_stores(model: Model, topics: list[str], level: AppLevel) -> tuple[str, ...] | None:
    """The stores whose history an in-place alter splits: those that read a topic of the
    change directly.  None when the model may miss such a store and the verdict is not
    SAFE: state may split that only --topology would name."""
    found: list[str] = []
    for topic in topics:
        direct = direct_stores(model, topic)
        if not (direct.stores or direct.certain or level == AppLevel.SAFE):
            return None
        found += direct.stores
    return tuple(dict.fromkeys(found))


def _choose(
    options: RunbookOptions,
    model: Model,
    framework: Framework,
    lost: tuple[Trimmed, ...],
    movable: bool,
    sizes: Sizes | None = None,
) -> Choice:
    """The one strategy of the change: a set's topics all take the same route, the one
    the topic that needs the most asks (new-topic over in-place: a join between a side
    altered in place and a side copied would match nothing)."""
    choices = [
        choose(options.strategy, model, t, framework, lost, movable, sizes) for t in options.topics
    ]
    copied = [c for c in choices if c.strategy is Strategy.NEW_TOPIC]
    if not copied:
        return choices[0]
    if len(copied) == len(choices):
        return copied[0]
    why = f"{copied[0].reason} Every topic of the set is copied with it: {_SET_ROUTE}"
    return Choice(Strategy.NEW_TOPIC, why)


#: Why a set takes one route, said where it changes a topic's own.
_SET_ROUTE = "a join between a side altered in place and a side copied would match nothing."


def _refuse_apart(
    options: RunbookOptions, disc: Discovery, client: ClientConfig, topics: list[str]
) -> None:
    """A set copied into new topics: each side's partitioner detected from all of its
    records as its copy will detect it (read-only), refused in one line where no
    partitioner placed a side's keys or where the sides' differ (``apart_refusal``)."""
    placed: dict[str, str | None] = {}
    with spark_errors():
        for topic in topics:
            if topic in options.detected:
                placed[topic] = options.detected[topic]
                continue
            try:
                placed[topic] = options.detected[topic] = detected_partitioner(
                    options.spark, client, disc.topics[topic], options.to
                )
            except PlacementError as e:
                raise Refused(
                    f"refused: runbook copies each topic of a set by its producers' "
                    f"partitioner, and {e.why}"
                ) from None
    refusal = apart_refusal(options.app_id, placed)
    if refusal:
        raise Refused(refusal)


def _refuse_set(options: RunbookOptions, disc: Discovery, choice: Choice) -> None:
    """A set of topics (``--topic`` repeated) is written for the routes and frameworks
    that take one (issue 71); any other is refused in one line that says what to do."""
    if not options.also:
        return
    framework = disc.facts.framework
    if not framework.runbook_sets:
        raise UsageError(
            f"runbook: a runbook of several topics is not written for {framework.name} apps "
            "yet: pass one --topic"
        )
    if options.new_topic is not None and choice.strategy is Strategy.ONLINE:
        raise UsageError(
            "--into names one topic's copy for migrate: a set's copies online are each "
            "<topic>-p<N>; drop --into"
        )


def _refuse_others(
    options: RunbookOptions, client: ClientConfig, copies: list[str] | None
) -> tuple[tuple[str, str], ...]:
    """Every reader of the set's topics besides the app is moved with it (another app of
    the runbook, a plain group it moves: ``--group``) or left on purpose
    (``--leave-group``), never silently: refused in one line (:func:`others_refusal`)
    otherwise.  ``copies``: each topic's copy where the route switches the producers to
    one; None where it alters the topics in place.  Returns each ``--group`` with each
    topic of the app's it reads."""
    skip = {options.app_id, *options.left, *options.with_apps, *options.groups}
    found = find_readers(client, options.topics)
    for at, topic in enumerate(options.topics):
        others = [f for f in found[topic] if f.group.group_id not in skip]
        if others:
            copy = copies[at] if copies is not None else None
            raise Refused(others_refusal(options.app_id, topic, others, copy))
    for group in options.groups:
        kinds = {
            f.evidence.kind for t in options.topics for f in found[t] if f.group.group_id == group
        }
        stateful = kinds & STATEFUL_KINDS
        if stateful:
            raise UsageError(
                f"--group {group} is {label(min(stateful))}, not a plain consumer group: name "
                "it with --application-id"
            )
    return tuple(
        (group, topic)
        for group in options.groups
        for topic in options.topics
        if any(f.group.group_id == group for f in found[topic])
    )


def _check_groups(
    options: RunbookOptions, protocol: Protocol, reads: tuple[tuple[str, str], ...]
) -> None:
    """Plain groups (``--group``) move offline with every route: onto copies (each
    committed at its copy's end, at a quiet point) and in place (kept in order through
    the alter); with an app of the classic protocol (the script's group tool is the
    app's); and each must read a topic of the change (of several apps' runbook, of the
    set's: :func:`_set_changes`).  Else one line."""
    if not options.groups:
        return
    if protocol is Protocol.STREAMS:
        raise UsageError(
            "--group moves offline with an app of the classic protocol: pass --strategy "
            "online for a streams-protocol app"
        )
    if not options.with_apps:  # of several apps, the set's topics: _set_changes
        _refuse_unread_groups(options, reads)


def _refuse_unread_groups(options: RunbookOptions, reads: tuple[tuple[str, str], ...]) -> None:
    """A ``--group`` that reads none of the change's topics is refused in one line."""
    unread = [g for g in options.groups if all(g != r for r, _ in reads)]
    if unread:
        raise UsageError(f"--group {unread[0]} reads none of {listing(options.topics)}")


def others_refusal(app_id: str, topic: str, others: list[Found], copy: str | None) -> str:
    """Why this offline runbook, which moves ``app_id`` alone, will not strand the other
    readers of ``topic``: switched to ``copy``, the topic gets no new record; altered in
    place (``copy`` None), they meet the new count unprepared.  Names each, with its kind,
    and what moves them."""
    listed = listing(described(others))
    meets = (
        f"once its producers switch to {copy} they read no new record"
        if copy is not None
        else "the alter reaches them unprepared (a moved key's records on two partitions, "
        "a new partition read from latest missing its first records)"
    )
    return (
        f"refused: {topic} is also read by {listed}: this runbook moves {app_id} alone, and "
        f"{meets}; pass --group for each plain group (it moves with the app), "
        "--application-id for each app of the topic, or --leave-group for each reader left "
        "as it is on purpose"
    )


def _check(options: RunbookOptions, disc: Discovery, topic: str) -> None:
    meta = disc.topics.get(topic)
    if meta is None:
        raise UsageError(f"topic {topic!r} does not exist at {options.connection.bootstrap}")
    check_changes({topic: meta.partition_count}, [options.to])


def _onto_copy(options: RunbookOptions) -> bool:
    """``--strategy move-state`` with ``--into`` given: the input is copied, not altered,
    and left as it was (its other readers, the way back); without it, in place.  Asked by
    name, move-state is the choice or a refusal, never turned to another strategy."""
    return options.strategy is Strategy.MOVE_STATE and options.new_topic is not None


def _check_new_topic(
    options: RunbookOptions, disc: Discovery, copies: bool, topic: str, new_topic: str
) -> None:
    if not copies:
        return
    if new_topic == topic:
        raise UsageError("--new-topic must differ from --topic")
    existing = disc.topics.get(new_topic)
    if existing and existing.partition_count != options.to:
        raise UsageError(
            f"--new-topic {new_topic} exists with {existing.partition_count} partitions, "
            f"not {options.to}"
        )


def _facts(
    options: RunbookOptions,
    disc: Discovery,
    model: Model,
    client: ClientConfig,
    new_topic: str,
    level: AppLevel,
    split: int | None,
    choice: Choice,
) -> RunbookFacts:
    internal, expected = _internal(options, disc, model, new_topic, split, choice)
    return RunbookFacts(
        kind=disc.facts.framework.kind,
        app_id=options.app_id,
        bootstrap=options.connection.bootstrap or "",
        command_config=options.connection.command_config,
        topic=options.topic,
        partitions=disc.topics[options.topic].partition_count,
        to=options.to,
        new_topic=new_topic,
        strategy=choice.strategy,
        protocol=disc.facts.protocol,
        internal=internal,
        expected_internal=expected,
        sources=tuple(disc.facts.sources),
        accept_lost_history=options.accept_lost_history,
        state_dir=options.state_dir,
        verdict=level,
        split_keys=split,
        members=len(disc.group.members) if disc.group else 0,
        configs=topic_configs(client, options.topic),
        strategy_reason=choice.reason,
        on_users_word=disc.on_users_word,
        group_timeout=options.group_timeout,
        lag_timeout=options.lag_timeout,
        assign_timeout=options.assign_timeout,
        commit_timeout=options.commit_timeout,
        barrier_file=f"barrier-{options.app_id}.csv" if options.with_apps else BARRIER_FILE,
        copy_barrier_file=(
            f"copy-barrier-{options.app_id}.csv" if options.with_apps else COPY_BARRIER_FILE
        ),
        onto_copy=_onto_copy(options),
    )


def _internal(
    options: RunbookOptions,
    disc: Discovery,
    model: Model,
    new_topic: str,
    split: int | None,
    choice: Choice,
) -> tuple[tuple[str, ...], Mapping[str, int]]:
    """The internal topics the runbook deletes, and those the restarted app has after it
    with their counts: the framework's own rule where no reset tool handles them
    (``leftovers``), else those the reset deletes, sized by the model."""
    framework = disc.facts.framework
    leftovers = framework.leftovers
    if leftovers is None:
        expected = internal_after(model, dict.fromkeys(options.topics, options.to))
        if choice.strategy is Strategy.NEW_TOPIC:
            renames = dict(zip(options.topics, options.copies, strict=True))
            expected = {
                restarted_name(framework, options.app_id, t, renames): n
                for t, n in expected.items()
            }
        return tuple(sorted(disc.facts.internal)), expected
    target = new_topic if choice.strategy is Strategy.NEW_TOPIC else options.topic
    rebuilt = split is not None
    return leftovers(
        options.app_id, options.topic, target, options.to, disc.facts.internal, rebuilt
    )


def _split_keys(o: RunbookOptions) -> list[str]:
    """Every key of the change's topics that changes partition: its history would split."""
    outcome = run_analyze(
        AnalyzeOptions(
            candidates=[o.to],
            topics=o.topics,
            connection=o.connection,
            full=True,
            collect_moved_keys=True,
            spark=o.spark,
        )
    )
    return [printable(bytes.fromhex(key_hex)) for _, key_hex, *_ in outcome.moved_keys]


def _refusal(
    options: RunbookOptions, level: AppLevel, stores: tuple[str, ...] | None, keys: list[str]
) -> Outcome[Runbook | SplitRefusal]:
    topics = listing(options.topics)
    refusal = SplitRefusal(options.app_id, topics, options.to, level, stores, tuple(keys))
    return Outcome(refusal, EXIT_GATE)
