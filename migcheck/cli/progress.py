"""A progress bar of records read, drawn on an interactive stderr only."""

from __future__ import annotations

import sys
import threading
from typing import Any


class RecordsProgress:
    """Polls Spark's records-read accumulator twice a second while the read runs."""

    def __init__(self, counter: Any, total: int) -> None:
        self.counter = counter
        self.total = total
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> RecordsProgress:
        if self.counter is not None and sys.stderr.isatty() and self.total > 0:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread:
            self.thread.join()

    def _run(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        # Spark reports accumulator updates as each read task ends, so the bar moves
        # per task (about 500k records); once all are read, aggregation follows.
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("reading records", total=self.total)
            while not self.stop.wait(0.5):
                done = min(self.counter.value, self.total)
                label = "aggregating" if done >= self.total else "reading records"
                bar.update(task, completed=done, description=label)
