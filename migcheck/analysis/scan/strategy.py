"""What every read strategy gives the analysis: a figure source, and the records read so
far for the progress bar.

A strategy is planned before Spark starts (:mod:`migcheck.analysis.scan.plan`), and
loaded once the session is up: ``load`` starts no Spark job itself (the figures' first
call does), so the analyses of one command load in turn and run their jobs together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from migcheck.analysis.figures import FigureSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Counter(Protocol):
    """Records read so far: the tasks' counter (``analysis/session.py``), or the driver's
    count beside it."""

    @property
    def value(self) -> int: ...


#: A loaded read: its figures, and its records counter (None: the read is done).
Loaded = tuple[FigureSource, Counter | None]


class Strategy(Protocol):
    """One way to read: the driver's, whole-partition tasks, chunks and merge, a keys file."""

    def load(self, spark: SparkSession) -> Loaded:
        """The read's figure source on ``spark`` (the driver's read may be done by now)."""
        ...
