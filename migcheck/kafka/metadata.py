"""What a topic is before any record is read: partitions, offsets and cleanup policy.

:class:`TopicMeta` is the one model of a topic that the reader plans with and
the analysis reports on.  For an offline key file it carries only the
partition count the user gave, with no offsets.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line, open_admin, open_consumer


@dataclass(frozen=True)
class PartitionMeta:
    """One partition's offsets, as a ``read_committed`` consumer sees them."""

    partition: int
    log_start_offset: int
    log_end_offset: int  # the last stable offset: read_committed reads up to it

    @property
    def records(self) -> int:
        """Offsets in range: an upper bound on records (compaction and markers leave gaps)."""
        return self.log_end_offset - self.log_start_offset


@dataclass(frozen=True)
class TopicMeta:
    """A topic's name, ``cleanup.policy``, partition count and (when known) offsets."""

    name: str
    cleanup_policy: str
    partition_count: int
    partitions: tuple[PartitionMeta, ...] = ()  # empty when offsets are unknown (key files)

    @property
    def compacted(self) -> bool:
        """Compacted topics (changelogs) hold live state: the latest record per key."""
        return "compact" in self.cleanup_policy

    @property
    def records(self) -> int:
        """Offsets in range over every partition (:attr:`PartitionMeta.records`): an upper
        bound on the records a reader of the whole topic reads."""
        return sum(p.records for p in self.partitions)

    @property
    def offsets(self) -> dict[int, tuple[int, int]]:
        """partition -> (log start, log end); empty when unknown."""
        return {p.partition: (p.log_start_offset, p.log_end_offset) for p in self.partitions}

    def sampled(self, sample_per_partition: int | None) -> bool:
        """Whether a sample of ``sample_per_partition`` records leaves any partition unread."""
        k = sample_per_partition
        return k is not None and any(p.records > k for p in self.partitions)


def describe_topics(client: ClientConfig, topics: Iterable[str]) -> list[TopicMeta]:
    """Partitions, log start/end offsets and ``cleanup.policy`` of each topic (read-only)."""
    from kafka import TopicPartition
    from kafka.errors import KafkaError

    topics = list(dict.fromkeys(topics))
    consumer = open_consumer(client)
    try:
        existing = consumer.topics()
        missing = [t for t in topics if t not in existing]
        if missing:
            raise ReadError(f"topic {missing[0]!r} does not exist at {client.bootstrap_servers}")
        policies = cleanup_policies(client, topics)
        metas = []
        for topic in topics:
            parts = sorted(consumer.partitions_for_topic(topic) or ())
            tps = [TopicPartition(topic, p) for p in parts]
            start = consumer.beginning_offsets(tps)
            end = consumer.end_offsets(tps)
            partitions = tuple(PartitionMeta(tp.partition, start[tp], end[tp]) for tp in tps)
            metas.append(TopicMeta(topic, policies[topic], len(partitions), partitions))
        return metas
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(f"reading metadata from {where}: {first_line(e)}") from None
    finally:
        consumer.close(autocommit=False)


def topic_exists(client: ClientConfig, topic: str) -> bool:
    """Whether ``topic`` exists on the cluster."""
    consumer = open_consumer(client)
    try:
        return topic in consumer.topics()
    finally:
        consumer.close(autocommit=False)


def replication_factor(client: ClientConfig, topic: str) -> int:
    """The most replicas any partition of ``topic`` has (its replication factor)."""
    from kafka.errors import KafkaError

    admin = open_admin(client)
    try:
        (described,) = admin.describe_topics([topic])
    except KafkaError as e:
        raise ReadError(f"describing {topic}: {first_line(e)}") from None
    finally:
        admin.close()
    return max(len(p["replica_nodes"]) for p in described["partitions"])


def _describe_configs(client: ClientConfig, topics: list[str]) -> dict[str, dict[str, Any]]:
    """Every config of each topic, as kafka-python 3 describes it:
    {topic: {name: {"value": ..., "config_source": ..., "is_sensitive": ...}}}."""
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = open_admin(client)
    try:
        result = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics], config_filter="all"
        )
    finally:
        admin.close()
    described = result.get("topic", {}) if isinstance(result, dict) else {}
    return {t: described.get(t, {}) for t in topics}


def cleanup_policies(client: ClientConfig, topics: list[str]) -> dict[str, str]:
    """Each topic's ``cleanup.policy`` (Kafka's default, delete, where none is set): one
    DescribeConfigs request, no offsets read."""
    if not topics:
        return {}
    described = _describe_configs(client, topics)
    return {t: (described[t].get("cleanup.policy") or {}).get("value") or "delete" for t in topics}


def topic_configs(client: ClientConfig, topic: str) -> dict[str, str]:
    """The configs set on ``topic`` itself (not broker defaults), to give a copy the same.

    A sensitive value is never returned: the broker does not send it, and a
    topic config is no place for a secret anyway.
    """
    from kafka.errors import KafkaError

    try:
        described = _describe_configs(client, [topic])[topic]
    except KafkaError as e:
        raise ReadError(f"reading configs of {topic!r}: {first_line(e)}") from None
    return {
        name: str(entry.get("value"))
        for name, entry in sorted(described.items())
        if entry.get("config_source") == "DYNAMIC_TOPIC_CONFIG"
        and not entry.get("is_sensitive")
        and entry.get("value") is not None
    }


def log_sizes(client: ClientConfig, topics: Iterable[str]) -> dict[str, int]:
    """Each topic's size in bytes as the brokers' log directories hold it (DescribeLogDirs,
    what ``kafka-log-dirs --describe`` prints; read-only): one copy, each partition's
    largest current replica (a follower that lags holds less; a future log that
    ``alter_replica_log_dirs`` is still filling is not a copy yet), summed.  A topic no
    broker described is left out, unknown: a broker answers a client without DESCRIBE on
    the cluster with no log dir at all, and 0 bytes would be a wrong answer."""
    from kafka.errors import KafkaError

    topics = list(dict.fromkeys(topics))
    if not topics:
        return {}
    admin = open_admin(client)
    try:
        brokers = admin.describe_log_dirs(topic_partitions=topics)
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(
            f"reading log dir sizes from {where}: {first_line(e)} (DescribeLogDirs needs "
            "DESCRIBE on the cluster)"
        ) from None
    finally:
        admin.close()
    return one_copy_sizes(brokers, topics)


def one_copy_sizes(brokers: list[dict[str, Any]], topics: list[str]) -> dict[str, int]:
    """Each of ``topics``' size from kafka-python's ``describe_log_dirs`` answer (one dict
    per broker): each partition's largest current replica, summed; a topic with no replica
    described is left out."""
    largest: dict[tuple[str, int], int] = {}
    replicas = (
        (topic["name"], p)
        for broker in brokers
        for log_dir in broker["log_dirs"]
        for topic in log_dir["topics"]
        for p in topic["partitions"]
        if not p["is_future_key"]
    )
    for name, p in replicas:
        tp = (name, p["partition_index"])
        largest[tp] = max(largest.get(tp, 0), p["partition_size"])
    seen = {name for name, _ in largest}
    return {t: sum(n for (name, _), n in largest.items() if name == t) for t in topics if t in seen}


def high_watermarks(client: ClientConfig, topic: str, partitions: Iterable[int]) -> dict[int, int]:
    """Each partition's high watermark (ListOffsets, read_uncommitted), in one request per
    leader.  Not the last stable offset :func:`describe_topics` reports: another
    producer's open transaction holds that back before records that already committed,
    which the copy's recovery must see."""
    from kafka import TopicPartition

    admin = open_admin(client)
    try:
        return _latest(admin, topic, [TopicPartition(topic, q) for q in partitions])
    finally:
        admin.close()


#: How long the check waits for the destination's last stable offset to reach its high
#: watermark: the copy's last transaction markers land within a second or two.
SETTLE_TIMEOUT_S = 30.0


def wait_until_settled(
    client: ClientConfig, topic: str, timeout_s: float = SETTLE_TIMEOUT_S
) -> TopicMeta:
    """Wait until no transaction holds ``topic``'s last stable offset back (at most
    ``timeout_s``), then ``topic`` as a read_committed reader sees it.

    Why: ``commitTransaction`` returns once the coordinator has decided; the commit
    markers reach the partitions a moment later, and until they do the last stable offset
    (where read_committed reads stop) stays before the copy's last records.  Checked at
    once, a loaded machine's copy found its own records missing (CI, 2026-11-29).  Another
    producer's transaction left open keeps it back for longer: the check then runs on
    what is stable, and says what it could not find."""
    deadline = time.monotonic() + timeout_s
    while True:
        (meta,) = describe_topics(client, [topic])
        ends = high_watermarks(client, topic, [p.partition for p in meta.partitions])
        stable = all(p.log_end_offset >= ends[p.partition] for p in meta.partitions)
        if stable or time.monotonic() >= deadline:
            return meta
        time.sleep(0.1)  # markers land within milliseconds to seconds: ask again


def _latest(admin: Any, topic: str, tps: list[Any]) -> dict[int, int]:
    """The high watermarks of ``tps`` (ListOffsets, read_uncommitted) through ``admin``."""
    from kafka.admin import OffsetSpec
    from kafka.errors import KafkaError

    try:
        found = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in tps})
    except KafkaError as e:
        raise ReadError(f"listing the end offsets of {topic}: {first_line(e)}") from None
    return {tp.partition: int(o.offset) for tp, o in found.items()}


class TopicEnds:
    """A topic's last stable offsets (where ``read_committed`` reads end) and its high
    watermarks, asked again and again through clients kept open: ``copy --follow`` asks
    ten times a second while it waits for records, ``migrate`` as often while it awaits
    the barrier, and a client per ask would open a connection each time.  The partitions
    are the topic's when it was opened."""

    def __init__(self, client: ClientConfig, topic: str) -> None:
        from kafka import TopicPartition

        self.topic = topic
        self._consumer = open_consumer(client)
        self._admin: Any = None
        self._client = client
        parts = sorted(self._consumer.partitions_for_topic(topic) or ())
        self._tps = [TopicPartition(topic, p) for p in parts]

    def stable(self) -> dict[int, int]:
        from kafka.errors import KafkaError

        try:
            ends = self._consumer.end_offsets(self._tps)
        except KafkaError as e:
            raise ReadError(f"listing the end offsets of {self.topic}: {first_line(e)}") from None
        return {tp.partition: int(end) for tp, end in ends.items()}

    def high(self) -> dict[int, int]:
        """The high watermarks (read_uncommitted: an open transaction's records count)."""
        if self._admin is None:
            self._admin = open_admin(self._client)
        return _latest(self._admin, self.topic, self._tps)

    def close(self) -> None:
        self._consumer.close(autocommit=False)
        if self._admin is not None:
            self._admin.close()
