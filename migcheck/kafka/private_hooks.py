"""Every hook into kafka-python's private code, fenced by kafka-python's version.

kafka-python's public API reads Kafka correctly, but too slowly for migcheck's reads, and
has no call for the newer group protocols' describe requests, which migcheck needs.  The
hooks below reach into its private code, which any release may change without a word.  So
they live here and nowhere else, each written for one series of kafka-python,
:data:`TESTED_KAFKA_PYTHON` (the pin in ``pyproject.toml``), and tested against its own
implementation (``tests/unit/``: ``test_receive.py``, ``test_recordbatch_decode.py``,
``test_private_hooks.py``).  This module checks the installed kafka-python when it is
imported; outside that series every hook takes kafka-python's own public path instead (the
same records, read more slowly), and the first hook used prints one line on stderr saying
so, once per process.  With ``MIGCHECK_KAFKA_HOOKS=off`` every hook takes the public path
too, silently: the tests compare the two paths.

The eight hooks, each with why (and its public path):

1. A connection's transport's ``_sock_recv``: receives up to 1 MiB a call rather than
   4 KiB, so a fetch arrives in a few calls (public: kafka-python's own).
2. A connection's parser's ``receive_bytes``: parses a ``memoryview`` of what was
   received, so the parser's slices are views, not copies (public: kafka-python's own).
3. A connection's parser's ``_process_response``: a frame's long reads are copied once,
   not twice, and the read of all that is left, which kafka-python's decoder makes of a
   whole response, is a view, not a copy (public: kafka-python's own).
4. The fetcher's ``PartitionRecords`` (``consumer._fetcher``), subclassed per consumer: a
   fetched partition's bytes become one :class:`~migcheck.kafka.recordbatch.Columns` chunk
   (:func:`~migcheck.kafka.recordbatch.decode`), not a Python object per record (public:
   ``poll``'s records, gathered into the same columns by ``recordbatch.columns_of_records``).
5. The consumer's metadata cache (``consumer._cluster``): a partition no longer in it (its
   topic deleted) ends a read at once, without asking the cluster (public: none; the read
   ends at its idle timeout instead).
6. The admin client's coordinator lookup and connection manager
   (``admin._find_coordinator_ids``, ``admin._manager``): requests kafka-python has no
   call for, each sent to the coordinators of the groups it names: StreamsGroupDescribe,
   ConsumerGroupDescribe, ShareGroupDescribe and DescribeShareGroupOffsets (public: none;
   the group is described as by a broker without those requests: its type, state and
   committed offsets only, a streams group's model inferred from its topics, no member
   of a consumer-protocol or share group, no topic of an empty share group).
7. A client's ``KafkaConnectionManager._connect``: a broker's refusal of a SASL login
   is kept as the node's authentication failure, so the bootstrap stops and raises it
   at once (public: kafka-python retries until its bootstrap timeout).
8. The consumer's metadata cache (``consumer._manager.cluster``): spaces its refreshes by
   the consumer's own ``retry_backoff_ms``, which kafka-python 3.0 does not hand it
   (public: its 100 ms default, whatever the consumer was given).

Every hook is installed on one object of a client migcheck builds for reading, never on a
kafka-python class: hooks 1 to 3 and 7 on the connections of each client built with
:func:`lean_client` (kafka-python's public ``kafka_client`` option), 8 on every consumer
(:func:`honour_retry_backoff`); 4 by every read of samples and full scans
(:func:`fetch_columns`); 5 on every empty poll (:func:`partition_gone`); 6 by
``kafka/groups.py`` wherever it describes a streams, consumer-protocol or share group
(:func:`ask_group_coordinators`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from types import MethodType
from typing import TYPE_CHECKING

from kafka import __version__ as KAFKA_PYTHON_VERSION
from packaging.specifiers import SpecifierSet

from migcheck.fence import VersionFence

if TYPE_CHECKING:
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.consumer.fetcher import Fetcher
    from kafka.net.compat import KafkaNetClient
    from kafka.net.transport import KafkaTCPTransport
    from kafka.protocol.api_message import ApiMessage
    from kafka.protocol.frame import KafkaBytes
    from kafka.record.memory_records import MemoryRecords

    from migcheck.kafka.recordbatch import Columns


# --- the fence ---------------------------------------------------------------------

#: The kafka-python releases every hook is written and tested for: the same range as the
#: pin ``kafka-python>=3.0,<3.1`` in pyproject.toml (a unit test holds the two together).
TESTED_KAFKA_PYTHON = SpecifierSet(">=3.0,<3.1")

#: ``MIGCHECK_KAFKA_HOOKS=off``: every hook takes kafka-python's public path, as outside
#: :data:`TESTED_KAFKA_PYTHON` (for the tests that compare the two paths).
OFF_SWITCH = "MIGCHECK_KAFKA_HOOKS"


def fence(version: str = KAFKA_PYTHON_VERSION) -> VersionFence:
    """kafka-python's fence: of the installed kafka-python, or of ``version`` for a test."""
    return VersionFence(
        "kafka-python", "kafka", TESTED_KAFKA_PYTHON,
        "reading with kafka-python's own code (slower); streams, consumer-protocol and "
        "share groups not described",
        off_switch=OFF_SWITCH, given_version=version,
    )  # fmt: skip


#: The fence of this process's kafka-python.
FENCE = fence()


# --- hooks 1 to 3: the receive path --------------------------------------------------

#: Bytes one ``recv`` call may take (hook 1): a fetch response of up to 8 MiB
#: (``config.open_consumer``) arrives in a few calls rather than two thousand.
RECV_BYTES = 1 << 20

#: A frame read this long or longer copies through a ``memoryview`` (hook 3); a shorter one
#: (an integer, a name) is cheaper sliced as before.
VIEW_READ_BYTES = 256

_transport_log = logging.getLogger("kafka.net.transport")


def lean_client(*args: object, **configs: object) -> KafkaNetClient:
    """kafka-python's ``kafka_client`` option (its public way to build a client's network
    client): a ``KafkaNetClient`` whose connections carry hooks 1 to 3 and 7, installed on
    this client's objects alone; kafka-python's own client when the fence is closed.
    :mod:`~migcheck.kafka.config` passes it to the consumers and the admin client it
    builds for reading, and to nothing else.

    Why per client: hooks installed class-wide reached every client of the process, the
    copy's transactional producer too, whenever a read had run in the same Spark worker
    first.  The copy's exactly-once write path runs on kafka-python as released."""
    from kafka.net.compat import KafkaNetClient

    client = KafkaNetClient(*args, **configs)
    if FENCE.open():
        manager = client._manager
        manager._connect = remembering_refusals(manager._connect, manager)
    return client


def remembering_refusals(
    connect: Callable[..., Awaitable[None]], manager: object
) -> Callable[..., Awaitable[None]]:
    """Hook 7, with hooks 1 to 3 on each connection: ``manager``'s bound ``_connect``,
    which first has the connection receive leanly once made, and once done keeps a refused
    SASL exchange as the node's authentication failure.

    Why hook 7: kafka-python 3.0 keeps a node's last authentication failure so that it can
    raise it rather than retry (``KafkaConnectionManager._auth_failures``, checked by
    ``get_connection``), but fills it only from errors its ``_connect`` step raises; a
    refused SASL exchange fails the connection's ``init_future`` instead, and ``_connect``
    then clears the node's entry as after a success.  So a wrong password was retried
    until the bootstrap timed out (8 s) before migcheck could name it.  Public path: that
    retrying, then the same line after the timeout."""
    from kafka.errors import SaslAuthenticationFailedError

    async def connecting(node: object, conn: object, *args: object, **kwargs: object) -> None:
        made = conn.connection_made  # type: ignore[attr-defined]
        conn.connection_made = lambda transport: receive_leanly(conn, made, transport)  # type: ignore[attr-defined]
        await connect(node, conn, *args, **kwargs)
        init = conn.init_future  # type: ignore[attr-defined]
        if init.is_done and isinstance(init.exception, SaslAuthenticationFailedError):
            manager._auth_failures[node.node_id] = init.exception  # type: ignore[attr-defined]

    return connecting


def receive_leanly(
    conn: object, made: Callable[[KafkaTCPTransport], None], transport: KafkaTCPTransport
) -> None:
    """Hooks 1 to 3 on one connection: ``made(transport)`` (the connection's own
    ``connection_made``, which builds its parser), then its transport and parser receive
    with fewer copies.

    Why: a reader spends about as much CPU receiving its fetch responses as decoding
    them.  kafka-python 3.0 receives the socket 4 KiB at a time and joins the pieces,
    copies a slice of the joined bytes into its frame buffer, and hands out a fetch's
    records as ``bytes`` of a ``bytearray`` slice: two more copies, most of the network
    thread's CPU in a profile (docs/benchmarks.md).  The bytes and their
    order are unchanged: the rest of kafka-python sees what it saw before.  TLS keeps
    its own transport's receive (``KafkaSSLTransport`` overrides hook 1's method).
    """
    from kafka.net.transport import KafkaTCPTransport

    made(transport)
    if type(transport) is KafkaTCPTransport:
        transport._sock_recv = MethodType(sock_recv, transport)
    parser = conn.parser  # type: ignore[attr-defined]
    parser.receive_bytes = parsing_views(parser.receive_bytes)
    parser._process_response = reading_once(parser._process_response)


def parsing_views(
    parse: Callable[[bytes | memoryview], list[tuple[int, ApiMessage]]],
) -> Callable[[bytes | memoryview], list[tuple[int, ApiMessage]]]:
    """Hook 2: ``parse`` (a parser's bound ``receive_bytes``) given a ``memoryview`` of the
    received bytes, so that its slices are views, not copies."""

    def receive_bytes(data: bytes | memoryview) -> list[tuple[int, ApiMessage]]:
        return parse(memoryview(data))

    return receive_bytes


def reading_once(process: Callable[[KafkaBytes], object]) -> Callable[[KafkaBytes], object]:
    """Hook 3: ``process`` (a parser's bound ``_process_response``) given its frame as a
    :func:`frame_bytes`, whose long reads copy once."""
    lean = frame_bytes()

    def process_response(frame: KafkaBytes) -> object:
        frame.__class__ = lean  # the same bytes and position; only ``read`` differs
        return process(frame)

    return process_response


@functools.cache
def frame_bytes() -> type[KafkaBytes]:
    """kafka-python's ``KafkaBytes`` with :func:`frame_read` as its ``read``."""
    from kafka.protocol.frame import KafkaBytes

    return type("FrameBytes", (KafkaBytes,), {"read": frame_read})


def frame_read(self: KafkaBytes, nbytes: int | None = None) -> bytes | memoryview:
    """Hook 3's ``read``: the next ``nbytes`` of the frame as ``bytes``, copied once; all
    that is left (``nbytes`` None) as a read-only view.

    Why a view: kafka-python's ``ApiMessage.decode`` reads a whole response so, only to
    wrap it in a ``memoryview`` and copy each field's bytes out of that (a fetch's records
    too), so the copy of the whole was a third copy of every fetched byte.  The frame is
    never written again once parsed: the parser drops it for a new one."""
    start = self._idx
    end = len(self) if nbytes is None else min(start + nbytes, len(self))
    self._idx = end
    if nbytes is None:
        return memoryview(self)[start:end].toreadonly()
    if end - start >= VIEW_READ_BYTES:
        return bytes(memoryview(self)[start:end])
    return bytes(self[start:end])


def sock_recv(self: KafkaTCPTransport) -> tuple[bytes, Exception | None]:
    """Hook 1, ``KafkaTCPTransport._sock_recv``: all the bytes the socket holds now; the
    error that closes the connection once no bytes precede it (kafka-python's own returns
    both at once, and its transport then drops the bytes)."""
    from kafka.errors import KafkaConnectionError

    received: list[bytes] = []
    err = None
    while True:
        try:
            data = self._sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            break
        except BaseException as e:
            _transport_log.exception("%s: Error receiving network data closing socket", self)
            err = KafkaConnectionError(e)
            break
        if not data:  # a disconnected socket reads empty, without an exception
            _transport_log.error("%s: socket disconnected", self)
            err = KafkaConnectionError("socket disconnected")
            break
        received.append(data)
    if received and err is not None:
        # kafka-python's transport drops the bytes returned with an error: a broker's last
        # answer (a failed SASL exchange's) would be lost to its close.  The bytes go now;
        # the closed socket reads empty again at the next call, which returns the error.
        err = None
    return (received[0] if len(received) == 1 else b"".join(received)), err


# --- hook 4: the fetcher decodes to columns --------------------------------------------


def fetch_columns(
    consumer: KafkaConsumer,
    ends: Mapping[TopicPartition, int],
    digest: bool = False,
    bodies: bool = False,
) -> bool:
    """Install hook 4 on ``consumer``: each poll then returns, per partition, a list of
    :class:`~migcheck.kafka.recordbatch.Columns` chunks of the records in
    ``[position, end)``, ``end`` read from ``ends`` (the reader sets it before it seeks);
    the position moves as usual.  False, and ``consumer`` unchanged (its polls return
    kafka-python's records), when the fence is closed.

    Why: a sample's read spent about 70% of its time in kafka-python building Python
    objects per record (``DefaultRecordBatch._read_msg``, then ``ConsumerRecord``) only
    for migcheck to keep a key and two sizes of each.  kafka-python still does all the
    work around the bytes (connections, fetch sessions, leader changes, retries,
    positions); only what its fetcher makes of one fetched partition's bytes changes.
    """
    if not FENCE.open():
        return False
    fetcher = consumer._fetcher
    fetcher.PartitionRecords = chunk_records(type(fetcher).PartitionRecords, ends, digest, bodies)
    return True


def chunk_records(
    base: type[Fetcher.PartitionRecords],
    ends: Mapping[TopicPartition, int],
    digest: bool = False,
    bodies: bool = False,
) -> type[Fetcher.PartitionRecords]:
    """Hook 4's subclass of kafka-python's ``PartitionRecords`` (``base``): one fetched
    partition's records as one ``Columns`` chunk, up to the partition's end in ``ends``,
    with each record's digest or body if asked (``recordbatch.decode``)."""
    from migcheck.kafka.recordbatch import decode

    class ChunkRecords(base):
        def _maybe_skip_record(self, record: Columns) -> bool:
            return False  # the decoder already starts at the fetch offset

        def _unpack_records(
            self,
            tp: TopicPartition,
            records: MemoryRecords,
            key_deserializer: object,
            value_deserializer: object,
        ) -> Iterator[Columns]:
            # listed by the broker for read_committed fetches only
            aborted = [(t.producer_id, t.first_offset) for t in self.aborted_transactions]
            got = decode(
                records._buffer,  # MemoryRecords keeps the fetched bytes as they came
                self.fetch_offset,
                ends.get(tp, 2**62),
                aborted,
                f"{tp.topic}-{tp.partition}",
                self.check_crcs,
                digest,
                bodies,
            )
            if got.leader_epoch >= 0:
                self.leader_epoch = got.leader_epoch
            self.next_fetch_offset = got.next_offset
            self.records_read += got.columns.n
            if got.columns.n:
                yield got.columns
            self.drain()

    return ChunkRecords


# --- hook 5: the metadata cache ---------------------------------------------------------


def partition_gone(consumer: KafkaConsumer, tp: TopicPartition) -> bool:
    """Hook 5: whether the consumer's metadata lacks ``tp``, without asking the cluster
    (False, never known, when the fence is closed).

    Why: a fetch of a deleted topic fails with UNKNOWN_TOPIC_OR_PARTITION, after which
    kafka-python refreshes its metadata and drops the topic, so the read can stop at once
    instead of waiting out its idle timeout.  Before the first metadata the topic is
    unknown too, so the reader trusts this only for a partition it has seen there or read
    from; a topic whose read was denied is left out of the metadata as well, and is not
    "gone".  kafka-python's public ``partitions_for_topic`` asks the cluster whenever the
    topic is missing, and cannot tell a denied topic from a deleted one.
    """
    if not FENCE.open():
        return False
    cluster = consumer._cluster
    if tp.topic in cluster.unauthorized_topics:
        return False
    partitions = cluster.partitions_for_topic(tp.topic)
    return partitions is None or tp.partition not in partitions


# --- hook 8: the metadata's refreshes, spaced as the consumer was told -------------------


def honour_retry_backoff(consumer: KafkaConsumer) -> None:
    """Hook 8: ``consumer``'s metadata cache spaces its refreshes by the consumer's own
    ``retry_backoff_ms``; nothing when the fence is closed.

    Why: kafka-python 3.0 builds the cache (``ClusterMetadata``) without the client's
    ``retry_backoff_ms``, so it spaces refreshes by its 100 ms default.  The bootstrap
    ends with a refresh that names no topic, so the first refresh that names the
    consumer's topics (its first assignment, ``topics()``) waited 100 ms: with the
    reads one after another, 0.2 s of a 1,000-record topic's 0.4 s in the driver.
    """
    if not FENCE.open():
        return
    consumer._manager.cluster.config["retry_backoff_ms"] = consumer.config["retry_backoff_ms"]


# --- hook 6: group requests kafka-python lacks, at each group's coordinator --------------


def ask_group_coordinators(
    admin: KafkaAdminClient,
    group_ids: Sequence[str],
    request_for: Callable[[list[str]], ApiMessage],
) -> list[ApiMessage] | None:
    """Hook 6: ``request_for(ids)`` sent to each coordinator of ``group_ids`` with the ids
    it coordinates (one request per coordinator, ids in the order given), and the
    answers, in the order of each coordinator's first group; None when the fence is
    closed, and nothing is sent.  kafka-python's errors propagate
    (IncompatibleBrokerVersion from a broker without the request, before it is sent).

    Why: kafka-python has no public call for a request it does not know (StreamsGroupDescribe,
    ConsumerGroupDescribe, ShareGroupDescribe, DescribeShareGroupOffsets), so this uses
    the same private coordinator lookup (batched, cached) and connection manager that its
    own group requests (``describe_groups``, ``list_group_offsets``) use.
    """
    if not FENCE.open():
        return None
    if not group_ids:
        return []
    return admin._manager.run(_ask_coordinators, admin, list(group_ids), request_for)


async def _ask_coordinators(
    admin: KafkaAdminClient,
    group_ids: list[str],
    request_for: Callable[[list[str]], ApiMessage],
) -> list[ApiMessage]:
    """Bucket ``group_ids`` by coordinator and send each bucket its request, as
    ``describe_groups`` does."""
    coordinators = await admin._find_coordinator_ids(group_ids)
    buckets: dict[int | str, list[str]] = {}
    for group_id in group_ids:
        buckets.setdefault(coordinators[group_id], []).append(group_id)
    answers = []
    for node_id, ids in buckets.items():
        answers.append(await admin._manager.send(request_for(ids), node_id=node_id))
    return answers
