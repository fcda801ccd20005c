"""--command-config: Kafka client properties become kafka-python options, secrets stay hidden."""

from __future__ import annotations

import pytest

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, consumer_options, parse_properties

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="alice" password="s3cr3t-Pa55";'
)


def test_parse_properties_handles_comments_colons_and_continuations() -> None:
    text = (
        "# a comment\n! another\n\nsecurity.protocol = SASL_PLAINTEXT\n"
        "sasl.mechanism: PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
        '    username="alice" \\\n    password="s3cr3t-Pa55";\n'
    )
    props = parse_properties(text)
    assert props["security.protocol"] == "SASL_PLAINTEXT"
    assert props["sasl.mechanism"] == "PLAIN"
    assert props["sasl.jaas.config"].endswith('username="alice" password="s3cr3t-Pa55";')


def test_sasl_plain_maps_to_kafka_python() -> None:
    cfg = ClientConfig.from_properties(
        "h:9092",
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": JAAS,
        },
    )
    kw = cfg.kafka_kwargs()
    assert kw["security_protocol"] == "SASL_PLAINTEXT"
    assert kw["sasl_mechanism"] == "PLAIN"
    assert (kw["sasl_plain_username"], kw["sasl_plain_password"]) == ("alice", "s3cr3t-Pa55")
    assert "s3cr3t" not in repr(cfg) and "s3cr3t" not in str(cfg)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"security.protocol": "CARRIER_PIGEON"}, "unsupported security.protocol"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs username"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "unsupported sasl"),
        (
            {"security.protocol": "SSL", "ssl.truststore.location": "/x.jks"},
            "ssl.truststore.type must be PEM",
        ),
    ],
)
def test_unsupported_configs_fail_clearly_without_secrets(props: dict, message: str) -> None:
    props = {**props, "ssl.truststore.password": "hunter2"}
    with pytest.raises(ReadError, match=message) as err:
        ClientConfig.from_properties("h:9092", props)
    assert "hunter2" not in str(err.value)


def test_ssl_pem_and_hostname_check() -> None:
    cfg = ClientConfig.from_properties(
        "h:9093",
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": "/etc/ca.pem",
            "ssl.endpoint.identification.algorithm": "",
        },
    )
    assert cfg.options["ssl_cafile"] == "/etc/ca.pem"
    assert cfg.options["ssl_check_hostname"] is False


def test_fetch_tuning_reaches_the_consumer_only() -> None:
    cfg = ClientConfig.from_properties(
        "b:9092", {"max.partition.fetch.bytes": "8192", "max.poll.records": "50"}
    )
    assert cfg.consumer == {"max_partition_fetch_bytes": 8192, "max_poll_records": 50}
    assert "max_partition_fetch_bytes" not in cfg.kafka_kwargs()  # admin and producer refuse it


def test_fetch_tuning_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(ReadError, match=r"max.partition.fetch.bytes must be a whole number"):
        ClientConfig.from_properties("b:9092", {"max.partition.fetch.bytes": "8k"})


def test_a_full_scans_consumer_raises_where_others_reset_as_kafka_python_reads_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """kafka-python's own subscription state, built from the option as ``KafkaConsumer``
    builds it: without a default reset policy its fetcher raises OffsetOutOfRangeError
    (a full scan's consumer); every other reader resets to the earliest offset."""
    from kafka.consumer.subscription_state import SubscriptionState

    client = ClientConfig.load("h:9092", None)
    scan = consumer_options(client, fail_on_deleted=True)["auto_offset_reset"]
    other = consumer_options(client)["auto_offset_reset"]
    assert not SubscriptionState(scan).has_default_offset_reset_policy()
    assert SubscriptionState(other).has_default_offset_reset_policy()
    assert "Unrecognized" not in caplog.text  # a value kafka-python knows, not a fallback
