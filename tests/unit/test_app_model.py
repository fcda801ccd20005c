"""The app model without --topology, and with it: what names and counts allow, by hand.

Each case lists the topics a real app of fixtures/java/streams leaves on the
cluster (FINDINGS.md) and states the verdict Kafka Streams really reached there.
"""

from __future__ import annotations

from pathlib import Path

from streamsmodel import app_facts

from migcheck.apps.build import Basis, from_topology, inferred
from migcheck.apps.rules import AppLevel, verdict
from migcheck.frameworks.topology import parse_topology
from migcheck.model.topics import is_internal

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


#: rekey-count-fixed's internal topics, each at 3 partitions
REKEY_INTERNAL = {"shop-rekey-repartition": 3, "shop-counts-changelog": 3}


def _topology(name: str):
    return parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))


def test_internal_topics_are_told_apart_by_the_names_kafka_streams_gives_them() -> None:
    # the names rekey-count leaves on the cluster (FINDINGS.md), under application id "shop"
    assert is_internal("shop", "shop-counts-changelog")
    assert is_internal("shop", "shop-rekey-group-repartition")
    assert not is_internal("shop", "orders")
    assert not is_internal("shop", "shop-orders")  # the prefix alone is not enough
    assert not is_internal("shop", "other-counts-changelog")  # another app's
    assert not is_internal("shop", "shop-counts-changelog-backup")


def test_a_store_logs_to_the_changelog_kafka_streams_names_for_it() -> None:
    app = inferred(app_facts("shop", {"orders": 3}, {"shop-counts-changelog": 3})).app
    (sub,) = app.topology.subtopologies
    assert sub.stores == ("counts",)
    assert app.changelog("counts") == "shop-counts-changelog"


def test_inferred_changelog_with_the_source_count_crashes() -> None:
    model = inferred(app_facts("shop", {"orders": 3}, {"shop-counts-changelog": 3}))
    assert model.basis == Basis.INFERRED
    v = verdict(model.app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert v.reasons[0].topics == ("shop-counts-changelog",)


def test_inferred_store_sits_behind_the_repartition_topic() -> None:
    facts = app_facts(
        "shop",
        {"orders": 3},
        {"shop-rekey-group-repartition": 3, "shop-counts-changelog": 3},
    )
    app = inferred(facts).app
    first, second = app.topology.subtopologies
    assert first.source_topics == ("orders",) and first.sink_topics == ("rekey-group-repartition",)
    assert second.source_topics == ("rekey-group-repartition",) and second.stores == ("counts",)
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert v.reasons[0].topics == ("shop-rekey-group-repartition",)  # what Kafka names first


def test_inferred_repartition_of_another_count_is_fixed_and_shields() -> None:
    # rekey-count-fixed on a 6-partition input: the repartition topic kept its 3
    facts = app_facts(
        "shop", {"orders": 6}, {"shop-rekey-repartition": 3, "shop-counts-changelog": 3}
    )
    app = inferred(facts).app
    assert app.fixed == {"rekey-repartition": 3}
    v = verdict(app, {"orders": 12})
    # the stateful sub-topology behind it keeps its 3 tasks; the source one shows no state
    assert v.subtopologies[1] == AppLevel.SAFE
    assert v.subtopologies[0] == AppLevel.CORRUPT  # fails closed: its state is unseen


def test_inferred_without_any_internal_topic_fails_closed() -> None:
    v = verdict(inferred(app_facts("shop", {"orders": 3}, {})).app, {"orders": 6})
    assert v.level == AppLevel.CORRUPT and "--topology" in v.reasons[0].text
    assert verdict(inferred(app_facts("shop", {"orders": 3}, {})).app, {"orders": 3}).level == (
        AppLevel.SAFE
    )


def test_topology_finds_a_fixed_repartition_from_its_count() -> None:
    facts = app_facts(
        "shop", {"orders": 6}, {"shop-rekey-repartition": 3, "shop-counts-changelog": 3}
    )
    model = from_topology(facts, _topology("rekey-count-fixed"))
    assert model.app.fixed == {"rekey-repartition": 3} and model.notes == ()
    assert verdict(model.app, {"orders": 12}).level == AppLevel.SAFE


def test_topology_with_an_ambiguous_repartition_says_so() -> None:
    facts = app_facts(
        "shop", {"orders": 3}, {"shop-rekey-repartition": 3, "shop-counts-changelog": 3}
    )
    model = from_topology(facts, _topology("rekey-count-fixed"))
    (note,) = model.notes
    assert "--fixed-repartition rekey-repartition" in note
    given = from_topology(facts, _topology("rekey-count-fixed"), fixed=["rekey-repartition"])
    assert given.notes == () and verdict(given.app, {"orders": 6}).level == AppLevel.SAFE


def test_topology_store_without_changelog_is_logging_disabled() -> None:
    model = from_topology(app_facts("shop", {"orders": 3}, {}), _topology("count"))
    v = verdict(model.app, {"orders": 6})
    assert v.level == AppLevel.CORRUPT and v.reasons[0].stores == ("counts",)
