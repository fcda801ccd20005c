"""The readers of a topic, as ``migcheck readers`` reports them: who reads it, what kind
of reader each one is and why migcheck says so, where each stands, and what a partition
increase does to it.

Typed once here, below every layer (the JSON's TypedDicts, field by field in the
documented order; no ``from __future__ import annotations``, as in
:mod:`migcheck.model.header`): :mod:`migcheck.readers` fills it in from the
cluster, :mod:`migcheck.report.readers` writes it out, and the commands that must not
treat a reader as something it is not (``app``, ``plan``, ``runbook``) read its kind.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import TypedDict

from migcheck.model.header import Kind


class Protocol(StrEnum):
    """The rebalance protocol: it decides which check fails first and how the error reads."""

    CLASSIC = "classic"  # the leader's StreamsPartitionAssignor validates internal topics
    STREAMS = "streams"  # KIP-1071: the broker's group coordinator validates the topology


class ReaderKind(StrEnum):
    """What reads a topic through a group, as its evidence shows."""

    KAFKA_STREAMS = "kafka-streams"
    KSQLDB = "ksqldb"
    QUIX_STREAMS = "quix-streams"
    FAUST = "faust"
    KAFKA_CONNECT = "kafka-connect"
    SHARE_GROUP = "share-group"
    CONSUMER_GROUP = "consumer-group"
    UNKNOWN = "unknown"


#: Each kind that is not a stream processor as a sentence names it ("... is a plain
#: consumer group"); a stream processor's label is its framework module's
#: (:func:`migcheck.frameworks.registry.label`).
OTHER_LABELS: dict[ReaderKind, str] = {
    ReaderKind.KAFKA_CONNECT: "a Kafka Connect sink",
    ReaderKind.SHARE_GROUP: "a share group",
    ReaderKind.CONSUMER_GROUP: "a plain consumer group",
    ReaderKind.UNKNOWN: "a group of unknown kind",
}


class ReaderRisk(StrEnum):
    """What a partition increase does to a reader that keeps no state (this issue's words)."""

    ORDER = "ORDER"  # per-key order breaks for the moved keys while older records are unread
    LOSS_RISK = "LOSS_RISK"  # records in a new partition before the group holds an offset
    UNKNOWN = "UNKNOWN"  # what cannot be said, and which option settles it
    APP = "APP"  # a stateful app: judged by ``migcheck app`` (its state, not its order)


@dataclass(frozen=True)
class Evidence:
    """Why a reader is of its kind: each fact that told it apart, in plain words."""

    kind: ReaderKind
    facts: tuple[str, ...]


class ReaderPartition(TypedDict):
    partition: int
    end_offset: int
    committed_offset: int | None  # None: no committed offset there
    lag: int | None  # end - committed; None without a committed offset


class ReaderJudgement(TypedDict):
    risk: ReaderRisk
    text: str


class ReaderEntry(TypedDict):
    id: str
    kind: ReaderKind
    evidence: list[str]
    protocol: str  # classic, consumer, streams, share ("" when the broker does not say)
    state: str  # the coordinator's word: Stable, Empty, ...
    members: int
    lag: int | None  # summed over the partitions with a committed offset
    #: No read-only API of Kafka (to 4.3) gives a group's last commit time: always None
    #: from such a broker, and the report says so.
    last_commit: str | None
    judgements: list[ReaderJudgement]
    partitions: list[ReaderPartition]


class ReadersTopic(TypedDict):
    topic: str
    partitions: int
    readers: list[ReaderEntry]


class ReadersReport(Kind):
    migcheck_version: str
    generated_at: str
    bootstrap_servers: str
    to: int | None  # the proposed count the judgements name, when one was given
    topics: list[ReadersTopic]
    notes: list[str]
