"""A Kafka broker in a thread of the test process, for the unit lane: real sockets, and
every byte it reads or writes decoded or encoded by kafka-python's own protocol classes
(no JVM, no Kafka).

It answers what migcheck's readers and admin client send: ApiVersions, Metadata, Fetch
(``read_committed``: its aborted transactions listed), ListOffsets, FindCoordinator, and
whatever a test scripts (the group requests, and those of hook 6).  A partition is its
record batches, as kafka-python's ``MemoryRecordsBuilder`` builds them, laid end to end
from its log start.
"""

from __future__ import annotations

import copy
import socket
import struct
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from batches import offsets
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.broker_version_data import BrokerVersionData
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)

NODE_ID = 0
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3


@dataclass
class Partition:
    """One partition's log: v2 record batches whose base offsets are set, in order."""

    batches: list[bytes] = field(default_factory=list)
    #: (producer id, first offset) of each aborted transaction (a fetch lists them)
    aborted: list[tuple[int, int]] = field(default_factory=list)
    log_start: int = 0

    @property
    def end(self) -> int:
        return offsets(self.batches[-1])[1] + 1 if self.batches else self.log_start

    def fetch(self, offset: int, max_bytes: int) -> bytes:
        """The batches from the one holding ``offset`` on: at least one, then as many as
        ``max_bytes`` holds (as a broker answers a fetch)."""
        out = b""
        for batch in self.batches:
            if offsets(batch)[1] < offset:
                continue
            if out and len(out) + len(batch) > max_bytes:
                break
            out += batch
        return out


Handler = Callable[[ApiMessage], ApiMessage]


class FakeBroker:
    """One broker (node 0) serving ``topics`` ({name: partitions}) on 127.0.0.1."""

    def __init__(self, topics: dict[str, list[Partition]], broker_version=(4, 2)) -> None:
        self.topics = topics
        self.topic_ids = {name: uuid.uuid4() for name in topics}
        self.versions = BrokerVersionData(broker_version)
        self.scripted: dict[int, Handler] = {}
        self.requests: list[ApiMessage | str] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.handlers: dict[int, tuple[type[ApiMessage], Handler]] = {
            ApiVersionsRequest.API_KEY: (ApiVersionsRequest, self._api_versions),
            MetadataRequest.API_KEY: (MetadataRequest, self._metadata),
            FetchRequest.API_KEY: (FetchRequest, self._fetch),
            ListOffsetsRequest.API_KEY: (ListOffsetsRequest, self._list_offsets),
            FindCoordinatorRequest.API_KEY: (FindCoordinatorRequest, self._find_coordinator),
        }
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def script(self, request: type[ApiMessage], handler: Handler) -> None:
        """Answer ``request`` with ``handler(decoded request)``."""
        self.handlers[request.API_KEY] = (request, handler)

    def delete(self, topic: str) -> None:
        """Delete ``topic``: gone from the metadata, its fetches UNKNOWN_TOPIC_OR_PARTITION."""
        del self.topics[topic]

    def close(self) -> None:
        self.server.close()

    # --- the wire ----------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while (frame := _read_frame(conn)) is not None:
                api_key, version, correlation_id = struct.unpack_from(">hhi", frame)
                if api_key not in self.handlers:
                    self.requests.append(f"unanswered api key {api_key}")  # the test shows it
                    return
                request_class, handle = self.handlers[api_key]
                request = request_class.decode(frame, version=version, header=True)
                self.requests.append(request)
                response = copy.copy(handle(request))
                response._header = None
                response.API_VERSION = version
                response.with_header(correlation_id=correlation_id)
                conn.sendall(response.encode(header=True, framed=True))

    # --- the answers ---------------------------------------------------------------------

    def _api_versions(self, request: ApiMessage) -> ApiMessage:
        keys = [
            ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
            for k, (lo, hi) in self.versions.api_versions.items()
        ]
        return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)

    def _metadata(self, request: ApiMessage) -> ApiMessage:
        """Every topic, or those asked for (a deleted one UNKNOWN_TOPIC_OR_PARTITION)."""
        r = MetadataResponse
        broker = r.MetadataResponseBroker(node_id=NODE_ID, host="127.0.0.1", port=self.port)
        asked = self.topics if request.topics is None else [t.name for t in request.topics]
        return r(
            throttle_time_ms=0,
            brokers=[broker],
            cluster_id="fake",
            controller_id=NODE_ID,
            topics=[self._topic_metadata(name) for name in asked],
        )

    def _topic_metadata(self, name: str) -> ApiMessage:
        t = MetadataResponse.MetadataResponseTopic
        if name not in self.topics:
            return t(error_code=UNKNOWN_TOPIC_OR_PARTITION, name=name, partitions=[])
        partitions = [
            t.MetadataResponsePartition(
                error_code=0,
                partition_index=i,
                leader_id=NODE_ID,
                leader_epoch=0,
                replica_nodes=[NODE_ID],
                isr_nodes=[NODE_ID],
                offline_replicas=[],
            )
            for i in range(len(self.topics[name]))
        ]
        return t(error_code=0, name=name, topic_id=self.topic_ids[name], is_internal=False,
                 partitions=partitions)  # fmt: skip

    def _find_coordinator(self, request: ApiMessage) -> ApiMessage:
        keys = list(request.coordinator_keys) or [request.key]
        r = FindCoordinatorResponse
        found = [
            r.Coordinator(key=k, node_id=NODE_ID, host="127.0.0.1", port=self.port, error_code=0)
            for k in keys
        ]
        return r(throttle_time_ms=0, error_code=0, node_id=NODE_ID, host="127.0.0.1",
                 port=self.port, coordinators=found)  # fmt: skip

    def _list_offsets(self, request: ApiMessage) -> ApiMessage:
        r = ListOffsetsResponse
        topics = []
        for t in request.topics:
            parts = []
            for p in t.partitions:
                log = self.topics[t.name][p.partition_index]
                offset = log.log_start if p.timestamp == -2 else log.end
                parts.append(r.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=0, timestamp=-1,
                    offset=offset, leader_epoch=0))  # fmt: skip
            topics.append(r.ListOffsetsTopicResponse(name=t.name, partitions=parts))
        return r(throttle_time_ms=0, topics=topics)

    def _fetch(self, request: ApiMessage) -> ApiMessage:
        names = {v: k for k, v in self.topic_ids.items()}
        r = FetchResponse.FetchableTopicResponse
        topics = []
        for t in request.topics:
            name = t.topic or names[t.topic_id]
            parts = [self._partition_data(name, p, request.isolation_level) for p in t.partitions]
            topics.append(r(topic=name, topic_id=self.topic_ids[name], partitions=parts))
        return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)

    def _partition_data(self, topic: str, p: ApiMessage, isolation: int) -> ApiMessage:
        data = FetchResponse.FetchableTopicResponse.PartitionData
        if topic not in self.topics:
            return data(partition_index=p.partition, error_code=UNKNOWN_TOPIC_OR_PARTITION,
                        high_watermark=-1, records=b"")  # fmt: skip
        log = self.topics[topic][p.partition]
        error = OFFSET_OUT_OF_RANGE if not log.log_start <= p.fetch_offset <= log.end else 0
        records = b"" if error else log.fetch(p.fetch_offset, p.partition_max_bytes)
        aborted = [
            data.AbortedTransaction(producer_id=pid, first_offset=first)
            for pid, first in log.aborted
            if isolation and not error
        ]
        return data(
            partition_index=p.partition,
            error_code=error,
            high_watermark=log.end,
            last_stable_offset=log.end,
            log_start_offset=log.log_start,
            aborted_transactions=aborted,
            preferred_read_replica=-1,
            records=records,
        )


def _read_frame(conn: socket.socket) -> bytes | None:
    """One request frame (without its size), or None at the end of the stream."""
    head = _read_exactly(conn, 4)
    return None if head is None else _read_exactly(conn, struct.unpack(">i", head)[0])


def _read_exactly(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        try:
            got = conn.recv(n - len(data))
        except OSError:
            return None
        if not got:
            return None
        data += got
    return data
