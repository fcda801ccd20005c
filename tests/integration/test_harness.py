"""The real-Kafka harness, and the proof that migcheck's partitioner matches the Java producer."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafkatest import KAFKA_LOCAL, Kafka
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


def _tool(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str, str]:
    r = subprocess.run([str(KAFKA_LOCAL), "tool", *args], env=env, cwd=cwd, capture_output=True,
                       text=True, timeout=120, check=False)  # fmt: skip
    return r.returncode, r.stdout, r.stderr


def test_the_resident_tools_answer_as_in_a_jvm_of_their_own(kafka: Kafka, tmp_path: Path) -> None:
    """kafka-local runs the one-shot tools in one JVM, started with the broker
    (scripts/kafka/ToolServer.java).  With ``java`` on PATH a command that fails, a call
    still answers: no JVM started for it.  Its output and exit code are those of the
    same tool in a JVM of its own, a failure's included; a relative path, which the
    server's directory would not resolve, takes a JVM of its own."""
    topic = kafka.create_topic("resident", 3)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "java").write_text("#!/bin/sh\nexit 97\n")
    (shim / "java").chmod(0o755)
    no_java = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    own_jvm = {**os.environ, "MIGCHECK_KAFKA_TOOL_SERVER": "off"}
    describe = ("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--describe", "--topic")
    deadline = time.monotonic() + 60  # the server compiles itself as the broker starts
    while _tool(no_java, tmp_path, *describe, topic)[0] == 97 and time.monotonic() < deadline:
        time.sleep(0.5)
    calls = [
        (*describe, topic),
        (*describe, "no-such-topic"),
        ("kafka-get-offsets", "--bootstrap-server", kafka.bootstrap, "--topic", topic),
    ]
    answers = [_tool(no_java, tmp_path, *call) for call in calls]
    assert [a[0] for a in answers] == [0, 1, 0], answers
    assert answers == [_tool(own_jvm, tmp_path, *call) for call in calls]
    assert answers[0][1].count(f"Topic: {topic}\tPartition: ") == 3

    (tmp_path / "client.properties").write_text(f"bootstrap.servers={kafka.bootstrap}\n")
    listed = ("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--list")
    relative = (*listed, "--command-config", "client.properties")
    assert _tool(no_java, tmp_path, *relative)[0] == 97  # not the server's: a JVM's
    rc, out, err = _tool(os.environ.copy(), tmp_path, *relative)
    assert rc == 0 and topic in out.split(), err


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
