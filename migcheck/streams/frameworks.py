"""The stream processors whose state migcheck judges, each an entry in one registry.

Kafka Streams, ksqlDB (each persistent query runs as a Kafka Streams application), Quix
Streams and Faust keep each key's state in a local store of the task that owns its
partition, logged to a changelog topic partitioned alike.  What is alike, that state stays with the
partition its key hashed to, is judged once by :mod:`migcheck.streams.rules`; what differs
is here: how each names its internal topics, which of them it checks, the words of the
error it raises and in which releases, and when it raises it.

Pure.  A new framework is an entry in :data:`FRAMEWORKS` (and its naming in
:mod:`migcheck.readers.naming`, which tells its groups apart).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.topics import CHANGELOG_SUFFIX, is_repartition_name
from migcheck.readers.naming import (
    faust_changelog,
    faust_table,
    faust_topics,
    quix_topics,
    streams_topics,
)

RESET_HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool "
    "to clean up invalid topics before processing."
)


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
    #: the error for a changelog (or checked repartition topic) of the wrong count:
    #: ``invalid(protocol, topic, expected, actual)``, and with :attr:`names_source`
    #: the keywords ``source`` and ``app_id`` too
    invalid: Callable[..., str]
    #: the releases whose words :attr:`invalid` quotes
    releases: Callable[[Protocol], str]
    #: when the app meets that error, in words
    fails_when: str
    #: why state may be unseen where no changelog shows it, and what settles it
    unseen: str
    #: the clean-up its error leads an operator to: it lets the app start again, and
    #: splits the history of a store fed directly by the altered topic
    cleanup: str = "the reset tool, and an empty state directory"
    #: whether :attr:`invalid` names the source topic whose record meets the check, and
    #: the table (Faust's error does)
    names_source: bool = False
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


#: faust-streaming's E_SOURCE_PARTITIONS_MISMATCH (faust/tables/base.py), the text of the
#: PartitionsMismatch a table raises: the same in 0.1.0, 0.6.0, 0.10.0, 0.11.0, 0.13.0 and
#: 0.15.3, and the text a real 0.15.3 app raised (fixtures/faust/FINDINGS.md).
FAUST_MISMATCH = """\
The source topic {source_topic!r} for table {table_name!r}
has {source_n} partitions, but the changelog
topic {change_topic!r} has {change_n} partitions.

Please make sure the topics have the same number of partitions
by configuring Kafka correctly.
"""


def faust_invalid(
    protocol: Protocol, topic: str, expected: int, actual: int, *, source: str, app_id: str
) -> str:
    """Faust's PartitionsMismatch, as a table raises it at its first write of a record of
    ``source`` (Collection._verify_source_topic_partitions): the source's count against
    its changelog's, both names as Python's repr() writes them."""
    text = FAUST_MISMATCH.format(
        source_topic=source,
        table_name=faust_table(app_id, topic) or topic,
        source_n=expected,
        change_topic=topic,
        change_n=actual,
    )
    return f"faust.exceptions.PartitionsMismatch: {text.rstrip()}"


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
    cleanup="TERMINATE and the query created again from the earliest offsets",
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
    cleanup="Application.clear_state(), the changelog deleted and the group sent back to "
    "the earliest offsets",
)

FAUST = Framework(
    kind=ReaderKind.FAUST,
    name="Faust",
    takes_topology=False,
    internal_topics=faust_topics,
    internal=_streams_internal,  # the model names a table's changelog <table>-changelog
    changelog=faust_changelog,
    is_repartition=is_repartition_name,
    checks_repartition=False,  # a group_by's topic keeps the count it was created with
    changelog_by_key=False,  # a table writes a key to its source record's partition
    invalid=faust_invalid,
    releases=lambda p: "faust-streaming 0.1 to 0.15",
    fails_when="at the first table write after the worker starts again (Faust checks once "
    "per source topic per process); the agent then crashes at every record, its supervisor "
    "restarting it, and each record it crashed on is committed unprocessed while the worker "
    "runs on. A worker running through the alter is no safer: once its consumer's metadata "
    "refresh (consumer_metadata_max_age_ms, 5 min by default) brings the new partitions, it "
    "counts the moved keys from empty state (a RocksDB store keeps state per partition) "
    "until its first changelog write to a new partition fails in aiokafka with "
    '"AssertionError: Unrecognized partition" and the worker exits',
    unseen="a Faust table's changelog shows its state; a stream without a table keeps "
    "none, but an agent may keep state of its own that no topic shows",
    names_source=True,
)

#: ``--framework``'s default: told apart by the evidence.
AUTO_FRAMEWORK = "auto"


def framework_said(value: str) -> Framework | None:
    """The framework ``--framework value`` names; None for ``auto`` (the evidence decides)."""
    return None if value == AUTO_FRAMEWORK else FRAMEWORKS[ReaderKind(value)]


#: Every framework, by the reader kind that names it.
FRAMEWORKS: Mapping[ReaderKind, Framework] = {
    f.kind: f for f in (KAFKA_STREAMS, KSQLDB, QUIX_STREAMS, FAUST)
}
