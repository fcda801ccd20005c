"""The copy's check, in Spark: every copied record once in the destination, where it belongs.

A record's identity is its key, timestamp and a digest of value and headers.  Both
sides are read by parallel tasks in compiled code, as a full scan reads (the digest
decoded beside the key).  Each task first tallies its records per destination
partition (:mod:`migcheck.copy.tally`); only where the two sides' tallies differ are
the identities read again and aggregated per identity in Spark, to count what is
missing, duplicated or misplaced.  Only those counts reach the driver, never the keys.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from migcheck.analysis.scan.tasks import Group, read_tasks
from migcheck.analysis.session import task_slots
from migcheck.copy.latest import Keep, kept_rows
from migcheck.copy.tally import Tally, buckets, identity_hashes, tallied, tally_of
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, pack_spans, records_in, task_count
from migcheck.kafka.metadata import TopicMeta, wait_until_settled
from migcheck.model.copy import Ranges, Verification

#: A record's identity (its digest: of value and headers, ``recordbatch._fnv1a_64``), and
#: where it is.
_COLUMNS = ["key", "timestamp", "digest", "partition"]
_SCHEMA = "key binary, timestamp long, digest long, partition int"


def verify(
    spark: Any,
    client: ClientConfig,
    source: TopicMeta,
    dest: TopicMeta,
    partitioner: str,
    done: dict[int, int],
    keep: Keep | None = None,
) -> Verification:
    """Each identity of the copied source range (up to ``done`` per partition; of a
    latest-per-key copy, only its records at the offsets in ``keep``) as often in the
    whole destination, as it is now, as in the source, on its key's partition: one
    Spark job, each topic read once, when the copy is right (the tallies agree); both
    read again to count what differs when it is not."""
    src_ranges = [
        (source.name, p.partition, p.log_start_offset, done[p.partition]) for p in source.partitions
    ]
    fresh = wait_until_settled(client, dest.name)
    dst_ranges = [
        (dest.name, p.partition, p.log_start_offset, p.log_end_offset) for p in fresh.partitions
    ]
    return verify_ranges(
        spark, client, src_ranges, dst_ranges, dest.partition_count, partitioner, keep
    )


def verify_ranges(
    spark: Any,
    client: ClientConfig,
    src: Ranges,
    dst: Ranges,
    partitions: int,
    partitioner: str,
    keep: Keep | None = None,
) -> Verification:
    """Each identity of the source ranges (only its records at the offsets in ``keep``,
    if given) as often in the destination ranges as in the source, on its key's partition
    among ``partitions``: the whole copy's check, or ``migrate``'s of one copied range
    (the destination's ranges then hold exactly the copies of the source's, since the
    copy's marks pair them)."""
    quick = _tallies(spark, client, (src, dst), partitions, partitioner, keep)
    if quick[0] == quick[1]:  # each identity as often, on its key's partition
        return Verification(quick[0].records, 0, 0, 0)
    src_ids = _identities(spark, client, src, keep)
    dst_ids = _identities(spark, client, dst)
    row = compared(src_ids, dst_ids, partitions, partitioner).first()
    return Verification(*(int(row[c] or 0) for c in ("records", "missing", "duplicated",
                                                       "misplaced")))  # fmt: skip


def compared(src: Any, dst: Any, partitions: int, partitioner: str) -> Any:
    """One row of counts from both sides' identities (:data:`_SCHEMA`): the source's
    records, its identities missing from or duplicated in the destination, and the
    destination's records of those identities away from their key's partition."""
    from pyspark.sql import functions as F

    from migcheck.analysis.spark import partition_column

    ident = ["key", "timestamp", "digest"]
    expected = partition_column(F.col("key"), partitions, partitioner)
    wrong = F.when(expected.isNotNull() & (expected != F.col("partition")), 1).otherwise(0)
    s = src.groupBy(*ident).agg(F.count("*").alias("n_src"))
    # each destination identity's records, and how many of them sit on another partition
    # than their key's: summed over the source's identities below, in the same one job
    d = dst.groupBy(*ident).agg(F.count("*").alias("n_dst"), F.sum(wrong).alias("n_wrong"))
    # a sort-merge join: Spark takes the read's output for as small as its few task rows
    # and would broadcast one side, which fails past the driver's memory (5 M records)
    joined = s.join(d.hint("merge"), on=[s[c].eqNullSafe(d[c]) for c in ident], how="left")
    n_dst = F.coalesce(F.col("n_dst"), F.lit(0))
    return joined.agg(
        F.sum("n_src").alias("records"),
        F.sum(F.when(n_dst < F.col("n_src"), 1).otherwise(0)).alias("missing"),
        F.sum(F.when(n_dst > F.col("n_src"), 1).otherwise(0)).alias("duplicated"),
        F.sum(F.coalesce(F.col("n_wrong"), F.lit(0))).alias("misplaced"),
    )


def _identities(spark: Any, client: ClientConfig, ranges: Ranges, keep: Keep | None = None) -> Any:
    """Every record of ``ranges`` (only those ``keep`` keeps, if given) as (key,
    timestamp, digest, partition)."""
    return _read(spark, client, ranges, _only_kept(_identity_batches, keep), _SCHEMA)


def _only_kept(group: Group, keep: Keep | None) -> Group:
    """``group`` over only the records ``keep`` keeps (all, without it): shipped to the
    read tasks with them."""
    return group if keep is None else functools.partial(_kept_then, group=group, keep=keep)


def _kept_then(
    batches: Iterator[pa.RecordBatch], group: Group, keep: Keep
) -> Iterator[pa.RecordBatch]:
    def kept() -> Iterator[pa.RecordBatch]:
        for b in batches:
            at = (b.column("partition").to_numpy(), b.column("offset").to_numpy())
            yield b.filter(pa.array(kept_rows(*at, keep)))

    return group(kept())


#: Records a check's task reads, about: five times a full scan's task
#: (:data:`~migcheck.analysis.scan.tasks.RECORDS_PER_TASK`), since its tallies stream and
#: its memory does not grow with them, while each task costs Spark about a tenth of a
#: second beyond its records (the 5 M copy's check: 21 tasks 7.4 to 8.2 s, 4 tasks 6.1 to
#: 6.7 s; docs/benchmarks.md).  A failed task reads this much again.
RECORDS_PER_CHECK = 2_500_000


def _read(spark: Any, client: ClientConfig, ranges: Ranges, group: Group, ddl: str) -> Any:
    """The records of ``ranges`` grouped by ``group`` into rows of ``ddl``, read by Spark's
    tasks in compiled code (:func:`~migcheck.kafka.fetch.read_units` with digests), the
    ranges cut into equal runs as a full scan's are.  A record deleted under the read
    fails it: a check must never pass on records it did not see."""
    units = [WorkUnit(topic, p, start, end) for topic, p, start, end in ranges if start < end]
    if not units:
        return spark.createDataFrame([], ddl)
    tasks = task_count(records_in(units), task_slots(spark), RECORDS_PER_CHECK)
    packed = pack_spans(units, tasks)
    frame, _ = read_tasks(spark, client, packed, group, ddl, every_record=True, digest=True)
    return frame


_TALLY_SCHEMA = "side int, bucket int, n long, h long"


def _tallies(
    spark: Any,
    client: ClientConfig,
    sides: tuple[Ranges, Ranges],
    partitions: int,
    partitioner: str,
    keep: Keep | None = None,
) -> tuple[Tally, Tally]:
    """Both sides (source, destination) tallied per destination partition
    (:mod:`migcheck.copy.tally`) in one Spark job, a row per bucket and task; the
    source's records only those ``keep`` keeps, if given."""
    frames = [
        _read(spark, client, ranges, _only_kept(functools.partial(
            _tally_batches, side=side, partitions=partitions, partitioner=partitioner),
            keep if side == 0 else None), _TALLY_SCHEMA)
        for side, ranges in enumerate(sides)
    ]  # fmt: skip
    both = frames[0].unionByName(frames[1]).collect()
    rows = [(r["side"], r["bucket"], r["n"], r["h"]) for r in both]
    return tally_of(rows, 0, partitions), tally_of(rows, 1, partitions)


def _tally_batches(
    batches: Iterator[pa.RecordBatch], side: int, partitions: int, partitioner: str
) -> Iterator[pa.RecordBatch]:
    """A read task's records tallied per bucket: the source's (``side`` 0) by where their
    keys belong, the destination's by where they sit."""
    size = partitions + 1
    counts, sums = np.zeros(size, np.int64), np.zeros(size, np.uint64)
    for batch in batches:
        keys = batch.column("key")
        sits = None if side == 0 else batch.column("partition").to_numpy()
        idx = buckets(keys, partitions, partitioner, sits)
        hashes = identity_hashes(keys, batch.column("timestamp"), batch.column("digest"))
        n, h = tallied(idx, hashes, size)
        counts += n
        sums += h
    yield pa.RecordBatch.from_arrays(
        [pa.array([side] * size, pa.int32()), pa.array(range(size), pa.int32()),
         pa.array(counts, pa.int64()), pa.array(sums.view(np.int64), pa.int64())],
        ["side", "bucket", "n", "h"],
    )  # fmt: skip


def _identity_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Each read batch's identity columns, in :data:`_SCHEMA`'s order."""
    for batch in batches:
        yield pa.RecordBatch.from_arrays([batch.column(name) for name in _COLUMNS], _COLUMNS)
