"""What the destination holds, as the recovery reads it: where its partitions end, and
the identities of their records from an offset.

An end is a partition's high watermark (ListOffsets, read_uncommitted), not the
last stable offset a ``read_committed`` consumer is told: another producer's
open transaction holds the last stable offset back, before records of ours that
already committed.  Recorded before a round, the high watermark is past every
earlier chunk of ours; read up to it afterwards (``read_committed``, which waits
for such a transaction to end), a committed chunk is always seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from migcheck.copy.identity import Identity, identity
from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line, open_admin
from migcheck.kafka.reader import read_range


def end_offsets(client: ClientConfig, topic: str, partitions: Iterable[int]) -> dict[int, int]:
    """Each partition's high watermark, in one ListOffsets request per leader."""
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec
    from kafka.errors import KafkaError

    specs = {TopicPartition(topic, q): OffsetSpec.LATEST for q in partitions}
    admin = open_admin(client)
    try:
        found = admin.list_partition_offsets(specs)  # read_uncommitted by default
    except KafkaError as e:
        raise ReadError(f"listing the end offsets of {topic}: {first_line(e)}") from None
    finally:
        admin.close()
    return {tp.partition: int(o.offset) for tp, o in found.items()}


def identities(
    consumer: Any, topic: str, partition: int, start: int, end: int
) -> Iterator[Identity]:
    """The identities of ``topic``-``partition``'s committed records in ``[start, end)``."""
    return (identity(r) for r in read_range(consumer, topic, partition, start, end))
