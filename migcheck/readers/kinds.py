"""What kind of reader a group is, and the evidence: one registry of rules, tried in order.

Pure: a group as :mod:`migcheck.kafka.groups` describes it, the names of the cluster's
topics, and the ids the user vouched for in; an :class:`~migcheck.model.readers.Evidence`
out.  The first rule that finds evidence names the kind, so the order is the priority:
a ksqlDB query is a Kafka Streams app too, but its id says more; a Faust table's
changelog is named like a Kafka Streams store's, so Faust's own marks are looked for
first.  A group nothing tells apart is ``unknown``, with the reason: never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from migcheck.frameworks.registry import EVIDENCE_ORDER
from migcheck.kafka.groups import GroupInfo
from migcheck.model.readers import Evidence, ReaderKind
from migcheck.readers.naming import connect_client, connect_connector


@dataclass(frozen=True)
class Seen:
    """What one group's kind is judged from."""

    group: GroupInfo
    topics: Collection[str]  # every topic on the cluster, by name
    vouched: bool = False  # the user named it a plain consumer group (--group)


#: A rule: the facts that show the kind, or () when it finds none.
Rule = Callable[[Seen], Sequence[str]]


def _share(seen: Seen) -> Sequence[str]:
    return ("a share group (KIP-932)",) if seen.group.group_type == "share" else ()


def _connect(seen: Seen) -> Sequence[str]:
    connector = connect_connector(seen.group.group_id)
    if connector is None:
        return ()
    clients = [m.client_id for m in seen.group.members]
    if clients and not any(map(connect_client, clients)):
        return ()  # named like a sink's group, but its consumers are not Connect's
    facts = [f"its id is Kafka Connect's for sink connector {connector} (connect-<name>)"]
    if clients:
        facts.append("its members' client ids are Connect's (connector-consumer-<name>-<task>)")
    return facts


def _consumer(seen: Seen) -> Sequence[str]:
    group = seen.group
    if group.group_type == "consumer":
        return ("a consumer group on the consumer rebalance protocol (KIP-848)",)
    if group.members and group.protocol:
        return (f"its members use the consumer assignor {group.protocol!r}",)
    if seen.vouched:
        return ("named with --group: a plain consumer group on your word",)
    return ()


#: The rules, in priority order: each kind once.
KIND_RULES: tuple[tuple[ReaderKind, Rule], ...] = (
    (ReaderKind.SHARE_GROUP, _share),
    # each stream processor's own evidence, in the registry's order
    *((f.kind, lambda seen, f=f: f.evidence(seen.group, seen.topics)) for f in EVIDENCE_ORDER),
    (ReaderKind.KAFKA_CONNECT, _connect),
    (ReaderKind.CONSUMER_GROUP, _consumer),
)


def identify(seen: Seen) -> Evidence:
    """The group's kind and the facts that show it; ``unknown`` with the reason."""
    for kind, rule in KIND_RULES:
        facts = tuple(rule(seen))
        if facts:
            return Evidence(kind, facts)
    return Evidence(ReaderKind.UNKNOWN, (_why_unknown(seen.group),))


def _why_unknown(group: GroupInfo) -> str:
    if group.members:
        return (
            f"its {len(group.members)} member(s) agree on no assignor yet (state "
            f"{group.state or 'unknown'}): describe it again once it is Stable"
        )
    return (
        "it has no members, so the coordinator names no assignor, and no framework's "
        "topics are named after it: start one of its consumers, or name it with --group "
        "if it is a plain consumer group"
    )
