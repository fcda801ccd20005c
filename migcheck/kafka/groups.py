"""What the cluster knows about an application: its group, committed offsets and topics.

Strictly read-only: ListGroups, DescribeGroups, OffsetFetch and Metadata
requests only.  A Kafka Streams application's group id is its
``application.id``; on the classic protocol it is a consumer group, on the
streams protocol (KIP-1071, Kafka 4.2+) a *streams* group.  Both commit the
source offsets the same way, so the committed offsets name the source topics
under either protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line, open_admin


@dataclass(frozen=True)
class Member:
    """A member of a classic group: its client id carries the Streams thread name."""

    member_id: str
    client_id: str
    host: str


@dataclass(frozen=True)
class GroupInfo:
    """A group as the coordinator describes it; ``group_type`` is ``""`` when it is unknown."""

    group_id: str
    group_type: str  # "classic", "consumer", "streams", "share" or ""
    state: str
    members: tuple[Member, ...] = ()
    committed: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def committed_topics(self) -> tuple[str, ...]:
        """Topics with a committed offset, sorted."""
        return tuple(sorted({t for t, _ in self.committed}))


def describe_group(client: ClientConfig, group_id: str) -> GroupInfo | None:
    """The group ``group_id`` with its committed offsets, or None when no such group exists."""
    from kafka.errors import KafkaError

    admin = open_admin(client)
    try:
        listed = {g["group_id"]: g for g in admin.list_groups()}
        if group_id not in listed:
            return None
        entry = listed[group_id]
        offsets = admin.list_group_offsets(group_id).get(group_id, {})
        committed = {(tp.topic, tp.partition): om.offset for tp, om in offsets.items()}
        group_type = str(entry.get("group_type") or entry.get("protocol_type") or "")
        state = str(entry.get("group_state") or "")
        members = _classic_members(admin, group_id) if group_type in ("classic", "consumer") else ()
        return GroupInfo(group_id, group_type.lower(), state, members, committed)
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(f"reading group {group_id!r} from {where}: {first_line(e)}") from None
    finally:
        admin.close()


def _classic_members(admin, group_id: str) -> tuple[Member, ...]:  # admin: KafkaAdminClient
    """The members of a classic group (kafka-python 3: {group_id: {"members": [dict]}})."""
    described = admin.describe_groups([group_id]).get(group_id) or {}
    return tuple(
        Member(
            str(m.get("member_id", "")), str(m.get("client_id", "")), str(m.get("client_host", ""))
        )
        for m in described.get("members") or []
    )


def topics_with_prefix(client: ClientConfig, prefix: str) -> list[str]:
    """Every topic whose name starts with ``prefix`` (an application's internal topics)."""
    from kafka.errors import KafkaError

    admin = open_admin(client)
    try:
        return sorted(t for t in admin.list_topics() if t.startswith(prefix))
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(f"listing topics at {where}: {first_line(e)}") from None
    finally:
        admin.close()
