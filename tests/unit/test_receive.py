"""kafka-python's receive path with fewer copies (migcheck.kafka.receive): the same bytes
as kafka-python's own methods give, which stand as the oracle here.  The patch is
class-wide, and a test process that has read Kafka has it installed, so the oracle is a
fresh copy of kafka-python's frame module.  Real sockets, no broker."""

from __future__ import annotations

import importlib.util
import random
import socket
import threading
import types
from pathlib import Path

import kafka.protocol.frame
from kafka.errors import KafkaConnectionError
from kafka.protocol.frame import KafkaBytes
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.parser import KafkaProtocol

from migcheck.kafka.receive import RECV_BYTES, _frame_read, _sock_recv


class _Transport:
    """What ``_sock_recv`` uses of kafka-python's transport: its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock


def _pristine_frame_module() -> types.ModuleType:
    """kafka-python's ``kafka/protocol/frame.py``, loaded anew: its ``KafkaBytes`` as
    kafka-python wrote it, whatever this process has patched."""
    path = Path(kafka.protocol.frame.__file__)
    spec = importlib.util.spec_from_file_location("kafka_frame_as_written", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_frame_reads_the_bytes_kafka_pythons_own_read_gives() -> None:
    as_written = _pristine_frame_module().KafkaBytes
    assert as_written.read is not _frame_read
    rng = random.Random(3)
    payload = rng.randbytes(20_000)
    ours, theirs = KafkaBytes(len(payload)), as_written(len(payload))
    ours.write(payload)
    theirs.write(payload)
    ours.seek(0)
    theirs.seek(0)
    # short reads (ints, names), long ones (a fetch's records), past the end, the rest
    for n in [4, 2, 300, 255, 256, 8_000, 1, 9_000, 5_000, None, 10, None]:
        got = _frame_read(ours, n)
        assert got == theirs.read(n)
        assert type(got) is bytes
        assert ours.tell() == theirs.tell()


def test_a_socket_is_received_whole_in_order_then_its_close_is_an_error() -> None:
    here, there = socket.socketpair()
    here.setblocking(False)
    sent = random.Random(5).randbytes(3 * RECV_BYTES + 12_345)
    writer = threading.Thread(target=there.sendall, args=(sent,))
    writer.start()
    got = bytearray()
    while len(got) < len(sent):
        data, err = _sock_recv(_Transport(here))
        assert err is None
        got += data
    writer.join()
    assert bytes(got) == sent
    there.close()
    data, err = _sock_recv(_Transport(here))
    assert data == b""
    assert isinstance(err, KafkaConnectionError)
    here.close()


def test_nothing_waiting_is_no_bytes_and_no_error() -> None:
    here, there = socket.socketpair()
    here.setblocking(False)
    assert _sock_recv(_Transport(here)) == (b"", None)
    here.close()
    there.close()


def test_kafka_pythons_parser_takes_views_of_a_response_cut_anywhere() -> None:
    """The patch hands kafka-python's own parser views, not bytes: it must decode a
    response cut at any point, in two reads, to what the whole bytes decode to."""
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
