"""CRASH, CORRUPT or SAFE for the real topologies of fixtures/java/streams, by Kafka's rules.

Each case states the partition counts on the cluster and the change; the
expected verdict and Kafka Streams' own error text are written out by hand
from the rules in Kafka's StreamsPartitionAssignor, InternalTopicManager and
CopartitionedTopicsEnforcer (the messages are the ones Kafka 4.3 prints; the classic
ones are Kafka Streams 3.9.2's too).
"""

from __future__ import annotations

from pathlib import Path

from migcheck.streams.frameworks import KAFKA_STREAMS, KSQLDB, QUIX_STREAMS, streams_invalid
from migcheck.streams.rules import (
    CHECK_ORDER,
    RULES,
    App,
    AppLevel,
    Check,
    Protocol,
    health,
    not_copartitioned,
    verdict,
)
from migcheck.streams.topology import parse_topology

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"
HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool "
    "to clean up invalid topics before processing."
)


def _app(
    name: str,
    counts: dict[str, int],
    fixed: dict[str, int] | None = None,
    protocol: Protocol = Protocol.CLASSIC,
) -> App:
    topology = parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))
    return App("shop", topology, counts, fixed or {}, protocol)


def test_count_with_changelog_crashes_naming_the_changelog() -> None:
    app = _app("count", {"orders": 3, "shop-counts-changelog": 3})
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    (reason,) = v.reasons
    assert reason.text == (
        "Existing internal topic shop-counts-changelog has invalid partitions: "
        f"expected: 6; actual: 3. {HINT}"
    )
    assert reason.topics == ("shop-counts-changelog",)


def test_no_change_is_safe() -> None:
    app = _app("count", {"orders": 3, "shop-counts-changelog": 3})
    assert verdict(app, {"orders": 3}).level == AppLevel.SAFE


def test_logging_disabled_corrupts_silently() -> None:
    v = verdict(_app("count-nolog", {"orders": 3}), {"orders": 6})
    assert v.level == AppLevel.CORRUPT
    (reason,) = v.reasons
    assert reason.stores == ("counts",) and reason.topics == ("orders",)


def test_changelog_widened_by_hand_corrupts_silently() -> None:
    # someone widened the changelog to get past the crash: nothing checks any more
    app = _app("count", {"orders": 3, "shop-counts-changelog": 6})
    assert [r.topics for r in health(app)] == [("shop-counts-changelog",)]
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CORRUPT and v.reasons[0].stores == ("counts",)


def test_repartition_topic_follows_its_source_and_crashes_first() -> None:
    counts = {"orders": 3, "shop-rekey-group-repartition": 3, "shop-counts-changelog": 3}
    v = verdict(_app("rekey-count", counts), {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert [r.topics for r in v.reasons] == [
        ("shop-rekey-group-repartition",),
        ("shop-counts-changelog",),
    ]
    assert "expected: 6; actual: 3" in v.reasons[0].text
    assert v.subtopologies == {0: AppLevel.CRASH, 1: AppLevel.CRASH}


def test_fixed_repartition_shields_the_stateful_subtopology() -> None:
    counts = {"orders": 3, "shop-rekey-repartition": 3, "shop-counts-changelog": 3}
    v = verdict(_app("rekey-count-fixed", counts, fixed={"rekey-repartition": 3}), {"orders": 6})
    assert v.level == AppLevel.SAFE and v.reasons == ()
    # not known to be fixed, the same change looks like a crash
    assert verdict(_app("rekey-count-fixed", counts), {"orders": 6}).level == AppLevel.CRASH


def test_join_classic_names_the_changelog_first() -> None:
    # FINDINGS.md: classic checks co-partitioning only inside its repartition-topic setup,
    # so a join without repartition topics dies on its changelog first
    counts = {"orders": 3, "customers": 3, "shop-table-store-changelog": 3}
    v = verdict(_app("join", counts), {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert v.reasons[0].text == (
        "Existing internal topic shop-table-store-changelog has invalid partitions: "
        f"expected: 6; actual: 3. {HINT}"
    )
    both = verdict(_app("join", counts), {"orders": 6, "customers": 6})
    assert [r.topics for r in both.reasons] == [("shop-table-store-changelog",)]


def test_join_streams_protocol_names_the_copartitioning_first() -> None:
    counts = {"orders": 3, "customers": 3, "shop-table-store-changelog": 3}
    app = _app("join", counts, protocol=Protocol.STREAMS)
    v = verdict(app, {"orders": 6})
    assert v.reasons[0].text == (
        "Invalid topology: Following topics do not have the same number of partitions: "
        "[{customers=3, orders=6}]"
    )
    both = verdict(app, {"orders": 6, "customers": 6})
    assert both.reasons[0].text == (
        "Invalid topology: Existing topic shop-table-store-changelog has different number "
        "of partitions: expected 6, found 3"
    )


def test_join_without_internal_topics_stalls_under_classic() -> None:
    # join-nochangelog under classic: no check fails; tasks wait, then a TimeoutException
    v = verdict(_app("join-nochangelog", {"orders": 3, "customers": 3}), {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert "task.timeout.ms" in v.reasons[0].text and v.reasons[0].topics == (
        "customers",
        "orders",
    )
    # the check nothing runs, not its outcome: the app stalls, then crashes (FINDINGS.md)
    assert v.reasons[0].check == Check.UNCHECKED_JOIN


def test_streams_protocol_changelog_crashes_stopped_or_running() -> None:
    """A real 4.3 count app on the streams protocol threw this TopologyException both
    restarted after the alter and running through it (FINDINGS.md, "Streams protocol
    through an alter, stopped and running"): CRASH, with no other reason."""
    app = _app("count", {"orders": 3, "shop-counts-changelog": 3}, protocol=Protocol.STREAMS)
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    ((check, text),) = [(r.check, r.text) for r in v.reasons]
    assert check == Check.CHANGELOG
    assert text == (
        "Invalid topology: Existing topic shop-counts-changelog has different number of "
        "partitions: expected 6, found 3"
    )
    # without a changelog the running app rebalanced to 6 tasks and ran on, state split
    nolog = _app("count-nolog", {"orders": 3}, protocol=Protocol.STREAMS)
    assert verdict(nolog, {"orders": 6}).level == AppLevel.CORRUPT


def test_when_the_error_comes_follows_the_protocol() -> None:
    """Observed on Kafka Streams 4.3.1: on the streams protocol the error comes at the next
    heartbeat, stopped or running, and a REPLACE_THREAD handler stalls the app instead of
    ending it; classic and the other frameworks keep their own words."""
    streams = KAFKA_STREAMS.failing_when(Protocol.STREAMS)
    for words in (
        "next heartbeat",
        "INCORRECTLY_PARTITIONED_TOPICS",
        "a stopped app as it starts",
        "a running one within seconds of the alter",
        "shuts the client down (ERROR)",
        "REPLACE_THREAD",
        "REBALANCING with no tasks",
        "NotReady",
    ):
        assert words in streams, words
    assert KAFKA_STREAMS.failing_when(Protocol.CLASSIC) == KAFKA_STREAMS.fails_when
    assert "heartbeat" not in KAFKA_STREAMS.fails_when
    for other in (KSQLDB, QUIX_STREAMS):
        assert other.failing_when(Protocol.STREAMS) == other.fails_when


def test_widening_a_changelog_by_hand_alone_crashes() -> None:
    # proposing an internal topic: the input keeps 3, so Streams expects 3
    app = _app("count", {"orders": 3, "shop-counts-changelog": 3})
    v = verdict(app, {"shop-counts-changelog": 6})
    assert v.level == AppLevel.CRASH
    assert "expected: 3; actual: 6" in v.reasons[0].text


def test_source_topic_as_changelog_corrupts_when_both_sides_widen() -> None:
    counts = {"orders": 3, "customers": 3}
    v = verdict(_app("join-nochangelog", counts), {"orders": 6, "customers": 6})
    assert v.level == AppLevel.CORRUPT and v.reasons[0].stores == ("table-store",)
    assert verdict(_app("source-changelog", {"orders": 3}), {"orders": 6}).level == (
        AppLevel.CORRUPT
    )


def test_windowed_count_crashes_on_its_changelog() -> None:
    v = verdict(_app("windowed", {"orders": 3, "shop-wcounts-changelog": 3}), {"orders": 6})
    assert v.level == AppLevel.CRASH and v.reasons[0].topics == ("shop-wcounts-changelog",)


def test_global_store_and_stateless_join_are_safe() -> None:
    app = _app("global", {"orders": 3, "customers": 3})
    assert verdict(app, {"orders": 6}).level == AppLevel.SAFE
    assert verdict(app, {"customers": 6}).level == AppLevel.SAFE  # a global topic: no tasks


def test_health_is_clean_when_everything_matches() -> None:
    counts = {"orders": 3, "shop-rekey-group-repartition": 3, "shop-counts-changelog": 3}
    assert health(_app("rekey-count", counts)) == ()


def test_every_check_has_its_place_in_each_protocols_order() -> None:
    """A new Check without a place in a protocol's order would sort nowhere (ValueError at
    run time): every protocol orders every check exactly once."""
    for protocol in Protocol:
        order = CHECK_ORDER[protocol]
        assert sorted(order) == sorted(Check), protocol
        assert len(set(order)) == len(order), protocol


def test_every_check_has_exactly_one_rule() -> None:
    assert sorted(rule.check for rule in RULES) == sorted(Check)


def test_the_protocols_differ_only_in_which_crash_they_report_first() -> None:
    """Classic validates repartition topics before co-partitioning (RepartitionTopics.setup);
    the streams protocol's broker checks co-partitioning first (FINDINGS.md)."""
    classic, streams = CHECK_ORDER[Protocol.CLASSIC], CHECK_ORDER[Protocol.STREAMS]
    assert classic.index(Check.REPARTITION) < classic.index(Check.COPARTITION)
    assert streams.index(Check.COPARTITION) < streams.index(Check.REPARTITION)
    crashes = {r.check for r in RULES if r.level == AppLevel.CRASH}
    for order in (classic, streams):  # a silent check never sorts before a crash
        assert max(order.index(c) for c in crashes) < min(
            order.index(c) for c in set(Check) - crashes
        )


#: The classic texts' format strings, as the class files of Kafka Streams 3.9.2 and 4.3.1
#: (Maven Central) hold them, identical in both: InternalTopicManager and
#: CopartitionedTopicsEnforcer.
JAVA_FORMATS = {
    "invalid": (
        "Existing internal topic %s has invalid partitions: expected: %d; actual: %d. "
        "Use 'org.apache.kafka.tools.StreamsResetter' tool to clean up invalid topics "
        "before processing."
    ),
    "copartitioned": "Topics not co-partitioned: [%s]",
}


def test_the_classic_quotes_are_the_text_of_kafka_streams_3_9_and_4_3() -> None:
    java = JAVA_FORMATS["invalid"].replace("%d", "%s")
    assert streams_invalid(Protocol.CLASSIC, "shop-counts-changelog", 6, 3) == java % (
        "shop-counts-changelog",
        6,
        3,
    )
    # Java prints the map {orders=6, customers=3} in its own order; migcheck sorts it
    listed = "{customers=3, orders=6}"
    assert not_copartitioned(Protocol.CLASSIC, {"orders": 6, "customers": 3}) == (
        JAVA_FORMATS["copartitioned"] % listed
    )
