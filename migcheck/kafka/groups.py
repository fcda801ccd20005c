"""What the cluster knows about a group: its type, members, committed offsets and topics.

Strictly read-only: ListGroups, DescribeGroups, StreamsGroupDescribe,
ConsumerGroupDescribe, ShareGroupDescribe, DescribeShareGroupOffsets,
OffsetFetch, DescribeConfigs and Metadata requests only.  Each group is
described with the request its protocol answers: DescribeGroups answers
classic groups only (a KIP-848 "consumer" group gets "not a classic group"),
so consumer-protocol, streams and share groups are asked with their own
requests, which kafka-python lacks (hook 6 of
:mod:`~migcheck.kafka.private_hooks`; where it is fenced off, those groups
are described by ListGroups and OffsetFetch alone).

A Kafka Streams application's group id is its ``application.id``; on the
classic protocol it is a consumer group, on the streams protocol (KIP-1071,
Kafka 4.2+) a *streams* group.  Both commit the source offsets the same way,
so the committed offsets name the source topics under either protocol.  A
streams group also tells its topology to the broker, which
:func:`describe_streams_group` reads back.

A share group (KIP-932) commits no offsets: what it reads is its members'
assignment and, also while it has no member, the partitions it has share
state for (DescribeShareGroupOffsets), each with its start offset, -1 while
none is persisted (observed on 4.3.1: the next fetch then applies
``share.auto.offset.reset`` again, so records written before it are skipped
under "latest").

Observed on Kafka 4.3.1: the broker keeps describing a streams group's
topology after every member has left (state ``Empty``; tests/integration/test_groups.py),
but does not recompute it then: after an input topic was altered from 2 to 4
partitions, an Empty group still reported its internal topics with 2 (seen
by hand).  An Empty group's counts are as of the last time it had members.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line, open_admin
from migcheck.kafka.streams_assignment import subtopologies_by_partition

if TYPE_CHECKING:
    from kafka import KafkaAdminClient
    from kafka.protocol.api_message import ApiMessage


@dataclass(frozen=True)
class Member:
    """A group member of any protocol; a Kafka Streams member's client id carries its
    thread's name.

    ``partitions`` are the partitions the member owns now (a classic member's decoded
    assignment; a consumer-protocol or share member's current assignment, not its
    target): on the classic protocol each Kafka Streams thread is one consumer member,
    and they are the source partitions its tasks read.  A share group's members may
    own the same partitions.  On the streams protocol ``process_id`` names the
    instance and ``active_tasks`` are its tasks ({sub-topology id: partitions});
    ``partitions`` stays empty.  A Kafka Streams member on the classic protocol names, in
    its assignment's user data, the sub-topology whose task reads each of its partitions:
    ``subtopology_of`` (:mod:`migcheck.kafka.streams_assignment`; empty for any other).
    """

    member_id: str
    client_id: str
    host: str
    partitions: tuple[tuple[str, int], ...] = ()
    process_id: str = ""
    active_tasks: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    subtopology_of: Mapping[tuple[str, int], int] = field(default_factory=dict)


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
    #: Always "" for consumer-protocol and share groups: their assignor runs in the
    #: broker (ConsumerGroupDescribe's "uniform" or "range"), so it says nothing about
    #: the client, and a broker's "range" is not a client's.
    protocol: str = ""
    #: Topics the group's own description says it reads beyond its committed offsets and
    #: members' partitions, sorted: a streams group's topology's sources; the topics a
    #: consumer-protocol or share group's members subscribe to; and the topics a share
    #: group has share state on, also while it has no member.
    subscribed: tuple[str, ...] = ()
    #: A share group's share partitions, (topic, partition) to its start offset, -1 while
    #: none is persisted (the group will apply its ``share.auto.offset.reset`` there
    #: again); empty for every other group, and where hook 6 is fenced off.
    share_started: dict[tuple[str, int], int] = field(default_factory=dict)
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


class _Refused(Exception):
    """A coordinator's error about one group (and one of its partitions) of an answer that
    may hold several: kafka-python's error, and which group it is about."""

    def __init__(self, error: Exception, group_id: str, partition: str = "") -> None:
        super().__init__(error)
        self.error = error
        self.group_id = group_id
        self.partition = partition

    def line(self, named: str | None) -> str:
        """The error's line, after the group it is about unless it is ``named`` already."""
        about = [] if self.group_id == named else [f"group {self.group_id!r}"]
        head = ", ".join(about + ([self.partition] if self.partition else []))
        return f"{head}: {first_line(self.error)}" if head else first_line(self.error)


@contextmanager
def _admin(
    client: ClientConfig, doing: str, group_id: str | None = None
) -> Iterator[KafkaAdminClient]:
    """An admin client, closed after use; a Kafka error becomes one ReadError line.

    ``doing`` says what was being read (naming ``group_id``, if given); the bootstrap
    servers follow it, then the error, after the group it is about if another.
    """
    from kafka.errors import KafkaError

    admin = open_admin(client)
    where = client.bootstrap_servers
    try:
        yield admin
    except _Refused as e:
        raise ReadError(f"{doing} {where}: {e.line(group_id)}") from None
    except KafkaError as e:
        raise ReadError(f"{doing} {where}: {first_line(e)}") from None
    finally:
        admin.close()


def describe_group(client: ClientConfig, group_id: str) -> GroupInfo | None:
    """The group ``group_id`` with its committed offsets, or None when no such group exists."""
    with _admin(client, f"reading group {group_id!r} from", group_id) as admin:
        listed = {str(g["group_id"]): g for g in admin.list_groups()}
        if group_id not in listed:
            return None
        (group,) = _describe(admin, {group_id: listed[group_id]})
        return group


def describe_all_groups(client: ClientConfig) -> list[GroupInfo]:
    """Every group on the cluster, sorted by id, described as :func:`describe_group`
    describes one.

    Asked in bulk, so that a cluster of hundreds of groups answers in seconds: one
    ListGroups, then per coordinator one OffsetFetch for every group that commits
    offsets (share groups commit none), one DescribeGroups for the classic groups, and
    one request of each newer protocol for all its groups (hook 6).
    """
    with _admin(client, "listing the groups at") as admin:
        return _describe(admin, {str(g["group_id"]): g for g in admin.list_groups()})


@dataclass(frozen=True)
class _Described:
    """What a group's describe requests add to its ListGroups entry and committed offsets."""

    members: tuple[Member, ...] = ()
    protocol: str = ""
    subscribed: tuple[str, ...] = ()
    share_started: dict[tuple[str, int], int] = field(default_factory=dict)


def _describe(admin: KafkaAdminClient, entries: Mapping[str, Mapping[str, Any]]) -> list[GroupInfo]:
    """The groups of ``entries`` (ListGroups' answer, by group id), each described with
    the requests its protocol answers, all of a kind at once; sorted by id."""
    types = {g: _group_type(e) for g, e in entries.items()}

    def of(*kinds: str) -> list[str]:
        return sorted(g for g, t in types.items() if t in kinds)

    committing = sorted(g for g, t in types.items() if t != "share")
    offsets = admin.list_group_offsets(committing) if committing else {}
    found: dict[str, _Described] = {}
    consumer = _consumer_groups(admin, of("consumer"))
    classic = of("classic") if consumer is not None else of("classic", "consumer")
    if classic:
        answered = admin.describe_groups(classic)
        found.update({g: _classic(answered.get(g) or {}) for g in classic})
    found.update(consumer or {})
    found.update(_streams_described(admin, of("streams")))
    found.update(_share_groups(admin, of("share")))
    return [
        GroupInfo(
            g,
            types[g],
            str(entries[g].get("group_state") or ""),
            d.members,
            _committed(offsets.get(g, {})),
            d.protocol,
            d.subscribed,
            d.share_started,
            _metadata(offsets.get(g, {})),
        )
        for g in sorted(entries)
        for d in [found.get(g, _Described())]
    ]


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


def _classic(described: Mapping[str, Any]) -> _Described:
    """Members and assignment protocol of one group of a DescribeGroups answer
    (kafka-python 3: {"members": [dict], "protocol_data": ...}; the protocol is empty
    unless the group is Stable)."""
    members = tuple(
        Member(
            str(m.get("member_id", "")),
            str(m.get("client_id", "")),
            str(m.get("client_host", "")),
            partitions,
            subtopology_of=subtopologies_by_partition(partitions, _user_data(assignment)),
        )
        for m in described.get("members") or []
        for assignment in [m.get("member_assignment")]
        for partitions in [_assigned(assignment)]
    )
    return _Described(members, str(described.get("protocol_data") or ""))


def _user_data(assignment: Any) -> bytes | None:
    """A decoded consumer-protocol assignment's user data (a Kafka Streams member's
    AssignmentInfo), if it has any: kafka-python 3's DescribeGroups answer holds it as
    text (its ``to_dict()`` makes bytes JSON-able), which :func:`_unjsoned` undoes."""
    data = assignment.get("user_data") if isinstance(assignment, Mapping) else None
    if isinstance(data, str):
        return _unjsoned(data)
    return bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else None


_ESCAPED = re.compile(rb"\\x([0-9a-f]{2})")


def _unjsoned(text: str) -> bytes:
    """The bytes kafka-python's ``to_dict()`` wrote as text: decoded as UTF-8, each byte
    that is not UTF-8 as the four characters ``\\xNN`` (``errors='backslashreplace'``).
    A byte 0x5C followed by ``x`` and two hex digits would read as one byte too; in the
    small ints an AssignmentInfo's task list is made of, that cannot occur."""
    raw = text.encode("utf-8", "surrogatepass")
    return _ESCAPED.sub(lambda m: bytes.fromhex(m[1].decode()), raw)


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


def _ask(
    admin: KafkaAdminClient, group_ids: list[str], request_for: Callable[[list[str]], Any]
) -> list[Any] | None:
    """Hook 6: ``request_for``'s answers from the coordinators of ``group_ids``; None where
    the hook is fenced off or the broker lacks the request (kafka-python's other errors
    propagate)."""
    import kafka.errors as errors

    from migcheck.kafka.private_hooks import ask_group_coordinators

    try:
        return ask_group_coordinators(admin, group_ids, request_for)
    except errors.IncompatibleBrokerVersion:
        return None


def _answered(responses: list[Any], group_ids: list[str]) -> dict[str, Any]:
    """Each group's part of the ``responses``, by id; a group the coordinator no longer
    knows under that protocol (GROUP_ID_NOT_FOUND: deleted since it was listed, or of
    another type now) is left out, any other error raised."""
    import kafka.errors as errors

    parts = {}
    for response in responses:
        for group in response.groups:
            if group.error_code == errors.GroupIdNotFoundError.errno:
                continue
            _raise_for(group.error_code, group.error_message, group.group_id)
            parts[group.group_id] = group
    return {g: parts[g] for g in group_ids if g in parts}


def _groups_described(
    admin: KafkaAdminClient, request: type[ApiMessage], group_ids: list[str]
) -> dict[str, Any] | None:
    """Each group's part of the coordinators' answers to ``request`` (a describe request
    of the ``StreamsGroupDescribe`` kind: group ids, and no ACL summary asked), as
    :func:`_answered` keeps them; None where it cannot be asked."""
    if not group_ids:
        return {}
    responses = _ask(
        admin, group_ids, lambda ids: request(group_ids=ids, include_authorized_operations=False)
    )
    if responses is None:
        return None
    return _answered(responses, group_ids)


def _raise_for(code: int, message: str | None, group_id: str, partition: str = "") -> None:
    """For a nonzero ``code``: kafka-python's error for it, as about ``group_id`` (and
    ``partition``), raised for :func:`_admin` to make one line of."""
    import kafka.errors as errors

    if code:
        raise _Refused(errors.for_code(code)(*filter(None, [message])), group_id, partition)


def _topic_partitions(assignment: Any) -> tuple[tuple[str, int], ...]:
    """A ConsumerGroupDescribe or ShareGroupDescribe assignment's partitions, sorted."""
    return tuple(
        sorted((t.topic_name, int(p)) for t in assignment.topic_partitions for p in t.partitions)
    )


def _new_protocol_member(member: Any) -> Member:
    """A consumer-protocol or share group's member, with its current assignment."""
    return Member(
        member.member_id, member.client_id, member.client_host, _topic_partitions(member.assignment)
    )


def _consumer_groups(admin: KafkaAdminClient, group_ids: list[str]) -> dict[str, _Described] | None:
    """Consumer-protocol groups (KIP-848) by ConsumerGroupDescribe: members, their current
    assignment and subscriptions; None where it cannot be asked (DescribeGroups is then
    asked, which answers "not a classic group" on Kafka 4.x: no members)."""
    from migcheck.kafka.schemas import ConsumerGroupDescribeRequest

    answered = _groups_described(admin, ConsumerGroupDescribeRequest, group_ids)
    if answered is None:
        return None
    return {
        g: _Described(
            tuple(map(_new_protocol_member, group.members)),
            subscribed=_subscriptions(group.members),
        )
        for g, group in answered.items()
    }


def _subscriptions(members: Any, *more: str) -> tuple[str, ...]:
    """The topics ``members`` subscribe to by name, and ``more``, sorted once each."""
    return tuple(sorted({*more, *(t for m in members for t in m.subscribed_topic_names)}))


def _share_groups(admin: KafkaAdminClient, group_ids: list[str]) -> dict[str, _Described]:
    """Share groups (KIP-932) by ShareGroupDescribe (members, their assignment and
    subscriptions) and DescribeShareGroupOffsets (every partition the group has share
    state for, with its start offset, members or not); nothing where they cannot be
    asked (a broker older than 4.1, or hook 6 fenced off)."""
    from migcheck.kafka.schemas import (
        DescribeShareGroupOffsetsRequest,
        ShareGroupDescribeRequest,
    )

    if not group_ids:
        return {}
    members = _groups_described(admin, ShareGroupDescribeRequest, group_ids) or {}
    every = DescribeShareGroupOffsetsRequest.Group
    states = _ask(
        admin,
        group_ids,
        lambda ids: DescribeShareGroupOffsetsRequest(
            groups=[every(group_id=g, topics=None) for g in ids]
        ),
    )
    started = {
        g: _share_started(g, group) for g, group in _answered(states or [], group_ids).items()
    }
    found = {}
    for g in group_ids:
        group_members = members[g].members if g in members else []
        starts = started.get(g, {})
        found[g] = _Described(
            tuple(map(_new_protocol_member, group_members)),
            subscribed=_subscriptions(group_members, *(t for t, _ in starts)),
            share_started=starts,
        )
    return found


def _share_started(group_id: str, group: Any) -> dict[tuple[str, int], int]:
    """One group's DescribeShareGroupOffsets answer: (topic, partition) to start offset; a
    partition's error is raised (its state unknown)."""
    started = {}
    for topic in group.topics:
        for p in topic.partitions:
            where = f"{topic.topic_name}-{p.partition_index}"
            _raise_for(p.error_code, p.error_message, group_id, where)
            started[(topic.topic_name, p.partition_index)] = p.start_offset
    return dict(sorted(started.items()))


def _streams_described(admin: KafkaAdminClient, group_ids: list[str]) -> dict[str, _Described]:
    """Streams groups by StreamsGroupDescribe: members with their tasks, and the
    topology's source topics; nothing where it cannot be asked."""
    described = {}
    for g, streams in _streams_groups(admin, group_ids).items():
        members = tuple(
            Member(
                m.member_id,
                m.client_id,
                m.client_host,
                process_id=m.process_id,
                active_tasks=m.active_tasks,
            )
            for m in streams.members
        )
        sources = {t for sub in streams.topology or () for t in sub.source_topics}
        described[g] = _Described(members, subscribed=tuple(sorted(sources)))
    return described


def describe_streams_group(client: ClientConfig, group_id: str) -> StreamsGroup | None:
    """The streams group ``group_id`` with its topology, or None when no streams group has it.

    None also for a classic or consumer group of that name, and for a broker
    without the StreamsGroupDescribe API (older than Kafka 4.0: no streams
    groups there).
    """
    with _admin(client, f"describing streams group {group_id!r} at", group_id) as admin:
        return _describe_streams(admin, group_id)


def _describe_streams(admin: KafkaAdminClient, group_id: str) -> StreamsGroup | None:
    """One streams group, as :func:`_streams_groups` describes it; None where it does not."""
    return _streams_groups(admin, [group_id]).get(group_id)


def _streams_groups(admin: KafkaAdminClient, group_ids: list[str]) -> dict[str, StreamsGroup]:
    """Ask the groups' coordinators (hook 6 of :mod:`~migcheck.kafka.private_hooks`);
    kafka-python's errors propagate.  A group is left out for GROUP_ID_NOT_FOUND (also
    "not a streams group"), and all are from a broker without StreamsGroupDescribe and
    where the hook is fenced off: their model is then inferred."""
    from migcheck.kafka.schemas import StreamsGroupDescribeRequest

    answered = _groups_described(admin, StreamsGroupDescribeRequest, group_ids) or {}
    return {g: _streams_group(group) for g, group in answered.items()}


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
