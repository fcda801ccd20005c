"""Drive a real Faust app (fixtures/faust/counter.py) through an alter.

faust-streaming comes from PyPI at :data:`FAUST`, in a virtualenv of its own made once
per machine (``ensure_venv``): it pins ``click<8.4``, which migcheck's own environment
need not obey, and the framework is tried as a new user installs it, never with
migcheck's code.  Expected outcomes come from the app itself (its errors, the counts it
prints) and from the records the test produced, never from migcheck.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest import REPO, Kafka, run, state_dir
from sparkcluster import base_python, ensure_venv

#: The releases the verdict's quotes are checked against: faust-streaming with its
#: RocksDB store (rocksdict), and the aiokafka whose producer refuses an unknown partition.
FAUST = ["faust-streaming[rocksdict]==0.15.3", "aiokafka==0.14.0", "rocksdict==0.3.29"]
COUNTER = REPO / "fixtures" / "faust" / "counter.py"


def faust_python() -> str:
    """The interpreter of the machine's faust-streaming virtualenv."""
    name = FAUST[0].split("[")[0] + "-" + FAUST[0].split("==")[1]
    venv = ensure_venv(state_dir() / "faust" / name, base_python(), FAUST)
    return str(venv / "bin" / "python")


@dataclass(frozen=True)
class FaustRun:
    code: int
    counts: list[tuple[str, int]]  # (key, count) in the order the app printed them
    stderr: str

    def last(self) -> dict[str, int]:
        """Each key's last printed count: what the app's table says of it."""
        return dict(self.counts)


@dataclass
class FaustApp:
    """One Faust count app: its app id (its group), input topic and data directory."""

    kafka: Kafka
    input_partitions: int = 3
    store: str = "rocksdb://"  # the fixture's default, Faust's store for production
    table_key: str = "str"  # the fixture's --table-key: str (JSON in the changelog) or bytes
    app_id: str = ""
    input: str = ""
    data: Path = field(default_factory=Path)

    def __post_init__(self) -> None:
        self.app_id = self.kafka.unique("faust-counter")
        self.input = self.kafka.create_topic(f"{self.app_id}-orders", self.input_partitions)
        self.data = self.datadir(self.app_id)

    @staticmethod
    def datadir(app_id: str) -> Path:
        """The data directory of the worker under ``app_id``, one per id (made here:
        RocksDB makes no parent directory)."""
        data = state_dir() / "faust-data" / app_id
        data.mkdir(parents=True, exist_ok=True)
        return data

    @property
    def changelog_topic(self) -> str:
        """Faust's name for the table's changelog (Collection._changelog_topic_name)."""
        return f"{self.app_id}-counts-changelog"

    def produce(self, records: list[tuple[str, str]]) -> None:
        """Records placed by Kafka's Java producer's default partitioner (murmur2)."""
        self.kafka.produce(self.input, [(k.encode(), v.encode(), None) for k, v in records])

    def committed(self) -> int:
        """The records of the input the app's group committed, by Kafka's own tool."""
        rc, out, err = self.kafka.tool("kafka-consumer-groups", "--bootstrap-server",
                                       self.kafka.bootstrap, "--describe", "--group",
                                       self.app_id)  # fmt: skip
        assert rc == 0, err
        rows = [ln.split() for ln in out.splitlines()]
        return sum(int(r[3]) for r in rows if len(r) > 3 and r[1] == self.input and r[3] != "-")

    def command(
        self,
        idle: float = 3.0,
        refresh_ms: int | None = None,
        topic: str | None = None,
        partitions: int | None = None,
        guarantee: str | None = None,
        app_id: str | None = None,
    ) -> list[str]:
        """The worker's command line: on ``topic`` (the input by default) with
        ``partitions`` as its topic_partitions (the input's count by default),
        ``guarantee`` as its processing_guarantee (Faust's default if None), and under
        ``app_id`` with that id's own data directory (the app's by default)."""
        data = self.datadir(app_id) if app_id else self.data
        return [
            faust_python(), str(COUNTER), "--bootstrap-server", self.kafka.bootstrap,
            "--app-id", app_id or self.app_id, "--topic", topic or self.input,
            "--data-dir", str(data),
            "--partitions", str(partitions or self.input_partitions), "--store", self.store,
            "--table-key", self.table_key,
            "--idle", str(idle),
            *([] if refresh_ms is None else ["--metadata-max-age-ms", str(refresh_ms)]),
            *([] if guarantee is None else ["--processing-guarantee", guarantee]),
        ]  # fmt: skip

    def run(self, idle: float = 3.0, timeout: float = 120) -> FaustRun:
        """Run the worker until its input is idle for ``idle`` s (it then stops itself as
        SIGTERM stops it), or it exits."""
        rc, out, err = run(self.command(idle), timeout=timeout)
        return FaustRun(rc, _counts(out), err)

    def start(
        self,
        logs: Path,
        refresh_ms: int | None = None,
        topic: str | None = None,
        partitions: int | None = None,
        guarantee: str | None = None,
        app_id: str | None = None,
    ) -> Worker:
        """The worker running in the background (no idle stop), its output in ``logs``,
        its consumer's and producer's metadata refreshed every ``refresh_ms`` (Faust's
        default if None), on ``topic`` with ``partitions`` and ``guarantee``, under
        ``app_id`` (:meth:`command`)."""
        logs.mkdir(parents=True, exist_ok=True)
        out, err = logs / "stdout", logs / "stderr"
        command = self.command(0, refresh_ms, topic, partitions, guarantee, app_id)
        # faulthandler: a worker that will not stop is aborted with every thread's stack
        # on its stderr, so its log says where it hung (Worker.stop)
        env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
        with out.open("w", encoding="utf-8") as o, err.open("w", encoding="utf-8") as e:
            proc = subprocess.Popen(command, text=True, stdout=o, stderr=e, env=env)
        return Worker(proc, out, err)

    def run_until(self, logs: Path, lines: int, timeout: float = 120) -> FaustRun:
        """The worker run until it printed ``lines`` counts (or exits, or ``timeout`` s),
        then stopped as an operator stops it (SIGTERM): :meth:`run` without the idle
        seconds its own stop waits for, where the test knows how many records it counts.
        Its output is in ``logs``."""
        worker = self.start(logs)
        try:
            worker.wait(lines, timeout=timeout)
        finally:
            ran = worker.stop()
        return ran


@dataclass(frozen=True)
class Worker:
    """A worker in the background, its stdout and stderr in files (Faust logs much)."""

    proc: subprocess.Popen[str]
    out: Path
    err: Path

    def counted(self) -> list[tuple[str, int]]:
        """What the worker printed so far."""
        return _counts(self.out.read_text(encoding="utf-8"))

    def wait(self, lines: int, timeout: float = 60) -> None:
        """Until the worker printed ``lines`` counts, or it exits, or ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while len(self.counted()) < lines and self.proc.poll() is None:
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)

    def logged(self, texts: list[str], timeout: float) -> bool:
        """Whether the worker's log holds ``texts``, in this order, within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            log, at = self.err.read_text(encoding="utf-8"), 0
            for text in texts:
                at = log.find(text, at)
                if at < 0:
                    break
            else:
                return True
            time.sleep(0.5)
        return False

    def exited(self, timeout: float) -> bool:
        """Whether the worker exits by itself within ``timeout`` s."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self, timeout: float = 60) -> FaustRun:
        """Stop the worker as an operator does (SIGTERM, which Faust's worker handles),
        unless it already exited.  One that does not stop within ``timeout`` s fails the
        test with its log's end: aborted first (SIGABRT), so that faulthandler writes where
        each of its threads was, then killed; it never outlives the test."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            log = self.err.read_text(encoding="utf-8")
            raise AssertionError(
                f"the worker did not stop within {timeout} s of SIGTERM; it counted "
                f"{len(self.counted())} records; its log ends:\n{log[-6000:]}"
            ) from None
        stderr = self.err.read_text(encoding="utf-8")
        return FaustRun(self.proc.returncode, self.counted(), stderr)


def _counts(out: str) -> list[tuple[str, int]]:
    rows = [ln.split("\t") for ln in out.splitlines() if ln.startswith("COUNT\t")]
    return [(key, int(n)) for _, key, n in rows]


def true_counts(records: list[tuple[str, str]]) -> Counter[str]:
    """Each key's count from the records produced: what a correct app says."""
    return Counter(k for k, _ in records)
