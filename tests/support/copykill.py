"""A real `migcheck copy` killed in the middle of a round, as an operator's crash would
leave it: a checkpoint with a round pending, and transactions written and never
committed in the destination.  test_copy resumes such copies; test_runbook_streams runs a
Kafka Streams app through the runbook after one.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from connectserver import embedded
from kafkatest import Kafka, session_pids


def start_copy(kafka: Kafka, topic: str, into: str, checkpoint: Path, *extra: str):
    """``migcheck copy`` in a session of its own (so that its Spark JVM and workers die
    with it), its output piped."""
    args = ["copy", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--into", into]
    return subprocess.Popen(
        [sys.executable, "-m", "migcheck", *args, "--checkpoint", str(checkpoint), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=embedded(dict(os.environ)),  # its Spark is killed with it
    )


def wait_mid_round(kafka: Kafka, checkpoint: Path, into: str, proc: subprocess.Popen) -> None:
    """Until the copy is stopped (SIGSTOP to its session) in a round after one settled,
    inside a transaction that has written records and whose commit is not decided: a kill
    then leaves it to be aborted.  It returns with the copy stopped: kill it, or
    :func:`resume` it.

    The destination's records in open transactions (its high watermarks past its last
    stable offsets) growing says a transaction is being written.  But a commit decided a
    moment before shows the same while its markers land, and a kill then aborts nothing;
    so the copy is stopped and its open records watched (:func:`_stays_open`).  A chunk's
    transaction is open for a fraction of a second, so the ends are asked every 10 ms,
    of two consumers kept open: but only once the checkpoint has a round pending after one
    settled.  Before that (Spark's start, the first round: most of the wait) only the
    checkpoint's file is read, as asking the broker 200 times a second took CPU from the
    copy it waits for."""
    deadline = time.monotonic() + 240
    seen = 0
    with _Ends(kafka, into) as ends:
        while time.monotonic() < deadline and proc.poll() is None:
            state = read_state(checkpoint)
            settled = sum(int(n) for n in state.get("next", {}).values())
            if not (state.get("pending") and settled):
                seen = 0
                time.sleep(0.01)
                continue
            now = ends.uncommitted()
            if now > seen > 0:
                signal_session(proc.pid, signal.SIGSTOP)
                if _stays_open(ends):
                    return
                resume(proc)
                now = 0
            seen = now
            time.sleep(0.01)
    raise AssertionError(f"no round was in flight (exit {proc.poll()})")


#: How long a stopped copy's open records must stay open to be an undecided transaction's:
#: a decided one's markers are written by the coordinator, not the stopped producer, within
#: milliseconds; an undecided one stays open until its timeout (a minute).
OPEN_WINDOW_S = 3.0


def _stays_open(ends: _Ends) -> bool:
    """Whether, the copy stopped, records in open transactions remain for
    :data:`OPEN_WINDOW_S` (a window in which nothing must happen)."""
    deadline = time.monotonic() + OPEN_WINDOW_S
    while time.monotonic() < deadline:
        if ends.uncommitted() == 0:
            return False
        time.sleep(0.05)
    return True


def resume(proc: subprocess.Popen) -> None:
    """SIGCONT to the copy's session, stopped by :func:`wait_mid_round`."""
    signal_session(proc.pid, signal.SIGCONT)


def signal_session(session: int, sig: int) -> list[int]:
    """``sig`` to every process of ``session`` (the copy's: its driver, Spark's JVM,
    PySpark's daemon and workers), the pids it reached.  Not a process group: PySpark's
    daemon makes a group of its own (``os.setpgid(0, 0)``), so a group's signal missed
    the workers, and a worker went on to commit the transaction it was writing."""
    reached = []
    for pid in session_pids(session):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
            reached.append(pid)
    return reached


class _Ends:
    """``topic``'s end offsets as a read_uncommitted consumer sees them (its high
    watermarks) and as a read_committed one does (its last stable offsets)."""

    def __init__(self, kafka: Kafka, topic: str) -> None:
        from kafka import KafkaConsumer, TopicPartition

        self.consumers = [
            KafkaConsumer(bootstrap_servers=kafka.bootstrap, isolation_level=level)
            for level in ("read_uncommitted", "read_committed")
        ]
        partitions = self.consumers[0].partitions_for_topic(topic) or ()
        self.tps = [TopicPartition(topic, p) for p in partitions]

    def uncommitted(self) -> int:
        """Records in open transactions, summed over the partitions."""
        high, stable = (sum(c.end_offsets(self.tps).values()) for c in self.consumers)
        return high - stable

    def __enter__(self) -> _Ends:
        return self

    def __exit__(self, *exc: object) -> None:
        for c in self.consumers:
            c.close()


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL to the copy's whole session: the driver, Spark's JVM and its workers."""
    signal_session(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def read_state(checkpoint: Path) -> dict:
    """The checkpoint as the driver last wrote it ({} before its first write)."""
    try:
        return dict(json.loads(checkpoint.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def kcat_count(kafka: Kafka, topic: str, isolation: str) -> int:
    """The data records kcat (librdkafka) reads from ``topic`` at ``isolation``: at
    read_uncommitted, aborted transactions' records included."""
    out = subprocess.run(
        ["kcat", "-C", "-b", kafka.bootstrap, "-t", topic, "-e", "-q",
         "-X", f"isolation.level={isolation}", "-f", "x\n"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    return out.count("\n")
