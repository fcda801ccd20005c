"""What ``migcheck migrate`` writes besides the copy's records: the new topic (and a
stateful app's shadow outputs, and the changelogs a seeded shadow's state is moved into),
and a moved group's offsets on it.  The copy's own writes
stay in :mod:`migcheck.copy`; :mod:`migcheck.kafka` only reads.
"""

from __future__ import annotations

import time
from typing import Any

from migcheck.errors import ReadError, UsageError
from migcheck.kafka.config import ClientConfig, first_line
from migcheck.kafka.metadata import (
    TopicMeta,
    describe_topics,
    replication_factor,
    topic_configs,
    topic_exists,
)
from migcheck.model.runbook import StateMove


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


def create_new_topic(
    client: ClientConfig, source: TopicMeta, into: str, count: int, copy_saved: bool
) -> TopicMeta:
    """The new topic: created like the source (its own configs, its replication) unless it
    exists; one that exists must be empty, or the copy's (``copy_saved``: its checkpoint
    records an earlier copy into it)."""
    if not topic_exists(client, into):
        replication = replication_factor(client, source.name)
        create_topic(client, into, count, replication, topic_configs(client, source.name))
    (existing,) = describe_topics(client, [into])
    if not copy_saved and any(p.records for p in existing.partitions):
        raise UsageError(f"{into} is not empty and --checkpoint records no earlier copy into it")
    return existing


def create_shadow_output(client: ClientConfig, old: str, new: str) -> None:
    """The shadow's output: made like the app's own (its count, configs, replication)."""
    if topic_exists(client, new):
        return
    (meta,) = describe_topics(client, [old])
    create_topic(
        client, new, meta.partition_count, replication_factor(client, old),
        topic_configs(client, old),
    )  # fmt: skip


def create_moved_changelog(client: ClientConfig, move: StateMove) -> None:
    """The shadow's changelog a store's state is moved into: made like the old one (its
    configs, compacted, its replication) at its count after the change, unless it exists;
    one that exists with another count is refused (the shadow would refuse it too)."""
    if not topic_exists(client, move.into):
        replication = replication_factor(client, move.changelog)
        create_topic(client, move.into, move.partitions, replication, dict(move.configs))
    (meta,) = describe_topics(client, [move.into])
    if meta.partition_count != move.partitions:
        raise UsageError(
            f"{move.into} exists with {meta.partition_count} partitions, not {move.partitions}: "
            "delete it (the shadow has not started on it) and run again"
        )


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
