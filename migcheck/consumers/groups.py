"""Which groups the plain-consumer runbook serves, and where each stands on the topic.

Pure: a group as :mod:`migcheck.kafka.groups` describes it in, a verdict out.  A Kafka
Streams application reads through a consumer group too, but a plain runbook is wrong
for it (its state and internal topics need the reset-and-reprocess runbook), so it is
told apart here, once: a streams group (KIP-1071), a classic group whose members
agreed on Streams' assignor ``stream``, or an idle classic group (the coordinator names
no assignor then) that owns Streams internal topics (``<group>-...-changelog``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from migcheck.kafka.groups import GroupInfo
from migcheck.model.runbook import GroupLag

#: The assignment protocol Kafka Streams' members agree on in a classic group
#: (StreamsPartitionAssignor's name).
STREAMS_ASSIGNOR = "stream"


class GroupKind(StrEnum):
    """What reads through a group, as far as the runbook cares."""

    PLAIN = "plain"  # consumers: the ordering-safe runbook
    STREAMS = "streams"  # a Kafka Streams application: --application-id's runbook
    SHARE = "share"  # a share group: records are not given out in order anyway


def kind(group: GroupInfo, internal_topics: Sequence[str]) -> GroupKind:
    """The group's kind; ``internal_topics`` are the Streams internal topics named after it."""
    if group.group_type == "share":
        return GroupKind.SHARE
    if group.group_type == "streams" or group.protocol == STREAMS_ASSIGNOR:
        return GroupKind.STREAMS
    if not group.members and internal_topics:
        return GroupKind.STREAMS
    return GroupKind.PLAIN


def refusal(group: GroupInfo, what: GroupKind, internal_topics: Sequence[str]) -> str:
    """The one line that refuses a group this runbook must not serve (not PLAIN)."""
    if what == GroupKind.SHARE:
        return (
            f"group {group.group_id!r} is a share group: it gives records out in no key "
            "order, so there is no order to keep; leave it out of --group"
        )
    return (
        f"group {group.group_id!r} is a Kafka Streams application "
        f"({_streams_evidence(group, internal_topics)}): use --application-id "
        f"{group.group_id} for its runbook"
    )


def _streams_evidence(group: GroupInfo, internal_topics: Sequence[str]) -> str:
    """What gave the application away, for the refusal."""
    if group.group_type == "streams":
        return "a streams group"
    if group.protocol == STREAMS_ASSIGNOR:
        return f"its members use Streams' assignor {STREAMS_ASSIGNOR!r}"
    return f"its internal topic {internal_topics[0]}"


def reads(group: GroupInfo, topic: str) -> bool:
    """Whether the group reads ``topic``: offsets committed on it, or a member assigned it."""
    return any(t == topic for t, _ in group.committed) or any(
        t == topic for m in group.members for t, _ in m.partitions
    )


def lag(group: GroupInfo, topic: str, ends: Mapping[int, int]) -> GroupLag:
    """The group's members and its lag on ``topic``: each committed partition's end offset
    (``ends``) less its committed offset, summed; None when it committed none there."""
    committed = {p: o for (t, p), o in group.committed.items() if t == topic and o >= 0}
    behind = sum(max(0, ends.get(p, o) - o) for p, o in committed.items())
    return GroupLag(group.group_id, len(group.members), behind if committed else None)
