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

from collections.abc import Sequence
from dataclasses import dataclass, replace

from migcheck.errors import UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import (
    GroupInfo,
    StreamsGroup,
    describe_group,
    describe_streams_group,
    topics_with_prefix,
)
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.model.readers import LABELS, ReaderKind
from migcheck.model.topics import is_internal
from migcheck.readers.kinds import Seen, identify
from migcheck.streams.build import Facts, Model, from_broker, from_topology, inferred
from migcheck.streams.rules import Protocol
from migcheck.streams.topology import Topology, source_topics


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
    refused too, unless ``vouched`` (a topology was given: the user's word).
    """
    group = describe_group(client, app_id)
    existing = set(topics_with_prefix(client, ""))
    if group is not None:
        _check_kind(group, existing, vouched, [*named, *also])
    internal = sorted(t for t in existing if is_internal(app_id, t))
    if group is None and not internal:
        raise UsageError(
            f"no Kafka Streams application {app_id!r} at {client.bootstrap_servers}: "
            f"no group of that id and no internal topic named {app_id}-..."
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
    )
    return Discovery(facts, group, metas, described, assumed)


def _check_kind(group: GroupInfo, topics: set[str], vouched: bool, named: Sequence[str]) -> None:
    """Refuse a group the evidence shows is no Kafka Streams application."""
    evidence = identify(Seen(group, topics))
    if evidence.kind is ReaderKind.KAFKA_STREAMS:
        return
    if evidence.kind is ReaderKind.UNKNOWN and vouched:
        return
    topic = named[0] if named else "T"
    fits = {
        ReaderKind.CONSUMER_GROUP: f"migcheck runbook --group {group.group_id} --topic {topic} "
        "--to N writes its ordering runbook",
        ReaderKind.UNKNOWN: "pass --topology (the app's Topology#describe()) if it is a "
        f"Kafka Streams application, or use migcheck runbook --group {group.group_id}",
    }.get(evidence.kind, f"migcheck readers --topic {topic} judges it")
    what = (
        "cannot be told to be a Kafka Streams application"
        if evidence.kind is ReaderKind.UNKNOWN
        else f"is {LABELS[evidence.kind]}, not a Kafka Streams application"
    )
    raise UsageError(f"group {group.group_id!r} {what} ({'; '.join(evidence.facts)}): {fits}")


def discover_app(
    client: ClientConfig, app_id: str, topology: Topology | None, topics: Sequence[str]
) -> Discovery:
    """The app's group and topics, with ``topics`` and the topology's sources described too.

    Without a topology, ``topics`` (the ones the user changes) are taken as sources when
    the group shows none: see :func:`discover`.
    """
    also = [*topics, *(source_topics(topology) if topology else [])]
    return discover(
        client, app_id, also, named=() if topology else topics, vouched=topology is not None
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
