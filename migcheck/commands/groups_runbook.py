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
from migcheck.commands.outcome import Outcome
from migcheck.consumers.groups import GroupKind, kind, lag, reads, refusal
from migcheck.consumers.steps import steps
from migcheck.errors import EXIT_OK, UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import (
    GroupInfo,
    describe_group,
    groups_with_offsets_on,
    topics_with_prefix,
)
from migcheck.kafka.metadata import describe_topics, high_watermarks
from migcheck.model.header import report_header
from migcheck.model.runbook import ASSIGN_TIMEOUT, COMMIT_TIMEOUT, LAG_TIMEOUT, GroupsFacts, Runbook
from migcheck.model.topics import CountChange, compare_count
from migcheck.streams.discovery import is_internal


@dataclass
class GroupsRunbookOptions:
    """Everything ``migcheck runbook --group`` was asked."""

    topic: str
    to: int
    groups: tuple[str, ...] = ()  # empty: every group with committed offsets on the topic
    lag_timeout: int = LAG_TIMEOUT
    assign_timeout: int = ASSIGN_TIMEOUT
    commit_timeout: int = COMMIT_TIMEOUT
    accept_loss_risk: tuple[str, ...] = ()  # groups of the runbook; steps() checks that
    connection: Connection = field(default_factory=Connection)


def run_groups_runbook(options: GroupsRunbookOptions) -> Outcome[Runbook]:
    """The runbook (always exit 0); a bad topic, count or group is a UsageError (one line)."""
    client = options.connection.client()
    (meta,) = describe_topics(client, [options.topic])
    if (
        compare_count(meta.partition_count, options.to) is not CountChange.GROW
    ):  # same: nothing to alter
        raise UsageError(
            f"--to {options.to}: {options.topic} has {meta.partition_count} partitions already; "
            "Kafka can only add partitions"
        )
    groups = _groups(client, options)
    ends = high_watermarks(client, options.topic, range(meta.partition_count))
    facts = GroupsFacts(
        bootstrap=options.connection.bootstrap or "",
        command_config=options.connection.command_config,
        topic=options.topic,
        partitions=meta.partition_count,
        to=options.to,
        groups=tuple(lag(g, options.topic, ends) for g in groups),
        discovered=not options.groups,
        lag_timeout=options.lag_timeout,
        assign_timeout=options.assign_timeout,
        commit_timeout=options.commit_timeout,
        accept_loss_risk=tuple(dict.fromkeys(options.accept_loss_risk)),
    )
    return Outcome(Runbook(facts, tuple(steps(facts)), report_header()), EXIT_OK)


def _groups(client: ClientConfig, options: GroupsRunbookOptions) -> list[GroupInfo]:
    """The named groups, or the ones found reading the topic; each one checked."""
    ids = list(dict.fromkeys(options.groups)) or groups_with_offsets_on(client, options.topic)
    if not ids:
        raise UsageError(
            f"no consumer group has committed offsets on {options.topic}: name the groups that "
            "read it with --group G"
        )
    topics = topics_with_prefix(client, "")
    groups = [_group(client, g) for g in ids]
    for group in groups:
        _check(
            group,
            options.topic,
            [t for t in topics if is_internal(group.group_id, t)],
            options.groups,
        )
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
