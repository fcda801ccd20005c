"""The application model a verdict is judged on, from what is known about the app.

Three sources, best first:

1. ``--topology``: the app's own ``Topology#describe()``.  It lists every
   sub-topology and store, but not whether a store logs to a changelog, nor
   whether a repartition topic's size was fixed (``Repartitioned``): those come
   from the topics that exist on the cluster.
2. The broker's description of a *streams* group (KIP-1071): sub-topologies,
   logged stores and fixed repartition sizes, but no store with logging
   disabled.
3. Inference from the internal topics' names and counts, when neither is
   available: a changelog whose count equals a source's belongs to a stateful
   sub-topology of that source.

Everything here is pure: discovery (:mod:`migcheck.streams.discovery`) brings
the facts, this module only reasons about them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from migcheck.kafka.groups import StreamsSubtopology
from migcheck.model.readers import ReaderKind
from migcheck.model.topics import CHANGELOG_SUFFIX, is_repartition_name
from migcheck.readers.naming import quix_nested, quix_topic
from migcheck.streams.frameworks import KAFKA_STREAMS, Framework, Protocol
from migcheck.streams.rules import App, sizes
from migcheck.streams.topology import Node, SubTopology, Topology


class Basis(StrEnum):
    """What the verdict's model of the application came from."""

    TOPOLOGY = "topology"  # --topology: the app's describe()
    BROKER = "broker"  # the streams group's topology, as the broker describes it
    INFERRED = "inferred"  # internal topic names and partition counts


#: What ``--topology`` would add to a verdict built on each basis.
WOULD_ADD = {
    Basis.TOPOLOGY: "",
    Basis.BROKER: (
        "the broker lists only stores that log to a changelog; --topology would show stores "
        "with logging disabled and source topics reused as changelogs"
    ),
    Basis.INFERRED: (
        "the verdict was inferred from internal topic names and counts; --topology would add "
        "stores with logging disabled, source topics reused as changelogs, which topics are "
        "joined (co-partitioned), and which sub-topology each store belongs to"
    ),
}


@dataclass(frozen=True)
class Facts:
    """What discovery found: today's counts of the app's topics, by full name."""

    app_id: str
    sources: Mapping[str, int]  # external topics the group reads
    internal: Mapping[str, int]  # the framework's changelog and repartition topics
    protocol: Protocol = Protocol.CLASSIC
    framework: Framework = KAFKA_STREAMS

    def bare(self, topic: str) -> str:
        """An internal topic's name in the topology: without ``<application.id>-``."""
        prefix = f"{self.app_id}-"
        return topic[len(prefix) :] if topic.startswith(prefix) else topic

    @property
    def counts(self) -> dict[str, int]:
        return {**self.sources, **self.internal}


@dataclass(frozen=True)
class Model:
    """The app the rules judge, what it was built from, and what the report should say."""

    app: App
    basis: Basis
    notes: tuple[str, ...] = field(default_factory=tuple)


def from_topology(
    facts: Facts,
    topology: Topology,
    fixed: Sequence[str] = (),
    extra: Mapping[str, int] | None = None,
) -> Model:
    """The app as ``describe()`` shows it; fixed repartition sizes found or given.

    ``fixed`` names repartition topics (as in the topology) that the user says
    the app sized with ``Repartitioned.withNumberOfPartitions``; ``extra`` holds
    counts of other topics the topology reads (e.g. a global table's topic).
    """
    counts = {**(extra or {}), **facts.counts}
    bare = _app(facts, topology, counts)
    found, ambiguous = _fixed_by_counts(bare)
    chosen = {**found, **{t: counts[bare.internal(t)] for t in fixed if bare.internal(t) in counts}}
    app = _app(facts, topology, counts, chosen)
    return Model(app, Basis.TOPOLOGY, _ambiguity_notes(facts.app_id, ambiguous, chosen))


def from_broker(
    facts: Facts, described: Sequence[StreamsSubtopology], fixed: Sequence[str] = ()
) -> Model:
    """The app as a streams group's broker describes it: exact sub-topologies and logged
    stores, but no store with logging disabled (so state may be unseen), and resolved
    repartition counts (so a fixed size shows only where it differs from upstream)."""
    topology = Topology([_broker_sub(facts, i, d) for i, d in enumerate(described)])
    bare = _app(facts, topology, facts.counts)
    found, ambiguous = _fixed_by_counts(bare)
    chosen = {
        **found,
        **{t: facts.counts[bare.internal(t)] for t in fixed if bare.internal(t) in facts.counts},
    }
    app = _app(facts, topology, facts.counts, chosen, stores_known=False)
    return Model(app, Basis.BROKER, _ambiguity_notes(facts.app_id, ambiguous, chosen))


def _app(
    facts: Facts,
    topology: Topology,
    counts: Mapping[str, int],
    fixed: Mapping[str, int] | None = None,
    stores_known: bool = True,
) -> App:
    return App(
        facts.app_id, topology, counts, fixed or {}, facts.protocol, stores_known, facts.framework
    )


def _broker_sub(facts: Facts, index: int, d: StreamsSubtopology) -> SubTopology:
    """One described sub-topology; each source topic its own node, as a join reads them."""
    sub_id = int(d.subtopology_id) if d.subtopology_id.isdigit() else index
    sources = [*d.source_topics, *(facts.bare(t.name) for t in d.repartition_source_topics)]
    nodes = [Node("source", f"source-{t}", topics=(t,)) for t in sources]
    nodes += [
        Node("processor", f"store-{s}", stores=(s,))
        for s in (facts.bare(t.name)[: -len(CHANGELOG_SUFFIX)] for t in d.state_changelog_topics)
    ]
    sinks = tuple(facts.bare(t) for t in d.repartition_sink_topics)
    if sinks:
        nodes.append(Node("sink", "repartition-sinks", topics=sinks))
    return SubTopology(sub_id, nodes=nodes)


def _ambiguity_notes(
    app_id: str, ambiguous: Sequence[str], chosen: Mapping[str, int]
) -> tuple[str, ...]:
    return tuple(
        f"repartition topic {app_id}-{t} has the count its upstream gives it; if the app "
        f"fixed its size (Repartitioned.withNumberOfPartitions), pass --fixed-repartition {t}"
        for t in ambiguous
        if t not in chosen
    )


def _fixed_by_counts(app: App) -> tuple[dict[str, int], list[str]]:
    """Repartition topics whose count differs from what upstream gives them are fixed;
    those whose count agrees may or may not be (the ambiguous ones)."""
    expected = sizes(app, {t: n for t, n in app.counts.items() if not app.is_repartition(t)})
    fixed: dict[str, int] = {}
    ambiguous: list[str] = []
    for sub in app.topology.subtopologies:
        for t in sub.sink_topics:
            full = app.internal(t)
            if not app.is_repartition(t) or full not in app.counts:
                continue
            if app.counts[full] != expected.internal.get(full):
                fixed[t] = app.counts[full]
            else:
                ambiguous.append(t)
    return fixed, ambiguous


def inferred(facts: Facts, fixed: Sequence[str] = ()) -> Model:
    """An app built from topic names and counts alone (see the module docstring)."""
    repartitions = {facts.bare(t): n for t, n in facts.internal.items() if is_repartition_name(t)}
    stores = {
        facts.bare(t)[: -len(CHANGELOG_SUFFIX)]: n
        for t, n in facts.internal.items()
        if t.endswith(CHANGELOG_SUFFIX)
    }
    by_count: dict[int, list[str]] = {}
    for topic, n in sorted(facts.sources.items()):
        by_count.setdefault(n, []).append(topic)
    subs = [
        _inferred_sub(i, topics, sinks=[r for r, m in repartitions.items() if m == n])
        for i, (n, topics) in enumerate(sorted(by_count.items()))
    ]
    unfixed = {r for s in subs for r in s.sink_topics}
    orphans = [r for r in repartitions if r not in unfixed]
    if subs and orphans:  # a count no source has: the app fixed it; someone upstream writes it
        subs[0].nodes.append(Node("sink", "inferred-sink", topics=tuple(orphans)))
    subs += [_inferred_sub(len(subs) + i, [r]) for i, r in enumerate(repartitions)]
    _place_stores(subs, stores, repartitions, facts)
    topology = Topology(subs)
    chosen = {r: repartitions[r] for r in [*orphans, *fixed] if r in repartitions}
    app = _app(facts, topology, facts.counts, chosen, stores_known=False)
    return Model(app, Basis.INFERRED)


def _inferred_sub(sub_id: int, topics: list[str], sinks: Sequence[str] = ()) -> SubTopology:
    sub = SubTopology(sub_id, nodes=[Node("source", "inferred-source", topics=tuple(topics))])
    if sinks:
        sub.nodes.append(Node("sink", "inferred-sink", topics=tuple(sinks)))
    return sub


def _place_stores(
    subs: list[SubTopology],
    stores: Mapping[str, int],
    repartitions: Mapping[str, int],
    facts: Facts,
) -> None:
    """Each store joins a sub-topology of its changelog's count: behind a repartition topic
    first (aggregations follow a groupBy), else a source's; an orphan joins the first one,
    where the health check shows its mismatch."""
    counts = {**facts.sources, **repartitions}
    for store, n in sorted(stores.items()):
        home = next(
            (s for s in reversed(subs) if any(counts.get(t) == n for t in s.source_topics)),
            subs[0] if subs else None,
        )
        if home is not None:
            home.nodes.append(Node("processor", f"inferred-{store}", stores=(store,)))


def quix(facts: Facts) -> Model:
    """A Quix Streams app from its internal topics' names (its TopicManager's rule,
    :func:`~migcheck.readers.naming.quix_topic`): a sub-topology per stream, its sources
    the stream's topics, its stores those its changelogs name, its sinks the group-bys
    it writes; and one per source topic that shows no state, which may keep state without
    a changelog (``use_changelog_topics=False``).  Quix checks no repartition topic's
    count: each keeps the count it was created with, so each is fixed."""
    group = facts.app_id
    parsed = {t: quix_topic(group, t) for t in sorted(facts.internal)}
    named = {quix_nested(group, t): t for t, q in parsed.items() if q and q.kind == "repartition"}
    subs: dict[str, SubTopology] = {}
    for topic, q in parsed.items():
        if q is None:
            continue
        sub = _stream_sub(subs, q.stream, _stream_topics(q.stream, facts.sources, named))
        if q.kind == "changelog":
            sub.nodes.append(Node("processor", q.suffix, stores=(f"{q.stream}--{q.suffix}",)))
        else:
            sub.nodes.append(Node("sink", q.suffix, topics=(topic,)))
    for source in sorted(facts.sources):
        if not any(source in s.source_topics for s in subs.values()):
            _stream_sub(subs, source, [source])
    fixed = {t: facts.internal[t] for t in named.values()}
    # use_changelog_topics is app-wide: one changelog shows that every store has one
    logged = any(q and q.kind == "changelog" for q in parsed.values())
    app = _app(facts, Topology(list(subs.values())), facts.counts, fixed, stores_known=logged)
    return Model(app, Basis.INFERRED)


def faust(facts: Facts) -> Model:
    """A Faust app from its topics' names (:func:`~migcheck.readers.naming.faust_topics`):
    inferred as a Kafka Streams app's are, a table's changelog ``<app id>-<table>-changelog``
    placed with the source of its count (Faust requires the two equal).  Every table logs
    to its changelog, so the stores are known; a ``group_by``'s topic keeps the count it
    was created with (``topic_partitions``): Faust checks no repartition topic's count."""
    repartitions = [facts.bare(t) for t in facts.internal if is_repartition_name(t)]
    model = inferred(facts, repartitions)
    return replace(model, app=replace(model.app, stores_known=True))


#: The frameworks whose topics' names are the whole model (no --topology).
FROM_NAMES: Mapping[ReaderKind, Callable[[Facts], Model]] = {
    ReaderKind.QUIX_STREAMS: quix,
    ReaderKind.FAUST: faust,
}


def _stream_sub(subs: dict[str, SubTopology], stream: str, topics: Sequence[str]) -> SubTopology:
    if stream not in subs:
        source = Node("source", stream, topics=tuple(topics))
        subs[stream] = SubTopology(len(subs), nodes=[source])
    return subs[stream]


def _stream_topics(stream: str, sources: Mapping[str, int], named: Mapping[str, str]) -> list[str]:
    """The topics of a Quix stream id: a source, a repartition topic (by its nested name),
    or the sorted names of several topics joined by ``--``."""
    if stream in sources or stream in named:
        return [named.get(stream, stream)]
    return [named.get(part, part) for part in stream.split("--")]


def offline(app_id: str, topology: Topology, partitions: Mapping[str, int]) -> Model:
    """An app from its ``describe()`` and the counts a user gives, with no cluster to ask.

    ``partitions`` names source topics, and repartition topics (as in the
    topology) whose size the app fixed.  Every store is taken to log to a
    changelog (Kafka Streams' default) and every internal topic to have the
    count Streams gives it: a healthy app, which is what a plan assumes.
    """
    bare = App(app_id, topology, {})
    fixed = {t: n for t, n in partitions.items() if bare.is_repartition(t)}
    sources = {t: n for t, n in partitions.items() if t not in fixed}
    app = App(app_id, topology, sources, fixed)
    counts = {**sources, **sizes(app, sources).internal}
    note = (
        "offline: every store is taken to log to a changelog and every internal topic to have "
        "the count Kafka Streams gives it"
    )
    return Model(App(app_id, topology, counts, fixed), Basis.TOPOLOGY, (note,))
