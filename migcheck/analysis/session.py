"""What migcheck's jobs ask of a Spark session beyond DataFrames, answered here alone: how
many task slots it has, a counter its tasks add to and the driver reads, and a tag that
cancels a thread's jobs.

Classic pyspark answers them through the session's ``SparkContext``
(``defaultParallelism``, accumulators, job tags), and this module is the only place that
asks it.
A session without a SparkContext (Spark Connect: no RDDs, no accumulators) is answered
from its settings and by the driver: :func:`task_slots` from ``spark.default.parallelism``
or the master's cores, :func:`task_counter` with a :class:`DriverCounter` that only the
driver adds to, from the rows a job returns (:func:`reaches_driver`).  Neither changes a
figure: the slots decide how a read or a copy is cut into tasks, and the counters feed
only the progress bars (docs/ARCHITECTURE.md, "Jobs without a SparkContext").

Unlike :mod:`~migcheck.analysis.scan.session`, which opens the session a command's reads
run on, this module only asks an open session.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

#: A cluster's slots when its settings do not say: Spark's own floor for a cluster's
#: ``defaultParallelism`` (``max(cores, 2)``).
CLUSTER_FLOOR = 2

#: A Spark Connect session's settings for :class:`StageProgress`.  The server reports an
#: operation's stages every ``reportInterval`` (2 s by default) and never after its last
#: result: a read shorter than that reported no stage, and its bar stayed at 0 to the end
#: (the terminal test, once, in CI).  At a quarter second, a read long enough to draw a
#: bar is seen running, so its operation's end takes the bar to its total.
PROGRESS_SETTINGS = {"spark.connect.progress.reportInterval": "250ms"}

_LOCAL = re.compile(r"local(?:\[(\*|\d+)(?:\s*,\s*\d+)?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*\]")


class TaskCounter(Protocol):
    """A count the read or copy tasks add to and the driver reads as ``value``."""

    def add(self, term: int) -> None: ...

    @property
    def value(self) -> int: ...


class DriverCounter:
    """A counter for a session without accumulators: a task's ``add`` changes only the
    task's copy, so the driver adds what its jobs' result rows report."""

    def __init__(self) -> None:
        self._value = 0

    def add(self, term: int) -> None:
        self._value += term

    @property
    def value(self) -> int:
        return self._value


class StageProgress:
    """The records a read on a Spark Connect session has read, as the progress bar polls
    them.  Its tasks' adds never reach the driver (no accumulators), so the count is
    ``records`` times the share of the read's stage done (the stage of ``tasks`` tasks),
    from the session's progress handler, which Spark Connect calls at each of the server's
    progress reports (:data:`PROGRESS_SETTINGS`): the bar moves as tasks end, as on an
    accumulator."""

    def __init__(self, tasks: int, records: int) -> None:
        self._tasks, self._records, self._value = tasks, records, 0
        self._reads: set[Any] = set()  # the operations the read's stage ran in

    def add(self, term: int) -> None:
        """A task's add, to its own copy: it never reaches the driver."""

    def __reduce__(self) -> tuple[type[StageProgress], tuple[int, int]]:
        """Pickled without its count.  A Spark Connect client pickles a job's function
        again each time it sends the plan, and this counter is in the read tasks' closure:
        with its count in the pickle, the plan the check releases at its end
        (``unpersist``) was not the plan it cached, and the cache outlived the check."""
        return StageProgress, (self._tasks, self._records)

    def __call__(
        self, stages: Iterable[Any] | None, inflight_tasks: int, operation_id: Any, done: bool
    ) -> None:
        """Spark Connect's progress handler: each update lists the operation's stages.  Its
        updates come at intervals, so the last may predate the stage's last task: an
        operation the read's stage ran in that is ``done`` has read everything."""
        for stage in stages or ():
            if stage.num_tasks == self._tasks:
                self._reads.add(operation_id)
                done_share = self._records * stage.num_completed_tasks // stage.num_tasks
                self._value = max(self._value, done_share)
        if done and operation_id in self._reads:
            self._value = self._records

    @property
    def value(self) -> int:
        return self._value


def read_counter(spark: Any, tasks: int, records: int) -> TaskCounter:
    """The counter of a read of ``records`` by ``tasks`` tasks, for its progress bar: an
    accumulator; on a session without a SparkContext, a :class:`StageProgress` fed by
    the session's progress handler (registered for the process's life: a read is
    one per check)."""
    if context(spark) is not None:
        return task_counter(spark)
    progress = StageProgress(tasks, records)
    spark.registerProgressHandler(progress)
    return progress


def context(spark: Any) -> Any:
    """The session's SparkContext; None where it has none (a Spark Connect session raises
    an ``AttributeError`` for it)."""
    return getattr(spark, "sparkContext", None)


def executors_joined(spark: Any) -> bool:
    """Whether an executor has joined the session's application: a local master runs its
    tasks in the driver; a cluster's executors are those the status tracker lists
    besides the driver.  False where there is no SparkContext to ask (Spark Connect):
    the caller cannot tell."""
    sc = context(spark)
    if sc is None:
        return False
    if _LOCAL.fullmatch(str(sc.master).strip()):
        return True
    return len(sc.statusTracker().getExecutorInfos()) > 1


def task_slots(spark: Any) -> int:
    """How many tasks the session runs at once: the SparkContext's ``defaultParallelism``
    (which on a cluster counts the executors' cores registered so far), else
    :func:`slots_of` the session's settings."""
    sc = context(spark)
    if sc is not None:
        return int(sc.defaultParallelism)
    return slots_of(lambda key: spark.conf.get(key, None), os.cpu_count() or 1)


def slots_of(setting: Callable[[str], str | None], cpus: int) -> int:
    """The task slots Spark's ``defaultParallelism`` gives, from the session's settings
    (``setting``: a key's value, or None) and the cores of a local master's machine:
    ``spark.default.parallelism`` when set; a local master's threads (``local[*]``: every
    core); a ``local-cluster``'s workers times their cores; a cluster's
    ``spark.executor.cores`` times ``spark.executor.instances``, else ``spark.cores.max``,
    never below :data:`CLUSTER_FLOOR`, as Spark counts the cores of a cluster."""
    given = setting("spark.default.parallelism")
    if given:
        return int(given)
    master = (setting("spark.master") or "local[*]").strip()
    local = _LOCAL.fullmatch(master)
    if local:
        threads = local[1] or "1"
        return cpus if threads == "*" else int(threads)
    workers = _LOCAL_CLUSTER.fullmatch(master)
    cores = int(workers[1]) * int(workers[2]) if workers else _cluster_cores(setting)
    return max(cores, CLUSTER_FLOOR)


def _cluster_cores(setting: Callable[[str], str | None]) -> int:
    """A cluster's cores as its settings give them (0: they do not say)."""
    per_executor, executors = setting("spark.executor.cores"), setting("spark.executor.instances")
    if per_executor and executors:
        return int(per_executor) * int(executors)
    return int(setting("spark.cores.max") or 0)


def task_counter(spark: Any) -> TaskCounter:
    """A counter the session's tasks add to: an accumulator, whose tasks' adds reach the
    driver as each task ends; without a SparkContext, a :class:`DriverCounter`."""
    sc = context(spark)
    if sc is None:
        return DriverCounter()
    counter: TaskCounter = sc.accumulator(0)
    return counter


def reaches_driver(counter: TaskCounter) -> bool:
    """Whether what tasks add to ``counter`` reaches the driver (an accumulator's does);
    if not, the driver adds the counts its jobs return."""
    return not isinstance(counter, DriverCounter)


@contextlib.contextmanager
def job_tag(spark: Any, tag: str) -> Iterator[Callable[[], object]]:
    """Tag the jobs this thread starts inside with ``tag``; what it yields cancels them,
    from any thread.  A SparkContext's job tags on a classic session: the session's own
    operation tags (``addTag``, ``interruptTag``) reach no classic job that collects to
    Python (measured on pyspark 4.2: ``interruptTag`` found nothing to cancel).  Without a
    context, the session's operation tags, which is what Spark Connect tags."""
    sc = context(spark)
    if sc is None:
        spark.addTag(tag)
        try:
            yield lambda: spark.interruptTag(tag)
        finally:
            spark.removeTag(tag)
        return
    sc.addJobTag(tag)
    try:
        yield lambda: sc.cancelJobsWithTag(tag)
    finally:
        sc.removeJobTag(tag)
