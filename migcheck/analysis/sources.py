"""Where records come from: a Kafka topic read by Spark tasks, or an offline key export.

Kafka's records never reach Spark: the read tasks group them into key histories
themselves (:mod:`migcheck.analysis.histories`).  A sample's task groups whole windows
of whole partitions; a full scan's task groups chunks, and Spark merges their partial
histories (:func:`merged_histories`), so a task's memory is bounded by its chunk and a
big partition spreads over several tasks.  A key export is a table of
:data:`~migcheck.kafka.reader.RECORD_SCHEMA` rows that Spark groups
(:mod:`migcheck.analysis.aggregate`).
"""

from __future__ import annotations

import functools
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from migcheck.analysis.claims import Claims, largest_first
from migcheck.analysis.errors import spark_log_path
from migcheck.analysis.figures import (
    FIGURES_DDL,
    Figures,
    Spec,
    distinct_keys,
    figures_of_batches,
    from_rows,
    history_figures,
)
from migcheck.analysis.histories import (
    CHUNK_RECORDS,
    LAST_OFFSET,
    Scored,
    histories_by_chunk,
    histories_by_partition,
    history_ddl,
    history_schema,
    placement_name,
)
from migcheck.errors import KeyFormatError, ReadError
from migcheck.hashing.keys import decode_text
from migcheck.kafka.config import ClientConfig, first_line
from migcheck.kafka.reader import RECORD_SCHEMA, WorkUnit, pack_spans, pack_units, read_units


def kafka_histories(
    spark: Any,
    client: ClientConfig,
    units: list[WorkUnit],
    scored: Sequence[Scored],
    records_per_task: int = 500_000,
    figures: bool = False,
    share: DriverShare | None = None,
) -> tuple[Any, Any]:
    """The key histories (:data:`~migcheck.analysis.histories.HISTORY_SCHEMA`) of ``units``,
    read, grouped and hashed (one placement column per ``scored`` pair) by parallel
    Spark tasks: a sample's reads.

    Units are packed into at least one task per core and about ``records_per_task``
    records per task, a partition's units in one task, so each task groups whole
    partitions.  Returns the DataFrame and an accumulator of records read, which the
    driver polls for the progress bar.  With ``figures``, the tasks compute the figures
    themselves (:class:`TaskFigures`), which replaces the DataFrame, and share the
    partitions with the driver's ``share`` if there is one.
    """
    total = sum(u.end - u.start for u in units)
    tasks = max(spark.sparkContext.defaultParallelism, -(-total // records_per_task))
    return _whole_partitions(spark, client, units, scored, tasks, False, figures, share)


def _whole_partitions(
    spark: Any,
    client: ClientConfig,
    units: list[WorkUnit],
    scored: Sequence[Scored],
    tasks: int,
    every_record: bool,
    figures: bool = False,
    share: DriverShare | None = None,
) -> tuple[Any, Any]:
    """Read tasks that each group whole partitions into whole histories, or, with
    ``figures``, compute those histories' figures (:class:`TaskFigures`).  With the
    driver's ``share``, a task per core but one reads the partitions the driver has not
    claimed (:mod:`~migcheck.analysis.claims`): the driver is the other reader.  On
    bench-scan's 5 M full scan (seven alternating runs, 2026-11-25), a task per core
    took 8.2 to 9.9 s (mean 8.8), one fewer 7.8 to 9.0 s (mean 8.4)."""
    if figures:
        counter = spark.sparkContext.accumulator(0)
        claims = share.claims if share else None
        readers = max(1, spark.sparkContext.defaultParallelism - 1)
        packed = [share.units] * readers if share else pack_units(units, tasks)

        def read_tasks(spec: Spec) -> Any:
            def group(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
                histories = histories_by_partition(batches, spec.scored)
                return figures_of_batches(histories, spec, keys=True)

            read = _read_tasks(spark, client, packed, group, FIGURES_DDL, every_record, counter,
                               claims)  # fmt: skip
            return read[0]

        alone = share is not None and share.finishing(TASK_START_S)
        source = TaskFigures(spark, None if alone else read_tasks, counter, share)
        return source, _ReadSoFar(counter, share)
    return _read_tasks(
        spark,
        client,
        pack_units(units, tasks),
        lambda batches: histories_by_partition(batches, scored),
        history_ddl(scored),
        every_record=every_record,
    )


def full_histories(
    spark: Any,
    client: ClientConfig,
    units: list[WorkUnit],
    scored: Sequence[Scored],
    records_per_task: int = 500_000,
    chunk_records: int = CHUNK_RECORDS,
    figures: bool = False,
    share: DriverShare | None = None,
) -> tuple[Any, Any]:
    """The key histories of every record in ``units``, as :func:`kafka_histories` gives
    them: a full scan's read, and the copy's.

    A partition's offsets may go to several tasks (:func:`~migcheck.kafka.reader.pack_spans`),
    so no partition holds back the scan.  The tasks are a multiple of the cores (a last
    round with idle cores would cost a whole task's time) of about ``records_per_task``
    records each; each groups ``chunk_records`` at most at a time into partial histories,
    which Spark merges.  When every partition fits in one chunk, tasks read whole
    partitions instead, as a sample's do: their histories are whole, and the merge (a
    shuffle of a row per key and chunk, about a sixth of bench-scan's full scan) is not
    needed.  With ``figures``, Spark's Python tasks compute the figures
    (:class:`TaskFigures`): the read tasks of whole partitions, or tasks over the merged
    partials.  Tasks of whole partitions share them with the driver's ``share`` if
    there is one.  Records deleted under the read fail it.  Returns the DataFrame (or
    the figures' source) and the records read so far (``value``).
    """
    cores = spark.sparkContext.defaultParallelism
    total = sum(u.end - u.start for u in units)
    tasks = cores * max(1, -(-total // (records_per_task * cores)))
    if whole_partitions(units, chunk_records):
        return _whole_partitions(spark, client, units, scored, tasks, True, figures, share)
    partials, counter = _read_tasks(
        spark,
        client,
        pack_spans(units, tasks),
        lambda batches: histories_by_chunk(batches, scored, chunk_records),
        history_ddl(scored, partial=True),
        every_record=True,
    )
    merged = merged_histories(partials, scored)
    if not figures:
        return merged, counter

    def merged_tasks(spec: Spec) -> Any:
        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return figures_of_batches(batches, spec, keys=True)

        return merged.mapInArrow(task, FIGURES_DDL)

    return TaskFigures(spark, merged_tasks, counter), counter


#: What a read task's Python worker takes before it reads a record, on the embedded
#: session: the fork, pyspark's worker, pyarrow, kafka-python and numba's cached loops
#: (1.4 to 2 s on bench-scan's machine while Spark's JVM and the driver share the cores,
#: 2026-11-25).  A driver's share that will have read everything sooner reads alone.
TASK_START_S = 1.5

#: Up to this many records, the driver reads and groups them itself
#: (:class:`DriverRead`) while Spark's JVM starts.
DRIVER_READ_RECORDS = 100_000


class DriverRead:
    """A small read's histories, read and grouped by the driver in a background thread.

    A read task's first Python worker cost a small topic about 2 s of its 7.5 s, after
    the 3.3 s Spark takes to start: the read could not begin before both.  The driver
    instead reads while the JVM starts, with the read tasks' own code
    (:func:`~migcheck.kafka.reader.read_units`,
    :func:`~migcheck.analysis.histories.histories_by_partition`), and hands Spark the
    histories as an Arrow table, which needs no Python worker; the placements and
    ranks are in it, so no Spark job starts one.  The thread is a daemon: a run that
    fails before it joins must not wait for it."""

    def __init__(
        self, client: ClientConfig, units: list[WorkUnit], scored: Sequence[Scored], every: bool
    ) -> None:
        self._result: pa.Table | BaseException | None = None
        args = (client, units, scored, every)
        self._thread = threading.Thread(target=self._run, args=args, name="migcheck-read")
        self._thread.daemon = True
        self._thread.start()

    def _run(
        self, client: ClientConfig, units: list[WorkUnit], scored: Sequence[Scored], every: bool
    ) -> None:
        try:
            read = read_units(client, units, every_record=every)
            batches = list(histories_by_partition(read, scored))
            self._result = pa.Table.from_batches(batches, history_schema(scored))
        except BaseException as e:  # re-raised in the caller's thread by load()
            self._result = e

    def load(self, spark: Any, figures: bool = False) -> tuple[Any, None]:
        """The histories as a DataFrame, or with ``figures`` as a
        :class:`~migcheck.analysis.figures.FigureSource` that needs no Spark job (no
        records counter: the read is already done)."""
        self._thread.join()
        if isinstance(self._result, BaseException):
            raise self._result
        if figures:
            return DriverFigures(self._result), None
        return spark.createDataFrame(self._result), None


class DriverShare:
    """The partitions the driver reads while Spark starts, in a background thread, and
    their figures: claimed one at a time (:class:`~migcheck.analysis.claims.Claims`)
    against a task per core but one, which read the others once Spark is up.

    bench-scan's full scan (5 M records, 24 partitions, 2 cores) spent 4.3 s before a
    read task read a record: Spark's JVM, its session and two Python workers start
    one after the other, and leave most of a core idle.  The driver reads with the read
    tasks' own code (:func:`~migcheck.kafka.reader.read_units`,
    :func:`~migcheck.analysis.figures.figures_of_batches`) from the moment the read is
    planned, and goes on claiming partitions beside the tasks until none is left, so
    all the readers end together.  When Spark is up, a driver about to finish (sooner
    than a task's worker would start, :data:`TASK_START_S`) reads alone: no task, and
    no worker, is started.  Its figures join the tasks' (:class:`TaskFigures`).
    Its (topic, key) rows, needed only when no partitioner placed every key, go to a
    Parquet file as they come, as the tasks' go to Spark's cache: the driver's memory
    holds a partition's histories at a time, as a task's does.

    The embedded session's only: local tasks see the claims' directory.  The thread is
    a daemon, as :class:`DriverRead`'s."""

    def __init__(self, client: ClientConfig, units: list[WorkUnit], spec: Spec, every: bool):
        self.units = largest_first(units)
        self.total = sum(u.end - u.start for u in units)
        self.read = 0  # records read so far, for the progress bar
        self._lost = False  # a partition was claimed by another reader first
        self._started = 0.0
        self._dir = tempfile.mkdtemp(prefix="migcheck-share-")
        # Removed when the share is dropped, or at exit: a cached task that Spark
        # computes again after the read claims its partitions again.
        weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
        self.claims = Claims.create(Path(self._dir, "claims"))
        self.keys_path = str(Path(self._dir, "keys.parquet"))
        self._spec = spec
        self._figures: list[bytes] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(client, every),
                                        name="migcheck-share", daemon=True)  # fmt: skip

    def start(self) -> DriverShare:
        """Start reading (at once: the reason for the share)."""
        self._started = time.monotonic()
        self._thread.start()
        return self

    def finishing(self, within_s: float) -> bool:
        """Whether the driver, alone, will have read every partition within ``within_s``
        at its pace so far (:func:`finishes_within`): then a read task would not start
        in time to take one, and no task is launched.  Never once another reader has
        claimed a partition, which the driver then must not wait for."""
        if self._lost or self._error is not None:
            return False
        done = not self._thread.is_alive()
        elapsed = time.monotonic() - self._started
        return done or finishes_within(self.read, self.total, elapsed, within_s)

    def _run(self, client: ClientConfig, every: bool) -> None:
        import pyarrow.parquet as pq

        try:
            units = self.claims.claimed(self.units, "driver", lost=self._note_lost)
            read = self._counted(read_units(client, units, every_record=every))
            histories = histories_by_partition(read, self._spec.scored)
            with pq.ParquetWriter(self.keys_path, KEYS_SCHEMA) as keys:
                for batch in figures_of_batches(histories, self._spec, keys=True):
                    if batch.column("figures").null_count < batch.num_rows:
                        self._figures += batch.column("figures").drop_null().to_pylist()
                    else:
                        keys.write_batch(batch.select(KEYS_SCHEMA.names))
        except BaseException as e:  # re-raised in the caller's thread by figures()
            self._error = e

    def _note_lost(self) -> None:
        self._lost = True

    def _counted(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            self.read += batch.num_rows
            yield batch

    def figures(self, spec: Spec) -> list[bytes]:
        """The driver's pickled figures (:func:`~migcheck.analysis.figures.from_rows`),
        once its last partition is read; its keys are then in :attr:`keys_path`."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        if spec != self._spec:  # the plan's spec must be the aggregation's
            raise ValueError("the driver's share was computed for another spec")
        return self._figures


def finishes_within(read: int, total: int, elapsed_s: float, within_s: float) -> bool:
    """Whether a reader that read ``read`` of ``total`` records in ``elapsed_s`` reads
    the rest within ``within_s`` at that pace (unknown before its first record)."""
    if read >= total:
        return True
    return read > 0 and (total - read) * elapsed_s / read <= within_s


#: The driver's share's (topic, key) rows, on disk.
KEYS_SCHEMA = pa.schema([("topic", pa.string()), ("key", pa.binary())])


class _ReadSoFar:
    """The records read by the tasks (Spark's accumulator) and the driver's share: what
    the progress bar polls as ``value``."""

    def __init__(self, counter: Any, share: DriverShare | None) -> None:
        self._counter, self._share = counter, share

    @property
    def value(self) -> int:
        return int(self._counter.value) + (self._share.read if self._share else 0)


class DriverFigures:
    """The figures of histories the driver holds (:class:`DriverRead`), computed in the
    driver: a small topic's report needs no Spark job."""

    def __init__(self, histories: pa.Table) -> None:
        self._histories = histories

    def figures(self, spec: Spec) -> Figures:
        return history_figures(self._histories, spec)

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        return distinct_keys(self._histories, topics)

    def moved_keys(self, chosen: Any, candidates: Sequence[int]) -> None:
        return None


class TaskFigures:
    """Spark's Python tasks that compute the figures of the histories they hold
    (:func:`~migcheck.analysis.figures.figures_of_batches`): read tasks that hold whole
    partitions, or tasks over merged partials.  Only the figures, and each keyed
    history's (topic, key) for the distinct keys, cross into Spark's JVM or stay in
    it, not a history row each.  Spark's jobs over a full scan's million histories (the
    sums, the cells, the moved keys' sample: about a third of bench-scan's full scan,
    all of it the JVM's CPU) become sums the driver adds.  The (topic, key) rows are
    cached by the figures' job and read again only when no partitioner placed every
    key of a topic (:meth:`~migcheck.analysis.figures.TopicFigures.unique_keys`).

    ``tasks`` builds the tasks' DataFrame (:data:`~migcheck.analysis.figures.FIGURES_DDL`)
    for a spec: the spec is known only when the aggregation asks.  With the driver's
    ``share`` its figures and keys join the tasks'; ``tasks`` is None when the share
    reads alone."""

    def __init__(
        self,
        spark: Any,
        tasks: Callable[[Spec], Any] | None,
        counter: Any,
        share: DriverShare | None = None,
    ) -> None:
        self._spark, self._tasks, self.counter, self._share = spark, tasks, counter, share
        self._keys: list[Any] = []  # the (topic, key) rows' frames

    def figures(self, spec: Spec) -> Figures:
        blobs: list[bytes] = []
        if self._tasks is not None:  # None: the driver's share reads alone
            rows = self._tasks(spec).cache()
            figures = rows.where("figures IS NOT NULL").select("figures").collect()
            blobs += [r["figures"] for r in figures]
            self._keys.append(rows.select("topic", "key"))
        if self._share is not None:
            blobs += self._share.figures(spec)
        return from_rows(blobs, spec.sample)

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        frames = list(self._keys)
        if self._share is not None:  # read here only: most reports need no such job
            frames.append(self._spark.read.parquet(self._share.keys_path))
        keys = functools.reduce(lambda a, b: a.unionByName(b), frames)
        return spark_distinct_keys(keys, topics)

    def moved_keys(self, chosen: Any, candidates: Sequence[int]) -> None:
        return None


def spark_distinct_keys(frame: Any, topics: Sequence[str]) -> dict[str, int]:
    """Per topic of ``topics``: its distinct keys in ``frame`` (topic and key columns; a
    key seen in two partitions counts once), one job."""
    from pyspark.sql import functions as F

    keys = frame.where(F.col("key").isNotNull() & F.col("topic").isin(list(topics)))
    rows = keys.select("topic", "key").distinct().groupBy("topic").count().collect()
    return {r["topic"]: int(r["count"]) for r in rows}


def whole_partitions(units: list[WorkUnit], chunk_records: int = CHUNK_RECORDS) -> bool:
    """Whether a full scan's tasks read whole partitions (each fits in a chunk), so that
    they group whole histories (:func:`full_histories`)."""
    return max(_partition_sizes(units).values(), default=0) <= chunk_records


def _partition_sizes(units: list[WorkUnit]) -> dict[tuple[str, int], int]:
    """Records per (topic, partition) over ``units``."""
    sizes: dict[tuple[str, int], int] = {}
    for u in units:
        sizes[(u.topic, u.partition)] = sizes.get((u.topic, u.partition), 0) + u.end - u.start
    return sizes


def merged_histories(partials: Any, scored: Sequence[Scored]) -> Any:
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
        *(F.min(name).alias(name) for name in same),
    )


def _read_tasks(
    spark: Any,
    client: ClientConfig,
    packed: list[list[WorkUnit]],
    group: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
    ddl: str,
    every_record: bool = False,
    counter: Any = None,
    claims: Claims | None = None,
) -> tuple[Any, Any]:
    """A task per bin of ``packed``: its units read (:func:`~migcheck.kafka.reader.read_units`),
    counted for the progress bar and grouped by ``group`` into rows of ``ddl``.  With
    ``claims``, a task reads only the partitions of its bin that it claims.

    A read that fails in a task (a broker gone mid-scan) names Spark's log, as any
    failed task's line does: the driver prints only the error's message, and the log
    holds the task's traceback."""
    counter = spark.sparkContext.accumulator(0) if counter is None else counter
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
            read = read_units(client, mine, every_record=every_record)
            yield from group(_counted(read, counter))
        except ReadError as e:
            raise ReadError(f"{e} (Spark's log: {log})") from e

    return bin_ids.mapInArrow(read_task, ddl), counter


def _counted(batches: Iterator[pa.RecordBatch], counter: Any) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        counter.add(batch.num_rows)
        yield batch


def read_keys_file(path: str, key_encoding: str, topic: str | None = None) -> pa.Table:
    """Load a key export (Parquet, CSV or JSON lines) as a table of :data:`RECORD_SCHEMA`.

    Columns: ``key`` (hex or text, see ``key_encoding``; empty cell = null key),
    ``partition`` (where the record is), and optionally ``value_size``,
    ``offset`` and ``topic``.  Without a ``topic`` column the file's stem names it.
    """
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.is_file():
        raise ReadError(f"--keys-file {path}: no such file")
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            table = pq.read_table(p)
        elif suffix == ".csv":
            table = pacsv.read_csv(
                p,
                convert_options=pacsv.ConvertOptions(
                    column_types={"key": pa.string()}, strings_can_be_null=True
                ),
            )
        elif suffix in (".json", ".jsonl", ".ndjson"):
            table = pajson.read_json(p)
        else:
            raise ReadError(f"--keys-file {path}: use .parquet, .csv or .jsonl")
    except (pa.ArrowInvalid, OSError) as e:
        raise ReadError(f"--keys-file {path}: {first_line(e)}") from None
    for required in ("key", "partition"):
        if required not in table.column_names:
            raise ReadError(f"--keys-file {path}: no {required!r} column")
    keys = _decode_keys(table.column("key").to_pylist(), key_encoding, path)
    try:
        return _records_table(table, keys, topic or p.stem)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
        raise ReadError(f"--keys-file {path}: {first_line(e)}") from None


def _records_table(table: pa.Table, keys: list[bytes | None], topic: str) -> pa.Table:
    """The export's columns as :data:`RECORD_SCHEMA` (Arrow refuses a bad cell, e.g. a
    partition that is not an integer)."""
    n = table.num_rows
    value_size = (
        table.column("value_size").to_pylist() if "value_size" in table.column_names else [0] * n
    )
    offsets = table.column("offset").to_pylist() if "offset" in table.column_names else range(n)
    topics = (
        [str(t) for t in table.column("topic").to_pylist()]
        if "topic" in table.column_names
        else [topic] * n
    )
    return pa.table(
        {
            "topic": topics,
            "partition": pa.array(table.column("partition").to_pylist(), pa.int32()),
            "offset": pa.array(list(offsets), pa.int64()),
            "key": pa.array(keys, pa.binary()),
            "key_size": pa.array([None if k is None else len(k) for k in keys], pa.int32()),
            "value_size": pa.array(value_size, pa.int32()),
            "timestamp": pa.array([None] * n, pa.int64()),
        },
        schema=RECORD_SCHEMA,
    )


def _decode_keys(values: list[Any], encoding: str, path: str) -> list[bytes | None]:
    out: list[bytes | None] = []
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
        elif isinstance(v, bytes):
            out.append(v)
        else:
            try:
                out.append(decode_text(str(v), encoding))
            except KeyFormatError as e:
                raise ReadError(f"--keys-file {path}, row {i + 1}: {e}") from None
    return out
