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
   sub-topology of that source.  The cluster adds what it shows of which topics are
   read together: a table Kafka Streams named after its source topic
   (``<topic>-STATE-STORE-<n>``, a ``builder.table(topic)`` without a name) sits with
   that topic, and a running classic group's assignment names the sub-topology of
   each partition's task (:mod:`migcheck.kafka.streams_assignment`).

Which topics are joined decides the first check that fails (co-partitioning comes first),
so where the evidence neither shows nor rules out a join, the model is not one shape but
several: :attr:`Model.alternatives`, each with the condition under which it is the app.
:mod:`migcheck.apps.judgement` judges them all.

Everything here is pure: discovery (:mod:`migcheck.apps.discovery`) brings
the facts, this module only reasons about them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import combinations

from migcheck.apps.rules import App, sizes
from migcheck.frameworks.base import Framework
from migcheck.frameworks.topology import Node, SubTopology, Topology
from migcheck.kafka.groups import StreamsSubtopology
from migcheck.model.readers import Protocol
from migcheck.model.topics import CHANGELOG_SUFFIX, is_repartition_name
from migcheck.words import listing


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
    framework: Framework = field(kw_only=True)  # no default: every framework is a peer
    #: The topics a running classic group's tasks read, each to its sub-topology's id (a
    #: member's AssignmentInfo): topics of one id are read together.  Empty for a stopped
    #: app, or one on the streams protocol (whose broker describes its topology instead).
    read_together: Mapping[str, int] = field(default_factory=dict)

    def bare(self, topic: str) -> str:
        """An internal topic's name in the topology: without ``<application.id>-``."""
        prefix = f"{self.app_id}-"
        return topic[len(prefix) :] if topic.startswith(prefix) else topic

    @property
    def counts(self) -> dict[str, int]:
        return {**self.sources, **self.internal}


@dataclass(frozen=True)
class Scenario:
    """A shape of the app the evidence does not rule out, and when it is the app's."""

    app: App
    condition: str  # e.g. "orders and customers are joined (co-partitioned)"


@dataclass(frozen=True)
class Model:
    """The app the rules judge, what it was built from, and what the report should say.

    ``app`` is the shape the evidence shows; where it cannot tell whether topics are
    joined, ``alternatives`` are the other shapes it allows (one join each), and
    ``condition`` says when ``app`` is the app's.  Commands that need one shape (a plan,
    the stores a topic feeds) take ``app``; a verdict takes them all.
    """

    app: App
    basis: Basis
    notes: tuple[str, ...] = field(default_factory=tuple)
    alternatives: tuple[Scenario, ...] = ()
    condition: str | None = None


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
    notes = _ambiguity_notes(facts.app_id, ambiguous, chosen)
    maybe = [
        tuple(sorted(sub.source_topics))
        for sub, d in zip(topology.subtopologies, described, strict=True)
        if len(d.source_topics) > 1 and not sub.stores
    ]
    return _with_joins(Model(app, Basis.BROKER, notes), maybe, lambda group: app)


def _with_joins(
    model: Model, maybe: Sequence[tuple[str, ...]], shape: Callable[[tuple[str, ...]], App]
) -> Model:
    """``model`` with an alternative for each group of topics the evidence cannot tell
    joined or not: ``shape(group)`` is the app with that group read together, and the
    group joined (:attr:`App.joins`)."""
    if not maybe:
        return model
    alternatives = tuple(
        Scenario(
            replace(app, joins=(*app.joins, frozenset(group))),
            f"{listing(group)} are joined (co-partitioned)",
        )
        for group in maybe
        for app in [shape(group)]
    )
    groups = "; ".join(listing(g) for g in maybe)
    condition = f"none of these is joined: {groups}" if len(maybe) > 1 else None
    return replace(
        model,
        alternatives=alternatives,
        condition=condition or f"{listing(maybe[0])} are not joined",
    )


def _app(
    facts: Facts,
    topology: Topology,
    counts: Mapping[str, int],
    fixed: Mapping[str, int] | None = None,
    stores_known: bool = True,
) -> App:
    return App(
        facts.app_id, topology, counts, fixed or {}, facts.protocol, stores_known,
        framework=facts.framework,
    )  # fmt: skip


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
    """An app built from topic names and counts, and what the cluster shows of which topics
    are read together (see the module docstring).

    Sources a running group's tasks read together form a sub-topology, as they do in the
    app.  Sources nothing shows are grouped by count as before, one sub-topology per
    count, except a table named after its topic, which sits alone with its store.  Where
    two sources may be joined (read together by the tasks but with no state seen there,
    or neither seen and of one count), the model has an alternative in which they are,
    one join at a time.
    """
    repartitions = {facts.bare(t): n for t, n in facts.internal.items() if is_repartition_name(t)}
    stores = {
        facts.bare(t)[: -len(CHANGELOG_SUFFIX)]: n
        for t, n in facts.internal.items()
        if t.endswith(CHANGELOG_SUFFIX)
    }
    tables = {store: topic for store in stores if (topic := _table_topic(store, facts.sources))}
    seen = _seen_groups(facts)
    unseen = sorted(t for t in facts.sources if t not in facts.read_together)
    # read together, and a table's store shows state where they are read: joined
    certain = [g for g in seen if set(g) & set(tables.values())]

    def shape(joined: tuple[str, ...] = ()) -> App:
        groups = Groups(seen, unseen, certain, joined)
        return _inferred_app(facts, fixed, repartitions, stores, tables, groups)

    maybe = [g for g in seen if g not in certain and len(set(g) & set(facts.sources)) > 1]
    maybe += [(a, b) for a, b in combinations(unseen, 2) if facts.sources[a] == facts.sources[b]]
    return _with_joins(Model(shape(), Basis.INFERRED), maybe, shape)


@dataclass(frozen=True)
class Groups:
    """Which topics an inferred shape reads together: ``seen`` by a running group's tasks
    (``certain`` of them joined), ``unseen`` by nothing, and ``joined`` together in this
    shape (a group of ``seen``, or topics of ``unseen``)."""

    seen: Sequence[tuple[str, ...]]
    unseen: Sequence[str]
    certain: Sequence[tuple[str, ...]]
    joined: tuple[str, ...] = ()


#: The store Kafka Streams names for a table built without a name: ``builder.table(topic)``
#: materializes it as ``<topic>-STATE-STORE-<ten digits>`` (InternalNameProvider
#: .newStoreName with the topic as its prefix).
_TABLE_STORE = re.compile(r"^(?P<topic>.+)-STATE-STORE-\d{10}$")


def _table_topic(store: str, sources: Mapping[str, int]) -> str | None:
    """The source topic a table's store is named after, if it is one of the app's."""
    m = _TABLE_STORE.match(store)
    return m["topic"] if m and m["topic"] in sources else None


def _seen_groups(facts: Facts) -> list[tuple[str, ...]]:
    """The topics each sub-topology's tasks read, by the running group's assignment (in
    the model's names: a repartition topic without the application id), by id."""
    by_id: dict[int, list[str]] = {}
    for topic, sub in sorted(facts.read_together.items()):
        name = facts.bare(topic) if topic in facts.internal else topic
        by_id.setdefault(sub, []).append(name)
    return [tuple(by_id[i]) for i in sorted(by_id)]


def _inferred_app(
    facts: Facts,
    fixed: Sequence[str],
    repartitions: Mapping[str, int],
    stores: Mapping[str, int],
    tables: Mapping[str, str],
    shape: Groups,
) -> App:
    """One shape of the inferred app: a sub-topology per group of topics read together,
    each joined one reading them as a join does (a source node each)."""
    rest = [t for t in shape.unseen if t not in shape.joined]
    alone = [t for t in rest if t in tables.values()]  # a table joined with nothing
    by_count: dict[int, list[str]] = {}
    for topic in rest:
        if topic not in alone:
            by_count.setdefault(facts.sources[topic], []).append(topic)
    joined = [*shape.certain, *([shape.joined] if shape.joined else [])]
    pair = [shape.joined] if shape.joined and shape.joined not in shape.seen else []
    # the running group's sub-topologies first, so that their ids are the app's own
    groups = [*shape.seen, *(by_count[n] for n in sorted(by_count)), *pair]
    groups += [[t] for t in alone]
    subs = [_inferred_sub(i, list(g), separate=g in joined) for i, g in enumerate(groups)]
    counts = {**facts.sources, **repartitions}
    for sub in subs:  # it writes the repartition topics of its sources' count it does not read
        n = max((facts.sources[t] for t in sub.source_topics if t in facts.sources), default=0)
        sinks = tuple(r for r, m in repartitions.items() if m == n and r not in sub.source_topics)
        if sinks:
            sub.nodes.append(Node("sink", "inferred-sink", topics=sinks))
    unfixed = {r for s in subs for r in s.sink_topics}
    orphans = [r for r in repartitions if r not in unfixed]
    if subs and orphans:  # a count no source has: the app fixed it; someone upstream writes it
        subs[0].nodes.append(Node("sink", "inferred-sink", topics=tuple(orphans)))
    read = {t for g in groups for t in g}
    unread = [r for r in repartitions if r not in read]
    subs += [_inferred_sub(len(subs) + i, [r]) for i, r in enumerate(unread)]
    for store, topic in tables.items():  # a table's store sits with its topic
        home = next(s for s in subs if topic in s.source_topics)
        home.nodes.append(Node("processor", f"inferred-{store}", stores=(store,)))
    others = {s: n for s, n in stores.items() if s not in tables}
    _place_stores([s for s in subs if not set(s.source_topics) & set(alone)], others, counts)
    chosen = {r: repartitions[r] for r in [*orphans, *fixed] if r in repartitions}
    return _app(facts, Topology(subs), facts.counts, chosen, stores_known=False)


def _inferred_sub(
    sub_id: int, topics: list[str], sinks: Sequence[str] = (), separate: bool = False
) -> SubTopology:
    """A sub-topology reading ``topics``: each its own source node when the evidence shows
    them read together (as a join reads them), else one node for all (no join known)."""
    groups = [(t,) for t in topics] if separate else [tuple(topics)]
    sub = SubTopology(sub_id, nodes=[Node("source", "inferred-source", topics=g) for g in groups])
    if sinks:
        sub.nodes.append(Node("sink", "inferred-sink", topics=tuple(sinks)))
    return sub


def _place_stores(
    subs: list[SubTopology], stores: Mapping[str, int], counts: Mapping[str, int]
) -> None:
    """Each store joins a sub-topology of its changelog's count: behind a repartition topic
    first (aggregations follow a groupBy), else a source's, the last such; an orphan joins
    the first one, where the health check shows its mismatch."""

    def reads(sub: SubTopology, n: int, repartition: bool) -> bool:
        return any(
            counts.get(t) == n and (is_repartition_name(t) or not repartition)
            for t in sub.source_topics
        )

    for store, n in sorted(stores.items()):
        home = next((s for s in reversed(subs) if reads(s, n, repartition=True)), None)
        home = home or next((s for s in reversed(subs) if reads(s, n, False)), None)
        home = home or (subs[0] if subs else None)
        if home is not None:
            home.nodes.append(Node("processor", f"inferred-{store}", stores=(store,)))


def from_names(facts: Facts) -> Model:
    """An app whose framework takes no ``--topology`` (Quix Streams, Faust) from its
    topics' names: the shape its framework reads from them (:attr:`Framework.names_model`),
    else inferred as a Kafka Streams app's is, with every repartition topic fixed where
    the framework checks none of their counts (Faust's ``group_by`` keeps the count it
    was created with) and every store known where each logs to its changelog."""
    f = facts.framework
    if f.names_model is not None:
        shape = f.names_model(facts.app_id, facts.sources, facts.internal)
        app = _app(facts, shape.topology, facts.counts, shape.fixed, shape.stores_known)
        return Model(app, Basis.INFERRED)
    fixed = () if f.checks_repartition else [facts.bare(t) for t in facts.internal
                                             if is_repartition_name(t)]  # fmt: skip
    model = inferred(facts, fixed)
    if not f.logs_every_store:
        return model
    return replace(model, app=replace(model.app, stores_known=True))


def offline(
    app_id: str, topology: Topology, partitions: Mapping[str, int], framework: Framework
) -> Model:
    """An app of ``framework`` from its ``describe()`` and the counts a user gives, with no
    cluster to ask.

    ``partitions`` names source topics, and repartition topics (as in the
    topology) whose size the app fixed.  Every store is taken to log to a
    changelog (Kafka Streams' default) and every internal topic to have the
    count Streams gives it: a healthy app, which is what a plan assumes.
    """
    bare = App(app_id, topology, {}, framework=framework)
    fixed = {t: n for t, n in partitions.items() if bare.is_repartition(t)}
    sources = {t: n for t, n in partitions.items() if t not in fixed}
    app = App(app_id, topology, sources, fixed, framework=framework)
    counts = {**sources, **sizes(app, sources).internal}
    note = (
        "offline: every store is taken to log to a changelog and every internal topic to have "
        "the count Kafka Streams gives it"
    )
    return Model(App(app_id, topology, counts, fixed, framework=framework), Basis.TOPOLOGY, (note,))
