"""Hooks 1 to 3 of migcheck.kafka.private_hooks (kafka-python's receive path with fewer
copies): the same bytes and responses as kafka-python's own methods give, which stand
as the oracle here.  The hooks go on one connection's objects, never on kafka-python's
classes; the oracle is still a fresh copy of kafka-python's modules, loaded from its files
as written, so that no test could compare the hooks with themselves.  Real sockets, no
broker."""

from __future__ import annotations

import importlib.util
import itertools
import random
import socket
import threading
import types
from pathlib import Path

import kafka.net.transport
import kafka.protocol.frame
import kafka.protocol.parser
import pytest
from batches import random_log
from kafka.errors import KafkaConnectionError
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.frame import KafkaBytes
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.parser import KafkaProtocol

from migcheck.kafka import private_hooks
from migcheck.kafka.private_hooks import RECV_BYTES, frame_read, sock_recv


class _Transport:
    """What ``_sock_recv`` uses of kafka-python's transport: its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock


def _as_written(module: types.ModuleType, **names: object) -> types.ModuleType:
    """kafka-python's ``module``, loaded anew from its file (as kafka-python wrote it,
    whatever this process has patched), ``names`` then set in it."""
    path = Path(str(module.__file__))
    spec = importlib.util.spec_from_file_location(f"{module.__name__}_as_written", path)
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)
    for name, value in names.items():
        setattr(fresh, name, value)
    return fresh


def test_a_frame_reads_the_bytes_kafka_pythons_own_read_gives() -> None:
    as_written = _as_written(kafka.protocol.frame).KafkaBytes
    assert as_written.read is not frame_read
    rng = random.Random(3)
    payload = rng.randbytes(20_000)
    ours, theirs = KafkaBytes(len(payload)), as_written(len(payload))
    ours.write(payload)
    theirs.write(payload)
    ours.seek(0)
    theirs.seek(0)
    # short reads (ints, names), long ones (a fetch's records), past the end, the rest
    for n in [4, 2, 300, 255, 256, 8_000, 1, 9_000, 5_000, None, 10, None]:
        got = frame_read(ours, n)
        assert got == theirs.read(n)
        assert type(got) is (bytes if n is not None else memoryview)
        assert ours.tell() == theirs.tell()


def _received(recv: types.FunctionType, sent: bytes) -> tuple[bytes, list[type[Exception]]]:
    """What ``recv`` (a transport's ``_sock_recv``) gathers of ``sent``, written by another
    thread, then of the peer's close: the bytes, and the error classes it returned."""
    here, there = socket.socketpair()
    here.setblocking(False)
    writer = threading.Thread(target=lambda: (there.sendall(sent), there.close()))
    writer.start()
    got, errors = bytearray(), []
    while not errors:
        data, err = recv(_Transport(here))
        got += data
        if err is not None:
            errors.append(type(err))
    writer.join()
    here.close()
    return bytes(got), errors


def test_a_socket_is_received_as_kafka_pythons_own_receive_gets_it() -> None:
    theirs = _as_written(kafka.net.transport).KafkaTCPTransport._sock_recv
    assert theirs is not sock_recv
    sent = random.Random(5).randbytes(3 * RECV_BYTES + 12_345)
    got = _received(sock_recv, sent)
    assert got == _received(theirs, sent)
    assert got == (sent, [KafkaConnectionError])


def test_nothing_waiting_is_no_bytes_and_no_error_as_in_kafka_python() -> None:
    theirs = _as_written(kafka.net.transport).KafkaTCPTransport._sock_recv
    here, there = socket.socketpair()
    here.setblocking(False)
    assert sock_recv(_Transport(here)) == theirs(_Transport(here)) == (b"", None)
    here.close()
    there.close()


def _fetch_response(version: int, seed: int) -> FetchResponse:
    """A fetch response of three partitions' record batches (kafka-python's builder)."""
    rng = random.Random(seed)
    r = FetchResponse.FetchableTopicResponse
    partitions = []
    for p in range(3):
        batches, aborted = random_log(rng, rng.randrange(0, 1000))
        partitions.append(r.PartitionData(
            partition_index=p, error_code=0, high_watermark=5000, last_stable_offset=5000,
            log_start_offset=0, preferred_read_replica=-1, records=b"".join(batches),
            aborted_transactions=[r.PartitionData.AbortedTransaction(
                producer_id=pid, first_offset=o) for pid, o in aborted],
        ))  # fmt: skip
    topic = r(topic="t", topic_id=None, partitions=partitions)
    return FetchResponse[version](throttle_time_ms=0, error_code=0, session_id=0,
                                  responses=[topic])  # fmt: skip


def _parsed(
    parser_class: type[KafkaProtocol], response: FetchResponse, cuts: list[int], lean: bool
) -> list:
    """What a parser of ``parser_class`` makes of ``response``'s frame, received in pieces
    cut at ``cuts``; ``lean``: with hooks 2 and 3 on the parser, as a lean client's
    connection has them."""
    parser = parser_class(client_id="migcheck-test")
    if lean:
        parser.receive_bytes = private_hooks.parsing_views(parser.receive_bytes)  # type: ignore[method-assign]
        parser._process_response = private_hooks.reading_once(parser._process_response)  # type: ignore[method-assign]
    request = FetchRequest[response.API_VERSION]()
    response.with_header(correlation_id=parser.send_request(request))
    frame = bytes(response.encode(framed=True, header=True))
    bounds = [0, *sorted(c % (len(frame) + 1) for c in cuts), len(frame)]
    got = []
    for a, b in itertools.pairwise(bounds):
        got += parser.receive_bytes(frame[a:b])
    return got


@pytest.mark.parametrize("version", [11, 12, 16])
def test_a_fetch_response_parses_as_kafka_pythons_own_parser_parses_it(
    version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hooks 2 and 3 on a parser (as a lean client's connection has them) against
    kafka-python's parser and frame as written: the same responses from the same bytes,
    cut anywhere; kafka-python's classes stay as written."""
    monkeypatch.delenv(private_hooks.OFF_SWITCH, raising=False)
    assert private_hooks.frame_bytes().read is frame_read  # the hook compares something
    frame = _as_written(kafka.protocol.frame)
    theirs = _as_written(kafka.protocol.parser, KafkaBytes=frame.KafkaBytes).KafkaProtocol
    assert theirs.receive_bytes is not KafkaProtocol.receive_bytes
    rng = random.Random(version)
    for seed in range(4):
        response = _fetch_response(version, seed)
        cuts = [rng.randrange(1 << 20) for _ in range(rng.randrange(0, 6))]
        expected = _parsed(theirs, response, cuts, lean=False)
        assert len(expected) == 1 and len(expected[0][1].responses[0].partitions) == 3
        assert _parsed(KafkaProtocol, response, cuts, lean=True) == expected
    assert KafkaBytes.read is not frame_read  # per parser, never class-wide


def test_kafka_pythons_parser_takes_views_of_a_response_cut_anywhere() -> None:
    """Hook 2 hands kafka-python's own parser views, not bytes: it must decode a response
    cut at any point, in two reads, to what the whole bytes decode to."""
    versions = ApiVersionsResponse[0]
    keys = [versions.ApiVersion(api_key=k, min_version=0, max_version=k % 17) for k in range(60)]

    def parser_and_frame() -> tuple[KafkaProtocol, bytes]:
        parser = KafkaProtocol(client_id="migcheck-test")
        response = versions(error_code=0, api_keys=keys)
        response.with_header(correlation_id=parser.send_request(ApiVersionsRequest[0]()))
        return parser, bytes(response.encode(framed=True, header=True))

    whole, frame = parser_and_frame()
    expected = whole.receive_bytes(frame)
    assert expected[0][1].api_keys[59].max_version == 59 % 17
    for cut in range(0, len(frame) + 1, 7):
        parser, frame = parser_and_frame()
        view = memoryview(frame)
        got = parser.receive_bytes(view[:cut]) + parser.receive_bytes(view[cut:])
        assert got == expected


def test_bytes_before_a_close_come_before_the_error_kafka_python_drops_them() -> None:
    """A broker refusing a SASL login writes its answer and closes: kafka-python's own
    receive returns the answer with the error, and its transport then drops the answer."""
    theirs = _as_written(kafka.net.transport).KafkaTCPTransport._sock_recv
    got = {}
    for name, recv in (("ours", sock_recv), ("theirs", theirs)):
        here, there = socket.socketpair()
        here.setblocking(False)
        there.sendall(b"the broker's last answer")
        there.close()
        calls = [recv(_Transport(here)) for _ in range(2)]
        got[name] = [(data, type(err)) for data, err in calls]
        here.close()
    assert got["theirs"][0] == (b"the broker's last answer", KafkaConnectionError)
    assert got["ours"] == [
        (b"the broker's last answer", type(None)),
        (b"", KafkaConnectionError),
    ]
