"""Discovering an application on the real broker: its group, committed offsets and topics.

Groups and offsets are made by Kafka's own console consumer, and checked
against Kafka's own kafka-consumer-groups tool; discovery must change nothing.
"""

from __future__ import annotations

import subprocess
import time

import pytest
from kafkatest import KAFKA_LOCAL, Kafka

from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import describe_group, topics_with_prefix

pytestmark = pytest.mark.kafka


def _console_consumer(kafka: Kafka, topic: str, group: str, client_id: str) -> list[str]:
    """Kafka's console consumer in ``group``, as a member named ``client_id``."""
    return [
        "kafka-console-consumer",
        "--bootstrap-server",
        kafka.bootstrap,
        "--topic",
        topic,
        "--group",
        group,
        "--consumer-property",
        f"client.id={client_id}",
    ]


def _consume(kafka: Kafka, topic: str, group: str, client_id: str, count: int) -> None:
    args = _console_consumer(kafka, topic, group, client_id)
    rc, _, err = kafka.tool(*args, "--from-beginning", "--max-messages", str(count))
    assert rc == 0, err


def _group_offsets(kafka: Kafka, group: str) -> str:
    rc, out, err = kafka.tool(
        "kafka-consumer-groups",
        "--bootstrap-server",
        kafka.bootstrap,
        "--describe",
        "--group",
        group,
    )
    assert rc == 0, err
    return out


def test_committed_offsets_name_the_source_topics(kafka: Kafka) -> None:
    app = kafka.unique("shop")
    orders = kafka.create_topic(f"{app}-in", 3)
    kafka.produce(orders, [(f"k{i}".encode(), 5, None) for i in range(30)])
    _consume(kafka, orders, app, f"{app}-abc-StreamThread-1-consumer", 30)
    before = _group_offsets(kafka, app)

    group = describe_group(ClientConfig.load(kafka.bootstrap, None), app)
    assert group is not None
    assert (group.group_type, group.state) == ("classic", "Empty")
    assert group.committed_topics == (orders,)
    assert sum(group.committed.values()) == 30  # every record consumed and committed
    assert group.members == ()  # the console consumer has left
    assert _group_offsets(kafka, app) == before  # read-only


def test_live_member_and_missing_group(kafka: Kafka) -> None:
    app = kafka.unique("live")
    topic = kafka.create_topic(f"{app}-in", 2)
    client = ClientConfig.load(kafka.bootstrap, None)
    assert describe_group(client, app) is None
    consumer = subprocess.Popen(
        [
            str(KAFKA_LOCAL),
            "tool",
            *_console_consumer(kafka, topic, app, f"{app}-x-StreamThread-2-consumer"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        group = None
        for _ in range(60):
            group = describe_group(client, app)
            if group is not None and group.state == "Stable":
                break
            time.sleep(0.5)
        assert group is not None and group.state == "Stable"
        (member,) = group.members
        assert member.client_id == f"{app}-x-StreamThread-2-consumer"
    finally:
        consumer.terminate()
        consumer.wait(timeout=30)


def test_topics_with_prefix(kafka: Kafka) -> None:
    app = kafka.unique("prefixed")
    changelog = kafka.create_topic(f"{app}-counts", 2, cleanup_policy="compact")
    other = kafka.create_topic("unrelated", 1)
    found = topics_with_prefix(ClientConfig.load(kafka.bootstrap, None), f"{app}-")
    assert found == [changelog] and other not in found
