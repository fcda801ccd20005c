"""Drive a real Quix Streams app (fixtures/quix/counter.py) through an alter.

Quix Streams comes from PyPI at :data:`QUIXSTREAMS`, in a virtualenv of its own made
once per machine (``ensure_venv``): the framework as a new user installs it, never
migcheck's code.  Expected outcomes come from the app itself (its crash, the counts it
emits) and from the records the test produced, never from migcheck.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest import REPO, Kafka, run, state_dir
from sparkcluster import base_python, ensure_venv

#: The release the verdicts' quotes are checked against (the issue's, 3.28.1).
QUIXSTREAMS = "quixstreams==3.28.1"
COUNTER = REPO / "fixtures" / "quix" / "counter.py"


def quix_python() -> str:
    """The interpreter of the machine's Quix Streams virtualenv."""
    venv = ensure_venv(state_dir() / "quix" / QUIXSTREAMS.replace("==", "-"), base_python(),
                       [QUIXSTREAMS])  # fmt: skip
    return str(venv / "bin" / "python")


@dataclass(frozen=True)
class QuixRun:
    code: int
    counts: list[tuple[str, int]]  # (key, count) in the order the app emitted them
    stderr: str

    def last(self) -> dict[str, int]:
        """Each key's last emitted count: what the app's state says of it."""
        return dict(self.counts)


@dataclass
class QuixApp:
    """One Quix count app: its consumer group, input topic and state directory."""

    kafka: Kafka
    changelog: bool = True
    input_partitions: int = 3
    group: str = ""
    input: str = ""  # an existing topic to read, shared with other readers; default a new one
    state: Path = field(default_factory=Path)

    def __post_init__(self) -> None:
        self.group = self.kafka.unique("quix-counter")
        self.input = self.input or self.kafka.create_topic(
            f"{self.group}-orders", self.input_partitions
        )
        self.state = state_dir() / "quix-state" / self.group

    @property
    def changelog_topic(self) -> str:
        """Quix's name for the default store's changelog (its TopicManager's rule)."""
        return f"changelog__{self.group}--{self.input}--default"

    def produce(self, records: list[tuple[str, str]]) -> None:
        """Records placed by Kafka's Java producer's default partitioner (murmur2), as
        Quix's own producer (librdkafka's murmur2) places them."""
        self.kafka.produce(self.input, [(k.encode(), v.encode(), None) for k, v in records])

    def command(self, idle: float = 5.0, clear_state: bool = False,
                refresh_ms: int | None = None, topic: str | None = None,
                offset_reset: str = "earliest") -> list[str]:  # fmt: skip
        """The app's command line; ``topic`` is its input (the app's own by default)."""
        return [
            quix_python(), str(COUNTER), "--bootstrap-server", self.kafka.bootstrap,
            "--group", self.group, "--topic", topic or self.input, "--state-dir",
            str(self.state), "--idle", str(idle), "--offset-reset", offset_reset,
            *([] if self.changelog else ["--no-changelog"]),
            *(["--clear-state"] if clear_state else []),
            *([] if refresh_ms is None else ["--refresh-ms", str(refresh_ms)]),
        ]  # fmt: skip

    def run(self, idle: float = 5.0, clear_state: bool = False, timeout: float = 180) -> QuixRun:
        """Run the app until its input is idle for ``idle`` s, or it crashes."""
        rc, out, err = run(self.command(idle, clear_state), timeout=timeout)
        return QuixRun(rc, _counts(out), err)

    def start(self, refresh_ms: int | None = None, idle: float = 0, topic: str | None = None,
              offset_reset: str = "earliest") -> subprocess.Popen[str]:  # fmt: skip
        """The app running in the background (``idle`` 0: no idle stop), for an alter under
        it, or started by an operator at a runbook's step."""
        command = self.command(idle, refresh_ms=refresh_ms, topic=topic, offset_reset=offset_reset)
        return subprocess.Popen(command, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)  # fmt: skip

    @staticmethod
    def stop(proc: subprocess.Popen[str], timeout: float = 60) -> QuixRun:
        """Stop a running app as Kubernetes does (SIGTERM, which Quix handles), unless it
        already exited."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=timeout)
        return QuixRun(proc.returncode, _counts(out), err)


def until_counted(proc: subprocess.Popen[str], records: int, timeout: float = 120) -> str:
    """Until the app started with :meth:`QuixApp.start` has printed ``records`` counts (it
    started, was assigned its partitions and counted them): the event a test waits on
    before it alters the input under the app, in place of a guess at how long that takes.
    Returns the output read; :meth:`QuixApp.stop` then returns the rest.  Read from the
    pipe itself, unbuffered, so that nothing read here is held back from ``stop``."""
    assert proc.stdout is not None
    fd, out, counted = proc.stdout.fileno(), b"", 0
    deadline = time.monotonic() + timeout
    while counted < records:
        left = deadline - time.monotonic()
        assert left > 0, f"the app counted {counted} of {records} records in {timeout} s"
        if not select.select([fd], [], [], left)[0]:
            continue
        data = os.read(fd, 1 << 16)
        assert data, f"the app exited after {counted} of {records} counts"
        out += data
        counted = sum(1 for line in out.split(b"\n")[:-1] if line.startswith(b"COUNT\t"))
    return out.decode()


def _counts(out: str) -> list[tuple[str, int]]:
    rows = [ln.split("\t") for ln in out.splitlines() if ln.startswith("COUNT\t")]
    return [(key, int(n)) for _, key, n in rows]


def true_counts(records: list[tuple[str, str]]) -> Counter[str]:
    """Each key's count from the records produced: what a correct app says."""
    return Counter(k for k, _ in records)
