"""A Kafka Streams topology, as ``Topology#describe()`` prints it.

The text is what operators have at hand (applications log it at start-up), so
``migcheck app --topology FILE`` takes it as is.  The format is Kafka's
``TopologyDescription.toString()``:

    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [orders])
          --> KSTREAM-AGGREGATE-0000000001
        Processor: KSTREAM-AGGREGATE-0000000001 (stores: [counts])
          --> none
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-AGGREGATE-0000000001
      Sub-topology: 1 for global store (will not generate tasks)
        ...

Node names are whatever the application chose (``Named.as``), so a name may
hold spaces, brackets or colons: each line is split at its *last* annotation,
never at the first punctuation.  A line that fits no rule is an error naming
its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from migcheck.errors import MigcheckError, UsageError
from migcheck.model.topics import is_repartition_name


class TopologyParseError(MigcheckError):
    """The ``--topology`` text is not a ``Topology#describe()`` output."""


@dataclass
class Node:
    """A source, processor or sink of a sub-topology."""

    kind: str  # "source", "processor" or "sink"
    name: str
    topics: tuple[str, ...] = ()  # a source's topics, or a sink's one topic
    pattern: str | None = None  # a source's topic pattern
    stores: tuple[str, ...] = ()  # a processor's state stores
    successors: tuple[str, ...] = ()
    predecessors: tuple[str, ...] = ()


@dataclass
class SubTopology:
    """One sub-topology: a task per partition of its sources, unless it is global."""

    id: int
    is_global: bool = False
    nodes: list[Node] = field(default_factory=list)

    @property
    def source_topics(self) -> tuple[str, ...]:
        return tuple(t for n in self.nodes if n.kind == "source" for t in n.topics)

    @property
    def source_patterns(self) -> tuple[str, ...]:
        return tuple(n.pattern for n in self.nodes if n.kind == "source" and n.pattern)

    @property
    def sink_topics(self) -> tuple[str, ...]:
        return tuple(t for n in self.nodes if n.kind == "sink" for t in n.topics)

    @property
    def stores(self) -> tuple[str, ...]:
        """Its state stores, each once, in order of appearance."""
        seen = dict.fromkeys(s for n in self.nodes for s in n.stores)
        return tuple(seen)


@dataclass
class Topology:
    subtopologies: list[SubTopology] = field(default_factory=list)

    @property
    def stores(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for sub in self.subtopologies for s in sub.stores))


_SUBTOPOLOGY = re.compile(r"^Sub-topology: (\d+)( for global store \(will not generate tasks\))?$")
_SOURCE_TOPICS = re.compile(r"^Source: (.+) \(topics: \[(.*)\]\)$")
_SOURCE_PATTERN = re.compile(r"^Source: (.+) \(topic pattern: (.*)\)$")
_PROCESSOR = re.compile(r"^Processor: (.+) \(stores: \[(.*)\]\)$")
_SINK_TOPIC = re.compile(r"^Sink: (.+) \(topic: (.*)\)$")
_SINK_EXTRACTOR = re.compile(r"^Sink: (.+) \(extractor class: (.*)\)$")
_EDGES = re.compile(r"^(-->|<--) (.*)$")


def _names(text: str) -> tuple[str, ...]:
    """``a, b`` -> ("a", "b"); ``none`` and the empty list -> ()."""
    text = text.strip()
    if text in ("", "none"):
        return ()
    return tuple(part.strip() for part in text.split(", "))


def _node(line: str) -> Node | None:
    """The node a line declares, or None when it declares none."""
    if m := _SOURCE_TOPICS.match(line):
        return Node("source", m.group(1), topics=_names(m.group(2)))
    if m := _SOURCE_PATTERN.match(line):
        return Node("source", m.group(1), pattern=m.group(2))
    if m := _PROCESSOR.match(line):
        return Node("processor", m.group(1), stores=_names(m.group(2)))
    if m := _SINK_TOPIC.match(line):
        return Node("sink", m.group(1), topics=_names(m.group(2)))
    if m := _SINK_EXTRACTOR.match(line):
        return Node("sink", m.group(1))  # the topic is chosen per record
    return None


def parse_topology(text: str, origin: str = "--topology") -> Topology:
    """Parse ``Topology#describe()`` text; :class:`TopologyParseError` names a bad line."""
    topology = Topology()
    current: SubTopology | None = None
    node: Node | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line == "Topologies:":
            continue
        if m := _SUBTOPOLOGY.match(line):
            current = SubTopology(int(m.group(1)), is_global=m.group(2) is not None)
            topology.subtopologies.append(current)
            node = None
        elif (found := _node(line)) is not None:
            if current is None:
                raise TopologyParseError(f"{origin}, line {number}: a node before any Sub-topology")
            node = found
            current.nodes.append(node)
        elif m := _EDGES.match(line):
            if node is None:
                raise TopologyParseError(f"{origin}, line {number}: an edge before any node")
            if m.group(1) == "-->":
                node.successors += _names(m.group(2))
            else:
                node.predecessors += _names(m.group(2))
        else:
            shown = line if len(line) <= 60 else line[:59] + "…"
            raise TopologyParseError(
                f"{origin}, line {number}: not part of a Topology#describe() output: {shown!r}"
            )
    if not topology.subtopologies:
        raise TopologyParseError(f"{origin}: no Sub-topology found (is it describe() output?)")
    return topology


def read_topology(path: str | None) -> Topology | None:
    """The ``--topology`` file, parsed; None when none was given.  ``app``, ``plan`` and
    ``runbook`` all take it, so an unreadable file is the same one line for each."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--topology {path}: {getattr(e, 'strerror', None) or e}") from None
    return parse_topology(text, f"--topology {path}")


def output_topics(topology: Topology) -> list[str]:
    """The topics a topology writes for others to read: its sinks but its repartition
    topics (Kafka Streams' own, named ``<application.id>-<name>-repartition``)."""
    sinks = (t for sub in topology.subtopologies for t in sub.sink_topics)
    return list(dict.fromkeys(t for t in sinks if not is_repartition_name(t)))


def source_topics(topology: Topology) -> list[str]:
    """The source topics a topology names (to describe them along with the app's)."""
    return [t for sub in topology.subtopologies for t in sub.source_topics]
