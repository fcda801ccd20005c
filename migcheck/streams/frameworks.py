"""The stream processors whose state migcheck judges, each an entry in one registry.

Kafka Streams, ksqlDB (each persistent query runs as a Kafka Streams application) and
Quix Streams keep each key's state in a local store of the task that owns its partition,
logged to a changelog topic partitioned alike.  What is alike, that state stays with the
partition its key hashed to, is judged once by :mod:`migcheck.streams.rules`; what differs
is here: how each names its internal topics, which of them it checks, the words of the
error it raises and in which releases, and when it raises it.

Pure.  A new framework is an entry in :data:`FRAMEWORKS` (and its naming in
:mod:`migcheck.readers.naming`, which tells its groups apart).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from migcheck.model.readers import ReaderKind
from migcheck.model.topics import CHANGELOG_SUFFIX, is_repartition_name
from migcheck.readers.naming import quix_topics, streams_topics

RESET_HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool "
    "to clean up invalid topics before processing."
)


class Protocol(StrEnum):
    """The rebalance protocol: it decides which check fails first and how the error reads."""

    CLASSIC = "classic"  # the leader's StreamsPartitionAssignor validates internal topics
    STREAMS = "streams"  # KIP-1071: the broker's group coordinator validates the topology


@dataclass(frozen=True)
class Framework:
    """What a stream processor does with its internal topics, as its source shows it.

    Names in the app model are an internal topic's name without the framework's prefix
    (Kafka Streams: without ``<application.id>-``); :attr:`internal` gives the topic.
    """

    kind: ReaderKind
    name: str
    #: whether a Kafka Streams Topology#describe() (--topology) describes its apps; if
    #: not, its internal topics' names are the whole model
    takes_topology: bool
    #: (application id, the cluster's topics) to the app's internal topics among them
    internal_topics: Callable[[str, Iterable[str]], list[str]]
    #: (application id, a name in the model) to the topic on the cluster
    internal: Callable[[str, str], str]
    #: (application id, store) to the store's changelog topic
    changelog: Callable[[str, str], str]
    #: whether a name in the model is a repartition topic's
    is_repartition: Callable[[str], bool]
    #: whether it checks a repartition topic's count (else it keeps the count it was
    #: created with: the app sized it, as Kafka Streams' ``Repartitioned`` does)
    checks_repartition: bool
    #: whether a changelog's records are placed by its state key's hash, as the source's
    #: are, so that its keys measure what moves (Quix places each on its source record's
    #: partition, its key prefixed: the source topic measures it instead)
    changelog_by_key: bool
    #: the error for a changelog (or checked repartition topic) of the wrong count
    invalid: Callable[[Protocol, str, int, int], str]
    #: the releases whose words :attr:`invalid` quotes
    releases: Callable[[Protocol], str]
    #: when the app meets that error, in words
    fails_when: str
    #: why state may be unseen where no changelog shows it, and what settles it
    unseen: str
    #: when an app on the streams protocol (KIP-1071) meets the error, if not :attr:`fails_when`
    streams_fails_when: str | None = None

    def failing_when(self, protocol: Protocol) -> str:
        """When the app meets its error under ``protocol``, in words."""
        if protocol == Protocol.STREAMS and self.streams_fails_when:
            return self.streams_fails_when
        return self.fails_when


def streams_invalid(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    """The error Kafka Streams raises for an internal topic of the wrong size.

    Classic: InternalTopicManager's StreamsException in the group leader, worded alike
    by Kafka Streams 3.9.2 and 4.3.1 (their jars' format strings are the same, and a
    real 3.9.2 app crashed with this text: FINDINGS.md, "Kafka 3.9 and 4.3"), so the
    quote holds whatever the client's version.  Streams protocol (4.1 on; 3.x has only
    the classic one): the broker reports INCORRECTLY_PARTITIONED_TOPICS and the client
    throws a TopologyException, as Kafka 4.3 prints it.
    """
    if protocol == Protocol.STREAMS:
        return (
            f"Invalid topology: Existing topic {topic} has different number of partitions: "
            f"expected {expected}, found {actual}"
        )
    return (
        f"Existing internal topic {topic} has invalid partitions: "
        f"expected: {expected}; actual: {actual}. {RESET_HINT}"
    )


def _streams_releases(protocol: Protocol) -> str:
    """The classic texts are the same in the jars of 3.9.2 and 4.3.1 and in a real crash
    of each (FINDINGS.md, "Kafka 3.9 and 4.3"); the streams protocol exists from 4.1."""
    first = "4.1" if protocol == Protocol.STREAMS else "3.9"
    return f"Kafka Streams {first} to 4.3"


def _ksqldb_invalid(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    return f"the query goes to ERROR: {streams_invalid(protocol, topic, expected, actual)}"


def quix_invalid(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    """Quix Streams' TopicManager.changelog_topic, at the app's start: the changelog must
    have the count of its stream's widest topic.  The trailing quote is Quix's own."""
    return (
        f'TopicConfigurationMismatch: Invalid partition count for the changelog topic "{topic}": '
        f'expected {expected}, got {actual}"'
    )


def _streams_internal(app_id: str, name: str) -> str:
    return f"{app_id}-{name}"


def _streams_changelog(app_id: str, store: str) -> str:
    return f"{app_id}-{store}{CHANGELOG_SUFFIX}"


def quix_changelog(group: str, store: str) -> str:
    """Quix names a changelog ``changelog__<group>--<stream id>--<store>``; the model's
    store is ``<stream id>--<store>``."""
    return f"changelog__{group}--{store}"


_STREAMS_UNSEEN = (
    "without --topology a store with logging disabled, or a source topic used as a "
    "changelog, cannot be ruled out (pass the app's Topology#describe() with --topology "
    "to decide)"
)

KAFKA_STREAMS = Framework(
    kind=ReaderKind.KAFKA_STREAMS,
    name="Kafka Streams",
    takes_topology=True,
    internal_topics=streams_topics,
    internal=_streams_internal,
    changelog=_streams_changelog,
    is_repartition=is_repartition_name,
    checks_repartition=True,
    changelog_by_key=True,
    invalid=streams_invalid,
    releases=_streams_releases,
    fails_when="at the app's next rebalance: its next start, or a running app's next "
    "metadata refresh",
    unseen=_STREAMS_UNSEEN,
    # Kafka Streams 4.3.1 on a 4.3.1 broker, stopped and running (FINDINGS.md, "Streams
    # protocol through an alter, stopped and running")
    streams_fails_when="at its next heartbeat, when the broker reports "
    "INCORRECTLY_PARTITIONED_TOPICS: a stopped app as it starts, a running one within "
    "seconds of the alter (group.streams.heartbeat.interval.ms, 5 s by default); Kafka "
    "Streams' default uncaught-exception handler then shuts the client down (ERROR), while "
    "a handler that returns REPLACE_THREAD stalls it (every new thread fails alike; the app "
    "stays in REBALANCING with no tasks, its group NotReady, until the topic is fixed)",
)

#: A persistent query is a Kafka Streams application: the same names and checks.
KSQLDB = replace(
    KAFKA_STREAMS,
    kind=ReaderKind.KSQLDB,
    name="ksqlDB",
    invalid=_ksqldb_invalid,
    releases=lambda p: f"{_streams_releases(p)}, the client inside ksqlDB (not run here)",
    fails_when="at the query's next rebalance; ksqlDB's query monitor then keeps "
    "restarting it, and it fails the same way each time",
    streams_fails_when=None,
)

QUIX_STREAMS = Framework(
    kind=ReaderKind.QUIX_STREAMS,
    name="Quix Streams",
    takes_topology=False,
    internal_topics=quix_topics,
    internal=lambda group, name: name,  # the model holds a Quix topic's full name
    changelog=quix_changelog,
    is_repartition=lambda name: name.startswith("repartition__"),
    checks_repartition=False,
    changelog_by_key=False,
    invalid=quix_invalid,
    releases=lambda p: "Quix Streams 3.14 to 3.28",
    fails_when="at the app's next start; a running app at its next metadata refresh "
    "(librdkafka's topic.metadata.refresh.interval.ms, 5 min by default), when the new "
    "partitions' assignment fails with PartitionAssignmentError",
    unseen="a Quix app without changelog topics (use_changelog_topics=False) keeps its "
    "state where no topic shows it, so state cannot be ruled out",
)

#: ``--framework``'s default: told apart by the evidence.
AUTO_FRAMEWORK = "auto"

#: Every framework, by the reader kind that names it.
FRAMEWORKS: Mapping[ReaderKind, Framework] = {
    f.kind: f for f in (KAFKA_STREAMS, KSQLDB, QUIX_STREAMS)
}
