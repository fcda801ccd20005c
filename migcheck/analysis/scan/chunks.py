"""A full scan's read: every record, in tasks of about the same size.

A partition's offsets may go to several tasks (:func:`~migcheck.kafka.fetch.pack_spans`),
so no partition holds back the scan.  Each task groups a chunk of records at most at a
time into partial histories, which Spark merges (:func:`merged_histories`): a task's
memory is bounded by its chunk.  When every partition fits in one chunk, tasks read
whole partitions instead (:class:`~migcheck.analysis.scan.tasks.WholePartitions`): their
histories are whole, and the merge (a shuffle of a row per key and chunk) is not needed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from migcheck.analysis.figures import FIGURES_DDL, Spec, figures_of_batches
from migcheck.analysis.histories import (
    CHUNK_RECORDS,
    LAST_OFFSET,
    Scored,
    histories_by_chunk,
    history_ddl,
    placement_name,
)
from migcheck.analysis.scan.frame import HistoryFigures
from migcheck.analysis.scan.share import DriverShare
from migcheck.analysis.scan.strategy import Counter, Loaded
from migcheck.analysis.scan.tasks import (
    RECORDS_PER_TASK,
    Reader,
    TaskFigures,
    WholePartitions,
    read_tasks,
)
from migcheck.analysis.session import read_counter, task_slots
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, pack_spans, read_units, records_in, task_count

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class FullScan:
    """Every record of ``units``: a full scan's read, and the copy's.

    The tasks are a multiple of the cores (a last round with idle cores would cost a
    whole task's time) of about ``records_per_task`` records each.  With ``figures``,
    Spark's Python tasks compute the figures (:class:`~migcheck.analysis.scan.tasks.TaskFigures`):
    the read tasks of whole partitions, or tasks over the merged partials.  Tasks of
    whole partitions share them with the driver's ``share`` if there is one.  Records
    deleted under the read fail it.  ``reader`` reads a task's units (the copy's keeps
    its records whole on the way: :mod:`migcheck.copy.held`, and cuts its tasks on the
    copy's chunks, ``grain``)."""

    client: ClientConfig
    units: list[WorkUnit]
    spec: Spec
    figures: bool
    share: DriverShare | None = None
    records_per_task: int = RECORDS_PER_TASK
    chunk_records: int = CHUNK_RECORDS
    reader: Reader = read_units
    grain: int = 1  # where a task's cut inside a partition may fall (:func:`pack_spans`)

    def load(self, spark: SparkSession) -> Loaded:
        if not self.figures:
            return self.histories(spark)
        whole = self._whole(spark)
        if whole is not None:
            return whole.load(spark)
        merged, counter = self._merged(spark)
        spec = self.spec

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return figures_of_batches(batches, spec, keys=True)

        return TaskFigures(spark, spec, merged.mapInArrow(task, FIGURES_DDL)), counter

    def histories(self, spark: SparkSession) -> tuple[HistoryFigures, Counter]:
        """Every key's history, a row each in Spark, and the records counter."""
        whole = self._whole(spark)
        if whole is not None:
            return whole.histories(spark)
        merged, counter = self._merged(spark)
        return HistoryFigures(merged, self.spec), counter

    def _tasks(self, spark: SparkSession) -> int:
        cores = task_slots(spark)
        return task_count(records_in(self.units), cores, self.records_per_task)

    def _whole(self, spark: SparkSession) -> WholePartitions | None:
        """Tasks of whole partitions, when every partition fits in a chunk."""
        if not whole_partitions(self.units, self.chunk_records):
            return None
        return WholePartitions(self.client, self.units, self.spec, self._tasks(spark), True,
                               self.figures, self.share, self.reader)  # fmt: skip

    def _merged(self, spark: SparkSession) -> tuple[DataFrame, Counter]:
        """Tasks of chunks, and Spark's merge of their partial histories."""
        scored = self.spec.scored
        group = functools.partial(histories_by_chunk, scored=scored, limit=self.chunk_records)
        spans = pack_spans(self.units, self._tasks(spark), self.grain)
        ddl = history_ddl(scored, partial=True)
        counter = read_counter(spark, len(spans), records_in(self.units))
        partials, _ = read_tasks(spark, self.client, spans, group, ddl, every_record=True,
                                 counter=counter, reader=self.reader)  # fmt: skip
        return merged_histories(partials, scored), counter


def whole_partitions(units: list[WorkUnit], chunk_records: int = CHUNK_RECORDS) -> bool:
    """Whether a full scan's tasks read whole partitions (each fits in a chunk), so that
    they group whole histories (:class:`FullScan`)."""
    return max(_partition_sizes(units).values(), default=0) <= chunk_records


def _partition_sizes(units: list[WorkUnit]) -> dict[tuple[str, int], int]:
    """Records per (topic, partition) over ``units``."""
    sizes: dict[tuple[str, int], int] = {}
    for u in units:
        sizes[(u.topic, u.partition)] = sizes.get((u.topic, u.partition), 0) + u.end - u.start
    return sizes


def merged_histories(partials: DataFrame, scored: Sequence[Scored]) -> DataFrame:
    """One history per (topic, partition, key) from its partials
    (:data:`~migcheck.analysis.histories.PARTIAL_SCHEMA`): the columns of
    :data:`~migcheck.analysis.histories.HISTORY_SCHEMA` and the placements.

    Counts and bytes add up; the last record is the last of the partial with the highest
    last offset; the rank and the placements are the key's own, equal in every partial.
    The null key's partials merge too (grouping keeps nulls as one group)."""
    from pyspark.sql import functions as F

    last = F.col(LAST_OFFSET)
    same = ["rank", *(placement_name(pair) for pair in scored)]
    return partials.groupBy("topic", "partition", "key").agg(
        F.sum("n").alias("n"),
        F.sum("bytes").alias("bytes"),
        F.sum("bytes_sq").alias("bytes_sq"),
        F.max_by("tombstoned", last).alias("tombstoned"),
        F.max_by("last_bytes", last).alias("last_bytes"),
        F.max("windows").alias("windows"),  # 0: a full scan reads no sample's windows
        *(F.min(name).alias(name) for name in same),
    )
