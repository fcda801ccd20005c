"""What the jobs ask of a session without a SparkContext (Spark Connect's kind): its task
slots from its settings, counters the driver settles from a round's results, and no other
module asking a SparkContext for them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from migcheck.analysis.session import (
    DriverCounter,
    StageProgress,
    reaches_driver,
    slots_of,
    task_counter,
    task_slots,
)
from migcheck.copy.rounds import ChunkResult
from migcheck.copy.task import CopyCounters, new_counters

REPO = Path(__file__).resolve().parents[2]


CLUSTER = "spark://127.0.0.1:7077"


@pytest.mark.parametrize(
    ("given", "slots"),
    [
        ({"spark.master": "local"}, 1),
        ({"spark.master": "local[2]"}, 2),
        ({"spark.master": "local[3, 4]"}, 3),
        ({"spark.master": "local[*]"}, 12),
        ({"spark.master": "local[*,2]"}, 12),
        ({}, 12),  # the embedded default, local[*]
        ({"spark.master": "local[2]", "spark.default.parallelism": "7"}, 7),
        ({"spark.master": "local-cluster[2, 3, 1024]"}, 6),
        # the suite's standalone cluster (tests/support/sparkcluster.py): 2 workers of 1 core
        ({"spark.master": CLUSTER, "spark.cores.max": "2", "spark.executor.cores": "1"}, 2),
        (
            {"spark.master": "yarn", "spark.executor.cores": "4", "spark.executor.instances": "3"},
            12,
        ),
        ({"spark.master": CLUSTER, "spark.cores.max": "1"}, 2),  # Spark's floor
        ({"spark.master": "k8s://https://h:6443"}, 2),
    ],
)
def test_slots_are_what_spark_gives_for_the_settings(given: dict[str, str], slots: int) -> None:
    assert slots_of(given.get, cpus=12) == slots


class ConnectLike:
    """A session without a SparkContext: asking for one raises AttributeError, as a Spark
    Connect session's ``PySparkAttributeError`` is."""

    def __init__(self, conf: dict[str, str]) -> None:
        self.conf = self
        self._conf = conf

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._conf.get(key, default)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"[JVM_ATTRIBUTE_NOT_SUPPORTED] {name}")


class Accumulator:
    """What a classic session's ``accumulator(0)`` returns, as far as the counters use it."""

    def __init__(self) -> None:
        self.value = 0

    def add(self, term: int) -> None:
        self.value += term


class Classic:
    """A classic session: its SparkContext answers the slots and makes accumulators."""

    def __init__(self, parallelism: int) -> None:
        self.sparkContext = self
        self.defaultParallelism = parallelism

    def accumulator(self, start: int) -> Accumulator:
        assert start == 0
        return Accumulator()


def test_a_session_without_a_context_answers_from_its_settings() -> None:
    spark = ConnectLike({"spark.master": "local[3]"})
    assert task_slots(spark) == 3
    counter = task_counter(spark)
    assert isinstance(counter, DriverCounter) and not reaches_driver(counter)


def test_a_classic_session_answers_from_its_context() -> None:
    spark = Classic(5)
    assert task_slots(spark) == 5
    counter = task_counter(spark)
    assert isinstance(counter, Accumulator) and reaches_driver(counter)


def results(*records_bytes: tuple[int, int]) -> list[ChunkResult]:
    return [ChunkResult(p, n, 0, 0, False, b) for p, (n, b) in enumerate(records_bytes)]


def test_without_accumulators_the_driver_counts_each_rounds_results() -> None:
    counters = new_counters(ConnectLike({}))
    counters.settled(results((10, 300), (5, 120)))
    counters.settled(results((1, 7)))
    assert (counters.records.value, counters.bytes.value) == (16, 427)


def test_with_accumulators_the_driver_adds_nothing_the_tasks_added() -> None:
    counters = new_counters(Classic(2))
    counters.records.add(15)  # as the tasks did, each as it ended
    counters.bytes.add(420)
    counters.settled(results((10, 300), (5, 120)))
    assert (counters.records.value, counters.bytes.value) == (15, 420)
    assert isinstance(counters, CopyCounters)


def test_only_the_seam_asks_a_spark_context_for_slots_counters_tags_or_rdds() -> None:
    asks = re.compile(
        r"defaultParallelism|\.accumulator\(|\.parallelize\(|\bAccumulator\b|\w+(?:JobTag|JobsWithTag)"
    )
    found: dict[str, set[str]] = {}
    for path in (REPO / "migcheck").rglob("*.py"):
        for ask in asks.findall(path.read_text(encoding="utf-8")):
            found.setdefault(str(path.relative_to(REPO)), set()).add(ask)
    seam = {"defaultParallelism", ".accumulator(", "addJobTag", "removeJobTag", "cancelJobsWithTag"}
    assert found == {"migcheck/analysis/session.py": seam}


def test_a_process_without_a_context_has_no_jvm_of_its_own_to_end() -> None:
    """A session without a SparkContext takes the private API's public answers: no
    context of this process's, and no JVM for Ctrl-C or ``migcheck warm`` to end."""
    script = """
from migcheck.analysis import pyspark_private as p
assert p.FENCE.open()
assert p.has_context() is False and p.jvm_process() is None
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.stdout.strip() == "ok", run.stderr
    assert run.stderr == ""


def _stage(tasks: int, completed: int) -> Any:
    """A stage's progress as Spark Connect's client reports it."""
    from pyspark.sql.connect.shell.progress import StageInfo

    return StageInfo(stage_id=1, num_tasks=tasks, num_completed_tasks=completed,
                     num_bytes_read=0, done=completed == tasks)  # fmt: skip


def test_a_connect_reads_count_is_its_stages_share_of_the_records() -> None:
    """Fed Spark Connect's own stage records, as its progress handler is: only the read's
    stage (its task count) counts, and the count never goes back."""
    stage = _stage
    read = StageProgress(tasks=4, records=1_000)
    read.add(500)  # a task's add, on its own copy: nothing here
    assert read.value == 0
    read([stage(1, 1)], inflight_tasks=0, operation_id="probe", done=True)  # another job
    assert read.value == 0
    read([stage(4, 1), stage(2, 2)], inflight_tasks=3, operation_id="read", done=False)
    assert read.value == 250
    read([stage(4, 3)], inflight_tasks=1, operation_id="read", done=False)
    assert read.value == 750
    read([stage(4, 0)], inflight_tasks=4, operation_id="later", done=False)
    assert read.value == 750
    read([stage(4, 3)], inflight_tasks=0, operation_id="read", done=True)  # the last update
    assert read.value == 1_000  # came before the stage's last task: the operation ended
    unread = StageProgress(tasks=4, records=1_000)
    unread([stage(1, 1)], inflight_tasks=0, operation_id="probe", done=True)
    assert unread.value == 0  # an operation without the read's stage says nothing of it


def test_a_connect_reads_counter_pickles_alike_whatever_it_counted() -> None:
    """The client pickles the read's plan again to release its cache: the same bytes, or
    the release misses what the check cached."""
    from pyspark import cloudpickle

    counted = StageProgress(tasks=2, records=10)
    fresh = cloudpickle.dumps(counted)
    counted([_stage(2, 1)], inflight_tasks=1, operation_id="read", done=False)
    assert counted.value == 5
    assert cloudpickle.dumps(counted) == fresh
    assert cloudpickle.loads(fresh).value == 0
