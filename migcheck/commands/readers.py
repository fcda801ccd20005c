"""``migcheck readers``: every reader of each topic, its kind and evidence, where it stands,
and what a partition increase does to it.

Strictly read-only: ListGroups, OffsetFetch, DescribeGroups, StreamsGroupDescribe,
Metadata and ListOffsets.  Always exit 0: this lists and judges; the gate decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from migcheck.commands.options import Connection
from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_OK, UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import share_group_reset
from migcheck.kafka.metadata import describe_topics, high_watermarks
from migcheck.model.header import report_header
from migcheck.model.readers import (
    ReaderEntry,
    ReaderKind,
    ReadersReport,
    ReadersTopic,
)
from migcheck.model.topics import check_changes
from migcheck.readers.discovery import Found, find_readers
from migcheck.readers.standing import partition_lags, summed_lag
from migcheck.readers.verdicts import Standing, judge

#: Said once per report: no read-only API of Kafka gives a group's last commit time.
NO_COMMIT_TIME = (
    "the time of a group's last commit is not given by the broker (OffsetFetch returns "
    "no timestamp): last_commit stays null"
)


@dataclass
class ReadersOptions:
    """Everything ``migcheck readers`` was asked."""

    topics: tuple[str, ...]
    to: int | None = None
    groups: tuple[str, ...] = ()  # ids the user vouches are plain consumer groups
    connection: Connection = field(default_factory=Connection)


def run_readers(options: ReadersOptions) -> Outcome[ReadersReport]:
    """The readers of each topic; a missing topic or a count that does not grow is a
    UsageError (one line)."""
    if not options.topics:
        raise UsageError("--topic is required: name the topic whose readers to list")
    client = options.connection.client()
    metas = {m.name: m for m in describe_topics(client, options.topics)}
    if options.to is not None:
        check_changes({m.name: m.partition_count for m in metas.values()}, [options.to])
    found = find_readers(client, options.topics, set(options.groups))
    topics = [
        ReadersTopic(
            topic=t,
            partitions=metas[t].partition_count,
            readers=reader_entries(client, t, metas[t].partition_count, found[t], options.to),
        )
        for t in dict.fromkeys(options.topics)
    ]
    report = ReadersReport(
        **report_header(),
        bootstrap_servers=client.bootstrap_servers,
        to=options.to,
        topics=topics,
        notes=[NO_COMMIT_TIME],
    )
    return Outcome(report, EXIT_OK)


def reader_entries(
    client: ClientConfig, topic: str, count: int, found: Sequence[Found], to: int | None
) -> list[ReaderEntry]:
    """Each found reader of ``topic`` (``count`` partitions): where it stands, and what
    an increase to ``to`` does to it (``gate`` judges its changes with them too)."""
    ends = high_watermarks(client, topic, range(count))
    return [_entry(client, topic, f, ends, to) for f in found]


def _entry(
    client: ClientConfig, topic: str, found: Found, ends: dict[int, int], to: int | None
) -> ReaderEntry:
    group, evidence = found.group, found.evidence
    partitions = list(partition_lags(group, topic, ends))
    share = evidence.kind is ReaderKind.SHARE_GROUP
    standing = Standing(
        id=group.group_id,
        kind=evidence.kind,
        topic=topic,
        members=len(group.members),
        partitions=partitions,
        to=to,
        share_reset=share_group_reset(client, group.group_id) if share else None,
        why_unknown="; ".join(evidence.facts),
    )
    return ReaderEntry(
        id=group.group_id,
        kind=evidence.kind,
        evidence=list(evidence.facts),
        protocol=group.group_type,
        state=group.state,
        members=len(group.members),
        lag=summed_lag(partitions),
        last_commit=None,
        judgements=list(judge(standing)),
        partitions=partitions,
    )
