"""The one place migcheck writes to a cluster: ``migcheck copy``'s transactional producer.

Every other module reads.  The copy writes each chunk of a source partition in
one transaction under a stable ``transactional.id`` per (source topic,
destination topic, source partition): a restarted copy fences the one that
died, Kafka aborts its open transaction, and the destination's committed
records are exactly the chunks that committed (see :mod:`migcheck.copy.task`).
"""

from __future__ import annotations

from typing import Any

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line


def transactional_id(topic: str, into: str, partition: int) -> str:
    """Stable across runs, so that a re-run fences and resolves the last one's transaction."""
    return f"migcheck-copy-{topic}-{into}-{partition}"


def open_transactional_producer(client: ClientConfig, txn_id: str):  # -> kafka.KafkaProducer
    """An idempotent, transactional producer, initialised (its predecessor fenced)."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    try:
        producer: Any = KafkaProducer(
            transactional_id=txn_id,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            batch_size=256 * 1024,
            # every task of every round initialises its id, and kafka-python's 100 ms
            # backoff between the coordinator lookup and InitProducerId's retries was
            # most of that (docs/benchmarks.md)
            retry_backoff_ms=20,
            client_id="migcheck-copy",
            **client.kafka_kwargs(),
        )
        producer.init_transactions()
        return producer
    except KafkaError as e:
        raise ReadError(
            f"cannot open a producer at {client.bootstrap_servers}: {first_line(e)}"
        ) from None
