"""The driver's share of a read of whole partitions: the driver reads partitions from
the moment the read is planned, beside the read tasks once Spark is up.

Spark's JVM, its session and the first Python workers start one after the other and
leave most of a core idle for seconds before a read task reads a record.  The driver
reads with the read tasks' own code (:func:`~migcheck.kafka.fetch.read_units`,
:func:`~migcheck.analysis.figures.figures_of_batches`) meanwhile, claiming one
partition at a time (:class:`~migcheck.analysis.claims.Claims`) against a task per
core but one, so all the readers end together.  The embedded session's only: local
tasks see the claims' directory.  Measurements: docs/benchmarks.md.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from migcheck.analysis.claims import Claims, largest_first
from migcheck.analysis.figures import Spec, figures_of_batches
from migcheck.analysis.histories import histories_by_partition
from migcheck.analysis.scan.strategy import Counter
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, read_units, records_in, window_starts

#: What a read task's Python worker takes before it reads a record, on the embedded
#: session: the fork, pyspark's worker, pyarrow, kafka-python and numba's cached loops.
#: A driver's share that will have read everything sooner reads alone.
TASK_START_S = 1.5

#: The driver's share's (topic, key) rows, on disk.
KEYS_SCHEMA = pa.schema([("topic", pa.string()), ("key", pa.binary())])


class DriverShare:
    """The partitions the driver reads in a background thread, and their figures.

    When Spark is up, a driver about to finish (sooner than a task's worker would
    start, :data:`TASK_START_S`) reads alone: no task, and no worker, is started.  Its
    figures join the tasks' (:class:`~migcheck.analysis.scan.tasks.TaskFigures`).  Its
    (topic, key) rows, needed only when no partitioner placed every key, go to a
    Parquet file as they come, as the tasks' go to Spark's cache: the driver's memory
    holds a partition's histories at a time, as a task's does.  The thread is a daemon:
    a run that fails before it joins must not wait for it."""

    def __init__(self, client: ClientConfig, units: list[WorkUnit], spec: Spec, every: bool):
        self.units = largest_first(units)
        self.total = records_in(units)
        self.read = 0  # records read so far, for the progress bar
        self._lost = False  # a partition was claimed by another reader first
        self._started = 0.0
        self._dir = tempfile.mkdtemp(prefix="migcheck-share-")
        # Removed when the share is dropped, or at exit: a cached task that Spark
        # computes again after the read claims its partitions again.
        weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
        self.claims = Claims.create(Path(self._dir, "claims"))
        self.keys_path = str(Path(self._dir, "keys.parquet"))
        self.spec = spec
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
            histories = histories_by_partition(read, self.spec.scored, window_starts(self.units))
            with pq.ParquetWriter(self.keys_path, KEYS_SCHEMA) as keys:
                for batch in figures_of_batches(histories, self.spec, keys=True):
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

    def figures(self) -> list[bytes]:
        """The driver's pickled figures (:func:`~migcheck.analysis.figures.from_rows`),
        once its last partition is read; its keys are then in :attr:`keys_path`."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._figures


def finishes_within(read: int, total: int, elapsed_s: float, within_s: float) -> bool:
    """Whether a reader that read ``read`` of ``total`` records in ``elapsed_s`` reads
    the rest within ``within_s`` at that pace (unknown before its first record)."""
    if read >= total:
        return True
    return read > 0 and (total - read) * elapsed_s / read <= within_s


class ReadSoFar:
    """The records read by the tasks (their counter: ``analysis/session.py``) and the
    driver's share: what the progress bar polls as ``value``."""

    def __init__(self, counter: Counter, share: DriverShare | None) -> None:
        self._counter, self._share = counter, share

    @property
    def value(self) -> int:
        return int(self._counter.value) + (self._share.read if self._share else 0)
