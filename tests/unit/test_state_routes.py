"""``app --state`` says which route each store's state can take (issue 70, item 5): moved
(``runbook --strategy move-state``), with its changelog's size in records and bytes, or
the reason it cannot, in the words ``runbook --strategy move-state`` refuses the app with;
and where a trimmed app's every store can move, ``app`` and the gate name that runbook.

The stores are the fixture's real describe() texts (fixtures/java/streams/describe); every
expected text is written out by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sample_report import app_report
from streamsmodel import app_facts

from migcheck.apps.build import from_topology
from migcheck.apps.discovery import Discovery
from migcheck.apps.movable import StoreRoute, store_routes, unmovable
from migcheck.frameworks.registry import FRAMEWORKS
from migcheck.frameworks.topology import parse_topology
from migcheck.gate.next_steps import next_steps
from migcheck.kafka.metadata import PartitionMeta, TopicMeta, one_copy_sizes
from migcheck.model.gate import GateReader, GateVerdict, Proposal, RuleCode, Source, SourceKind
from migcheck.model.history import Trimmed, remedy_loses_history
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.report.app import render_app_html, render_app_markdown, render_app_text

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _routes(
    name: str,
    changelogs: dict[str, str],
    kind: ReaderKind = ReaderKind.KAFKA_STREAMS,
    protocol: Protocol = Protocol.CLASSIC,
) -> tuple[tuple[StoreRoute, ...], bool]:
    """The routes of the app ``shop`` of describe() ``name`` whose changelogs (name to
    cleanup.policy) are on the cluster, and whether the runbook would move it."""
    facts = app_facts(
        "shop", {"orders": 3}, dict.fromkeys(changelogs, 3), protocol, framework=FRAMEWORKS[kind]
    )
    topics = {t: TopicMeta(t, policy, 3) for t, policy in changelogs.items()}
    topology = parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))
    disc, model = Discovery(facts, None, topics), from_topology(facts, topology)
    return store_routes(disc, model), unmovable(disc, model, topology) is None


def test_a_key_value_store_with_its_own_changelog_can_move() -> None:
    routes, runbook_moves = _routes("count", {"shop-counts-changelog": "compact"})
    assert routes == (StoreRoute("counts", "shop-counts-changelog", None),)
    assert runbook_moves


def test_a_store_without_a_changelog_says_why_as_the_runbook_refuses_it() -> None:
    routes, runbook_moves = _routes("count-nolog", {})
    assert routes == (
        StoreRoute(
            "counts",
            "shop-counts-changelog",
            "the store counts logs to no changelog (logging disabled: there is no "
            "shop-counts-changelog), so its state is nowhere to move from",
        ),
    )
    assert not runbook_moves


def test_a_window_store_follows_stream_time() -> None:
    routes, runbook_moves = _routes("windowed", {"shop-wcounts-changelog": "compact,delete"})
    assert [(r.store, r.reason) for r in routes] == [
        (
            "wcounts",
            "shop-wcounts-changelog is a window or session store's changelog (cleanup.policy "
            "compact,delete): their results follow stream time, which a merged task does not "
            "share with its old tasks",
        )
    ]
    assert not runbook_moves


def test_a_suppress_holds_back_every_store_of_its_subtopology() -> None:
    changelogs = {
        "shop-wcounts-changelog": "compact,delete",
        "shop-KTABLE-SUPPRESS-STATE-STORE-0000000003-changelog": "compact",
    }
    routes, _ = _routes("windowed-suppress", changelogs)
    said = {r.store: r.reason for r in routes}
    assert said["KTABLE-SUPPRESS-STATE-STORE-0000000003"] == (
        "KTABLE-SUPPRESS-0000000002 suppresses by stream time: their results follow stream "
        "time, which a merged task does not share with its old tasks"
    )


def test_only_the_foreign_key_joins_subscription_store_is_held_back() -> None:
    changelogs = {
        "shop-table-store-changelog": "compact",
        "shop-orders-table-changelog": "compact",
        "shop-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008-changelog": "compact",
    }
    routes, runbook_moves = _routes("fk-join", changelogs)
    held = {r.store: r.reason for r in routes if r.reason}
    assert held == {
        "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008": (
            "the store KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008 is a foreign-key "
            "join's subscription store, keyed by the foreign key and then the table's key, so "
            "its changelog records sit where the foreign key alone is placed"
        )
    }
    assert {r.store for r in routes if r.reason is None} == {"table-store", "orders-table"}
    assert not runbook_moves


def test_a_global_store_has_nothing_to_move_and_is_not_listed() -> None:
    routes, _ = _routes("global", {})
    assert routes == ()


def test_a_streams_protocol_apps_store_moves_as_a_classic_ones() -> None:
    """KIP-1071 is no reason of the whole app any more: its new id's offsets are committed
    as a classic app's are (FINDINGS.md, "Committing a new streams group's offsets")."""
    routes, runbook_moves = _routes(
        "count", {"shop-counts-changelog": "compact"}, protocol=Protocol.STREAMS
    )
    assert routes == (StoreRoute("counts", "shop-counts-changelog", None),)
    assert runbook_moves


def test_a_framework_whose_move_is_not_proven_holds_back_every_store() -> None:
    routes, runbook_moves = _routes(
        "count", {"shop-counts-changelog": "compact"}, kind=ReaderKind.QUIX_STREAMS
    )
    (reason,) = [r.reason for r in routes]
    assert reason is not None
    assert reason.startswith("shop is a Quix Streams application: ")
    assert reason.endswith("; keep the whole history and use another --strategy")
    assert not runbook_moves


def test_bytes_are_one_copy_each_partition_its_largest_current_replica() -> None:
    def part(p: int, size: int, future: bool = False) -> dict[str, Any]:
        return {"partition_index": p, "partition_size": size, "offset_lag": 0,
                "is_future_key": future}  # fmt: skip

    def broker(node: int, *parts: dict[str, Any]) -> dict[str, Any]:
        topics = [{"name": "c", "partitions": list(parts)}, {"name": "other", "partitions":
                  [part(0, 999)]}]  # fmt: skip
        return {"broker": node, "log_dirs": [{"error_code": 0, "log_dir": "/d", "topics": topics}]}

    brokers = [
        broker(1, part(0, 100), part(1, 70)),  # partition 1's follower lags: 70 of 80
        broker(2, part(1, 80), part(0, 5000, future=True)),  # a future log is not a copy
    ]
    # a topic no broker described (no DESCRIBE on the cluster: no log dir) is unknown, not 0
    assert one_copy_sizes(brokers, ["c", "absent"]) == {"c": 180}
    assert one_copy_sizes([{"broker": 1, "log_dirs": []}], ["c"]) == {}


def test_a_topics_records_are_its_offsets_in_range() -> None:
    meta = TopicMeta("c", "compact", 2, (PartitionMeta(0, 10, 25), PartitionMeta(1, 0, 7)))
    assert meta.records == 22


# --- the report ------------------------------------------------------------------------

ROUTES = [
    {"store": "counts", "changelog": "count-<app>-counts-changelog", "movable": True,
     "records": 1_200, "bytes": 48 * 1024, "reason": None},
    {"store": "w_counts", "changelog": "count-<app>-w_counts-changelog", "movable": False,
     "records": None, "bytes": None, "reason": "count-<app>-w_counts-changelog is a window "
     "or session store's changelog (cleanup.policy compact,delete): their results follow "
     "stream time, which a merged task does not share with its old tasks"},
]  # fmt: skip


def _with_routes() -> Any:
    report = app_report()
    report["state"]["routes"] = ROUTES
    return report


def test_the_text_report_says_each_stores_route() -> None:
    text = render_app_text(_with_routes())
    assert (
        "Moving the state instead (migcheck runbook --strategy move-state)\n"
        "-----------------------------------------------------------------\n"
        "  - counts: movable (count-<app>-counts-changelog: 1,200 records, 48.0 KiB)\n"
        "  - w_counts: not movable: count-<app>-w_counts-changelog is a window or session "
        "store's changelog (cleanup.policy compact,delete): their results follow stream time, "
        "which a merged task does not share with its old tasks\n"
    ) in text


def test_the_markdown_and_html_reports_escape_the_names_as_the_rest_of_the_report() -> None:
    md = render_app_markdown(_with_routes())
    assert "- counts: movable (count-&lt;app&gt;-counts-changelog: 1,200 records, 48.0 KiB)" in md
    assert "- w\\_counts: not movable: count-&lt;app&gt;-w\\_counts-changelog is a window" in md
    html = render_app_html(_with_routes())
    assert "counts: movable (count-&lt;app&gt;-counts-changelog: 1,200 records, 48.0 KiB)" in html
    assert "count-<app>" not in html


def test_a_movable_store_whose_log_dirs_no_broker_described_says_its_bytes_are_unknown() -> None:
    report = _with_routes()
    report["state"]["routes"] = [{**ROUTES[0], "bytes": None}]
    assert (
        "  - counts: movable (count-<app>-counts-changelog: 1,200 records; bytes unknown: no "
        "broker described its log dirs (DescribeLogDirs needs DESCRIBE on the cluster))\n"
    ) in render_app_text(report)


def test_a_report_without_routes_renders_as_before() -> None:
    before = app_report()
    assert "Moving the state instead" not in render_app_text(before)
    assert "routes" not in before["state"]


# --- where every store can move: app's remedy and the gate's next step --------------------

TRIMMED = (Trimmed("orders", ((0, 40), (2, 7))),)


def test_the_remedy_names_the_move_where_every_store_can_move() -> None:
    assert remedy_loses_history(TRIMMED, "--strategy move-state") == (
        "migcheck runbook --strategy move-state moves the app's state to the new count and "
        "reprocesses nothing (every store can move); every other remedy (migcheck runbook's "
        "other strategies, migrate) rebuilds it by reprocessing sources that no longer hold "
        "their whole history (orders partition 0 from offset 40, 2 from offset 7): up to 47 "
        "records deleted below those offsets would be missing from every count, aggregate, "
        "table and join it rebuilds: each is refused unless --accept-lost-history"
    )
    # where the framework has a shadow, migrate's seeded shadow is the online way
    assert remedy_loses_history(TRIMMED, "--strategy move-state", "--shadow-state move") == (
        "migcheck runbook --strategy move-state (offline) and migcheck migrate --shadow-state "
        "move (online) move the app's state to the new count and reprocess nothing (every "
        "store can move); every other remedy (migcheck runbook's other strategies, migrate's "
        "rebuilt shadow) rebuilds it by reprocessing sources that no longer hold their whole "
        "history (orders partition 0 from offset 40, 2 from offset 7): up to 47 records "
        "deleted below those offsets would be missing from every count, aggregate, table and "
        "join it rebuilds: each is refused unless --accept-lost-history"
    )
    assert remedy_loses_history(TRIMMED).startswith(
        "every remedy (migcheck runbook, migrate) rebuilds the app's state by reprocessing"
    )


def _app(rules: list[RuleCode]) -> GateReader:
    return GateReader(kind="kafka-streams", id="shop", verdict=GateVerdict.CRASH,
                      reasons=["e"] * len(rules), rules=rules)  # fmt: skip


def test_the_gates_next_step_moves_the_state_of_an_app_whose_every_store_can_move() -> None:
    p = Proposal("orders", None, 6, Source(SourceKind.CHANGE, None, "--change"))
    app = _app([RuleCode.APP_CRASHES, RuleCode.REMEDY_LOSES_HISTORY])
    moves = {"shop": "/t/shop topology.txt"}
    assert next_steps("b:9092", None, p, GateVerdict.CRASH, [app], None, moves) == [
        "# 'shop': its sources lack their whole history (MC204); every store can move "
        "instead, which reprocesses nothing:",
        "migcheck runbook --bootstrap-server b:9092 --application-id shop --topic orders --to 6 "
        "--topology '/t/shop topology.txt' --strategy move-state",
    ]
    # its history whole (no MC204), the same app's runbook is the plain one
    whole = next_steps("b:9092", None, p, GateVerdict.CRASH, [_app([RuleCode.APP_CRASHES])],
                       None, moves)  # fmt: skip
    assert whole == [
        "migcheck runbook --bootstrap-server b:9092 --application-id shop --topic orders --to 6"
    ]
