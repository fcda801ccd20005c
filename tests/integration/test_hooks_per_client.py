"""kafka-python's private hooks reach only the clients migcheck builds for reading.

A read's consumer and admin client carry hooks 1 to 3 and 7 on their own connections.  The
copy writes with librdkafka's producer, no kafka-python at all, and with kafka-python's
only for timestamps librdkafka cannot write: that producer, opened in the same process
after a read (as a Spark worker may run a copy task after a read task), runs on
kafka-python as released, its classes unchanged and nothing set on its connections.  The
oracle for "as released" is kafka-python's own source: each method's module and name.
"""

from __future__ import annotations

import subprocess
from typing import NamedTuple

import confluent_kafka
import pytest
from kafka.net.manager import KafkaConnectionManager
from kafka.net.transport import KafkaTCPTransport
from kafka.protocol.frame import KafkaBytes
from kafka.protocol.parser import KafkaProtocol
from kafkatest import Kafka

from migcheck.copy.producer import (
    open_released_producer,
    open_transactional_producer,
    write_transaction,
    write_transaction_released,
)
from migcheck.kafka.config import ClientConfig, open_admin, open_consumer
from migcheck.kafka.fetch import WorkUnit, read_units
from migcheck.kafka.private_hooks import OFF_SWITCH

pytestmark = pytest.mark.kafka

#: Each hooked method, and the kafka-python module and name that define it as released.
RELEASED = {
    KafkaTCPTransport._sock_recv: ("kafka.net.transport", "KafkaTCPTransport._sock_recv"),
    KafkaProtocol.receive_bytes: ("kafka.protocol.parser", "KafkaProtocol.receive_bytes"),
    KafkaProtocol._process_response: (
        "kafka.protocol.parser",
        "KafkaProtocol._process_response",
    ),
    KafkaBytes.read: ("kafka.protocol.frame", "KafkaBytes.read"),
    KafkaConnectionManager._connect: ("kafka.net.manager", "KafkaConnectionManager._connect"),
}


def _released() -> None:
    for method, (module, name) in RELEASED.items():
        assert (method.__module__, method.__qualname__) == (module, name)


def _set_on(manager: KafkaConnectionManager) -> set[str]:
    """What is set on ``manager`` and its open connections' objects, beyond what
    kafka-python's own constructors set."""
    found = {f"manager.{n}" for n in ("_connect",) if n in vars(manager)}
    for conn in manager._conns.values():
        if conn.transport is not None:
            found |= {f"transport.{n}" for n in ("_sock_recv",) if n in vars(conn.transport)}
        if conn.parser is not None:
            names = ("receive_bytes", "_process_response")
            found |= {f"parser.{n}" for n in names if n in vars(conn.parser)}
    return found


def test_a_producer_opened_after_a_read_runs_on_kafka_python_as_released(
    kafka: Kafka, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(OFF_SWITCH, raising=False)
    topic = kafka.create_topic("hooks", 1)
    kafka.produce(topic, [(b"k", 1, None), (b"k2", 2, None)])
    client = ClientConfig.load(kafka.bootstrap, None)
    rows = [
        r for batch in read_units(client, [WorkUnit(topic, 0, 0, 2)]) for r in batch.to_pylist()
    ]
    assert [r["key"] for r in rows] == [b"k", b"k2"]

    consumer = open_consumer(client)
    admin = open_admin(client)
    try:
        consumer.topics()  # connects
        admin.describe_topics([topic])
        hooked = {
            "manager._connect",
            "transport._sock_recv",
            "parser.receive_bytes",
            "parser._process_response",
        }
        assert _set_on(consumer._manager) == hooked
        assert _set_on(admin._manager) == hooked
    finally:
        consumer.close()
        admin.close()

    producer = open_transactional_producer(client, f"hooks-{topic}")
    assert isinstance(producer, confluent_kafka.Producer)  # librdkafka's
    write_transaction(producer, topic, [(b"3", b"k3", 3, None)], [0])  # value, key, time, headers

    released = open_released_producer(client, f"hooks-{topic}")  # fences librdkafka's
    try:
        write_transaction_released(released, topic, [_Record(b"k4", b"4", 0)], [0])
        assert released._sender._client._manager._conns, "the producer has connections to see"
        assert _set_on(released._sender._client._manager) == set()
    finally:
        released.close()
    _released()
    assert [d.key for d in kafka.dump(topic)] == [b"k", b"k2", b"k3", b"k4"]
    stamps = subprocess.run(
        ["kcat", "-C", "-b", kafka.bootstrap, "-t", topic, "-e", "-q", "-f", "%k %T\n"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout.split("\n")  # fmt: skip
    assert stamps[2:4] == ["k3 3", "k4 0"]  # each timestamp kept, 0 too


class _Record(NamedTuple):
    key: bytes
    value: bytes
    timestamp: int
    headers: tuple[tuple[str, bytes | None], ...] = ()
