"""What a partition change does to a Kafka Streams application: CRASH, CORRUPT or SAFE.

Pure functions over a :class:`~migcheck.frameworks.topology.Topology` and the
partition counts of its topics.  They follow the rules Kafka Streams applies at
every rebalance (StreamsPartitionAssignor, RepartitionTopics,
InternalTopicManager, CopartitionedTopicsEnforcer):

- a sub-topology has one task per partition of its widest source topic;
- a repartition topic takes its upstream sub-topology's task count, unless the
  application fixed its size (``Repartitioned.numberOfPartitions``);
- a store's changelog (``<application.id>-<store>-changelog``) must have its
  sub-topology's task count, and an existing internal topic that does not is
  fatal: "Existing internal topic ... has invalid partitions";
- the source topics a join reads must have equal counts ("Topics not
  co-partitioned"); a repartition topic in such a group takes the group's count;
- global stores generate no tasks.

On the streams protocol (KIP-1071) the broker runs those checks and the client throws
their TopologyException at its next heartbeat, stopped or running: a CRASH under Kafka
Streams' default handler.  An app whose handler replaces the thread stalls instead, never
RUNNING; the verdict stays CRASH, and ``error_when`` says both (FINDINGS.md, "Streams
protocol through an alter, stopped and running").

A change that trips none of those checks but moves keys away from the task
that holds their state corrupts it silently: a store without a changelog
(logging disabled, or a source topic reused as its changelog), or a changelog
already widened to the new count.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from migcheck.apps.javasets import hashset_order
from migcheck.frameworks.base import Framework
from migcheck.frameworks.topology import SubTopology, Topology
from migcheck.model.app import AppLevel
from migcheck.model.readers import Protocol

_ORDER = {AppLevel.SAFE: 0, AppLevel.CORRUPT: 1, AppLevel.CRASH: 2}


def worst(levels: list[AppLevel]) -> AppLevel:
    return max(levels, key=_ORDER.__getitem__, default=AppLevel.SAFE)


@dataclass(frozen=True)
class App:
    """An application as the cluster shows it: its id, topology and topics' partition counts.

    ``counts`` holds every topic that exists, by full name (internal topics carry
    the ``<application.id>-`` prefix).  ``fixed`` holds the repartition topics,
    by their name in the topology, whose size the application fixed.
    """

    app_id: str
    topology: Topology
    counts: Mapping[str, int]
    fixed: Mapping[str, int] = field(default_factory=dict)
    protocol: Protocol = Protocol.CLASSIC
    #: False when the topology may lack stores (inferred from topic names, or the broker's
    #: description, which lists only logged stores): a sub-topology without a visible store
    #: may still hold state nothing checks, so a change to it cannot be called SAFE.
    stores_known: bool = True
    #: The stream processor: its naming, its checks and the words of its errors.  No
    #: default: every framework is a peer, named by discovery or by the caller.
    framework: Framework = field(kw_only=True)
    #: Source topics the evidence shows joined (co-partitioned) where the topology's shape
    #: alone would not: a model built without ``describe()`` (:mod:`migcheck.apps.build`).
    joins: tuple[frozenset[str], ...] = ()

    def internal(self, name: str) -> str:
        return self.framework.internal(self.app_id, name)

    def changelog(self, store: str) -> str:
        return self.framework.changelog(self.app_id, store)

    def invalid(self, topic: str, expected: int, actual: int) -> str:
        """The error the app raises for an internal topic of the wrong count."""
        if not self.framework.names_source:
            return self.framework.invalid(self.protocol, topic, expected, actual)
        source = self._source_of(topic, actual)
        return self.framework.invalid(
            self.protocol, topic, expected, actual, source=source, app_id=self.app_id
        )

    def _source_of(self, changelog: str, actual: int) -> str:
        """The source topic whose record meets a changelog's check: of the sub-topology
        that holds its store, the first whose count is not the changelog's."""
        for sub in self.topology.subtopologies:
            if any(self.changelog(store) == changelog for store in sub.stores):
                sources = [self.internal(t) if self.is_repartition(t) else t
                           for t in sub.source_topics]  # fmt: skip
                return next((t for t in sources if self.counts.get(t) != actual), changelog)
        return changelog

    @functools.cached_property
    def _sinks(self) -> frozenset[str]:
        return frozenset(t for sub in self.topology.subtopologies for t in sub.sink_topics)

    def is_repartition(self, topic: str) -> bool:
        """A repartition topic the topology writes, or that exists as an internal topic."""
        return self.framework.is_repartition(topic) and (
            topic in self._sinks or self.internal(topic) in self.counts
        )

    def required_topics(self) -> list[str]:
        """The topics the streams protocol's broker requires, in the order it adds them to
        ``StreamsTopology.requiredTopics()``: sub-topology by sub-topology (a HashMap by
        id), each one's sources, repartition sources, then logged stores' changelogs."""
        subs = {str(s.id): s for s in self.topology.subtopologies if not s.is_global}
        topics: list[str] = []
        for sub_id in hashset_order(subs):
            sub = subs[sub_id]
            topics += [t for t in sub.source_topics if not self.is_repartition(t)]
            topics += [self.internal(t) for t in sub.source_topics if self.is_repartition(t)]
            topics += [c for c in map(self.changelog, sub.stores) if c in self.counts]
        return topics

    @functools.cached_property
    def has_repartition_topics(self) -> bool:
        """Classic Streams checks co-partitioning only inside its repartition-topic setup."""
        return any(
            self.is_repartition(t)
            for sub in self.topology.subtopologies
            for t in sub.source_topics + sub.sink_topics
        )


@dataclass(frozen=True)
class Sizes:
    """Task counts per sub-topology and the expected count of each internal topic."""

    tasks: dict[int, int]
    internal: dict[str, int]  # full internal topic name -> the count Streams expects


def sizes(app: App, external: Mapping[str, int], checked: bool = False) -> Sizes:
    """The task and internal-topic counts Streams computes when sources have ``external``
    counts: as it creates them (a reset deletes the internal topics), or, ``checked``, as
    its checks expect them of the topics that exist (:func:`_reads_existing`)."""
    existing = checked and _reads_existing(app)
    tasks: dict[int, int] = {}
    repartition: dict[str, int] = dict(app.fixed)
    pending = [s for s in app.topology.subtopologies if not s.is_global]
    while pending:
        progressed = False
        for sub in list(pending):
            counts = _source_counts(app, sub, external, repartition, existing=existing)
            if counts is None:
                continue  # an upstream repartition topic is not sized yet
            tasks[sub.id] = max(counts.values(), default=0)
            for t in sub.sink_topics:
                if app.is_repartition(t) and t not in app.fixed:
                    repartition[t] = max(repartition.get(t, 0), tasks[sub.id])
            pending.remove(sub)
            progressed = True
        if not progressed:  # a cycle or an unknown topic: size what is known from existing counts
            for sub in pending:
                counts = _source_counts(app, sub, external, repartition, True, existing) or {}
                tasks[sub.id] = max(counts.values(), default=0)
            break
    internal = {app.internal(t): n for t, n in repartition.items()}
    for sub in app.topology.subtopologies:
        if sub.is_global:
            continue
        for store in sub.stores:
            internal[app.changelog(store)] = tasks[sub.id]
    return Sizes(tasks, internal)


def _source_counts(
    app: App,
    sub: SubTopology,
    external: Mapping[str, int],
    repartition: Mapping[str, int],
    allow_unknown: bool = False,
    existing: bool = False,
) -> dict[str, int] | None:
    counts: dict[str, int] = {}
    for t in sub.source_topics:
        if app.is_repartition(t):
            if existing and app.internal(t) in app.counts:
                counts[t] = app.counts[app.internal(t)]
            elif t in repartition:
                counts[t] = repartition[t]
            elif allow_unknown and app.internal(t) in app.counts:
                counts[t] = app.counts[app.internal(t)]
            elif not allow_unknown:
                return None
        elif t in external:
            counts[t] = external[t]
    if copartitioned(app, sub):  # a repartition topic joined with others takes their count
        plain = [n for t, n in counts.items() if not app.is_repartition(t)]
        if plain:
            counts = {t: (max(plain) if app.is_repartition(t) else n) for t, n in counts.items()}
    return counts


def _reads_existing(app: App) -> bool:
    """Whether the app's checks count a sub-topology's tasks from the repartition topics it
    reads as they exist, not as their upstream sizes them.  The streams protocol's broker
    does (group-coordinator's streams.topics.InternalTopicManager.getPartitionCount asks
    the metadata image first and its own decided count only for a topic that does not
    exist, in 4.1.1 to 4.3.1): a repartition topic of the wrong count is an error of its
    own, and the changelogs behind it are checked against its count as it is.  Classic
    never gets that far: the repartition topic's check throws before any changelog's."""
    return app.protocol == Protocol.STREAMS


def copartitioned(app: App, sub: SubTopology) -> bool:
    """Sources joined in one stateful sub-topology must be co-partitioned (a join), and so
    must sources the app's evidence joins (:attr:`App.joins`)."""
    sources = [n for n in sub.nodes if n.kind == "source" and n.topics]
    if len(sources) > 1 and sub.stores:
        return True
    return any(group <= set(sub.source_topics) for group in app.joins)


class Check(StrEnum):
    """Which of Kafka Streams' checks a reason trips, or that none does.

    Each protocol runs its checks in its own order (:data:`CHECK_ORDERS`), so the
    first CRASH reason in that order is the error the app prints.
    """

    REPARTITION = "repartition"  # a repartition topic of the wrong size
    COPARTITION = "copartition"  # joined topics of unequal counts
    CHANGELOG = "changelog"  # a changelog of the wrong size
    #: classic, joined topics of unequal counts in an app without repartition topics: no
    #: check runs, the app stalls in REBALANCING until task.timeout.ms, then crashes
    UNCHECKED_JOIN = "unchecked-join"
    UNCHECKED_STATE = "unchecked-state"  # keys move away from a store nothing checks
    UNSEEN_STATE = "unseen-state"  # keys move and no store is visible to rule state out


class Tie(StrEnum):
    """How the reasons of one step are ordered."""

    RULES = "rules"  # the rules' order, sub-topology by sub-topology
    HASHSET = "hashset"  # the broker's one pass over the required topics' Java HashSet


@dataclass(frozen=True)
class CheckOrder:
    """One protocol's checks in the order Kafka's code runs them, in the releases read.

    ``steps`` run one after another and the first that fails throws, so a reason of an
    earlier step is the error the app prints; the checks of one step run in one pass over
    the topics, and their reasons are ordered by ``tie``.  A release whose code runs them
    otherwise gets a :class:`CheckOrder` of its own, as an error's words do
    (:attr:`~migcheck.frameworks.base.Framework.releases`).
    """

    protocol: Protocol
    #: the release lines whose code was read and runs the checks in this order
    releases: tuple[str, ...]
    steps: tuple[tuple[Check, ...], ...]
    #: the classes and methods that run them, in that order
    source: str
    #: how the reasons of one step are ordered: the topic's place in Java's HashSet
    tie: Tie = Tie.RULES

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(c for step in self.steps for c in step)

    def step(self, check: Check) -> int:
        return next(i for i, step in enumerate(self.steps) if check in step)


_SILENT = (Check.UNCHECKED_JOIN,), (Check.UNCHECKED_STATE,), (Check.UNSEEN_STATE,)

#: The order of each protocol's checks, read in each release line migcheck supports (the
#: class files of 3.6.2, 3.7.2, 3.8.1, 3.9.2, 4.0.2, 4.1.1, 4.2.1 and 4.3.1 from Maven
#: Central; the source of 3.6 to 3.9).  The silent checks come last: they trip nothing.
CHECK_ORDERS: Mapping[Protocol, CheckOrder] = {
    # StreamsPartitionAssignor.assign calls prepareRepartitionTopics -> RepartitionTopics
    # .setup(), which computes the repartition topics' counts, then (only when the app has
    # repartition topics) ensureCopartitioning -> CopartitionedTopicsEnforcer.enforce
    # ("Topics not co-partitioned"), then InternalTopicManager.makeReady (the repartition
    # topics: "Existing internal topic ... has invalid partitions"); only then
    # assignTasksToClients -> ChangelogTopics.setup() -> makeReady (the changelogs).
    Protocol.CLASSIC: CheckOrder(
        Protocol.CLASSIC,
        ("3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3"),
        ((Check.COPARTITION,), (Check.REPARTITION,), (Check.CHANGELOG,), *_SILENT),
        "StreamsPartitionAssignor.assign: RepartitionTopics.setup (ensureCopartitioning, "
        "then InternalTopicManager.makeReady), then assignTasksToClients: "
        "ChangelogTopics.setup",
    ),
    # group-coordinator's streams.topics.InternalTopicManager.configureTopics:
    # decidePartitionCounts (RepartitionTopics.setup(), enforceCopartitioning ->
    # CopartitionedTopicsEnforcer.enforce: "Following topics do not have the same number
    # of partitions", ChangelogTopics.setup()), then missingInternalTopics, one pass over
    # StreamsTopology.requiredTopics() that throws at the first existing internal topic
    # of another count: repartition topics and changelogs alike, in the set's order.
    Protocol.STREAMS: CheckOrder(
        Protocol.STREAMS,
        ("4.1", "4.2", "4.3"),
        ((Check.COPARTITION,), (Check.REPARTITION, Check.CHANGELOG), *_SILENT),
        "InternalTopicManager.configureTopics: decidePartitionCounts "
        "(enforceCopartitioning), then missingInternalTopics over "
        "StreamsTopology.requiredTopics()",
        tie=Tie.HASHSET,
    ),
}

#: Each protocol's checks in order, one after another (:data:`CHECK_ORDERS` has the steps).
CHECK_ORDER: dict[Protocol, tuple[Check, ...]] = {p: o.checks for p, o in CHECK_ORDERS.items()}


@dataclass(frozen=True)
class Reason:
    """Why a sub-topology gets its verdict; ``topics`` names every topic involved."""

    level: AppLevel
    subtopology: int
    text: str
    check: Check
    topics: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()


@dataclass(frozen=True)
class AppVerdict:
    level: AppLevel
    reasons: tuple[Reason, ...]
    subtopologies: dict[int, AppLevel]
    tasks: dict[int, tuple[int, int]]  # sub-topology -> (tasks today, tasks after the change)


def external_counts(app: App) -> dict[str, int]:
    """Today's counts of the topology's source topics that are not internal."""
    return {
        t: app.counts[t]
        for sub in app.topology.subtopologies
        for t in sub.source_topics
        if not app.is_repartition(t) and t in app.counts
    }


def health(app: App) -> tuple[Reason, ...]:
    """Internal topics that already disagree with their sources: someone altered a topic.

    Each one is the error the app will hit at its next rebalance, if it is not
    already down with it.
    """
    today = sizes(app, external_counts(app), checked=True)
    return tuple(
        Reason(
            AppLevel.CRASH,
            -1,
            app.invalid(topic, expected, app.counts[topic]),
            Check.REPARTITION if app.framework.is_repartition(topic) else Check.CHANGELOG,
            (topic,),
        )
        for topic, expected in today.internal.items()
        if topic in app.counts and app.counts[topic] != expected
    )


def not_copartitioned(protocol: Protocol, counts: Mapping[str, int]) -> str:
    """The error for joined topics of unequal counts (CopartitionedTopicsEnforcer; the
    same format strings in Kafka Streams 3.9.2 and 4.3.1)."""
    listed = ", ".join(f"{t}={n}" for t, n in sorted(counts.items()))
    if protocol == Protocol.STREAMS:
        return (
            "Invalid topology: Following topics do not have the same number of partitions: "
            f"[{{{listed}}}]"
        )
    return f"Topics not co-partitioned: [{{{listed}}}]"


def unchecked_join_timeout(counts: Mapping[str, int]) -> str:
    """Classic Streams without repartition topics never checks co-partitioning (FINDINGS.md)."""
    listed = ", ".join(f"{t}={n}" for t, n in sorted(counts.items()))
    return (
        f"joined topics are not co-partitioned ({listed}), and the classic protocol does not "
        "check it when the app has no repartition topic: the tasks of the extra partitions "
        "wait for partitions that do not exist, the app stays in REBALANCING, and after "
        'task.timeout.ms (default 300000 ms) it dies with "TimeoutException: Task ... did not '
        'make progress"'
    )


def verdict(app: App, proposed: Mapping[str, int]) -> AppVerdict:
    """The verdict when the topics in ``proposed`` get those partition counts.

    ``proposed`` may name source topics and internal topics (by full name, e.g.
    a changelog widened by hand).  Reasons come in the order Kafka Streams
    checks them, so the first CRASH reason is the error it will print.
    """
    before = external_counts(app)
    after = {**before, **{t: n for t, n in proposed.items() if t in before}}
    changed = replace(app, counts={**app.counts, **proposed})
    old, new = sizes(app, before, checked=True), sizes(changed, after, checked=True)
    change = Change(changed, app.counts, after, old, new)
    reasons: list[Reason] = []
    levels: dict[int, AppLevel] = {}
    for sub in app.topology.subtopologies:
        found = [] if sub.is_global else _subtopology_reasons(change, sub)
        reasons += found
        levels[sub.id] = worst([r.level for r in found])
    old, new = change.old, change.new
    tasks = {sub: (old.tasks[sub], new.tasks.get(sub, 0)) for sub in old.tasks}
    return AppVerdict(worst(list(levels.values())), in_check_order(app, reasons), levels, tasks)


def in_check_order(app: App, reasons: Sequence[Reason]) -> tuple[Reason, ...]:
    """``reasons`` in the order the app's protocol checks them (:data:`CHECK_ORDERS`), so
    that the first CRASH is the error it prints."""
    order = CHECK_ORDERS[app.protocol]
    place: dict[str, int] = {}
    if order.tie is Tie.HASHSET:
        place = {t: i for i, t in enumerate(hashset_order(app.required_topics()))}

    def key(r: Reason) -> tuple[int, int]:
        step = order.step(r.check)
        tied = len(order.steps[step]) > 1 and r.topics
        return step, (place.get(r.topics[0], len(place)) if tied else 0)

    return tuple(sorted(reasons, key=key))


# --- the rules: one function per check, in one registry ----------------------------------


@dataclass(frozen=True)
class Change:
    """A proposed change as every rule sees it."""

    app: App  # with the proposed counts
    before: Mapping[str, int]  # every topic's count today
    after: Mapping[str, int]  # the external sources' counts after the change
    old: Sizes
    new: Sizes

    def moves_keys(self, sub: SubTopology) -> bool:
        """Whether the sub-topology's tasks, or any of its sources' counts, change."""
        app = self.app
        return self.new.tasks[sub.id] != self.old.tasks[sub.id] or any(
            app.counts.get(_full(app, t)) != self.before.get(_full(app, t))
            for t in sub.source_topics
        )


@dataclass(frozen=True)
class Rule:
    """A check Kafka Streams runs (or that nothing runs), as a function of the change.

    A CORRUPT rule is asked only when the sub-topology's keys move and no CRASH
    rule found anything: a crash stops the app before state can go wrong.
    """

    check: Check
    level: AppLevel
    find: Callable[[Change, SubTopology], list[Reason]]


def _subtopology_reasons(change: Change, sub: SubTopology) -> list[Reason]:
    crashes = _found(AppLevel.CRASH, change, sub)
    if crashes or not change.moves_keys(sub):
        return crashes
    return _found(AppLevel.CORRUPT, change, sub)


def _found(level: AppLevel, change: Change, sub: SubTopology) -> list[Reason]:
    """The reasons of every rule of ``level``, in :data:`STREAMS_RULES`' order."""
    return [r for rule in STREAMS_RULES if rule.level == level for r in rule.find(change, sub)]


def _repartition_crashes(c: Change, sub: SubTopology) -> list[Reason]:
    """Repartition topics this sub-topology writes, left at a count Streams rejects."""
    if not c.app.framework.checks_repartition:
        return []  # it keeps the count it was created with, as a fixed size
    topics = [c.app.internal(t) for t in sub.sink_topics if c.app.is_repartition(t)]
    return _internal_crashes(c, sub, topics, Check.REPARTITION)


def _changelog_crashes(c: Change, sub: SubTopology) -> list[Reason]:
    """Its stores' changelogs, left at a count Streams rejects."""
    topics = [c.app.changelog(store) for store in sub.stores]
    return _internal_crashes(c, sub, topics, Check.CHANGELOG)


def _internal_crashes(c: Change, sub: SubTopology, topics: list[str], check: Check) -> list[Reason]:
    """Internal topics the change leaves at a count Streams will not accept.

    Only topics the change touches (their expected or actual count differs from
    today) are reasons; a mismatch that exists today is :func:`health`'s business.
    """
    reasons = []
    for topic in topics:
        if topic not in c.app.counts:
            continue
        expected, actual = c.new.internal[topic], c.app.counts[topic]
        touched = expected != c.old.internal.get(topic) or actual != c.before.get(topic)
        if touched and expected != actual:
            text = c.app.invalid(topic, expected, actual)
            reasons.append(Reason(AppLevel.CRASH, sub.id, text, check, (topic,)))
    return reasons


def _full(app: App, topic: str) -> str:
    """A topic's name on the cluster: internal topics carry the application id."""
    return app.internal(topic) if app.is_repartition(topic) else topic


def _unequal_joined(c: Change, sub: SubTopology) -> dict[str, int]:
    """The joined source topics' counts after the change, when they differ."""
    if not copartitioned(c.app, sub):
        return {}
    app = c.app
    plain = {t: c.after[t] for t in sub.source_topics if not app.is_repartition(t) and t in c.after}
    return plain if len(set(plain.values())) > 1 else {}


def _unchecked_join(app: App) -> bool:
    """Classic Streams checks co-partitioning only inside its repartition-topic setup."""
    return app.protocol == Protocol.CLASSIC and not app.has_repartition_topics


def _copartition_crash(c: Change, sub: SubTopology) -> list[Reason]:
    plain = _unequal_joined(c, sub)
    if not plain or _unchecked_join(c.app):
        return []
    text = not_copartitioned(c.app.protocol, plain)
    return [Reason(AppLevel.CRASH, sub.id, text, Check.COPARTITION, tuple(sorted(plain)))]


def _unchecked_join_crash(c: Change, sub: SubTopology) -> list[Reason]:
    plain = _unequal_joined(c, sub)
    if not plain or not _unchecked_join(c.app):
        return []
    text = unchecked_join_timeout(plain)
    return [Reason(AppLevel.CRASH, sub.id, text, Check.UNCHECKED_JOIN, tuple(sorted(plain)))]


def _unchecked_state(c: Change, sub: SubTopology) -> list[Reason]:
    """Stores whose keys move while nothing checks them: no changelog, or one that already
    has the new count."""
    app = c.app
    silent = [
        store
        for store in sub.stores
        if app.counts.get(app.changelog(store)) in (None, c.new.internal[app.changelog(store)])
    ]
    if not silent:
        return []
    kinds = []
    for store in silent:
        if app.changelog(store) in app.counts:
            kinds.append(
                f"{store} (its changelog {app.changelog(store)} already has the new count)"
            )
        else:
            kinds.append(f"{store} (no changelog: logging disabled or a source topic as changelog)")
    text = (
        "keys change partition while their state stays in the old task, and nothing checks it: "
        + "; ".join(kinds)
    )
    topics = tuple(sorted(set(sub.source_topics)))
    return [Reason(AppLevel.CORRUPT, sub.id, text, Check.UNCHECKED_STATE, topics, tuple(silent))]


def _unseen_state(c: Change, sub: SubTopology) -> list[Reason]:
    """Keys move and no store is visible, on a model that may not show every store."""
    if c.app.stores_known or sub.stores:
        return []
    text = f"its keys change partition and no store of it is visible: {c.app.framework.unseen}"
    topics = tuple(sorted(set(sub.source_topics)))
    return [Reason(AppLevel.CORRUPT, sub.id, text, Check.UNSEEN_STATE, topics)]


#: Every rule, once.  A new check is a :class:`Check` member, its step in each
#: protocol's :data:`CHECK_ORDERS`, and a function here (tests/unit/test_streams_rules.py
#: holds all three together).
STREAMS_RULES: tuple[Rule, ...] = (
    Rule(Check.REPARTITION, AppLevel.CRASH, _repartition_crashes),
    Rule(Check.CHANGELOG, AppLevel.CRASH, _changelog_crashes),
    Rule(Check.COPARTITION, AppLevel.CRASH, _copartition_crash),
    Rule(Check.UNCHECKED_JOIN, AppLevel.CRASH, _unchecked_join_crash),
    Rule(Check.UNCHECKED_STATE, AppLevel.CORRUPT, _unchecked_state),
    Rule(Check.UNSEEN_STATE, AppLevel.CORRUPT, _unseen_state),
)
