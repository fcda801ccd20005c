"""Progress bars of records read or copied, drawn on an interactive stderr only."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from migcheck.report.copy import copy_progress


class RecordsProgress:
    """Polls the records-read counter (Spark's accumulator on a classic session, Spark
    Connect's progress on a remote one: ``analysis/session.py``) twice a second while the
    read runs."""

    #: What the bar says while records come in.
    label = "reading records"

    def __init__(self, counter: Any, total: int) -> None:
        self.counter = counter
        self.total = total
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.started = time.monotonic()

    def __enter__(self) -> RecordsProgress:
        if self.counter is not None and sys.stderr.isatty() and self.total > 0:
            self.started = time.monotonic()
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread:
            self.thread.join()

    def describe(self, done: int) -> str:
        # Spark reports accumulator updates as each read task ends, so the bar moves
        # per task (about 500k records); once all are read, aggregation follows.
        return "aggregating" if done >= self.total else self.label

    def detail(self, done: int) -> str:
        """What follows the count: nothing for a read."""
        return ""

    def _run(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task(self.label, total=self.total, detail="")
            while True:  # the last update after the stop: where the count ended is drawn
                stopping = self.stop.wait(0.5)
                done = min(self.counter.value, self.total)
                bar.update(task, completed=done, description=self.describe(done),
                           detail=self.detail(done))  # fmt: skip
                if stopping:
                    bar.refresh()
                    return


class CopyProgress(RecordsProgress):
    """A copy's records and bytes written, its rate and the time left, from the tasks'
    counters (:class:`~migcheck.copy.task.CopyCounters`): accumulators, which Spark updates
    as each task ends (a task settles a share of a round's chunks); on a session without
    them, the driver's, as each round ends."""

    label = "copying records"

    def __init__(self, counters: Any, total: int) -> None:
        super().__init__(counters.records, total)
        self.bytes = counters.bytes

    def describe(self, done: int) -> str:
        return self.label

    def detail(self, done: int) -> str:
        return copy_progress(done, self.total, self.bytes.value, time.monotonic() - self.started)
