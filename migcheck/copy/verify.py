"""The copy's check, in Spark: every copied record once in the destination, where it belongs.

A record's identity is its key, timestamp and a digest of value and headers
(:func:`migcheck.copy.identity.identity`).  Both sides are read by parallel
tasks and aggregated per identity in Spark; only three counts reach the
driver, never the keys.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from migcheck.copy.identity import digest
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.fetch import read_range
from migcheck.kafka.metadata import TopicMeta, describe_topics, high_watermarks
from migcheck.model.copy import Verification

_SCHEMA = "key binary, timestamp long, digest string, partition int"


def verify(
    spark: Any,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    partitioner: str,
    done: dict[int, int],
) -> Verification:
    """Each identity of the copied source range (up to ``done`` per partition) as often in
    the whole destination, as it is now, as in the source, on its key's partition."""
    from pyspark.sql import functions as F

    from migcheck.analysis.spark import partition_column

    src_ranges = [
        (source.name, p.partition, p.log_start_offset, done[p.partition]) for p in source.partitions
    ]
    fresh = settled(client, dest.name)
    dst_ranges = [
        (dest.name, p.partition, p.log_start_offset, p.log_end_offset) for p in fresh.partitions
    ]
    src = _identities(spark, client, src_ranges)
    dst = _identities(spark, client, dst_ranges)
    ident = ["key", "timestamp", "digest"]
    s = src.groupBy(*ident).agg(F.count("*").alias("n_src"))
    d = dst.groupBy(*ident).agg(F.count("*").alias("n_dst"))
    joined = s.join(d, on=[s[c].eqNullSafe(d[c]) for c in ident], how="left")
    n_dst = F.coalesce(F.col("n_dst"), F.lit(0))
    expected = partition_column(F.col("key"), dest.partition_count, partitioner)
    copied = dst.join(
        s.select(*ident), on=[dst[c].eqNullSafe(s[c]) for c in ident], how="left_semi"
    )
    row = joined.agg(
        F.sum("n_src").alias("records"),
        F.sum(F.when(n_dst < F.col("n_src"), 1).otherwise(0)).alias("missing"),
        F.sum(F.when(n_dst > F.col("n_src"), 1).otherwise(0)).alias("duplicated"),
    ).first()
    misplaced = copied.where(expected.isNotNull() & (expected != F.col("partition"))).count()
    return Verification(
        int(row["records"] or 0), int(row["missing"] or 0), int(row["duplicated"] or 0), misplaced
    )


#: How long the check waits for the destination's last stable offset to reach its high
#: watermark: the copy's last transaction markers land within a second or two.
SETTLE_TIMEOUT_S = 30.0


def settled(client: ClientConfig, topic: str, timeout_s: float = SETTLE_TIMEOUT_S) -> TopicMeta:
    """``topic`` as a read_committed reader sees it once no transaction holds its last
    stable offset back, or as it is after ``timeout_s``.

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


def _identities(spark: Any, client: ClientConfig, ranges: list[tuple[str, int, int, int]]) -> Any:
    rdd = spark.sparkContext.parallelize(ranges, max(1, len(ranges)))
    return spark.createDataFrame(rdd.flatMap(lambda r: _read_identities(client, *r)), _SCHEMA)


def _read_identities(
    client: ClientConfig, topic: str, partition: int, start: int, end: int
) -> Iterator[tuple[Any, ...]]:
    if start >= end:
        return
    consumer = open_consumer(client)
    try:
        for r in read_range(consumer, topic, partition, start, end):
            yield r.key, r.timestamp, digest(r.value, r.headers), partition
    finally:
        consumer.close(autocommit=False)
