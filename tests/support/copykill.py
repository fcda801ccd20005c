"""A real `migcheck copy` killed in the middle of a round, as an operator's crash would
leave it: a checkpoint with a round pending, and transactions written and never
committed in the destination.  test_copy resumes such copies; test_runbook_streams runs a
Kafka Streams app through the runbook after one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kafkatest import Kafka


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
    )


def wait_mid_round(kafka: Kafka, checkpoint: Path, into: str, proc: subprocess.Popen) -> None:
    """Until a round is in flight after one settled, and its transactions are writing:
    the destination's records in open transactions (its high watermarks past its last
    stable offsets) grew since the last look.  Growing, a transaction is still being
    written, so it is not committed yet: a kill leaves it to be aborted.  (Records in
    open transactions that do not grow may be a committed one's, its markers not yet
    written.)  A chunk's transaction is open for a fraction of a second, so the ends
    are asked every 10 ms, of two consumers kept open."""
    deadline = time.monotonic() + 240
    seen = 0
    with _Ends(kafka, into) as ends:
        while time.monotonic() < deadline and proc.poll() is None:
            state = read_state(checkpoint)
            settled = sum(int(n) for n in state.get("next", {}).values())
            now = ends.uncommitted()
            if state.get("pending") and settled and now > seen > 0:
                return
            seen = now
            time.sleep(0.01)
    raise AssertionError(f"no round was in flight (exit {proc.poll()})")


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
    os.killpg(proc.pid, signal.SIGKILL)
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
