"""What kind of reader a group is, where it stands, and what an increase does to it.

The kinds' evidence is each framework's own naming and protocol, written out here by
hand from their sources (docs/readers.md cites them), never from migcheck's rules.
"""

from __future__ import annotations

import base64

import pytest

from migcheck.kafka.groups import GroupInfo, Member
from migcheck.model.readers import ReaderKind, ReaderPartition, ReaderRisk
from migcheck.model.runbook import GroupLag
from migcheck.readers.kinds import KIND_RULES, Seen, identify
from migcheck.readers.standing import group_lag, partition_lags
from migcheck.readers.verdicts import JUDGES, Standing, judge


def _group(**changes: object) -> GroupInfo:
    base: dict[str, object] = {
        "group_id": "billing",
        "group_type": "classic",
        "state": "Stable",
        "members": (Member("m-1", "c-1", "/h", (("orders", 0), ("orders", 1))),),
        "committed": {("orders", 0): 5, ("orders", 1): 7, ("other", 0): 1},
        "protocol": "range",
    }
    return GroupInfo(**{**base, **changes})  # type: ignore[arg-type]


IDLE = {"members": (), "state": "Empty", "protocol": ""}


@pytest.mark.parametrize(
    ("changes", "topics", "expected"),
    [
        ({}, [], ReaderKind.CONSUMER_GROUP),
        ({"protocol": "cooperative-sticky"}, [], ReaderKind.CONSUMER_GROUP),
        ({"group_type": "consumer", "protocol": ""}, [], ReaderKind.CONSUMER_GROUP),
        ({"group_type": "streams", "protocol": ""}, [], ReaderKind.KAFKA_STREAMS),
        ({"protocol": "stream"}, [], ReaderKind.KAFKA_STREAMS),
        (IDLE, ["billing-counts-changelog"], ReaderKind.KAFKA_STREAMS),
        (IDLE, ["billing-KSTREAM-AGGREGATE-0000000003-repartition"], ReaderKind.KAFKA_STREAMS),
        # a running plain group whose name prefixes a changelog is still plain
        ({}, ["billing-counts-changelog"], ReaderKind.CONSUMER_GROUP),
        (IDLE, [], ReaderKind.UNKNOWN),
        ({"group_type": "share", "protocol": ""}, [], ReaderKind.SHARE_GROUP),
        (
            {"group_id": "_confluent-ksql-default_query_CSAS_PAGES_3", "protocol": "stream"},
            [],
            ReaderKind.KSQLDB,
        ),
        (
            {"group_id": "_confluent-ksql-default_transient_transient_PAGES_1_1", **IDLE},
            [],
            ReaderKind.KSQLDB,
        ),
        ({"protocol": "faust"}, [], ReaderKind.FAUST),
        # a Faust table's changelog looks like a store's: Faust's leader topic decides
        (
            IDLE,
            ["billing-totals-changelog", "billing-__assignor-__leader"],
            ReaderKind.FAUST,
        ),
        (IDLE, ["changelog__billing--orders--default"], ReaderKind.QUIX_STREAMS),
        ({}, ["repartition__billing--orders--group_by"], ReaderKind.QUIX_STREAMS),
        # another group's Quix topic is not this one's
        (IDLE, ["changelog__billing-eu--orders--default"], ReaderKind.UNKNOWN),
        (
            {
                "group_id": "connect-jdbc-sink",
                "members": (Member("m", "connector-consumer-jdbc-sink-0", "/h"),),
            },
            [],
            ReaderKind.KAFKA_CONNECT,
        ),
        ({"group_id": "connect-jdbc-sink", **IDLE}, [], ReaderKind.KAFKA_CONNECT),
        # named like a sink's group, but read by someone else's consumers
        ({"group_id": "connect-audit"}, [], ReaderKind.CONSUMER_GROUP),
        ({"members": (Member("m", "c", "/h"),), "protocol": ""}, [], ReaderKind.UNKNOWN),
    ],
    ids=[
        "classic-range",
        "sticky",
        "kip-848",
        "streams-group",
        "stream-assignor",
        "idle-streams-changelog",
        "idle-streams-repartition",
        "named-like",
        "idle-nothing",
        "share",
        "ksqldb-persistent",
        "ksqldb-transient",
        "faust-assignor",
        "faust-leader-topic",
        "quix-changelog",
        "quix-repartition",
        "quix-other-group",
        "connect-running",
        "connect-idle",
        "connect-named-only",
        "rebalancing",
    ],
)
def test_each_kind_is_told_from_its_evidence(
    changes: dict[str, object], topics: list[str], expected: ReaderKind
) -> None:
    evidence = identify(Seen(_group(**changes), set(topics)))
    assert evidence.kind == expected
    assert evidence.facts and all(evidence.facts)


#: Kafka Streams' commit metadata as TopicPartitionMetadata.encode() writes it: base64 of
#: the magic byte 2, the partition time (8 bytes, big-endian) and the processor metadata.
STREAMS_COMMIT = base64.b64encode(b"\x02" + (1_700_000_000_000).to_bytes(8, "big")).decode()


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ((STREAMS_COMMIT,), ReaderKind.KAFKA_STREAMS),
        ((base64.b64encode(b"\x01" + bytes(8)).decode(),), ReaderKind.KAFKA_STREAMS),
        (("",), ReaderKind.UNKNOWN),  # kafka-python and the Java consumer commit none
        (("checkpoint 42",), ReaderKind.UNKNOWN),  # someone else's metadata
        ((STREAMS_COMMIT, "mine"), ReaderKind.UNKNOWN),  # mixed: not Streams' alone
        ((base64.b64encode(b"\x07" + bytes(8)).decode(),), ReaderKind.UNKNOWN),
    ],
)
def test_an_idle_app_without_internal_topics_is_told_by_its_commit_metadata(
    metadata: tuple[str, ...], expected: ReaderKind
) -> None:
    group = _group(**IDLE, commit_metadata=tuple(m for m in metadata if m))
    assert identify(Seen(group, set())).kind == expected


def test_the_evidence_names_the_fact_that_decided() -> None:
    idle = identify(Seen(_group(**IDLE), {"billing-counts-changelog", "orders"}))
    assert idle.facts == ("internal topics named by Kafka Streams' rule: billing-counts-changelog",)
    running = identify(Seen(_group(), set()))
    assert running.facts == ("its members use the consumer assignor 'range'",)
    ksql = identify(Seen(_group(group_id="_confluent-ksql-svc_query_CTAS_T_7"), set()))
    assert "query CTAS_T_7" in ksql.facts[0]


def test_an_idle_group_is_unknown_with_the_reason_unless_vouched_for() -> None:
    unknown = identify(Seen(_group(**IDLE), set()))
    assert unknown.kind == ReaderKind.UNKNOWN
    assert "no members" in unknown.facts[0] and "--group" in unknown.facts[0]
    vouched = identify(Seen(_group(**IDLE), set(), vouched=True))
    assert vouched.kind == ReaderKind.CONSUMER_GROUP
    assert "your word" in vouched.facts[0]
    # the user's word does not outweigh the evidence
    app = identify(Seen(_group(**IDLE), {"billing-c-changelog"}, vouched=True))
    assert app.kind == ReaderKind.KAFKA_STREAMS


def test_every_kind_has_one_rule_or_is_the_fallback() -> None:
    ruled = [kind for kind, _ in KIND_RULES]
    assert len(ruled) == len(set(ruled))
    assert set(ruled) | {ReaderKind.UNKNOWN} == set(ReaderKind)


def test_lags_per_partition_and_summed() -> None:
    lags = partition_lags(_group(), "orders", {0: 9, 1: 7, 2: 100})
    assert lags == (
        {"partition": 0, "end_offset": 9, "committed_offset": 5, "lag": 4},
        {"partition": 1, "end_offset": 7, "committed_offset": 7, "lag": 0},
        {"partition": 2, "end_offset": 100, "committed_offset": None, "lag": None},
    )
    assert group_lag(_group(), "orders", {0: 9, 1: 7, 2: 100}) == GroupLag("billing", 1, 4)
    assert group_lag(_group(committed={}), "orders", {0: 9}) == GroupLag("billing", 1, None)


def test_a_group_reads_a_topic_it_committed_on_is_assigned_or_subscribes() -> None:
    assert _group().reads("orders") and _group(committed={}).reads("orders")
    assert not _group(members=()).reads("payments")
    assert _group(members=(), committed={}, subscribed=("payments",)).reads("payments")


def _lag(partition: int, end: int, committed: int | None) -> ReaderPartition:
    lag = None if committed is None else end - committed
    return ReaderPartition(partition=partition, end_offset=end, committed_offset=committed, lag=lag)


def _standing(kind: ReaderKind, **changes: object) -> Standing:
    base: dict[str, object] = {
        "id": "billing",
        "kind": kind,
        "topic": "orders",
        "members": 0,
        "partitions": (_lag(0, 9, 5), _lag(1, 3, None)),
        "to": 6,
    }
    return Standing(**{**base, **changes})  # type: ignore[arg-type]


def test_a_plain_group_risks_order_with_its_lag_and_loss_at_latest() -> None:
    order, loss = judge(_standing(ReaderKind.CONSUMER_GROUP))
    assert order["risk"] == ReaderRisk.ORDER and "4 records are unread now" in order["text"]
    assert loss["risk"] == ReaderRisk.LOSS_RISK
    assert "auto.offset.reset=latest" in loss["text"] and "cannot say" in loss["text"]


def test_a_connect_sink_starts_at_earliest_by_default_so_its_loss_is_unknown() -> None:
    risks = [j["risk"] for j in judge(_standing(ReaderKind.KAFKA_CONNECT))]
    assert risks == [ReaderRisk.ORDER, ReaderRisk.UNKNOWN]


@pytest.mark.parametrize(
    ("reset", "risks"),
    [("latest", [ReaderRisk.LOSS_RISK]), ("earliest", []), (None, [ReaderRisk.UNKNOWN])],
)
def test_a_share_group_is_judged_by_its_own_reset_setting(
    reset: str | None, risks: list[ReaderRisk]
) -> None:
    judged = judge(_standing(ReaderKind.SHARE_GROUP, share_reset=reset))
    assert [j["risk"] for j in judged] == risks


def test_stateful_apps_are_sent_to_app_and_the_unknown_get_the_reason() -> None:
    (app,) = judge(_standing(ReaderKind.KAFKA_STREAMS))
    assert app["risk"] == ReaderRisk.APP
    assert "migcheck app --application-id billing --topic orders --to 6" in app["text"]
    (unknown,) = judge(_standing(ReaderKind.UNKNOWN, why_unknown="it has no members"))
    assert unknown["risk"] == ReaderRisk.UNKNOWN and "it has no members" in unknown["text"]


def test_every_kind_without_state_has_a_judge() -> None:
    from migcheck.frameworks.registry import STATEFUL_KINDS

    assert set(JUDGES) | STATEFUL_KINDS == set(ReaderKind)
