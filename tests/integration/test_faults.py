"""Faults in the middle of a full scan: Ctrl-C, a topic deleted, the broker gone.

Each must end with one clear line on stderr, a non-zero exit, no traceback, no report
file that looks complete, and no Java or Python process of the run left behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kafkatest import KAFKA_LOCAL, Kafka

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def _fill(bootstrap: str, topic: str, records: int) -> None:
    """Keyed records by kcat in batches of at most 50 records (about 9 KiB): a fetch
    returns at least one whole batch, so the scan's 8 KiB fetches (:func:`_scan`) take
    one batch each, and the read lasts well past the fault however fast the reader
    gets (with kcat's default batches a full scan ended before the fault landed)."""
    lines = "".join(f"key-{i % 50_000}\t{'v' * (50 + i % 200)}\n" for i in range(records))
    subprocess.run(
        ["kcat", "-P", "-b", bootstrap, "-t", topic, "-K", "\t", "-X", "linger.ms=20",
         "-X", "batch.num.messages=50"],
        input=lines, text=True, check=True, timeout=300,
    )  # fmt: skip


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc, so no dependency is needed)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists()}


def _scan(bootstrap: str, topic: str, output: Path, tmp: Path) -> subprocess.Popen[str]:
    """A full scan made slow on purpose, through a client setting a user may pass (8 KiB
    fetches, of :func:`_fill`'s small batches): it still reads when the fault lands."""
    env = {**os.environ, "MIGCHECK_SPARK_LOG": str(tmp / "spark.log")}
    slow = tmp / "slow-fetches.properties"
    slow.write_text("max.partition.fetch.bytes=8192\nmax.poll.records=50\n")
    return subprocess.Popen(
        [sys.executable, "-m", "migcheck", "analyze", "--bootstrap-server", bootstrap,
         "--topic", topic, "--to", "32", "--full", "--output", str(output),
         "--command-config", str(slow)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _wait_for_spark(proc: subprocess.Popen[str], settle: float) -> set[int]:
    """Wait until the run's Spark JVM is up, then ``settle`` seconds into the scan."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        kids = _descendants(proc.pid)
        if any(b"java" in Path(f"/proc/{p}/cmdline").read_bytes() for p in _alive(kids)):
            time.sleep(settle)
            return _descendants(proc.pid)
        time.sleep(0.2)
    pytest.fail(f"no Spark JVM appeared (exit {proc.poll()})")


def _one_line_failure(proc: subprocess.Popen[str], output: Path, timeout: float) -> str:
    _, err = proc.communicate(timeout=timeout)
    assert proc.returncode != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("migcheck:"), err
    assert "Traceback" not in err
    assert not output.exists() and not list(output.parent.glob(f"{output.name}.tmp-*"))
    return lines[0]


def _nothing_left(pids: set[int]) -> None:
    deadline = time.monotonic() + 15
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pids), "processes of the run were left behind"


def test_ctrl_c_during_a_scan_exits_130_and_leaves_nothing(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("sigint", 4)
    _fill(kafka.bootstrap, topic, 1_000_000)
    output = tmp_path / "report.txt"
    proc = _scan(kafka.bootstrap, topic, output, tmp_path)
    pids = _wait_for_spark(proc, settle=7.0)  # past Spark's start, into the scan
    proc.send_signal(signal.SIGINT)
    line = _one_line_failure(proc, output, timeout=60)
    assert proc.returncode == 130 and "aborted" in line, line
    _nothing_left(pids)


def test_a_topic_deleted_during_the_scan(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("deleted", 4)
    _fill(kafka.bootstrap, topic, 1_000_000)
    output = tmp_path / "report.txt"
    proc = _scan(kafka.bootstrap, topic, output, tmp_path)
    pids = _wait_for_spark(proc, settle=7.0)  # into the scan
    rc, _, err = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--delete",
                            "--topic", topic)  # fmt: skip
    assert rc == 0, err
    line = _one_line_failure(proc, output, timeout=120)
    assert proc.returncode == 2
    assert f"{topic}-" in line and "was deleted during the read" in line, line
    _nothing_left(pids)


def test_the_broker_dying_mid_scan_fails_within_60s(tmp_path: Path) -> None:
    """A broker of its own (the shared one must live on), killed while Spark reads it."""
    env = {**os.environ, "MIGCHECK_KAFKA_HOME": str(tmp_path / "broker")}
    started = subprocess.run([str(KAFKA_LOCAL), "start"], env=env, capture_output=True,
                             text=True, check=True, timeout=180)  # fmt: skip
    bootstrap = started.stdout.split()[-1]
    try:
        topic = "doomed"
        subprocess.run([str(KAFKA_LOCAL), "tool", "kafka-topics", "--bootstrap-server",
                        bootstrap, "--create", "--topic", topic, "--partitions", "4"],
                       env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
        _fill(bootstrap, topic, 1_000_000)
        output = tmp_path / "report.txt"
        proc = _scan(bootstrap, topic, output, tmp_path)
        pids = _wait_for_spark(proc, settle=7.0)  # into the scan
        os.kill(int((tmp_path / "broker" / "broker.pid").read_text()), signal.SIGKILL)
        killed = time.monotonic()
        line = _one_line_failure(proc, output, timeout=120)
        assert time.monotonic() - killed < 60, "the issue's bound: 60 s"
        assert proc.returncode == 2
        # Spark's own output stays in the file the line names, never on the terminal
        assert str(tmp_path / "spark.log") in line, line
        assert "Using incubator modules" in (tmp_path / "spark.log").read_text(errors="replace")
        _nothing_left(pids)
    finally:
        subprocess.run([str(KAFKA_LOCAL), "stop"], env=env, capture_output=True, check=False)
        shutil.rmtree(tmp_path / "broker", ignore_errors=True)


def _marked(marker: str) -> set[int]:
    """Live processes whose command line holds ``marker``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def test_a_sample_failing_before_spark_leaves_no_jvm(tmp_path: Path) -> None:
    """Spark's JVM is launched once the reads are planned (and only if one needs it);
    when reading Kafka's metadata fails (no broker answers), the one line comes and no
    JVM was ever started."""
    marker = f"spark.migcheck.test={uuid.uuid4().hex}"  # on the JVM's command line
    env = {**os.environ, "MIGCHECK_SPARK_LOG": str(tmp_path / "spark.log")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "migcheck", "analyze", "--bootstrap-server", "127.0.0.1:1",
         "--topic", "orders", "--to", "8", "--conf", marker],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    launched = False
    while proc.poll() is None and time.monotonic() < deadline:
        launched = launched or bool(_marked(marker) - {proc.pid})  # not migcheck itself
        time.sleep(0.1)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert err.startswith("migcheck: error: cannot reach Kafka at 127.0.0.1:1"), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not launched and not _marked(marker), "a JVM was launched for a run that read nothing"
