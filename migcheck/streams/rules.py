"""What a partition change does to a Kafka Streams application: CRASH, CORRUPT or SAFE.

Pure functions over a :class:`~migcheck.streams.topology.Topology` and the
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

A change that trips none of those checks but moves keys away from the task
that holds their state corrupts it silently: a store without a changelog
(logging disabled, or a source topic reused as its changelog), or a changelog
already widened to the new count.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from migcheck.streams.topology import SubTopology, Topology

RESET_HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool "
    "to clean up invalid topics before processing."
)


#: Internal topics that carry records between sub-topologies: ``-repartition`` topics and
#: the foreign-key join's subscription topics (``...-SUBSCRIPTION-REGISTRATION-0000000006-topic``).
_REPARTITION = re.compile(r"(-repartition|-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic)$")


def is_repartition_name(topic: str) -> bool:
    """Whether a topic's name is that of a repartition (or foreign-key join) topic."""
    return bool(_REPARTITION.search(topic))


class Protocol(StrEnum):
    """The rebalance protocol: it decides which check fails first and how the error reads."""

    CLASSIC = "classic"  # the leader's StreamsPartitionAssignor validates internal topics
    STREAMS = "streams"  # KIP-1071: the broker's group coordinator validates the topology


class AppLevel(StrEnum):
    """A verdict, from best to worst; the worst over sub-topologies is the application's."""

    SAFE = "SAFE"
    CORRUPT = "CORRUPT"
    CRASH = "CRASH"


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

    def internal(self, name: str) -> str:
        return f"{self.app_id}-{name}"

    def changelog(self, store: str) -> str:
        return self.internal(f"{store}-changelog")

    @functools.cached_property
    def _sinks(self) -> frozenset[str]:
        return frozenset(t for sub in self.topology.subtopologies for t in sub.sink_topics)

    def is_repartition(self, topic: str) -> bool:
        """A repartition topic the topology writes, or that exists as an internal topic."""
        return is_repartition_name(topic) and (
            topic in self._sinks or self.internal(topic) in self.counts
        )

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


def sizes(app: App, external: Mapping[str, int]) -> Sizes:
    """The task and internal-topic counts Streams computes when sources have ``external`` counts."""
    tasks: dict[int, int] = {}
    repartition: dict[str, int] = dict(app.fixed)
    pending = [s for s in app.topology.subtopologies if not s.is_global]
    while pending:
        progressed = False
        for sub in list(pending):
            counts = _source_counts(app, sub, external, repartition)
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
                counts = _source_counts(app, sub, external, repartition, allow_unknown=True) or {}
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
) -> dict[str, int] | None:
    counts: dict[str, int] = {}
    for t in sub.source_topics:
        if app.is_repartition(t):
            if t in repartition:
                counts[t] = repartition[t]
            elif allow_unknown and app.internal(t) in app.counts:
                counts[t] = app.counts[app.internal(t)]
            elif not allow_unknown:
                return None
        elif t in external:
            counts[t] = external[t]
    if _copartitioned(sub):  # a repartition topic joined with others takes their count
        plain = [n for t, n in counts.items() if not app.is_repartition(t)]
        if plain:
            counts = {t: (max(plain) if app.is_repartition(t) else n) for t, n in counts.items()}
    return counts


def _copartitioned(sub: SubTopology) -> bool:
    """Sources joined in one stateful sub-topology must be co-partitioned (a join)."""
    sources = [n for n in sub.nodes if n.kind == "source" and n.topics]
    return len(sources) > 1 and bool(sub.stores)


@dataclass(frozen=True)
class Reason:
    """Why a sub-topology gets its verdict; ``topics`` names every topic involved."""

    level: AppLevel
    subtopology: int
    text: str
    topics: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    check: str = ""  # "repartition", "copartition", "changelog", "stall" or "" (none trips)


@dataclass(frozen=True)
class Verdict:
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
    today = sizes(app, external_counts(app))
    return tuple(
        Reason(
            AppLevel.CRASH,
            -1,
            invalid_partitions(app.protocol, topic, expected, app.counts[topic]),
            (topic,),
            check="repartition" if _REPARTITION.search(topic) else "changelog",
        )
        for topic, expected in today.internal.items()
        if topic in app.counts and app.counts[topic] != expected
    )


def invalid_partitions(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    """The error Kafka Streams raises for an internal topic of the wrong size.

    Classic: InternalTopicManager's StreamsException in the group leader.  Streams
    protocol: the broker reports INCORRECTLY_PARTITIONED_TOPICS and the client
    throws a TopologyException (both texts as Kafka 4.3 prints them).
    """
    if protocol == Protocol.STREAMS:
        return (
            f"Invalid topology: Existing topic {topic} has different number of partitions: "
            f"expected {expected}, found {actual}"
        )
    return (
        f"Existing internal topic {topic} has invalid partitions: "
        f"expected: {expected}; actual: {actual}. {RESET_HINT}"
    )


def not_copartitioned(protocol: Protocol, counts: Mapping[str, int]) -> str:
    """The error for joined topics of unequal counts (CopartitionedTopicsEnforcer)."""
    listed = ", ".join(f"{t}={n}" for t, n in sorted(counts.items()))
    if protocol == Protocol.STREAMS:
        return (
            "Invalid topology: Following topics do not have the same number of partitions: "
            f"[{{{listed}}}]"
        )
    return f"Topics not co-partitioned: [{{{listed}}}]"


def stalled_join(counts: Mapping[str, int]) -> str:
    """Classic Streams without repartition topics never checks co-partitioning (FINDINGS.md)."""
    listed = ", ".join(f"{t}={n}" for t, n in sorted(counts.items()))
    return (
        f"joined topics are not co-partitioned ({listed}), and the classic protocol does not "
        "check it when the app has no repartition topic: the tasks of the extra partitions "
        "wait for partitions that do not exist, the app stays in REBALANCING, and after "
        'task.timeout.ms (default 300000 ms) it dies with "TimeoutException: Task ... did not '
        'make progress"'
    )


def verdict(app: App, proposed: Mapping[str, int]) -> Verdict:
    """The verdict when the topics in ``proposed`` get those partition counts.

    ``proposed`` may name source topics and internal topics (by full name, e.g.
    a changelog widened by hand).  Reasons come in the order Kafka Streams
    checks them, so the first CRASH reason is the error it will print.
    """
    before = external_counts(app)
    after = {**before, **{t: n for t, n in proposed.items() if t in before}}
    changed = replace(app, counts={**app.counts, **proposed})
    old, new = sizes(app, before), sizes(changed, after)
    reasons: list[Reason] = []
    levels: dict[int, AppLevel] = {}
    for sub in app.topology.subtopologies:
        found = (
            [] if sub.is_global else _subtopology_reasons(changed, sub, app.counts, after, old, new)
        )
        reasons += found
        levels[sub.id] = worst([r.level for r in found])
    tasks = {sub: (old.tasks[sub], new.tasks.get(sub, 0)) for sub in old.tasks}
    order = _kafka_order(app.protocol, reasons)
    return Verdict(worst(list(levels.values())), order, levels, tasks)


#: The order in which each protocol runs its checks.  Classic: RepartitionTopics.setup
#: (repartition topics, then co-partitioning) before ChangelogTopics.setup.  Streams: the
#: broker checks co-partitioning of the user's topics before the internal topics.
_CHECK_ORDER = {
    Protocol.CLASSIC: ("repartition", "copartition", "changelog", "stall", ""),
    Protocol.STREAMS: ("copartition", "repartition", "changelog", "stall", ""),
}


def _kafka_order(protocol: Protocol, reasons: list[Reason]) -> tuple[Reason, ...]:
    """Reasons in the order Kafka Streams checks them: the first CRASH is what it prints."""
    order = _CHECK_ORDER[protocol]
    return tuple(sorted(reasons, key=lambda r: order.index(r.check)))


def _subtopology_reasons(
    app: App,
    sub: SubTopology,
    counts_before: Mapping[str, int],
    after: Mapping[str, int],
    old: Sizes,
    new: Sizes,
) -> list[Reason]:
    """``app`` carries the proposed counts; ``counts_before`` today's."""
    reasons = _internal_crashes(app, sub, counts_before, old, new)
    reasons += _copartition_crash(app, sub, after)
    moved = new.tasks[sub.id] != old.tasks[sub.id] or any(
        app.counts.get(_full(app, t)) != counts_before.get(_full(app, t)) for t in sub.source_topics
    )
    if not moved:
        return reasons
    silent = [
        store
        for store in sub.stores
        if app.counts.get(app.changelog(store)) in (None, new.internal[app.changelog(store)])
    ]
    if any(r.level == AppLevel.CRASH for r in reasons):
        return reasons
    if silent:
        reasons.append(_corrupt(app, sub, silent))
    elif not app.stores_known and not sub.stores:
        reasons.append(_unknown_state(sub))
    return reasons


def _unknown_state(sub: SubTopology) -> Reason:
    return Reason(
        AppLevel.CORRUPT,
        sub.id,
        "its keys change partition and no store of it is visible: without --topology a "
        "store with logging disabled, or a source topic used as a changelog, cannot be "
        "ruled out (pass the app's Topology#describe() with --topology to decide)",
        tuple(sorted(set(sub.source_topics))),
    )


def _internal_crashes(
    app: App, sub: SubTopology, counts_before: Mapping[str, int], old: Sizes, new: Sizes
) -> list[Reason]:
    """Internal topics the change leaves at a count Streams will not accept.

    Only topics the change touches (their expected or actual count differs from
    today) are reasons; a mismatch that exists today is :func:`health`'s business.
    """
    checks = [(app.internal(t), "repartition") for t in sub.sink_topics if app.is_repartition(t)]
    checks += [(app.changelog(store), "changelog") for store in sub.stores]
    reasons = []
    for topic, check in checks:
        if topic not in app.counts:
            continue
        expected, actual = new.internal[topic], app.counts[topic]
        touched = expected != old.internal.get(topic) or actual != counts_before.get(topic)
        if touched and expected != actual:
            reasons.append(_crash(app, sub, topic, expected, actual, check))
    return reasons


def _full(app: App, topic: str) -> str:
    """A topic's name on the cluster: internal topics carry the application id."""
    return app.internal(topic) if app.is_repartition(topic) else topic


def _crash(
    app: App, sub: SubTopology, topic: str, expected: int, actual: int, check: str
) -> Reason:
    text = invalid_partitions(app.protocol, topic, expected, actual)
    return Reason(AppLevel.CRASH, sub.id, text, (topic,), check=check)


def _copartition_crash(app: App, sub: SubTopology, after: Mapping[str, int]) -> list[Reason]:
    if not _copartitioned(sub):
        return []
    plain = {t: after[t] for t in sub.source_topics if not app.is_repartition(t) and t in after}
    if len(set(plain.values())) <= 1:
        return []
    topics = tuple(sorted(plain))
    if app.protocol == Protocol.CLASSIC and not app.has_repartition_topics:
        return [Reason(AppLevel.CRASH, sub.id, stalled_join(plain), topics, check="stall")]
    text = not_copartitioned(app.protocol, plain)
    return [Reason(AppLevel.CRASH, sub.id, text, topics, check="copartition")]


def _corrupt(app: App, sub: SubTopology, stores: list[str]) -> Reason:
    kinds = []
    for store in stores:
        if app.changelog(store) in app.counts:
            kinds.append(
                f"{store} (its changelog {app.changelog(store)} already has the new count)"
            )
        else:
            kinds.append(f"{store} (no changelog: logging disabled or a source topic as changelog)")
    return Reason(
        AppLevel.CORRUPT,
        sub.id,
        "keys change partition while their state stays in the old task, and nothing checks it: "
        + "; ".join(kinds),
        tuple(sorted(set(sub.source_topics))),
        tuple(stores),
    )
