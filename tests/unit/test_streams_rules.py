"""CRASH, CORRUPT or SAFE for the real topologies of fixtures/java/streams, by Kafka's rules.

Each case states the partition counts on the cluster and the change; the
expected verdict and Kafka Streams' own error text are written out by hand
from the rules in Kafka's StreamsPartitionAssignor, InternalTopicManager and
CopartitionedTopicsEnforcer (the messages are the ones Kafka 4.3 prints; the classic
ones are Kafka Streams 3.9.2's too).
"""

from __future__ import annotations

from pathlib import Path

from streamsmodel import streams_app

from migcheck.apps.javasets import hashset_order, string_hash
from migcheck.apps.rules import (
    CHECK_ORDER,
    CHECK_ORDERS,
    STREAMS_RULES,
    App,
    AppLevel,
    Check,
    health,
    not_copartitioned,
    verdict,
)
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS, streams_invalid
from migcheck.frameworks.ksqldb import KSQLDB
from migcheck.frameworks.quix import QUIX_STREAMS
from migcheck.frameworks.topology import parse_topology
from migcheck.model.readers import Protocol

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
    return streams_app("shop", topology, counts, fixed or {}, protocol)


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
    assert sorted(rule.check for rule in STREAMS_RULES) == sorted(Check)


#: Each release line migcheck supports, and the order its code runs the checks in, as
#: read in the class files from Maven Central (``javap -c``) and, for 3.6 to 3.9, the
#: source.  Classic, kafka-streams' processor.internals:
#:   StreamsPartitionAssignor.assign: prepareRepartitionTopics (-> RepartitionTopics.setup)
#:     at bytecode offset 461 (3.6.2, 3.7.2), then assignTasksToClients (-> ChangelogTopics
#:     .setup) at 659;
#:   RepartitionTopics.setup(): computeRepartitionTopicConfig, then, when the app has
#:     repartition topics, ensureCopartitioning (offset 71: CopartitionedTopicsEnforcer
#:     .enforce, "Topics not co-partitioned: [%s]"), then InternalTopicManager.makeReady
#:     (offset 79: "Existing internal topic %s has invalid partitions ..."), in every jar
#:     from 3.6.2 to 4.3.1.  In 3.9's source, RepartitionTopics.java lines 84 and 88.
#: Streams protocol (KIP-1071), group-coordinator's streams.topics.InternalTopicManager:
#:   configureTopics: throwOnMissingSourceTopics, decidePartitionCounts, then
#:     missingInternalTopics;
#:   decidePartitionCounts: RepartitionTopics.setup, enforceCopartitioning ("Following
#:     topics do not have the same number of partitions: [%s]"), ChangelogTopics.setup;
#:   missingInternalTopics: one pass over StreamsTopology.requiredTopics() (a HashSet),
#:     throwing "Existing topic ... has different number of partitions" at the first
#:     internal topic of another count, repartition and changelog alike;
#: in the jars of 4.1.1, 4.2.1 and 4.3.1 (the protocol exists from 4.1).
CO, RE, CH = Check.COPARTITION, Check.REPARTITION, Check.CHANGELOG
READ_IN_KAFKA = {
    (Protocol.CLASSIC, line): ((CO,), (RE,), (CH,))
    for line in ("3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3")
} | {(Protocol.STREAMS, line): ((CO,), (RE, CH)) for line in ("4.1", "4.2", "4.3")}


def test_each_release_runs_the_checks_in_the_order_its_code_does() -> None:
    """Every release line read has its order, and it is the one the rules sort by."""
    for (protocol, line), steps in READ_IN_KAFKA.items():
        order = CHECK_ORDERS[protocol]
        assert line in order.releases, (protocol, line)
        assert order.steps[: len(steps)] == steps, (protocol, line)
    for order in CHECK_ORDERS.values():
        assert {(order.protocol, line) for line in order.releases} <= set(READ_IN_KAFKA)
    assert CHECK_ORDERS[Protocol.STREAMS].tie == "hashset"  # one pass over a HashSet
    crashes = {r.check for r in STREAMS_RULES if r.level == AppLevel.CRASH}
    for order in CHECK_ORDER.values():  # a silent check never sorts before a crash
        assert max(order.index(c) for c in crashes) < min(
            order.index(c) for c in set(Check) - crashes
        )


def test_classic_checks_co_partitioning_before_the_repartition_topic() -> None:
    """A stream left-joined with a table, re-keyed and counted (fixtures/java/streams,
    join-rekey), its stream widened: RepartitionTopics.setup runs ensureCopartitioning
    before makeReady, so the real 4.3.1 app died with "Topics not co-partitioned", not on
    its repartition topic (FINDINGS.md, "A join before a repartition topic")."""
    counts = {
        "orders": 3,
        "customers": 3,
        "shop-customers-STATE-STORE-0000000000-changelog": 3,
        "shop-rekey-group-repartition": 3,
        "shop-counts-changelog": 3,
    }
    v = verdict(_app("join-rekey", counts), {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert [r.check for r in v.reasons] == [CO, RE, CH, CH]
    assert v.reasons[0].text == "Topics not co-partitioned: [{customers=3, orders=6}]"
    # both sides widened: co-partitioned again, and the repartition topic comes first
    both = verdict(_app("join-rekey", counts), {"orders": 6, "customers": 6})
    assert [r.topics[0] for r in both.reasons] == [
        "shop-rekey-group-repartition",
        "shop-customers-STATE-STORE-0000000000-changelog",
        "shop-counts-changelog",
    ]


def test_streams_protocol_names_the_internal_topic_first_in_the_brokers_hashset() -> None:
    """The broker checks repartition topics and changelogs in one pass over
    StreamsTopology.requiredTopics(), a HashSet: the first of its order is the error.  The
    orders below are what Java 17 printed for that set, filled as requiredTopics() fills
    it (sub-topology "0": orders, customers, the table's changelog; "1": the repartition
    topic, the counts' changelog) and collected with Collectors.toSet()."""
    java = {
        "shop": [
            "shop-customers-STATE-STORE-0000000000-changelog",
            "orders",
            "customers",
            "shop-rekey-group-repartition",
            "shop-counts-changelog",
        ],
        "store": [
            "store-rekey-group-repartition",
            "store-counts-changelog",
            "orders",
            "customers",
            "store-customers-STATE-STORE-0000000000-changelog",
        ],
    }
    for app_id, printed in java.items():
        counts = {"orders": 3, "customers": 3, **{t: 3 for t in printed if "-" in t}}
        topology = parse_topology((DESCRIBE / "join-rekey.txt").read_text(encoding="utf-8"))
        app = streams_app(app_id, topology, counts, {}, Protocol.STREAMS)
        assert hashset_order(app.required_topics()) == printed
        v = verdict(app, {"orders": 6, "customers": 6})
        # the counts' changelog is checked against the repartition topic as it exists (3):
        # InternalTopicManager.getPartitionCount asks the metadata image first
        internal = [t for t in printed if "-" in t and "counts" not in t]
        assert [r.topics[0] for r in v.reasons] == internal
        assert v.reasons[0].text.startswith(f"Invalid topology: Existing topic {internal[0]} ")
    # one side widened: the co-partitioning, checked before any internal topic
    v = verdict(streams_app("shop", topology, counts, {}, Protocol.STREAMS), {"orders": 6})
    assert v.reasons[0].check == CO


JOINED = [
    "app-1-orders",
    "app-1-customers",
    "app-1-app-1-customers-STATE-STORE-0000000000-changelog",
    "app-1-rekey-group-repartition",
    "app-1-counts-changelog",
]


def test_java_hashset_order_is_javas() -> None:
    """Java 17's iteration order of ``Stream.of(...).collect(Collectors.toSet())`` and
    ``String.hashCode()``, printed by a class run for this test: colliding hashes
    ("Aa", "BB") keep the order they came in, 14 names make the table 32 wide, and a
    name outside the BMP hashes by its UTF-16 units."""
    cases = [
        (["BB", "Aa", "x", "AaAa", "BBBB", "AaBB"], ["BB", "Aa", "x", "AaAa", "BBBB", "AaBB"]),
        (
            [f"app-store-{i}-changelog" for i in range(14)],
            [f"app-store-{i}-changelog" for i in (3, 10, 4, 12, 0, 13, 5, 7, 6, 9, 1, 2, 11, 8)],
        ),
        (
            [*JOINED, "\u00e9t\u00e9-\U0001f600"],
            ["\u00e9t\u00e9-\U0001f600", *JOINED],  # JOINED's own order, by chance
        ),
    ]
    for added, printed in cases:
        assert hashset_order(added) == printed
    hashes = {"Aa": 2112, "app-1-orders": -252165587, "\u00e9t\u00e9-\U0001f600": -1803456526}
    assert {s: string_hash(s) for s in hashes} == {s: h % 2**32 for s, h in hashes.items()}


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
