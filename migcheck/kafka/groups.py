"""What the cluster knows about an application: its group, committed offsets and topics.

Strictly read-only: ListGroups, DescribeGroups, StreamsGroupDescribe,
OffsetFetch and Metadata requests only.  A Kafka Streams application's group
id is its ``application.id``; on the classic protocol it is a consumer group,
on the streams protocol (KIP-1071, Kafka 4.2+) a *streams* group.  Both
commit the source offsets the same way, so the committed offsets name the
source topics under either protocol.  A streams group also tells its
topology to the broker, which :func:`describe_streams_group` reads back.

Observed on Kafka 4.3.1: the broker keeps describing a streams group's
topology after every member has left (state ``Empty``; tests/integration/test_groups.py),
but does not recompute it then: after an input topic was altered from 2 to 4
partitions, an Empty group still reported its internal topics with 2 (seen
by hand).  An Empty group's counts are as of the last time it had members.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line, open_admin

if TYPE_CHECKING:
    from kafka import KafkaAdminClient


@dataclass(frozen=True)
class Member:
    """A group member (classic or streams): its client id carries the Streams thread name.

    On the classic protocol each Kafka Streams thread is one consumer member,
    and ``partitions`` are the source partitions its tasks read.  On the
    streams protocol ``process_id`` names the instance and ``active_tasks``
    are its tasks ({sub-topology id: partitions}); ``partitions`` stays empty.
    """

    member_id: str
    client_id: str
    host: str
    partitions: tuple[tuple[str, int], ...] = ()
    process_id: str = ""
    active_tasks: Mapping[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupInfo:
    """A group as the coordinator describes it; ``group_type`` is ``""`` when it is unknown."""

    group_id: str
    group_type: str  # "classic", "consumer", "streams", "share" or ""
    state: str
    members: tuple[Member, ...] = ()
    committed: dict[tuple[str, int], int] = field(default_factory=dict)
    #: A classic group's assignment protocol ("range", "cooperative-sticky", Kafka
    #: Streams' "stream"...); the coordinator names it only while the group is Stable.
    protocol: str = ""
    #: Topics the group's own description says it reads beyond its committed offsets and
    #: members' partitions: a streams group's topology's sources.
    subscribed: tuple[str, ...] = ()
    #: The distinct metadata strings its commits carry ("" left out): plain consumers
    #: commit none, Kafka Streams its partition time (TopicPartitionMetadata).
    commit_metadata: tuple[str, ...] = ()

    def reads(self, topic: str) -> bool:
        """Whether the group reads ``topic``: an offset committed on it, a member assigned
        one of its partitions, or its description naming it."""
        return (
            any(t == topic for t, _ in self.committed)
            or any(t == topic for m in self.members for t, _ in m.partitions)
            or topic in self.subscribed
        )

    @property
    def committed_topics(self) -> tuple[str, ...]:
        """Topics with a committed offset, sorted."""
        return tuple(sorted({t for t, _ in self.committed}))


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic of a streams group's topology, with the partition count the broker set.

    ``partitions`` is the count in the broker's *configured* topology: the
    count the app fixes (``Repartitioned.withNumberOfPartitions``) or else the
    one the broker derives from the sub-topology's source topics, so a fixed
    and a derived count look alike; compare it with the source topics' counts
    to tell them apart.  0 means the broker names no count (the app does not
    fix one and the broker has not resolved one); Kafka 4.3.1 always resolves.
    """

    name: str
    partitions: int


@dataclass(frozen=True)
class StreamsSubtopology:
    """One sub-topology as the broker knows it; its tasks are numbered by input partition.

    ``source_topics`` are the user topics it reads (patterns already resolved
    to names); repartition topics it reads are in ``repartition_source_topics``
    only.  ``source_topic_regex`` is always ``()`` from StreamsGroupDescribe
    v0, whose answer carries resolved names and no patterns.
    """

    subtopology_id: str
    source_topics: tuple[str, ...]
    source_topic_regex: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    state_changelog_topics: tuple[TopicInfo, ...]
    repartition_source_topics: tuple[TopicInfo, ...]


@dataclass(frozen=True)
class StreamsMember:
    """A member (one stream thread) of a streams group and its current task assignment.

    Tasks map a sub-topology id to the partitions (task numbers) the member
    owns, e.g. ``{"0": (0, 2)}`` for tasks 0_0 and 0_2.
    """

    member_id: str
    client_id: str
    process_id: str
    client_host: str
    active_tasks: Mapping[str, tuple[int, ...]]
    standby_tasks: Mapping[str, tuple[int, ...]]
    warmup_tasks: Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class StreamsGroup:
    """A streams group (KIP-1071) as its coordinator describes it.

    ``topology`` is None while the broker has no configured topology: before
    the first member joined, or while source topics are missing or not
    co-partitioned (exactly when a partition change has broken the app).
    ``topology_epoch`` is -1 when the broker sent no topology at all.
    """

    group_id: str
    state: str
    group_epoch: int
    topology_epoch: int
    topology: tuple[StreamsSubtopology, ...] | None
    members: tuple[StreamsMember, ...]


@contextmanager
def _admin(client: ClientConfig, doing: str) -> Iterator[KafkaAdminClient]:
    """An admin client, closed after use; a Kafka error becomes one ReadError line.

    ``doing`` says what was being read; the bootstrap servers follow it.
    """
    from kafka.errors import KafkaError

    admin = open_admin(client)
    try:
        yield admin
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(f"{doing} {where}: {first_line(e)}") from None
    finally:
        admin.close()


def describe_group(client: ClientConfig, group_id: str) -> GroupInfo | None:
    """The group ``group_id`` with its committed offsets, or None when no such group exists."""
    with _admin(client, f"reading group {group_id!r} from") as admin:
        listed = {g["group_id"]: g for g in admin.list_groups()}
        if group_id not in listed:
            return None
        entry = listed[group_id]
        offsets = admin.list_group_offsets(group_id).get(group_id, {})
        group_type = _group_type(entry)
        members, protocol = _members(admin, group_id, group_type)
        return GroupInfo(
            group_id,
            group_type,
            str(entry.get("group_state") or ""),
            members,
            _committed(offsets),
            protocol,
            _subscribed(admin, group_id, group_type),
            _metadata(offsets),
        )


def describe_all_groups(client: ClientConfig) -> list[GroupInfo]:
    """Every group on the cluster, described as :func:`describe_group` describes one.

    Asked in bulk, so that a cluster of hundreds of groups answers in seconds: one
    ListGroups, one OffsetFetch per coordinator for every group that commits offsets
    (share groups commit none: OffsetFetch refuses them), one DescribeGroups for the
    classic and consumer groups; a streams group is described on its own (hook 6).
    """
    with _admin(client, "listing the groups at") as admin:
        entries = {str(g["group_id"]): g for g in admin.list_groups()}
        types = {g: _group_type(e) for g, e in entries.items()}
        committing = sorted(g for g, t in types.items() if t != "share")
        offsets = admin.list_group_offsets(committing) if committing else {}
        classic = sorted(g for g, t in types.items() if t in ("classic", "consumer"))
        described = admin.describe_groups(classic) if classic else {}
        groups = []
        for g in sorted(entries):
            members, protocol = _described(admin, g, types[g], described)
            groups.append(
                GroupInfo(
                    g,
                    types[g],
                    str(entries[g].get("group_state") or ""),
                    members,
                    _committed(offsets.get(g, {})),
                    protocol,
                    _subscribed(admin, g, types[g]),
                    _metadata(offsets.get(g, {})),
                )
            )
        return groups


def _described(
    admin: KafkaAdminClient, group_id: str, group_type: str, described: Mapping[str, Any]
) -> tuple[tuple[Member, ...], str]:
    """A group's members and assignor, from a bulk DescribeGroups answer where it is in one."""
    if group_id in described:
        return _classic(described[group_id] or {})
    return _members(admin, group_id, group_type)


def _group_type(entry: Mapping[str, Any]) -> str:
    """The group's protocol as ListGroups names it; a broker older than ListGroups v5 names
    only the protocol type ("consumer" for every classic consumer group then)."""
    if entry.get("group_type"):
        return str(entry["group_type"]).lower()
    return "classic" if entry.get("protocol_type") == "consumer" else ""


def _committed(offsets: Mapping[Any, Any]) -> dict[tuple[str, int], int]:
    return {(tp.topic, tp.partition): om.offset for tp, om in offsets.items()}


def _metadata(offsets: Mapping[Any, Any]) -> tuple[str, ...]:
    return tuple(sorted({str(om.metadata) for om in offsets.values() if om.metadata}))


def _subscribed(admin: KafkaAdminClient, group_id: str, group_type: str) -> tuple[str, ...]:
    """The topics a streams group's broker-side topology reads (none for other groups)."""
    if group_type != "streams":
        return ()
    streams = _describe_streams(admin, group_id)
    if streams is None or not streams.topology:
        return ()
    return tuple(dict.fromkeys(t for sub in streams.topology for t in sub.source_topics))


def _members(
    admin: KafkaAdminClient, group_id: str, group_type: str
) -> tuple[tuple[Member, ...], str]:
    """The members, asked with the describe request that the group's protocol answers,
    and a classic group's assignment protocol."""
    if group_type in ("classic", "consumer"):
        return _classic_members(admin, group_id)
    if group_type == "streams":
        streams = _describe_streams(admin, group_id)
        members = streams.members if streams is not None else ()
        return tuple(
            Member(
                m.member_id,
                m.client_id,
                m.client_host,
                process_id=m.process_id,
                active_tasks=m.active_tasks,
            )
            for m in members
        ), ""
    return (), ""


def _classic_members(admin: KafkaAdminClient, group_id: str) -> tuple[tuple[Member, ...], str]:
    """The members of a classic group (kafka-python 3: {group_id: {"members": [dict]}}) and
    its assignment protocol (``protocol_data``; empty unless the group is Stable)."""
    return _classic(admin.describe_groups([group_id]).get(group_id) or {})


def _classic(described: Mapping[str, Any]) -> tuple[tuple[Member, ...], str]:
    """Members and assignment protocol of one group of a DescribeGroups answer."""
    members = tuple(
        Member(
            str(m.get("member_id", "")),
            str(m.get("client_id", "")),
            str(m.get("client_host", "")),
            _assigned(m.get("member_assignment")),
        )
        for m in described.get("members") or []
    )
    return members, str(described.get("protocol_data") or "")


def _assigned(assignment: Any) -> tuple[tuple[str, int], ...]:
    """The partitions of a decoded consumer-protocol assignment, sorted; () when there is
    none (a member between rebalances) or it is not the consumer protocol's."""
    if not isinstance(assignment, Mapping):
        return ()
    return tuple(
        sorted(
            (str(tp["topic"]), int(p))
            for tp in assignment.get("assigned_partitions") or []
            for p in tp.get("partitions") or []
        )
    )


def describe_streams_group(client: ClientConfig, group_id: str) -> StreamsGroup | None:
    """The streams group ``group_id`` with its topology, or None when no streams group has it.

    None also for a classic or consumer group of that name, and for a broker
    without the StreamsGroupDescribe API (older than Kafka 4.0: no streams
    groups there).
    """
    with _admin(client, f"describing streams group {group_id!r} at") as admin:
        return _describe_streams(admin, group_id)


def _describe_streams(admin: KafkaAdminClient, group_id: str) -> StreamsGroup | None:
    """Ask the group's coordinator (hook 6 of :mod:`~migcheck.kafka.private_hooks`);
    kafka-python's errors propagate.  None for GROUP_ID_NOT_FOUND, from a broker without
    StreamsGroupDescribe, and where the hook is fenced off: the model is then inferred."""
    import kafka.errors as errors

    from migcheck.kafka.private_hooks import streams_group_response

    try:
        response = streams_group_response(admin, group_id)
    except errors.IncompatibleBrokerVersion:
        return None
    if response is None:
        return None
    (group,) = [g for g in response.groups if g.group_id == group_id]
    if group.error_code == errors.GroupIdNotFoundError.errno:  # also "not a streams group"
        return None
    if group.error_code:
        raise errors.for_code(group.error_code)(*filter(None, [group.error_message]))
    return _streams_group(group)


def _streams_group(group: Any) -> StreamsGroup:
    """Our frozen view of one described group of a StreamsGroupDescribeResponse."""
    topology = group.topology
    subtopologies = None if topology is None else topology.subtopologies
    return StreamsGroup(
        group_id=group.group_id,
        state=group.group_state,
        group_epoch=group.group_epoch,
        topology_epoch=-1 if topology is None else topology.epoch,
        topology=None if subtopologies is None else tuple(map(_subtopology, subtopologies)),
        members=tuple(map(_streams_member, group.members)),
    )


def _subtopology(sub: Any) -> StreamsSubtopology:
    return StreamsSubtopology(
        subtopology_id=sub.subtopology_id,
        source_topics=tuple(sub.source_topics),
        source_topic_regex=(),
        repartition_sink_topics=tuple(sub.repartition_sink_topics),
        state_changelog_topics=_topic_infos(sub.state_changelog_topics),
        repartition_source_topics=_topic_infos(sub.repartition_source_topics),
    )


def _topic_infos(topics: Any) -> tuple[TopicInfo, ...]:
    return tuple(TopicInfo(t.name, t.partitions) for t in topics)


def _streams_member(member: Any) -> StreamsMember:
    assignment = member.assignment
    return StreamsMember(
        member_id=member.member_id,
        client_id=member.client_id,
        process_id=member.process_id,
        client_host=member.client_host,
        active_tasks=_tasks(assignment.active_tasks),
        standby_tasks=_tasks(assignment.standby_tasks),
        warmup_tasks=_tasks(assignment.warmup_tasks),
    )


def _tasks(task_ids: Any) -> dict[str, tuple[int, ...]]:
    """``[TaskIds(subtopology_id, partitions)]`` as {sub-topology id: sorted partitions}."""
    return {t.subtopology_id: tuple(sorted(t.partitions)) for t in task_ids}


def topics_with_prefix(client: ClientConfig, prefix: str) -> list[str]:
    """Every topic whose name starts with ``prefix`` (an application's internal topics)."""
    with _admin(client, "listing topics at") as admin:
        return sorted(t for t in admin.list_topics() if t.startswith(prefix))


def groups_with_offsets_on(client: ClientConfig, topic: str) -> list[str]:
    """Every group with a committed offset on ``topic``, sorted: the groups that read it.

    Share groups are left out: they commit no offsets (OffsetFetch refuses them).  One
    OffsetFetch per coordinator asks for every group at once (Kafka 3.0+; kafka-python
    asks group by group on an older broker).
    """
    with _admin(client, f"listing the groups that read {topic!r} at") as admin:
        ids = sorted(
            str(g["group_id"])
            for g in admin.list_groups()
            if str(g.get("group_type") or "").lower() != "share"
        )
        if not ids:
            return []
        offsets = admin.list_group_offsets(ids)
        return [g for g in ids if any(tp.topic == topic for tp in offsets.get(g, {}))]


#: A share group's own reset setting (a group config, KIP-932).
SHARE_RESET_CONFIG = "share.auto.offset.reset"


def share_group_reset(client: ClientConfig, group_id: str) -> str | None:
    """A share group's ``share.auto.offset.reset`` (its default when not set), from a
    DescribeConfigs of the GROUP resource; None where the broker does not answer it."""
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import KafkaError

    resource = ConfigResource(ConfigResourceType.GROUP, group_id, {SHARE_RESET_CONFIG: None})
    admin = open_admin(client)
    try:
        found = admin.describe_configs([resource], config_filter="all")
    except (KafkaError, KeyError, ValueError):
        return None
    finally:
        admin.close()
    entry = (found.get("group") or {}).get(group_id, {}).get(SHARE_RESET_CONFIG) or {}
    value = entry.get("value") if isinstance(entry, Mapping) else None
    return None if value is None else str(value)
