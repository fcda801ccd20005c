"""The driver's read: a small read's histories, read and grouped by the driver while
Spark's JVM starts (:class:`DriverRead`), and their figures (:class:`DriverFigures`).

A read task cannot begin before Spark has started, and then its first Python worker:
seconds that a small topic's whole read would not take (docs/benchmarks.md).  The
driver instead reads while the JVM starts, with the read tasks' own code, and hands
over Arrow: no Spark job, and so no Python worker, is needed for the report.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from migcheck.analysis.figures import Chosen, Figures, Spec, distinct_keys, history_figures
from migcheck.analysis.histories import histories_by_partition, history_schema
from migcheck.analysis.scan.frame import HistoryFigures
from migcheck.analysis.scan.strategy import Loaded
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, read_units, window_starts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class DriverRead:
    """The histories of ``units``, read and grouped in a background thread
    (:func:`~migcheck.kafka.fetch.read_units`,
    :func:`~migcheck.analysis.histories.histories_by_partition`), placements and ranks
    included.  The thread is a daemon: a run that fails before it joins must not wait
    for it.  With ``figures`` the driver computes the report's figures too; without
    (a row per moved key is wanted), Spark takes the histories as an Arrow table."""

    def __init__(
        self, client: ClientConfig, units: list[WorkUnit], spec: Spec, every: bool, figures: bool
    ) -> None:
        self.spec, self.figures = spec, figures
        self._result: pa.Table | BaseException | None = None
        args = (client, units, every)
        self._thread = threading.Thread(target=self._run, args=args, name="migcheck-read")
        self._thread.daemon = True
        self._thread.start()

    def _run(self, client: ClientConfig, units: list[WorkUnit], every: bool) -> None:
        try:
            read = read_units(client, units, every_record=every)
            batches = list(histories_by_partition(read, self.spec.scored, window_starts(units)))
            self._result = pa.Table.from_batches(batches, history_schema(self.spec.scored))
        except BaseException as e:  # re-raised in the caller's thread by load()
            self._result = e

    def load(self, spark: SparkSession) -> Loaded:
        """The histories' figure source; no records counter: the read is already done."""
        self._thread.join()
        if isinstance(self._result, BaseException):
            raise self._result
        assert self._result is not None  # the thread ran to its end
        if self.figures:
            return DriverFigures(self._result, self.spec), None
        return HistoryFigures(spark.createDataFrame(self._result), self.spec), None


class DriverFigures:
    """The figures of histories the driver holds, computed in the driver: a small
    topic's report needs no Spark job."""

    def __init__(self, histories: pa.Table, spec: Spec) -> None:
        self._histories, self.spec = histories, spec

    def figures(self) -> Figures:
        return history_figures(self._histories, self.spec)

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        return distinct_keys(self._histories, topics)

    def moved_keys(self, chosen: Chosen) -> None:
        return None

    def release(self) -> None:
        return None  # nothing in Spark
