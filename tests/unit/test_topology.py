"""Parsing ``Topology#describe()``: real outputs of Kafka Streams 4.3, odd names, bad text.

The fixtures in fixtures/java/streams/describe/ were printed by a real Kafka
Streams application (fixtures/java/streams/StreamsFixture.java, ``describe``);
the expected structures below are read off those texts by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migcheck.frameworks.topology import TopologyParseError, parse_topology

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _parse(name: str):
    return parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))


def test_count_is_one_stateful_subtopology() -> None:
    (sub,) = _parse("count").subtopologies
    assert (sub.id, sub.is_global) == (0, False)
    assert sub.source_topics == ("orders",)
    assert sub.stores == ("counts",)
    assert [n.kind for n in sub.nodes] == ["source", "processor"]


def test_rekey_count_splits_at_the_repartition_topic() -> None:
    first, second = _parse("rekey-count").subtopologies
    assert first.source_topics == ("orders",) and first.stores == ()
    assert first.sink_topics == ("rekey-group-repartition",)
    assert second.source_topics == ("rekey-group-repartition",)
    assert second.stores == ("counts",)
    source = second.nodes[0]
    assert source.successors == ("KSTREAM-AGGREGATE-0000000002",)


def test_join_has_two_sources_sharing_one_store() -> None:
    (sub,) = _parse("join").subtopologies
    assert set(sub.source_topics) == {"orders", "customers"}
    assert sub.stores == ("table-store",)
    assert sub.sink_topics == ("enriched",)
    table = next(n for n in sub.nodes if n.name == "KTABLE-SOURCE-0000000001")
    assert table.successors == () and table.predecessors == ("KSTREAM-SOURCE-0000000000",)


def test_global_store_generates_no_tasks() -> None:
    glob, stream = _parse("global").subtopologies
    assert glob.is_global and glob.source_topics == ("customers",)
    assert glob.stores == ("global-store",)
    assert not stream.is_global and stream.source_topics == ("orders",)
    assert stream.stores == ()


def test_windowed_and_source_changelog() -> None:
    assert _parse("windowed").stores == ("wcounts",)
    (sub,) = _parse("source-changelog").subtopologies
    assert sub.source_topics == ("orders",) and sub.stores == ("source-table",)


def test_every_fixture_parses() -> None:
    files = sorted(DESCRIBE.glob("*.txt"))
    assert len(files) >= 8
    for f in files:
        assert parse_topology(f.read_text(encoding="utf-8")).subtopologies, f.name


def test_patterns_odd_names_and_dynamic_sinks() -> None:
    text = (
        "Topologies:\n"
        "   Sub-topology: 3\n"
        "    Source: in (topic pattern: orders-.*)\n"
        "      --> my proc: (a) [b]\n"
        "    Processor: my proc: (a) [b] (stores: [s-1, s 2])\n"
        "      --> out, x\n"
        "      <-- in\n"
        "    Sink: out (extractor class: com.example.Router@1a2b)\n"
        "      <-- my proc: (a) [b]\n"
        "    Sink: x (topic: t (1))\n"
        "      <-- my proc: (a) [b]\n"
    )
    (sub,) = parse_topology(text).subtopologies
    assert sub.id == 3 and sub.source_patterns == ("orders-.*",) and sub.source_topics == ()
    proc = sub.nodes[1]
    assert proc.name == "my proc: (a) [b]" and proc.stores == ("s-1", "s 2")
    assert proc.successors == ("out", "x")
    assert sub.sink_topics == ("t (1)",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no Sub-topology found"),
        ("Topologies:\n    Source: a (topics: [t])\n", "line 2: a node before any Sub-topology"),
        ("Sub-topology: 0\n  --> b\n", "line 2: an edge before any node"),
        ("Sub-topology: 0\n  Source: a (topics: [t])\n  hello\n", "line 3: not part of"),
    ],
)
def test_malformed_text_names_its_line(text: str, message: str) -> None:
    with pytest.raises(TopologyParseError, match=message):
        parse_topology(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(
                [
                    "Topologies:",
                    "Sub-topology: 0",
                    "Source: s (topics: [a, b])",
                    "Processor: p (stores: [])",
                    "Sink: k (topic: t)",
                    "--> none",
                    "<-- s",
                ]
            ),
        ),
        max_size=12,
    )
)
def test_any_text_parses_or_fails_cleanly(lines: list[str]) -> None:
    try:
        parse_topology("\n".join(lines))
    except TopologyParseError as e:
        assert "\n" not in str(e)
