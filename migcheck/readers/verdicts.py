"""What a partition increase does to each reader, in the words of what really happens.

Pure: a reader's kind, where it stands on the topic and what the broker says of its reset
policy in; :class:`~migcheck.model.readers.ReaderJudgement` s out.  A plain reader keeps no
state, so it cannot be corrupted; what it can suffer is read order and skipped records:

- ``ORDER``: Kafka keeps a key's records in order within one partition only.  After the
  alter a moved key's new records land in its new partition and can be read before its
  older records still unread in the old one: the lag now is what can be overtaken.
- ``LOSS_RISK``: a consumer that meets a partition without a committed offset starts
  it at ``auto.offset.reset``, ``latest`` by default in the Java client, librdkafka and
  kafka-python, so the records producers wrote there before it held an offset are
  skipped (KIP-1327).  The policy is a client setting: the broker cannot say it.
- ``UNKNOWN``: what cannot be said, and what settles it.

A stateful app (Kafka Streams, ksqlDB, Quix Streams, Faust) is judged by what its state
does, which ``migcheck app`` measures: here it is pointed there (``APP``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migcheck.frameworks.registry import FRAMEWORKS, STATEFUL_KINDS
from migcheck.kafka.groups import SHARE_RESET_CONFIG
from migcheck.model.readers import (
    ReaderJudgement,
    ReaderKind,
    ReaderPartition,
    ReaderRisk,
)
from migcheck.readers.standing import summed_lag

#: The share groups' reset setting (a group config, KIP-932) and its default.
SHARE_RESET = SHARE_RESET_CONFIG
SHARE_RESET_DEFAULT = "latest"


@dataclass(frozen=True)
class Standing:
    """A reader as a verdict sees it."""

    id: str
    kind: ReaderKind
    topic: str
    members: int
    partitions: Sequence[ReaderPartition]
    to: int | None = None  # the proposed count, when one was given
    share_reset: str | None = None  # a share group's reset setting, as the broker says it
    why_unknown: str = ""  # the evidence of an unknown kind


def _judgement(risk: ReaderRisk, text: str) -> ReaderJudgement:
    return ReaderJudgement(risk=risk, text=text)


def judge(reader: Standing) -> tuple[ReaderJudgement, ...]:
    """Everything the increase does to ``reader``, worst first."""
    if reader.kind in STATEFUL_KINDS:
        return (_app(reader),)
    return tuple(JUDGES[reader.kind](reader))


def _count(reader: Standing) -> str:
    return f"{reader.to} partitions" if reader.to else "more partitions"


def _app(reader: Standing) -> ReaderJudgement:
    how = FRAMEWORKS[reader.kind].increase(reader.id, reader.topic, str(reader.to or "N"))
    return _judgement(
        ReaderRisk.APP,
        f"a {reader.kind} app keeps state per partition, which {_count(reader)} split: {how}",
    )


def _order(reader: Standing) -> ReaderJudgement:
    lag = summed_lag(reader.partitions)
    unread = (
        f"{lag:,} records are unread now"
        if lag is not None
        else "it has no committed offset, so how much is unread cannot be said"
    )
    return _judgement(
        ReaderRisk.ORDER,
        "per-key order breaks for the keys that move: their new records, in their new "
        f"partitions, can be read before their older records still unread ({unread}); "
        "migcheck runbook --group drains the lag before the alter",
    )


def _loss(reader: Standing) -> ReaderJudgement:
    return _judgement(
        ReaderRisk.LOSS_RISK,
        "records written to a new partition before the group holds an offset there are "
        "skipped if it starts at auto.offset.reset=latest (the default of the Java client, "
        "librdkafka and kafka-python); the broker cannot say which policy its consumers "
        "use. migcheck runbook --group commits offsets on the new partitions before the "
        "producers resume",
    )


def _consumer(reader: Standing) -> list[ReaderJudgement]:
    return [_order(reader), _loss(reader)]


def _connect(reader: Standing) -> list[ReaderJudgement]:
    return [
        _order(reader),
        _judgement(
            ReaderRisk.UNKNOWN,
            "Kafka Connect starts a sink's new partitions at earliest unless the worker "
            "(consumer.auto.offset.reset) or the connector "
            "(consumer.override.auto.offset.reset) says latest, which the broker does not "
            "show: the connector's config (GET /connectors/<name>/config) settles it",
        ),
    ]


def _share(reader: Standing) -> list[ReaderJudgement]:
    if reader.share_reset is None:
        return [
            _judgement(
                ReaderRisk.UNKNOWN,
                f"its {SHARE_RESET} could not be read: kafka-configs --describe "
                f"--entity-type groups --entity-name {reader.id} settles it (latest skips "
                "records written to a new partition before the group starts reading it)",
            )
        ]
    if reader.share_reset != SHARE_RESET_DEFAULT:
        return []
    return [
        _judgement(
            ReaderRisk.LOSS_RISK,
            f"its {SHARE_RESET} is latest: a new partition is started at its end when the "
            "group first reads it, so records written there before are skipped; "
            f"kafka-configs --alter --entity-type groups --entity-name {reader.id} "
            f"--add-config {SHARE_RESET}=earliest before the alter keeps them",
        )
    ]


def _unknown(reader: Standing) -> list[ReaderJudgement]:
    why = f"what reads through it cannot be told: {reader.why_unknown}"
    return [_judgement(ReaderRisk.UNKNOWN, why)]


#: Each kind without state and its judge: one entry per kind.
JUDGES: dict[ReaderKind, Callable[[Standing], Sequence[ReaderJudgement]]] = {
    ReaderKind.CONSUMER_GROUP: _consumer,
    ReaderKind.KAFKA_CONNECT: _connect,
    ReaderKind.SHARE_GROUP: _share,
    ReaderKind.UNKNOWN: _unknown,
}
