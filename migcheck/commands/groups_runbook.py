"""``migcheck runbook --group``: the ordering-safe runbook for plain consumer groups.

Read-only: the topic's count and end offsets, and each group's members and committed
offsets.  The groups are the ones named (``--group``), or else every reader of the
topic :mod:`migcheck.readers` finds (share groups left out: they keep no order).  A
stateful app's group is refused (its kind and evidence from :mod:`migcheck.readers`):
a Kafka Streams app's runbook is ``--application-id``'s, which resets and reprocesses
its state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migcheck.commands.options import Connection
from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_OK, UsageError
from migcheck.frameworks.registry import STATEFUL_KINDS, WITH_RUNBOOKS, label
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import describe_topics, high_watermarks
from migcheck.model.header import report_header
from migcheck.model.migrate import MigrateTuning
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import (
    ASSIGN_TIMEOUT,
    COMMIT_TIMEOUT,
    LAG_TIMEOUT,
    GroupsFacts,
    Runbook,
    Strategy,
)
from migcheck.model.topics import check_changes
from migcheck.readers.discovery import Found, find_group, find_readers
from migcheck.readers.standing import group_lag
from migcheck.runbook.groups import steps


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
    strategy: Strategy = Strategy.AUTO  # auto and in-place: the alter; online: migrate
    tuning: MigrateTuning = field(default_factory=MigrateTuning)  # online only
    connection: Connection = field(default_factory=Connection)


def run_groups_runbook(options: GroupsRunbookOptions) -> Outcome[Runbook]:
    """The runbook (always exit 0); a bad topic, count or group is a UsageError (one line)."""
    if options.strategy in (Strategy.NEW_TOPIC, Strategy.MOVE_STATE):
        raise UsageError(
            f"--strategy {options.strategy} is for a stateful app (--application-id); plain groups "
            "take in-place (the default) or online"
        )
    online = options.strategy is Strategy.ONLINE
    client = options.connection.client()
    (meta,) = describe_topics(client, [options.topic])
    check_changes({options.topic: meta.partition_count}, [options.to])
    groups = plain_groups(client, options.topic, options.groups)
    ends = high_watermarks(client, options.topic, range(meta.partition_count))
    facts = GroupsFacts(
        bootstrap=options.connection.bootstrap or "",
        command_config=options.connection.command_config,
        topic=options.topic,
        partitions=meta.partition_count,
        to=options.to,
        groups=tuple(group_lag(g.group, options.topic, ends) for g in groups),
        discovered=not options.groups,
        lag_timeout=options.lag_timeout,
        assign_timeout=options.assign_timeout,
        commit_timeout=options.commit_timeout,
        accept_loss_risk=tuple(dict.fromkeys(options.accept_loss_risk)),
        strategy=Strategy.ONLINE if online else Strategy.IN_PLACE,
        tuning=options.tuning,
    )
    return Outcome(Runbook(facts, tuple(steps(facts)), report_header()), EXIT_OK)


def plain_groups(
    client: ClientConfig,
    topic: str,
    named: tuple[str, ...],
    skip: tuple[str, ...] = (),
    none_ok: bool = False,
) -> list[Found]:
    """The named groups, each checked, or the plain readers found on the topic: what this
    runbook and ``migrate`` serve; a stateful app's group is refused in one line.
    ``skip``: groups served otherwise (``migrate``'s app and its shadow)."""
    if named:
        return [_named(client, g, topic) for g in dict.fromkeys(named)]
    found = [
        f
        for f in find_readers(client, [topic])[topic]
        if f.evidence.kind is not ReaderKind.SHARE_GROUP  # no order to keep
        and f.group.group_id not in skip
    ]
    if not found and not none_ok:
        raise UsageError(
            f"no consumer group reads {topic}: name the groups that read it with --group G"
        )
    for f in found:
        if f.evidence.kind in STATEFUL_KINDS:
            raise UsageError(
                f"{_refusal(f)} (found reading {topic}; or name the other groups with --group)"
            )
    return found


def _named(client: ClientConfig, group_id: str, topic: str) -> Found:
    """A group named with --group: it must exist, read the topic and keep no state."""
    found = find_group(client, group_id, vouched=True)
    if found is None:
        raise UsageError(f"--group {group_id}: no such group at {client.bootstrap_servers}")
    if found.evidence.kind in STATEFUL_KINDS or found.evidence.kind is ReaderKind.SHARE_GROUP:
        raise UsageError(_refusal(found))
    if not found.group.reads(topic):
        raise UsageError(
            f"group {group_id!r} does not read {topic}: no committed offset on it and "
            "no member assigned to it"
        )
    return found


def _refusal(found: Found) -> str:
    """The one line that refuses a group this runbook must not serve."""
    group, evidence = found.group.group_id, found.evidence
    if evidence.kind is ReaderKind.SHARE_GROUP:
        return (
            f"group {group!r} is a share group: it gives records out in no key order, so "
            "there is no order to keep; leave it out of --group"
        )
    fits = (
        f": use --application-id {group} for its runbook"
        if evidence.kind in WITH_RUNBOOKS
        else ": its state needs its framework's own migration, not this runbook"
    )
    return f"group {group!r} is {label(evidence.kind)} ({'; '.join(evidence.facts)}){fits}"
