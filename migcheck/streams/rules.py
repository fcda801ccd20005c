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
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from migcheck.streams.topology import SubTopology, Topology

RESET_HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool "
    "to clean up invalid topics before processing."
)


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

    def internal(self, name: str) -> str:
        return f"{self.app_id}-{name}"

    def changelog(self, store: str) -> str:
        return self.internal(f"{store}-changelog")

    @functools.cached_property
    def _sinks(self) -> frozenset[str]:
        return frozenset(t for sub in self.topology.subtopologies for t in sub.sink_topics)

    def is_repartition(self, topic: str) -> bool:
        """A ``-repartition`` topic the topology writes, or that exists as an internal topic."""
        return topic.endswith("-repartition") and (
            topic in self._sinks or self.internal(topic) in self.counts
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


@dataclass(frozen=True)
class Verdict:
    level: AppLevel
    reasons: tuple[Reason, ...]
    subtopologies: dict[int, AppLevel]


def external_counts(app: App) -> dict[str, int]:
    """Today's counts of the topology's source topics that are not internal."""
    return {
        t: app.counts[t]
        for sub in app.topology.subtopologies
        for t in sub.source_topics
        if not app.is_repartition(t) and t in app.counts
    }


def health(app: App) -> tuple[Reason, ...]:
    """Internal topics that already disagree with their sources: someone altered a topic."""
    today = sizes(app, external_counts(app))
    return tuple(
        Reason(AppLevel.CRASH, -1, invalid_partitions(topic, expected, app.counts[topic]), (topic,))
        for topic, expected in today.internal.items()
        if topic in app.counts and app.counts[topic] != expected
    )


def invalid_partitions(topic: str, expected: int, actual: int) -> str:
    """The error Kafka Streams raises for an internal topic of the wrong size."""
    return (
        f"Existing internal topic {topic} has invalid partitions: "
        f"expected: {expected}; actual: {actual}. {RESET_HINT}"
    )


def verdict(app: App, proposed: Mapping[str, int]) -> Verdict:
    """The verdict when the topics in ``proposed`` get those partition counts."""
    before = external_counts(app)
    after = {**before, **{t: n for t, n in proposed.items() if t in before}}
    old, new = sizes(app, before), sizes(app, after)
    reasons: list[Reason] = []
    levels: dict[int, AppLevel] = {}
    for sub in app.topology.subtopologies:
        found = [] if sub.is_global else _subtopology_reasons(app, sub, before, after, old, new)
        reasons += found
        levels[sub.id] = worst([r.level for r in found])
    return Verdict(worst(list(levels.values())), tuple(reasons), levels)


def _subtopology_reasons(
    app: App,
    sub: SubTopology,
    before: Mapping[str, int],
    after: Mapping[str, int],
    old: Sizes,
    new: Sizes,
) -> list[Reason]:
    reasons = _copartition_crash(app, sub, after)
    for t in sub.sink_topics:
        full = app.internal(t)
        if app.is_repartition(t) and full in app.counts and new.internal[full] != app.counts[full]:
            reasons.append(_crash(sub, full, new.internal[full], app.counts[full]))
    keys_move = any(after.get(t) != before.get(t) for t in sub.source_topics)
    if new.tasks[sub.id] == old.tasks[sub.id] and not keys_move:
        return reasons
    silent: list[str] = []
    for store in sub.stores:
        changelog = app.changelog(store)
        if changelog not in app.counts:
            silent.append(store)
        elif app.counts[changelog] != new.internal[changelog]:
            reasons.append(_crash(sub, changelog, new.internal[changelog], app.counts[changelog]))
        else:  # the changelog already has the new count: nothing will check
            silent.append(store)
    if silent and not any(r.level == AppLevel.CRASH for r in reasons):
        reasons.append(_corrupt(app, sub, silent))
    return reasons


def _crash(sub: SubTopology, topic: str, expected: int, actual: int) -> Reason:
    return Reason(AppLevel.CRASH, sub.id, invalid_partitions(topic, expected, actual), (topic,))


def _copartition_crash(app: App, sub: SubTopology, after: Mapping[str, int]) -> list[Reason]:
    if not _copartitioned(sub):
        return []
    plain = {t: after[t] for t in sub.source_topics if not app.is_repartition(t) and t in after}
    if len(set(plain.values())) <= 1:
        return []
    listed = ", ".join(f"{t}={n}" for t, n in sorted(plain.items()))
    return [
        Reason(
            AppLevel.CRASH,
            sub.id,
            f"Topics not co-partitioned: [{{{listed}}}]",
            tuple(sorted(plain)),
        )
    ]


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
