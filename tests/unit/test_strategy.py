"""--strategy auto on the fixture apps' real Topology#describe() outputs.

Which store reads the altered topic directly is read off each app's own describe()
(fixtures/java/streams/describe), by hand, in each case below.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamsmodel import app_facts

from migcheck.apps.build import Basis, from_topology, inferred
from migcheck.apps.strategy import choose, direct_stores
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.topology import parse_topology
from migcheck.model.runbook import (
    Strategy,
)

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _model(name: str, internal: dict[str, int] | None = None):
    topology = parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))
    facts = app_facts("shop", {"orders": 3, "customers": 3}, internal or {})
    return from_topology(facts, topology)


@pytest.mark.parametrize(
    ("name", "topic", "stores", "strategy"),
    [
        (
            "count",
            "orders",
            ("counts",),
            Strategy.NEW_TOPIC,
        ),  # groupByKey().count(): same sub-topology
        (
            "count-nolog",
            "orders",
            ("counts",),
            Strategy.NEW_TOPIC,
        ),  # no changelog, still keyed state
        ("windowed", "orders", ("wcounts",), Strategy.NEW_TOPIC),
        ("source-changelog", "orders", ("source-table",), Strategy.NEW_TOPIC),  # table(orders)
        ("join", "orders", ("table-store",), Strategy.NEW_TOPIC),  # the join's table sits beside it
        ("join", "customers", ("table-store",), Strategy.NEW_TOPIC),
        (
            "rekey-count",
            "orders",
            (),
            Strategy.IN_PLACE,
        ),  # counts sits behind the repartition topic
        ("rekey-count-fixed", "orders", (), Strategy.IN_PLACE),
        (
            "global",
            "orders",
            (),
            Strategy.IN_PLACE,
        ),  # the stream side of a global join holds nothing
        ("global", "customers", (), Strategy.IN_PLACE),  # a global store reads every partition
    ],
)
def test_auto_picks_in_place_only_without_a_store_fed_directly(
    name: str, topic: str, stores: tuple[str, ...], strategy: str
) -> None:
    model = _model(name)
    assert direct_stores(model, topic).stores == stores
    choice = choose(Strategy.AUTO, model, topic, KAFKA_STREAMS)
    assert choice.strategy == strategy
    assert f"--strategy auto chose {strategy}" in choice.reason
    for store in stores:
        assert store in choice.reason


def test_an_explicit_strategy_is_kept_and_needs_no_reason() -> None:
    assert (
        choose(Strategy.IN_PLACE, _model("count"), "orders", KAFKA_STREAMS).strategy
        == Strategy.IN_PLACE
    )
    assert choose(Strategy.NEW_TOPIC, _model("rekey-count"), "orders", KAFKA_STREAMS).reason == ""


def test_without_the_topology_auto_cannot_be_sure_and_says_how_to_be() -> None:
    """Inferred from names, the store behind the repartition topic is only a guess: a
    store with logging disabled beside the source would leave no topic behind."""
    facts = app_facts(
        "shop", {"orders": 3}, {"shop-rekey-group-repartition": 3, "shop-counts-changelog": 3}
    )
    model = inferred(facts)
    assert model.basis == Basis.INFERRED
    direct = direct_stores(model, "orders")
    assert direct.stores == () and not direct.certain
    choice = choose(Strategy.AUTO, model, "orders", KAFKA_STREAMS)
    assert choice.strategy == Strategy.NEW_TOPIC and "--topology" in choice.reason


def test_a_source_taken_on_the_users_word_is_said_in_the_models_notes() -> None:
    """The group is gone (deleted, or its offsets expired) and only the changelog stays:
    the topic the user named is the source, and the report must say whose word that is."""
    from migcheck.apps.discovery import Discovery, app_model, not_read

    facts = app_facts("shop", {"orders": 3}, {"shop-counts-changelog": 3})
    disc = Discovery(facts, None, {}, None, ("orders",))
    (note,) = app_model(disc, None).notes
    assert note.startswith("the group shop does not exist (its offsets expire")
    assert "orders is taken as a source on your word (the topic you named)" in note
    topology = parse_topology((DESCRIBE / "count.txt").read_text(encoding="utf-8"))
    assert app_model(disc, topology).notes == ()  # the topology settles what it reads
    refused = str(not_read(Discovery(facts, None, {}), "payments", topology_given=False))
    assert refused.endswith(
        "its group shows it reading orders; if it reads payments too, pass --topology "
        "(the app's Topology#describe())"
    )


def test_in_place_scans_for_split_keys_only_where_state_may_split() -> None:
    """A store read directly is named; without the topology, a CRASH verdict leaves state
    that only --topology could name (None); a SAFE one, or a store behind a repartition
    topic, splits nothing and needs no scan."""
    from migcheck.apps.rules import AppLevel
    from migcheck.commands.runbook import _splitting_stores
    from migcheck.report.runbook import refusal_line

    assert _splitting_stores(_model("count"), ["orders"], AppLevel.CRASH) == ("counts",)
    assert _splitting_stores(_model("rekey-count"), ["orders"], AppLevel.CRASH) == ()
    facts = app_facts(
        "shop", {"orders": 3}, {"shop-rekey-group-repartition": 3, "shop-counts-changelog": 3}
    )
    assert _splitting_stores(inferred(facts), ["orders"], AppLevel.CRASH) is None
    assert _splitting_stores(inferred(facts), ["orders"], AppLevel.SAFE) == ()
    assert refusal_line("orders", None, ["k1"]) == (
        "refused --strategy in-place: 1 keys of orders would split their history in state "
        "migcheck cannot see without --topology (listed in the output); use --strategy "
        "new-topic or --accept-split-history"
    )


#: Two sub-topologies, written by hand in describe()'s form: orders counted in its own
#: task (a store reads it directly), customers passed through to ``out`` (none does).
_COUNT_AND_PASS = """Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [orders])
      --> KSTREAM-AGGREGATE-0000000001
    Processor: KSTREAM-AGGREGATE-0000000001 (stores: [counts])
      --> none
      <-- KSTREAM-SOURCE-0000000000
   Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000002 (topics: [customers])
      --> KSTREAM-SINK-0000000003
    Sink: KSTREAM-SINK-0000000003 (topic: out)
      <-- KSTREAM-SOURCE-0000000002
"""


def test_a_set_takes_the_route_its_most_demanding_topic_needs() -> None:
    """Issue 71: customers alone would be altered in place; in a set with orders, whose
    store reads it directly, every topic is copied, and the reason says why."""
    from migcheck.commands.runbook import RunbookOptions, _choose

    facts = app_facts("shop", {"orders": 3, "customers": 3}, {"shop-counts-changelog": 3})
    model = from_topology(facts, parse_topology(_COUNT_AND_PASS))
    alone = _choose(RunbookOptions("shop", "customers", 6), model, KAFKA_STREAMS, (), False)
    assert alone.strategy is Strategy.IN_PLACE
    both = RunbookOptions("shop", "customers", 6, also=("orders",))
    chosen = _choose(both, model, KAFKA_STREAMS, (), False)
    assert chosen.strategy is Strategy.NEW_TOPIC
    assert chosen.reason == (
        "--strategy auto chose new-topic: the store counts reads orders directly, so after "
        "an in-place alter each moved key's history would split between two tasks. Every "
        "topic of the set is copied with it: a join between a side altered in place and a "
        "side copied would match nothing."
    )
