"""What ``migcheck migrate`` writes besides the copy's records: the new topic, and a
moved group's offsets on it.  The copy's own writes stay in :mod:`migcheck.copy`;
:mod:`migcheck.kafka` only reads.
"""

from __future__ import annotations

import time
from typing import Any

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line
from migcheck.kafka.metadata import topic_exists


def _admin(client: ClientConfig) -> Any:
    from kafka import KafkaAdminClient

    return KafkaAdminClient(client_id="migcheck-migrate", **client.kafka_kwargs())


def create_topic(
    client: ClientConfig, topic: str, partitions: int, replication: int, configs: dict[str, str]
) -> None:
    """``topic`` with ``partitions``, the source's replication factor and the configs set
    on the source itself, as ``kafka-topics --create --config`` would make it."""
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    admin = _admin(client)
    try:
        admin.create_topics([NewTopic(topic, partitions, replication, topic_configs=configs)])
    except KafkaError as e:
        raise ReadError(f"creating {topic}: {first_line(e)}") from None
    finally:
        admin.close()
    _until_listed(client, topic)


#: How long a created topic may take to appear in the cluster's metadata, as the runbook's
#: ensure_topic waits: CreateTopics answers before every broker knows the topic.
LISTED_TIMEOUT_S = 60.0


def _until_listed(client: ClientConfig, topic: str) -> None:
    deadline = time.monotonic() + LISTED_TIMEOUT_S
    while not topic_exists(client, topic):
        if time.monotonic() > deadline:
            raise ReadError(
                f"created {topic}, but the cluster's metadata did not list it within "
                f"{LISTED_TIMEOUT_S:g} s; run again once it does"
            )
        time.sleep(0.2)  # metadata propagates on the brokers' own time: ask again


def commit_offsets(client: ClientConfig, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` on ``topic`` for ``group``, which has no member: where its
    consumers start when they are started on ``topic``."""
    from kafka import TopicPartition
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata

    admin = _admin(client)
    try:
        wanted = {
            TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()
        }
        errors = admin.alter_group_offsets(group, wanted)
    except KafkaError as e:
        raise ReadError(f"committing group {group}'s offsets on {topic}: {first_line(e)}") from None
    finally:
        admin.close()
    failed = sorted(
        f"{tp.partition}: {err.__name__}" for tp, err in errors.items() if err.__name__ != "NoError"
    )
    if failed:
        raise ReadError(f"committing group {group}'s offsets on {topic}: {', '.join(failed)}")
