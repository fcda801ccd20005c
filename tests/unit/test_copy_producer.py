"""The copy's librdkafka producer gets every security setting of ``--command-config``,
by librdkafka's own names (its CONFIGURATION.md), or the copy refuses to start."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from migcheck.copy.producer import kafka_python_writes, librdkafka_config, librdkafka_writes
from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, parse_properties

SCRAM_SSL = """
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
  username="copier" password="s3cret";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/ca.pem
ssl.keystore.type=PEM
ssl.keystore.location=/etc/kafka/client.pem
ssl.key.location=/etc/kafka/client.key
ssl.key.password=keypass
ssl.endpoint.identification.algorithm=
"""


def test_scram_over_tls_reaches_librdkafka_by_its_names() -> None:
    client = ClientConfig.from_properties("b1:9093,b2:9093", parse_properties(SCRAM_SSL))
    config = librdkafka_config(client, "migcheck-copy-a-b-0")
    assert config["bootstrap.servers"] == "b1:9093,b2:9093"
    assert config["transactional.id"] == "migcheck-copy-a-b-0"
    assert {k: config[k] for k in config if k.startswith(("security.", "sasl.", "ssl."))} == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "copier",
        "sasl.password": "s3cret",
        "ssl.ca.location": "/etc/kafka/ca.pem",
        "ssl.certificate.location": "/etc/kafka/client.pem",
        "ssl.key.location": "/etc/kafka/client.key",
        "ssl.key.password": "keypass",
        "ssl.endpoint.identification.algorithm": "none",
    }


def test_plaintext_is_idempotent_and_waits_for_every_replica() -> None:
    config = librdkafka_config(ClientConfig.load("b:9092", None), "t")
    assert config["security.protocol"] == "PLAINTEXT"
    assert config["enable.idempotence"] is True and config["acks"] == "all"


def test_each_tasks_producer_connects_to_every_broker_at_once() -> None:
    """A task's producer lives for one chunk: sparse connections cost each one's
    initialisation 50 to 500 ms of waiting (docs/benchmarks.md, 2026-11-30, tenth
    session)."""
    config = librdkafka_config(ClientConfig.load("b:9092", None), "t")
    assert config["enable.sparse.connections"] is False


def test_an_option_librdkafka_is_not_given_a_name_for_is_refused() -> None:
    client = ClientConfig("b:9092", {"security_protocol": "SSL", "ssl_crlfile": "/x.pem"})
    with pytest.raises(ReadError, match="ssl_crlfile"):
        librdkafka_config(client, "t")


@pytest.mark.parametrize(
    ("timestamps", "writes"),
    [([1, 1_700_000_000_000], True), ([1_700_000_000_000, 0], False), ([-1], False), ([], True)],
)
def test_librdkafka_writes_only_positive_timestamps(timestamps: list[int], writes: bool) -> None:
    assert librdkafka_writes(timestamps) is writes


class _Record(NamedTuple):
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str, bytes | None], ...]


def test_kafka_python_writes_no_null_header_value_nor_a_record_of_nothing() -> None:
    """kafka-python 3.0's ``KafkaProducer.send`` raises "All headers items must be (str,
    bytes) tuples" and "Need at least one: key or value"."""
    assert kafka_python_writes([_Record(b"k", b"v", 0, (("a", b""), ("b", b"x")))])
    assert kafka_python_writes([_Record(None, b"", 0, ()), _Record(b"k", None, 0, ())])
    null_header = _Record(b"k", b"v", 0, (("a", None),))
    assert not kafka_python_writes([_Record(b"k", b"v", 0, ()), null_header])
    assert not kafka_python_writes([_Record(None, None, 0, ())])
