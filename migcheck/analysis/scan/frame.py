"""Histories Spark holds, as a figure source: a key export's records, a full scan's merged
partials, or a read whose moved keys are wanted one row each (``--moved-keys-out``).

Spark's Python tasks compute the figures with the read tasks' own function
(:func:`~migcheck.analysis.figures.figures_of_batches`); the histories stay cached for
the distinct keys and the moved keys' rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from migcheck.analysis.figures import (
    FIGURES_DDL,
    Chosen,
    Figures,
    MovedKeyRow,
    Spec,
    figures_of_batches,
    from_rows,
)
from migcheck.analysis.histories import placement_name
from migcheck.analysis.verdicts import KEY_SUFFIX

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


class HistoryFigures:
    """The figures of the histories in ``frame``
    (:data:`~migcheck.analysis.histories.HISTORY_SCHEMA` rows, or
    :data:`~migcheck.kafka.fetch.RECORD_SCHEMA` records that Spark groups here)."""

    def __init__(self, frame: DataFrame, spec: Spec) -> None:
        self.spec = spec
        self.histories = key_histories(frame, spec)

    def figures(self) -> Figures:
        spec = self.spec

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return figures_of_batches(batches, spec)

        rows = self.histories.mapInArrow(task, FIGURES_DDL).collect()
        return from_rows((r["figures"] for r in rows), spec.sample)

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        return spark_distinct_keys(self.histories, topics)

    def moved_keys(self, chosen: Chosen) -> SparkMovedKeys:
        keys = self.histories.where(self.histories["key"].isNotNull())
        by_candidate = _by_candidate(_state_keys(keys, chosen), self.spec.candidates)
        moved = by_candidate.where(by_candidate["new"] != by_candidate["partition"])
        return SparkMovedKeys(_moved_keys_frame(moved))

    def release(self) -> None:
        self.histories.unpersist()


class SparkMovedKeys:
    """The moved keys of :class:`HistoryFigures`, a lazy DataFrame until asked."""

    def __init__(self, frame: DataFrame) -> None:
        self.frame = frame

    def rows(self) -> Iterator[MovedKeyRow]:
        """On the driver, one partition of results at a time: a full scan's moved keys
        may not fit in its memory at once."""
        ordered = self.frame.orderBy("topic", "candidate_partitions", "key_hex")
        for row in ordered.toLocalIterator():
            yield (row[0], row[1], row[2], row[3], row[4])


def key_histories(frame: DataFrame, spec: Spec) -> DataFrame:
    """One row per (topic, observed partition, key): its history there
    (:data:`~migcheck.analysis.histories.HISTORY_SCHEMA`, rank included), hashed once
    per scored pair; cached, since every figure is computed from it.

    Records are grouped here (a key export) unless Kafka's read tasks grouped them
    already (they come with ``n``, ranked and hashed: a sample's, or a full scan's
    merged partials).  The null key gets a row per partition too (its placements
    null): the records are grouped in one pass, so a topic is read once and its
    records are never cached, only their per-key histories.  The rank is hashed in the
    placements' pass (one Python worker pass over the keys), not later over the moved
    keys, once per candidate."""
    from migcheck.analysis.spark import placement_column, sample_rank_column

    keys = frame if "n" in frame.columns else _grouped(frame)
    counts = {name: count for name, (count, _) in spec.topics.items()}
    compacted = {name: live for name, (_, live) in spec.topics.items()}
    keys = keys.withColumn("current", _per_topic(counts, "int")).withColumn(
        "compacted", _per_topic(compacted, "boolean")
    )
    for layout, name in spec.scored:
        column = placement_name((layout, name))
        if column not in keys.columns:  # not hashed by a read task
            keys = keys.withColumn(column, placement_column("key", name, KEY_SUFFIX[layout]))
    if "rank" not in keys.columns:  # not ranked by a read task
        keys = keys.withColumn("rank", sample_rank_column("key"))
    # Spark's cache, not a local checkpoint: the checkpoint's rows hold no columnar
    # encoding and failed 5 M distinct keys under a 512 MiB driver (docs/benchmarks.md).
    return keys.cache()


def _grouped(records: DataFrame) -> DataFrame:
    """Records grouped into histories by Spark (a key export), the figures of
    :func:`~migcheck.analysis.histories.partition_histories`."""
    from pyspark.sql import functions as F

    size = F.col("key_size") + F.coalesce(F.col("value_size"), F.lit(0))
    return records.groupBy("topic", "partition", "key").agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(size.cast("long")).alias("bytes"),
        F.sum(size.cast("double") ** 2).alias("bytes_sq"),
        F.max_by(F.col("value_size").isNull(), F.col("offset")).alias("tombstoned"),
        F.max_by(size.cast("long"), F.col("offset")).alias("last_bytes"),
        F.lit(0).cast("long").alias("windows"),  # a key export has no sample's windows
    )


def _per_topic(values: Mapping[str, int | bool], sql_type: str) -> Column:
    """Each row's topic's value, as a literal map: a join with a table of topics made Spark
    start a Python worker (about a second) just to broadcast a few rows."""
    from pyspark.sql import functions as F

    pairs = [F.lit(x) for name, value in values.items() for x in (name, value)]
    return F.create_map(*pairs)[F.col("topic")].cast(sql_type)


def spark_distinct_keys(frame: DataFrame, topics: Sequence[str]) -> dict[str, int]:
    """Per topic of ``topics``: its distinct keys in ``frame`` (topic and key columns; a
    key seen in two partitions counts once), one job."""
    from pyspark.sql import functions as F

    keys = frame.where(F.col("key").isNotNull() & F.col("topic").isin(list(topics)))
    rows = keys.select("topic", "key").distinct().groupBy("topic").count().collect()
    return {r["topic"]: int(r["count"]) for r in rows}


def _state_keys(keys: DataFrame, chosen: Chosen) -> DataFrame:
    """The predictable state keys (hashed, conforming, live when compacted), lazy."""
    from pyspark.sql import functions as F

    v_expr = F.lit(None).cast("long")
    for topic, (name, layout) in chosen.items():
        if name is not None:
            v = F.col(placement_name((layout, name)))
            v_expr = F.when(F.col("topic") == topic, v).otherwise(v_expr)
    keys_v = keys.withColumn("v", v_expr).where(F.col("v").isNotNull())
    fits = (F.col("v") % F.col("current")) == F.col("partition")
    live = F.col("compacted")
    return (
        keys_v.where(fits)
        .where(~(live & F.col("tombstoned")))
        .select("topic", "partition", "key", "v")
    )


def _by_candidate(state: DataFrame, candidates: Sequence[int]) -> DataFrame:
    """Each state key once per candidate count ``m``, with its ``new`` partition there."""
    from pyspark.sql import functions as F

    return state.withColumn(
        "m", F.explode(F.array(*[F.lit(int(m)) for m in candidates]))
    ).withColumn("new", (F.col("v") % F.col("m")).cast("int"))


def _moved_keys_frame(moved: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return moved.select(
        "topic",
        F.lower(F.hex("key")).alias("key_hex"),
        "partition",
        F.col("m").alias("candidate_partitions"),
        F.col("new").alias("new_partition"),
    )
