"""Every reader of a topic, found on the cluster: strictly read-only.

A reader is a group that has committed offsets on the topic, has members assigned to
it, or whose own description names it (a streams group's topology), on every group
protocol.  Each is described in bulk (:func:`migcheck.kafka.groups.describe_all_groups`)
and its kind told from the evidence (:mod:`migcheck.readers.kinds`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from migcheck.frameworks.registry import label
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import GroupInfo, describe_all_groups, describe_group, topics_with_prefix
from migcheck.model.readers import Evidence
from migcheck.readers.kinds import Seen, identify


@dataclass(frozen=True)
class Found:
    """A group that reads a topic, and what kind of reader the evidence shows it is."""

    group: GroupInfo
    evidence: Evidence


def find_readers(
    client: ClientConfig, topics: Sequence[str], vouched: Collection[str] = ()
) -> dict[str, list[Found]]:
    """Each topic's readers, by group id; ``vouched`` are ids the user names plain groups."""
    groups = describe_all_groups(client)
    names = set(topics_with_prefix(client, ""))
    return {
        topic: [
            Found(g, identify(Seen(g, names, g.group_id in vouched)))
            for g in groups
            if g.reads(topic)
        ]
        for topic in topics
    }


def described(found: Sequence[Found]) -> list[str]:
    """Each reader as a line names it: its group id and its kind, in the framework's
    words (the runbook's and migrate's refusals of a reader nobody moves)."""
    return [f"{f.group.group_id} ({label(f.evidence.kind)})" for f in found]


def find_group(client: ClientConfig, group_id: str, vouched: bool = False) -> Found | None:
    """One group and its kind, or None when no such group exists."""
    group = describe_group(client, group_id)
    if group is None:
        return None
    return Found(group, identify(Seen(group, set(topics_with_prefix(client, "")), vouched)))
