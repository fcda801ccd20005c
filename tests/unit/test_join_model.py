"""Joined topics without --topology: the evidence the cluster offers, and honest doubt.

Each case is what a real app of fixtures/java/streams leaves on the cluster: ``join-rekey``
left-joins ``orders`` with ``builder.table(customers)`` (unnamed, so its store is
``customers-STATE-STORE-0000000000``), re-keys and counts (FINDINGS.md, "A join before a
repartition topic").  Widening ``orders`` alone, the real 4.3.1 app died with "Topics not
co-partitioned: [{customers=3, orders=6}]" (classic) and "Following topics do not have the
same number of partitions" (streams).  Expected texts are Kafka's, written out by hand.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamsmodel import app_facts
from writers import streams_facts

from migcheck.apps.build import Facts, from_broker, from_topology, inferred
from migcheck.apps.judgement import judge
from migcheck.apps.rules import AppLevel, Check
from migcheck.frameworks.kafka_streams import steps
from migcheck.frameworks.topology import parse_topology
from migcheck.kafka.groups import StreamsSubtopology, TopicInfo
from migcheck.model.app import TOPOLOGY_SETTLES, AppCandidate, first_error
from migcheck.model.readers import Protocol
from migcheck.model.runbook import (
    Strategy,
)
from migcheck.report.app import render_app_markdown, render_app_text
from migcheck.report.runbook import render_markdown, render_sh

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"
HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool to clean up invalid topics before "
    "processing."
)
SOURCES = {"orders": 3, "customers": 3}
TABLE = "shop-customers-STATE-STORE-0000000000-changelog"
INTERNAL = {TABLE: 3, "shop-rekey-group-repartition": 3, "shop-counts-changelog": 3}
NOT_COPARTITIONED = "Topics not co-partitioned: [{customers=3, orders=6}]"
REPARTITION = (
    "Existing internal topic shop-rekey-group-repartition has invalid partitions: "
    f"expected: 6; actual: 3. {HINT}"
)
#: what a running join-rekey app's tasks read: 0_x read orders and customers, 1_x the
#: repartition topic (its TASKS lines: active=[0_0, 0_1, 0_2, 1_0, 1_1, 1_2])
RUNNING = {"orders": 0, "customers": 0, "shop-rekey-group-repartition": 1}


def _facts(protocol: Protocol = Protocol.CLASSIC, **changes: object) -> Facts:
    internal = changes.pop("internal", INTERNAL)
    return app_facts("shop", SOURCES, internal, protocol, **changes)  # type: ignore[arg-type]


def _described(name: str):
    return parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))


def test_a_stopped_apps_join_is_neither_dropped_nor_taken_for_granted() -> None:
    """A table named after its topic sits with it; whether orders is joined to it the
    names do not say, and that decides the first error: both candidates, in Kafka's
    order (co-partitioning first), and CRASH, since both crash."""
    model = inferred(_facts())
    (table,) = [s for s in model.app.topology.subtopologies if "customers" in s.source_topics]
    assert table.stores == ("customers-STATE-STORE-0000000000",)
    j = judge(model, {"orders": 6})
    assert not j.certain and j.error is None and j.verdict.level == AppLevel.CRASH
    assert [(c.first.text if c.first else None, c.condition) for c in j.cases] == [
        (NOT_COPARTITIONED, "customers and orders are joined (co-partitioned)"),
        (REPARTITION, "customers and orders are not joined"),
    ]
    assert [c.level for c in j.cases] == [AppLevel.CRASH, AppLevel.CRASH]
    # the co-partitioning reason is there, but only on its condition
    assert next((r.check, cond) for r, cond in j.reasons) == (
        Check.COPARTITION,
        "customers and orders are joined (co-partitioned)",
    )


def test_the_running_groups_tasks_settle_it_as_the_topology_does() -> None:
    """A running classic group's assignment shows orders and customers read by the tasks of
    one sub-topology, where the table's store is: joined, one error, the same as
    --topology (the app's describe()) gives."""
    seen = judge(inferred(_facts(read_together=RUNNING)), {"orders": 6})
    given = judge(from_topology(_facts(), _described("join-rekey")), {"orders": 6})
    assert seen.certain and given.certain
    assert seen.error == given.error == NOT_COPARTITIONED
    assert [r.check for r, _ in seen.reasons][:3] == [
        Check.COPARTITION,
        Check.REPARTITION,
        Check.CHANGELOG,
    ]
    streams = judge(inferred(_facts(Protocol.STREAMS, read_together=RUNNING)), {"orders": 6})
    assert streams.error == (
        "Invalid topology: Following topics do not have the same number of partitions: "
        "[{customers=3, orders=6}]"
    )


def test_a_named_table_read_together_with_no_state_seen_stays_in_doubt() -> None:
    """join-rekey-named: the table's store is ``table-store``, a name that ties it to no
    topic.  Read together, the two topics may be joined or merged; with no state seen
    where they are read, the candidates stay."""
    internal = {k: v for k, v in INTERNAL.items() if k != TABLE}
    internal["shop-table-store-changelog"] = 3
    model = inferred(_facts(internal=internal, read_together=RUNNING))
    j = judge(model, {"orders": 6})
    assert not j.certain
    assert [c.first.check for c in j.cases if c.first] == [Check.COPARTITION, Check.REPARTITION]
    # stopped, the same: nothing ties the store to a topic
    assert not judge(inferred(_facts(internal=internal)), {"orders": 6}).certain


def test_only_topics_of_one_count_may_be_joined() -> None:
    """Joined topics are co-partitioned: a running app's sources of different counts are
    not joined, so they raise no doubt."""
    model = inferred(app_facts("shop", {"orders": 3, "customers": 6}, INTERNAL))
    assert model.alternatives == ()
    assert judge(model, {"orders": 6}).certain


def test_without_any_internal_topic_a_join_may_stall_or_state_may_hide() -> None:
    """join-nochangelog leaves no internal topic.  Joined, classic never checks it and the
    app stalls until task.timeout.ms (FINDINGS.md); not joined, the state that may hide is
    unseen: CORRUPT.  The worst, CRASH, is the level; both are named."""
    j = judge(inferred(_facts(internal={})), {"orders": 6})
    assert not j.certain and j.verdict.level == AppLevel.CRASH
    assert [(c.level, c.first.check if c.first else None) for c in j.cases] == [
        (AppLevel.CRASH, Check.UNCHECKED_JOIN),
        (AppLevel.CORRUPT, None),
    ]
    streams = judge(inferred(_facts(Protocol.STREAMS, internal={})), {"orders": 6})
    assert streams.cases[0].first and streams.cases[0].first.check == Check.COPARTITION


def _broker_sub(*changelogs: str) -> StreamsSubtopology:
    return StreamsSubtopology(
        "0",
        ("orders", "customers"),
        (),
        (),
        tuple(TopicInfo(c, 3) for c in changelogs),
        (),
    )


def test_the_brokers_topology_settles_a_join_where_it_shows_the_state() -> None:
    """StreamsGroupDescribe lists the sub-topology's sources and logged stores: with the
    table's changelog there, joined; with none (logging disabled, or the table's topic
    reused as its changelog) the two sources may be merged or joined."""
    facts = _facts(Protocol.STREAMS, internal={TABLE: 3})
    shown = from_broker(facts, [_broker_sub(TABLE)])
    assert shown.alternatives == () and judge(shown, {"orders": 6}).certain
    hidden = from_broker(_facts(Protocol.STREAMS, internal={}), [_broker_sub()])
    (joined,) = hidden.alternatives
    assert joined.condition == "customers and orders are joined (co-partitioned)"
    j = judge(hidden, {"orders": 6})
    assert [c.first.check if c.first else None for c in j.cases] == [Check.COPARTITION, None]


def _candidate(**changes: object) -> AppCandidate:
    base: dict[str, object] = {
        "partitions": 6,
        "verdict": "CRASH",
        "error": None,
        "reasons": [],
        "subtopologies": [],
        "stores": None,
        "error_candidates": [
            {
                "error": NOT_COPARTITIONED.replace("customers", "cust<o>mers`|"),
                "verdict": "CRASH",
                "check": "copartition",
                "condition": "cust<o>mers`| and orders are joined (co-partitioned)",
            },
            {
                "error": REPARTITION,
                "verdict": "CRASH",
                "check": "repartition",
                "condition": "cust<o>mers`| and orders are not joined",
            },
        ],
    }
    return {**base, **changes}  # type: ignore[return-value]


def test_the_first_error_line_names_the_candidates_in_order_and_what_settles_it() -> None:
    line = first_error(_candidate())
    assert line is not None and line.index(TOPOLOGY_SETTLES) < line.index("(1) ")
    first, second = line.index("(1) if cust<o>mers`| and orders are joined"), line.index("(2) ")
    assert first < line.index("Topics not co-partitioned") < second < line.index(REPARTITION)
    assert first_error(_candidate(error=REPARTITION, error_candidates=None)) == REPARTITION
    assert first_error(_candidate(verdict="SAFE", error_candidates=None)) is None


def test_the_app_report_shows_each_candidate_and_escapes_the_names() -> None:
    report = {
        "report": "app",
        "application_id": "shop",
        "framework": "kafka-streams",
        "group": {"type": "classic", "state": "Empty", "members": 0},
        "protocol": "classic",
        "basis": "inferred",
        "basis_note": None,
        "notes": [],
        "topics": [],
        "subtopologies": [],
        "health": [],
        "changes": ["orders"],
        "candidates": [_candidate()],
        "verdict": "CRASH",
        "state": None,
    }
    text = render_app_text(report)  # type: ignore[arg-type]
    assert "If cust<o>mers`| and orders are joined (co-partitioned):" in text
    assert text.index("Topics not co-partitioned") < text.index(REPARTITION)
    assert "settles which" in text
    md = render_app_markdown(report)  # type: ignore[arg-type]
    # the names as Markdown shows them: escaped in a paragraph, as they are in a code block
    assert "If cust&lt;o&gt;mers\\`\\| and orders are joined (co-partitioned):" in md
    assert "If cust<o>mers" not in md


def test_the_runbook_header_quotes_the_first_error_as_app_does() -> None:
    line = first_error(_candidate(error=NOT_COPARTITIONED, error_candidates=None))
    facts = replace(streams_facts("shop", Strategy.NEW_TOPIC), first_error=line)
    md = render_markdown(facts, steps(facts), "0.1.0", "2026-01-01T00:00:00Z")
    header = md.split("\n## ", 1)[0]
    assert "The first error the app would print: Topics not co-partitioned" in header
    sh = render_sh(facts, steps(facts), "0.1.0", "2026-01-01T00:00:00Z")
    assert f"# The first error the app would print: {line}" in sh.splitlines()[:12]


def test_a_plan_that_widens_both_sides_is_judged_together_not_side_by_side() -> None:
    """The gate's plan (issue 71): orders and customers both to 6.  Judged alone, each side
    quoted co-partitioning against the other at 3; together, the app meets its repartition
    topic first, as the real app printed (tests/integration/test_app_joins.py)."""
    from migcheck.apps.strategy import direct_stores
    from migcheck.commands.app import candidate

    model = from_topology(_facts(), _described("join-rekey"))
    alone = candidate(model, {"orders": direct_stores(model, "orders").stores}, 6)
    assert alone["error"] == NOT_COPARTITIONED
    topics = ("orders", "customers")
    direct = {t: direct_stores(model, t).stores for t in topics}
    both = candidate(model, direct, 6, {"customers": 6})
    assert both["verdict"] == AppLevel.CRASH and both["error"] == REPARTITION
    assert not any(r["check"] == Check.COPARTITION for r in both["reasons"])


def test_widening_one_side_of_a_join_alone_is_refused_naming_the_other() -> None:
    """runbook and migrate take one topic: for a joined app that is a split set (issue 71),
    refused in one line naming the side left behind, or --topology where it may be."""
    from migcheck.apps.sets import left_behind, refuse_split_set
    from migcheck.apps.strategy import direct_stores
    from migcheck.commands.app import candidate
    from migcheck.errors import Refused, UsageError

    given = from_topology(_facts(), _described("join-rekey"))
    alone = candidate(given, {"orders": direct_stores(given, "orders").stores}, 6)
    assert left_behind(alone, ["orders"]).topics == ("customers",)
    with pytest.raises(Refused) as refused:
        refuse_split_set("runbook", "shop", alone, ["orders"])
    assert str(refused.value) == (
        "refused: runbook would widen one side of a join: shop joins orders with customers, "
        "which must widen together (co-partitioned), or the app fails with: "
        f"{NOT_COPARTITIONED}; judge the set with migcheck app --application-id shop --topic "
        "orders --topic customers (runbook of several topics is not written yet)"
    )
    with pytest.raises(Refused) as refused:
        refuse_split_set("runbook", "shop", alone, ["orders"], sets=True)
    assert str(refused.value).endswith(
        "; widen them in one change: migcheck runbook --application-id shop --topic orders "
        "--topic customers --to 6"
    )
    both = candidate(given, {"orders": (), "customers": ()}, 6, {"customers": 6})
    refuse_split_set("runbook", "shop", both, ["orders", "customers"])  # the whole set: fine
    stopped = inferred(_facts())  # the names cannot tell whether orders is joined
    maybe = candidate(stopped, {"orders": direct_stores(stopped, "orders").stores}, 6)
    with pytest.raises(UsageError, match=r"may join orders with customers .*pass --topology"):
        refuse_split_set("migrate", "shop", maybe, ["orders"])


def test_app_names_what_must_move_together_and_from_which_evidence() -> None:
    """Issue 71: the report names each co-partitioned group, with its join and evidence."""
    from migcheck.apps.sets import Together, must_move_together

    given = from_topology(_facts(), _described("join-rekey"))
    assert must_move_together(given) == (
        Together(("customers", "orders"), "joined in sub-topology 0, from the --topology given"),
    )
    running = inferred(_facts(read_together=RUNNING))  # the tasks read them together
    assert must_move_together(running) == (
        Together(
            ("customers", "orders"),
            "joined in sub-topology 0, from a running group's tasks, which read them together",
        ),
    )
    (maybe,) = must_move_together(inferred(_facts()))  # stopped, no topology: it may be
    assert maybe.topics == ("customers", "orders")
    assert maybe.why == (
        "may be joined: the cluster cannot tell whether customers and orders are joined "
        "(co-partitioned); --topology settles it"
    )


def test_a_set_whose_producers_place_keys_apart_is_refused() -> None:
    """Issue 71: each side of a set is copied by its own producers' partitioner; where
    they differ, the join already misses those keys, and the runbook says so instead."""
    from migcheck.apps.sets import apart_refusal

    assert apart_refusal("shop", {"orders": "murmur2", "customers": "murmur2"}) is None
    assert apart_refusal("shop", {"orders": "murmur2", "customers": None}) is None  # no key
    assert apart_refusal("shop", {"orders": "murmur2", "customers": "consistent_random"}) == (
        "refused: the producers of shop's co-partitioned topics place keys by different "
        "partitioners (orders by murmur2, customers by consistent_random), so a key's "
        "records sit on different partition numbers and its join already misses them; "
        "widening would carry that over: move the producers to one partitioner first "
        "(migcheck analyze --full names each topic's)"
    )
