"""``migcheck runbook --group``: the ordering-safe runbook for plain consumer groups.

Read-only: the topic's count and end offsets, and each group's members and committed
offsets.  The groups are the ones named (``--group``), or else every group with
committed offsets on the topic.  A Kafka Streams application's group is refused
(:mod:`migcheck.consumers.groups` tells them apart): its runbook is
``--application-id``'s, which resets and reprocesses its state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from migcheck.commands.options import Connection
from migcheck.consumers.groups import GroupKind, kind, lag, reads, refusal
from migcheck.consumers.steps import steps
from migcheck.errors import UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import (
    GroupInfo,
    describe_group,
    groups_with_offsets_on,
    topics_with_prefix,
)
from migcheck.kafka.metadata import describe_topics, high_watermarks
from migcheck.model.header import report_header
from migcheck.model.runbook import ASSIGN_TIMEOUT, LAG_TIMEOUT, GroupsFacts
from migcheck.report.runbook import render_markdown, render_sh
from migcheck.streams.discovery import is_internal


@dataclass
class GroupsRunbookOptions:
    """Everything ``migcheck runbook --group`` was asked."""

    topic: str
    to: int
    groups: tuple[str, ...] = ()  # empty: every group with committed offsets on the topic
    lag_timeout: int = LAG_TIMEOUT
    assign_timeout: int = ASSIGN_TIMEOUT
    fmt: str = "markdown"
    connection: Connection = field(default_factory=Connection)


def run_groups_runbook(o: GroupsRunbookOptions) -> str:
    """The runbook's text; a bad topic, count or group is a UsageError (one line)."""
    client = o.connection.client()
    (meta,) = describe_topics(client, [o.topic])
    if o.to <= meta.partition_count:
        raise UsageError(
            f"--to {o.to}: {o.topic} has {meta.partition_count} partitions already; "
            "Kafka can only add partitions"
        )
    groups = _groups(client, o)
    ends = high_watermarks(client, o.topic, range(meta.partition_count))
    facts = GroupsFacts(
        bootstrap=o.connection.bootstrap or "",
        command_config=o.connection.command_config,
        topic=o.topic,
        partitions=meta.partition_count,
        to=o.to,
        groups=tuple(lag(g, o.topic, ends) for g in groups),
        discovered=not o.groups,
        lag_timeout=o.lag_timeout,
        assign_timeout=o.assign_timeout,
    )
    header = report_header()
    render = render_sh if o.fmt == "sh" else render_markdown
    return render(facts, steps(facts), header["migcheck_version"], header["generated_at"])


def _groups(client: ClientConfig, o: GroupsRunbookOptions) -> list[GroupInfo]:
    """The named groups, or the ones found reading the topic; each one checked."""
    ids = list(dict.fromkeys(o.groups)) or groups_with_offsets_on(client, o.topic)
    if not ids:
        raise UsageError(
            f"no consumer group has committed offsets on {o.topic}: name the groups that "
            "read it with --group G"
        )
    topics = topics_with_prefix(client, "")
    groups = [_group(client, g) for g in ids]
    for group in groups:
        _check(group, o.topic, [t for t in topics if is_internal(group.group_id, t)], o.groups)
    return groups


def _group(client: ClientConfig, group_id: str) -> GroupInfo:
    group = describe_group(client, group_id)
    if group is None:
        raise UsageError(f"--group {group_id}: no such group at {client.bootstrap_servers}")
    return group


def _check(group: GroupInfo, topic: str, internal: Sequence[str], named: Sequence[str]) -> None:
    """Refuse a group this runbook must not serve, or one that does not read the topic."""
    what = kind(group, internal)
    if what != GroupKind.PLAIN:
        found = "" if named else f" (found reading {topic}; or name the other groups with --group)"
        raise UsageError(refusal(group, what, internal) + found)
    if not reads(group, topic):
        raise UsageError(
            f"group {group.group_id!r} does not read {topic}: no committed offset on it and "
            "no member assigned to it"
        )
