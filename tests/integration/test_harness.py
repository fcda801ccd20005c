"""The real-Kafka harness, and the proof that migcheck's partitioner matches the Java producer."""

from __future__ import annotations

import random

import pytest
from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafkatest import Kafka
from oracles import java_partition

import migcheck
from migcheck.hashing.keys import encode_key

pytestmark = pytest.mark.kafka


def _random_keys(count: int) -> list[bytes]:
    rng = random.Random(2024)
    keys = [b"", b"\x00", b"\xff\xfe\xfd", "ключ-é".encode()]
    while len(keys) < count:
        kind = rng.randrange(3)
        if kind == 0:
            keys.append(f"user-{rng.randrange(10**9)}".encode())
        elif kind == 1:
            keys.append(bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 64))))
        else:
            keys.append(rng.getrandbits(64).to_bytes(8, "big"))
    return keys


def test_java_producer_placement_equals_migcheck_for_10000_records(kafka: Kafka) -> None:
    topic = kafka.create_topic("proof", 6)
    keys = _random_keys(10_000)
    kafka.produce(topic, [(k, 16, None) for k in keys])
    dumped = kafka.dump(topic)
    assert len(dumped) == 10_000
    assert {d.partition for d in dumped} == set(range(6))
    for d in dumped:
        assert d.key is not None
        assert migcheck.partition(d.key, 6) == d.partition, d.key
        assert java_partition(d.key, 6) == d.partition, d.key


def test_fixture_places_null_keys_explicit_partitions_and_tombstones(kafka: Kafka) -> None:
    topic = kafka.create_topic("fixture", 4)
    kafka.produce(topic, [(b"a", 3, 2), (None, 5, 1), (b"b", None, 3), (b"", b"\x01\x02", 0)])
    rows = sorted(kafka.dump(topic), key=lambda d: d.partition)
    assert [(d.partition, d.key, d.value_size) for d in rows] == [
        (0, b"", 2),
        (1, None, 5),
        (2, b"a", 3),
        (3, b"b", -1),
    ]


def test_aborted_transactions_are_not_read_committed(kafka: Kafka) -> None:
    topic = kafka.create_topic("txn", 2)
    kafka.produce(
        topic,
        [
            "!begin",
            (b"kept-1", 1, None),
            "!commit",
            "!begin",
            (b"aborted", 1, None),
            "!abort",
            "!begin",
            (b"kept-2", 1, None),
            "!commit",
        ],
        kafka.unique("txn-id"),
    )
    keys = sorted(d.key for d in kafka.dump(topic))
    assert keys == [b"kept-1", b"kept-2"]


def test_streams_application_reset_dry_run(kafka: Kafka) -> None:
    topic = kafka.create_topic("reset-input", 3)
    kafka.produce(topic, [(b"k1", 4, None), (b"k2", 4, None)])
    rc, out, err = kafka.tool(
        "kafka-streams-application-reset",
        "--bootstrap-server",
        kafka.bootstrap,
        "--application-id",
        kafka.unique("app"),
        "--input-topics",
        topic,
        "--dry-run",
    )
    assert rc == 0, err
    assert "Dry run" in out
    assert f"Reset-offsets for input topics [{topic}]" in out
    for p in range(3):
        assert f"Topic: {topic} Partition: {p} Offset: 0" in out


def test_kafka_tools_list_the_topic(kafka: Kafka) -> None:
    topic = kafka.create_topic("listed", 1)
    rc, out, _ = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--list")
    assert rc == 0 and topic in out.split()


def test_sasl_listener_accepts_the_right_password_only(kafka: Kafka) -> None:
    if kafka.sasl_bootstrap is None:
        pytest.fail("the broker under test has no SASL_PLAINTEXT listener")
    common = {
        "bootstrap_servers": kafka.sasl_bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "alice",
    }
    topic = kafka.create_topic("sasl", 1)
    ok = KafkaConsumer(sasl_plain_password="alice-secret", **common)
    try:
        assert topic in ok.topics()
    finally:
        ok.close()
    with pytest.raises(KafkaError):
        KafkaConsumer(sasl_plain_password="wrong", bootstrap_timeout_ms=5000, **common).topics()


@pytest.mark.parametrize(
    ("key_type", "text"),
    [
        ("long", "42"),
        ("long", "-9000000000"),
        ("int", "-7"),
        ("short", "300"),
        ("double", "3.5"),
        ("double", "NaN"),
        ("float", "-0.25"),
        ("string", "ключ"),
        ("uuid", "123E4567-E89B-12D3-A456-426614174000"),
    ],
)
def test_typed_keys_match_kafka_serializers(kafka: Kafka, key_type: str, text: str) -> None:
    (expected,) = kafka.serialize([(key_type, text)])
    assert encode_key(text, key_type) == expected
