"""Finding a Kafka Streams application on the cluster, strictly read-only.

An application's group id is its ``application.id``.  Its source topics are the
topics its group committed offsets for (and, for a streams group, those the
broker's description of its topology names: an idle app may have committed
none), less its internal topics; its internal
topics are named ``<application.id>-<name>-changelog``, ``-repartition``, or a
foreign-key join's ``-SUBSCRIPTION-...-topic``.  Every count and cleanup policy
comes from the same read-only metadata calls ``analyze`` makes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from migcheck.apps.build import Facts, Model, from_broker, from_names, from_topology, inferred
from migcheck.apps.rules import App
from migcheck.errors import UsageError
from migcheck.frameworks.base import Framework
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.registry import FRAMEWORKS, label
from migcheck.frameworks.topology import Topology, source_topics
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import (
    GroupInfo,
    StreamsGroup,
    describe_group,
    describe_streams_group,
    topics_with_prefix,
)
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.model.history import Trimmed, trimmed_sources
from migcheck.model.readers import Evidence, Protocol, ReaderKind
from migcheck.readers.kinds import Seen, identify


@dataclass(frozen=True)
class Discovery:
    """What the cluster says about an application."""

    facts: Facts
    group: GroupInfo | None
    topics: dict[str, TopicMeta]  # every topic involved, by name
    streams_group: StreamsGroup | None = None  # the broker's description (streams protocol)
    #: Sources taken on the user's word: the group showed none (no committed offsets).
    on_users_word: tuple[str, ...] = ()


def discover(
    client: ClientConfig,
    app_id: str,
    also: Sequence[str] = (),
    named: Sequence[str] = (),
    vouched: bool = False,
    said: Framework | None = None,
) -> Discovery:
    """The group, source and internal topics of ``app_id``; ``also`` are topics to describe
    as well (the ones to alter, a topology's other sources) when they exist.

    ``named`` are the topics the user says the app reads (``--topic``).  They count as
    sources only when the group shows none: its committed offsets expire
    ``offsets.retention.minutes`` after the app stops (7 days by default), or the group
    was deleted, while the internal topics stay.  Then nothing on the cluster says what
    the app reads, and the user's word is the best there is; the report says so.

    A group that is not a Kafka Streams application's is refused in one line naming
    what it is (:mod:`migcheck.readers.kinds`); one whose kind nothing tells apart is
    refused too, unless ``vouched`` (a topology was given: the user's word) or ``said``
    (``--framework``: the framework on the user's word, for a group nothing tells apart
    from a plain consumer's, such as a Quix app without changelogs).
    """
    group = describe_group(client, app_id)
    existing = set(topics_with_prefix(client, ""))
    framework = _framework(app_id, group, existing, Word(vouched, said), [*named, *also])
    internal = framework.internal_topics(app_id, existing) if framework else []
    if framework is None or (group is None and not internal):
        raise UsageError(
            f"no stream processor's application {app_id!r} at {client.bootstrap_servers}: "
            f"no group of that id and no internal topic named after it; check the id, or "
            "name its framework (--framework)"
        )
    protocol = (
        Protocol.STREAMS
        if group is not None and group.group_type == "streams"
        else (Protocol.CLASSIC)
    )
    described = describe_streams_group(client, app_id) if protocol == Protocol.STREAMS else None
    committed = [] if group is None else list(group.committed_topics)
    read = [*committed, *_described_sources(described)]  # an idle app may have committed none
    sources = [t for t in dict.fromkeys(read) if t not in internal and t in existing]
    assumed = () if sources else tuple(t for t in named if t in existing and t not in internal)
    sources += assumed
    wanted = dict.fromkeys([*sources, *internal, *(t for t in also if t in existing)])
    metas = {m.name: m for m in describe_topics(client, list(wanted))}
    facts = Facts(
        app_id,
        {t: metas[t].partition_count for t in sources},
        {t: metas[t].partition_count for t in internal},
        protocol,
        _read_together(group, {*sources, *internal}),
        framework=framework,
    )
    return Discovery(facts, group, metas, described, assumed)


def _read_together(group: GroupInfo | None, topics: set[str]) -> dict[str, int]:
    """Each of ``topics`` a running Kafka Streams member's tasks read, to its sub-topology
    (the members' AssignmentInfo); a topic two sub-topologies would read is left out."""
    found: dict[str, set[int]] = {}
    for member in group.members if group else ():
        for (topic, _), sub in member.subtopology_of.items():
            if topic in topics:
                found.setdefault(topic, set()).add(sub)
    return {t: min(subs) for t, subs in found.items() if len(subs) == 1}


@dataclass(frozen=True)
class Word:
    """What the user vouched for: a topology (a Kafka Streams app), or a framework."""

    topology: bool = False
    framework: Framework | None = None


def _framework(
    app_id: str, group: GroupInfo | None, topics: set[str], word: Word, named: Sequence[str]
) -> Framework | None:
    """The framework the evidence shows ``app_id`` runs on (without a group, its internal
    topics' naming), or the one the user names where the evidence cannot tell; a group
    the evidence shows to be of another kind is refused in one line naming what it is;
    None where nothing shows one (no framework is assumed)."""
    if group is None:
        return word.framework or _by_names(app_id, topics, word)
    evidence = identify(Seen(group, topics))
    if evidence.kind in FRAMEWORKS:
        seen = FRAMEWORKS[evidence.kind]
        if word.framework not in (None, seen):
            raise UsageError(
                f"group {group.group_id!r} is {label(evidence.kind)} "
                f"({'; '.join(evidence.facts)}), not {word.framework.label}: "
                "leave --framework out"
            )
        return seen
    if evidence.kind in (ReaderKind.UNKNOWN, ReaderKind.CONSUMER_GROUP) and word.framework:
        return word.framework
    if evidence.kind is ReaderKind.UNKNOWN and word.topology:
        return KAFKA_STREAMS  # a Topology#describe() is Kafka Streams' own: evidence
    raise _not_an_app(group, evidence, named)


def _by_names(app_id: str, topics: set[str], word: Word) -> Framework | None:
    """Without a group: the kind its id and the topics named after it show, by the same
    rules as a group's (:func:`~migcheck.readers.kinds.identify`), or a --topology's
    (Kafka Streams' own format); None where nothing shows one: no framework is assumed."""
    absent = GroupInfo(app_id, group_type="", state="")
    kind = identify(Seen(absent, topics)).kind
    if kind in FRAMEWORKS:
        return FRAMEWORKS[kind]
    return KAFKA_STREAMS if word.topology else None


def _not_an_app(group: GroupInfo, evidence: Evidence, named: Sequence[str]) -> UsageError:
    """The refusal of a group that is no stream processor ``app`` judges."""
    topic = named[0] if named else "T"
    fits = {
        ReaderKind.CONSUMER_GROUP: f"migcheck runbook --group {group.group_id} --topic {topic} "
        "--to N writes its ordering runbook (if it is a stream processor's group, say which "
        "with --framework)",
        ReaderKind.UNKNOWN: "pass --topology (the app's Topology#describe()) if it is a "
        "Kafka Streams application, --framework quix-streams if it is a Quix Streams app "
        f"without changelogs, or use migcheck runbook --group {group.group_id}",
    }.get(evidence.kind, f"migcheck readers --topic {topic} judges it")
    what = (
        "cannot be told to be a Kafka Streams application"
        if evidence.kind is ReaderKind.UNKNOWN
        else f"is {label(evidence.kind)}, not a Kafka Streams application"
    )
    return UsageError(f"group {group.group_id!r} {what} ({'; '.join(evidence.facts)}): {fits}")


def only_kafka_streams(disc: Discovery, command: str) -> None:
    """Refuse an app of another framework in a command written for Kafka Streams alone."""
    only_frameworks(disc, command, (ReaderKind.KAFKA_STREAMS,))


def only_frameworks(disc: Discovery, command: str, kinds: Collection[ReaderKind]) -> None:
    """Refuse an app of a framework not among ``kinds`` in a command written for them."""
    framework = disc.facts.framework
    if framework.kind not in kinds:
        which = ", ".join(FRAMEWORKS[k].name for k in kinds)
        raise UsageError(
            f"{disc.facts.app_id!r} is {framework.label}: migcheck {command} is written "
            f"for {which} applications only; migcheck app judges it"
        )


def discover_app(
    client: ClientConfig,
    app_id: str,
    topology: Topology | None,
    topics: Sequence[str],
    said: Framework | None = None,
) -> Discovery:
    """The app's group and topics, with ``topics`` and the topology's sources described too.

    Without a topology, ``topics`` (the ones the user changes) are taken as sources when
    the group shows none: see :func:`discover`.  ``said``: ``--framework``.
    """
    also = [*topics, *(source_topics(topology) if topology else [])]
    named = () if topology else topics
    return discover(client, app_id, also, named, topology is not None, said)


def lost_history(disc: Discovery) -> tuple[Trimmed, ...]:
    """The app's sources that no longer hold their whole history: what any reprocess of
    its state would miss (model/history.py)."""
    return trimmed_sources(
        {
            t: {p.partition: p.log_start_offset for p in disc.topics[t].partitions}
            for t in disc.facts.sources
            if t in disc.topics
        }
    )


def users_word_note(disc: Discovery) -> str | None:
    """What a report says when sources were taken on the user's word."""
    if not disc.on_users_word:
        return None
    why = "does not exist" if disc.group is None else "has no committed offsets"
    return (
        f"the group {disc.facts.app_id} {why} (its offsets expire offsets.retention.minutes "
        "after the app stops, 7 days by default, or the group was deleted), so the cluster "
        f"does not show what the app reads: {', '.join(disc.on_users_word)} is taken as a "
        "source on your word (the topic you named); --topology (the app's Topology#describe()) "
        "settles it"
    )


def _described_sources(group: StreamsGroup | None) -> list[str]:
    """The user topics a streams group's broker-side topology reads."""
    if group is None or not group.topology:
        return []
    return [t for sub in group.topology for t in sub.source_topics]


def app_model(disc: Discovery, topology: Topology | None, fixed: Sequence[str] = ()) -> Model:
    """The best model discovery allows: the given topology, the broker's, or inferred;
    its notes say when a source was taken on the user's word."""
    model = _model(disc, topology, fixed)
    note = None if topology is not None else users_word_note(disc)
    return model if note is None else replace(model, notes=(*model.notes, note))


def _model(disc: Discovery, topology: Topology | None, fixed: Sequence[str]) -> Model:
    framework = disc.facts.framework
    if not framework.takes_topology:  # Quix Streams, Faust: its topics' names are the model
        if topology is not None:
            raise UsageError(
                f"{disc.facts.app_id!r} is a {framework.name} application: --topology takes a "
                "Kafka Streams Topology#describe(); leave it out, its topics' names describe it"
            )
        return from_names(disc.facts)
    if topology is not None:
        extra = {t: m.partition_count for t, m in disc.topics.items()}
        return from_topology(disc.facts, topology, fixed, extra)
    described = disc.streams_group.topology if disc.streams_group else None
    if described:  # None too while the broker finds the topics mis-partitioned
        return from_broker(disc.facts, described, fixed)
    if not disc.facts.sources and not disc.facts.internal:
        raise UsageError(
            f"application {disc.facts.app_id!r} has committed no offsets and has no internal "
            "topics: nothing to infer its topology from; pass --topology"
        )
    return inferred(disc.facts, fixed)


def check_read(topics: Sequence[str], app: App, disc: Discovery, topology_given: bool) -> None:
    """Refuse a topic the app does not read: neither a source of its topology (given, or
    as the evidence shows it) nor one of its internal topics.  One check for ``app`` and
    ``runbook``: an app with no committed offsets yet reads what its ``--topology`` says."""
    read = {t for sub in app.topology.subtopologies for t in sub.source_topics}
    for topic in topics:
        if topic not in read and topic not in app.counts:
            raise not_read(disc, topic, topology_given)


def not_read(disc: Discovery, topic: str, topology_given: bool) -> UsageError:
    """The refusal of a topic the app does not read, with what the app does read and the
    way forward."""
    head = f"topic {topic!r} is not read by application {disc.facts.app_id!r}"
    if topology_given:
        return UsageError(f"{head}: the --topology given reads no topic of that name")
    read = ", ".join(sorted(disc.facts.sources)) or "no topic"
    where = "the broker's description of its topology" if disc.streams_group else "its group"
    return UsageError(
        f"{head}: {where} shows it reading {read}; if it reads {topic} too, pass --topology "
        "(the app's Topology#describe())"
    )
