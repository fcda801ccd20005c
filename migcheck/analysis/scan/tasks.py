"""Spark's read tasks: each reads its bin of work units with
:func:`~migcheck.kafka.fetch.read_units` and groups them in the task, so Kafka's
records never reach Spark's JVM, only their histories or their figures.

A sample's tasks, and a full scan's when every partition fits in a chunk, hold whole
partitions (:func:`whole_partition_read`): they group whole histories and may compute
the figures themselves (:class:`TaskFigures`), sharing the partitions with the driver's
share if there is one (:mod:`~migcheck.analysis.scan.share`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from migcheck.analysis.claims import Claims
from migcheck.analysis.errors import spark_log_path
from migcheck.analysis.figures import (
    FIGURES_DDL,
    Chosen,
    Figures,
    Spec,
    figures_of_batches,
    from_rows,
)
from migcheck.analysis.histories import histories_by_partition, history_ddl
from migcheck.analysis.scan.frame import HistoryFigures, spark_distinct_keys
from migcheck.analysis.scan.share import TASK_START_S, DriverShare, ReadSoFar
from migcheck.analysis.scan.strategy import Counter, Loaded
from migcheck.analysis.session import TaskCounter, read_counter, task_counter, task_slots
from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, pack_units, read_units, records_in, window_starts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Groups a task's record batches into the rows its DataFrame holds.
Group = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

#: Reads a task's units as record batches: :func:`~migcheck.kafka.fetch.read_units`, or
#: a read that keeps more of them on the way (the copy's, which holds the records whole).
Reader = Callable[..., Iterator[pa.RecordBatch]]

#: Records a sample's or a full scan's read task reads, about.
RECORDS_PER_TASK = 500_000


@dataclass(frozen=True)
class SampleRead:
    """A sample's windows read by tasks of whole partitions: at least one task per core
    and about :data:`RECORDS_PER_TASK` records per task, a partition's units in one."""

    client: ClientConfig
    units: list[WorkUnit]
    spec: Spec
    figures: bool
    share: DriverShare | None = None
    records_per_task: int = RECORDS_PER_TASK

    def load(self, spark: SparkSession) -> Loaded:
        total = records_in(self.units)
        tasks = max(task_slots(spark), -(-total // self.records_per_task))
        read = WholePartitions(self.client, self.units, self.spec, tasks, False, self.figures,
                               self.share)  # fmt: skip
        return read.load(spark)


@dataclass(frozen=True)
class WholePartitions:
    """Read tasks that each group whole partitions into whole histories, or, with
    ``figures``, compute those histories' figures (:class:`TaskFigures`).  With the
    driver's ``share``, a task per core but one reads the partitions the driver has not
    claimed (:mod:`~migcheck.analysis.claims`): the driver is the other reader."""

    client: ClientConfig
    units: list[WorkUnit]
    spec: Spec
    tasks: int
    every_record: bool
    figures: bool
    share: DriverShare | None = None
    reader: Reader = read_units

    def load(self, spark: SparkSession) -> Loaded:
        if not self.figures:
            return self.histories(spark)
        share = self.share
        alone = share is not None and share.finishing(TASK_START_S)
        frame, counter = (None, task_counter(spark)) if alone else self._figure_tasks(spark)
        return TaskFigures(spark, self.spec, frame, share), ReadSoFar(counter, share)

    def histories(self, spark: SparkSession) -> tuple[HistoryFigures, Counter]:
        """The histories, a row per key in Spark, and the records counter."""
        windows = window_starts(self.units)
        group = functools.partial(histories_by_partition, scored=self.spec.scored, windows=windows)
        packed = pack_units(self.units, self.tasks)
        ddl = history_ddl(self.spec.scored)
        counter = read_counter(spark, len(packed), records_in(self.units))
        frame, _ = read_tasks(spark, self.client, packed, group, ddl, self.every_record,
                              counter, reader=self.reader)  # fmt: skip
        return HistoryFigures(frame, self.spec), counter

    def _figure_tasks(self, spark: SparkSession) -> tuple[DataFrame, Counter]:
        spec, share = self.spec, self.share
        readers = max(1, task_slots(spark) - 1)
        packed = [share.units] * readers if share else pack_units(self.units, self.tasks)
        windows = window_starts(self.units)

        def group(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            histories = histories_by_partition(batches, spec.scored, windows)
            return figures_of_batches(histories, spec, keys=True)

        claims = share.claims if share else None
        records = records_in(share.units if share else self.units)
        counter = read_counter(spark, len(packed), records)
        return read_tasks(spark, self.client, packed, group, FIGURES_DDL, self.every_record,
                          counter, claims, reader=self.reader)  # fmt: skip


class TaskFigures:
    """Spark's Python tasks that compute the figures of the histories they hold
    (:func:`~migcheck.analysis.figures.figures_of_batches`): read tasks that hold whole
    partitions, or tasks over merged partials.  Only the figures, and each keyed
    history's (topic, key) for the distinct keys, cross into Spark's JVM or stay in it,
    not a history row each: Spark's jobs over a full scan's million histories become
    sums the driver adds.  The (topic, key) rows are cached by the figures' job and
    read again only when no partitioner placed every key of a topic
    (:meth:`~migcheck.analysis.figures.TopicFigures.unique_keys`).

    ``tasks`` is their DataFrame (:data:`~migcheck.analysis.figures.FIGURES_DDL`), None
    when the driver's ``share`` reads alone; the share's figures and keys join the
    tasks'."""

    def __init__(
        self,
        spark: SparkSession,
        spec: Spec,
        tasks: DataFrame | None,
        share: DriverShare | None = None,
    ) -> None:
        self._spark, self.spec, self._tasks, self._share = spark, spec, tasks, share
        self._keys: list[DataFrame] = []  # the (topic, key) rows' frames

    def figures(self) -> Figures:
        blobs: list[bytes] = []
        if self._tasks is not None:
            rows = self._tasks.cache()
            figures = rows.where("figures IS NOT NULL").select("figures").collect()
            blobs += [r["figures"] for r in figures]
            self._keys.append(rows.select("topic", "key"))
        if self._share is not None:
            blobs += self._share.figures()
        return from_rows(blobs, self.spec.sample)

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        frames = list(self._keys)
        if self._share is not None:  # read here only: most reports need no such job
            frames.append(self._spark.read.parquet(self._share.keys_path))
        keys = functools.reduce(lambda a, b: a.unionByName(b), frames)
        return spark_distinct_keys(keys, topics)

    def moved_keys(self, chosen: Chosen) -> None:
        return None

    def release(self) -> None:
        if self._tasks is not None:
            self._tasks.unpersist()


def read_tasks(
    spark: SparkSession,
    client: ClientConfig,
    packed: list[list[WorkUnit]],
    group: Group,
    ddl: str,
    every_record: bool = False,
    counter: TaskCounter | None = None,
    claims: Claims | None = None,
    digest: bool = False,
    reader: Reader = read_units,
) -> tuple[DataFrame, Counter]:
    """A task per bin of ``packed``: its units read (``reader``, by default
    :func:`~migcheck.kafka.fetch.read_units`, with each record's ``digest`` if asked),
    counted for the progress bar and grouped by ``group`` into rows of ``ddl``.  With
    ``claims``, a task reads only the partitions of its bin that it claims.

    A read that fails in a task (a broker gone mid-scan) names Spark's log, as any
    failed task's line does: the driver prints only the error's message, and the log
    holds the task's traceback."""
    count = task_counter(spark) if counter is None else counter
    log = spark_log_path()  # the driver's, where a failed task's trace is written
    # One row per bin, one bin per task: spark.range splits n rows over n slices one each,
    # and, unlike a parallelized Python list, starts no Python worker of its own.
    bin_ids = spark.range(0, len(packed), 1, len(packed)).selectExpr("cast(id as int) as bin")

    def read_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        bins = [b for batch in batches for b in batch.column("bin").to_pylist()]
        mine: Iterable[WorkUnit] = [u for b in bins for u in packed[b]]
        if claims is not None:  # a retried task's bin, and so its owner, is the same
            mine = claims.claimed(mine, owner=f"task {bins[0] if bins else -1}")
        try:
            read = reader(client, mine, every_record=every_record, digest=digest)
            yield from group(_counted(read, count))
        except ReadError as e:
            raise ReadError(f"{e} (Spark's log: {log})") from e

    return bin_ids.mapInArrow(read_task, ddl), count


def _counted(batches: Iterator[pa.RecordBatch], counter: TaskCounter) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        counter.add(batch.num_rows)
        yield batch
