"""Scale: 10,000 partitions, and 5 million distinct keys under a driver memory cap.

A topic of 10,000 partitions: metadata, planning and the report stay quick and readable.
It gets a broker of its own: 10,000 partitions hold about 10,000 open files and slow every
metadata call, which the shared broker's other tests should not pay for.  KRaft's controller
takes at most 10,000 records in one operation, so the topic is created with 5,000
partitions and then widened to 10,000, as an operator would have to do.  Keys are placed by
kcat's murmur2 (Kafka's Java rule); the expected flows come from kafka-python's murmur2.

5,000,000 distinct keys are scanned whole by a driver of 512 MiB: Spark aggregates per
key and never collects keys to the driver.  kcat places them by CRC-32 (librdkafka's
default), and zlib's CRC-32 gives the exact number that moves.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafkatest import KAFKA_LOCAL, Kafka
from oracles import crc_partition, java_partition, run_cli

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

PARTITIONS, TO, KEYS = 10_000, 12_000, 20_000
DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _tool(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KAFKA_LOCAL), "tool", *args], env=env, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The bootstrap address of a broker whose topic ``wide`` has 10,000 filled partitions."""
    home = tmp_path_factory.mktemp("wide-broker")
    env = {**os.environ, "MIGCHECK_KAFKA_HOME": str(home)}
    started = subprocess.run([str(KAFKA_LOCAL), "start"], env=env, capture_output=True,
                             text=True, check=True, timeout=180)  # fmt: skip
    bootstrap = started.stdout.split()[-1]
    try:
        topics = ["kafka-topics", "--bootstrap-server", bootstrap, "--topic", "wide"]
        assert _tool(env, *topics, "--create", "--partitions", "5000").returncode == 0
        assert _tool(env, *topics, "--alter", "--partitions", str(PARTITIONS)).returncode == 0
        _until_every_partition_answers(env, bootstrap)
        lines = "".join(f"key-{i}\tv{i}\n" for i in range(KEYS))
        subprocess.run(
            ["kcat", "-P", "-b", bootstrap, "-t", "wide", "-K", "\t", "-X",
             "partitioner=murmur2_random", "-X", "linger.ms=50"],
            input=lines, text=True, check=True, timeout=300,
        )  # fmt: skip
        yield bootstrap
    finally:
        # killed, not stopped: a clean shutdown flushes 10,000 logs (30 s) nobody reads again
        pid = home / "broker.pid"
        if pid.exists():
            os.kill(int(pid.read_text()), signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


def _until_every_partition_answers(env: dict[str, str], bootstrap: str) -> None:
    """New partitions get their leader a few seconds after the alter returns.  Their
    metadata is watched with kcat first: a JVM of kafka-get-offsets asking all 10,000
    partitions every 2 s slowed the broker it waited for (67 to 80 s, against 9 s of kcat's
    metadata, then one kafka-get-offsets)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and _leaders(bootstrap) < PARTITIONS:
        time.sleep(0.5)
    while time.monotonic() < deadline:
        got = _tool(env, "kafka-get-offsets", "--bootstrap-server", bootstrap, "--topic", "wide")
        if got.returncode == 0 and len(got.stdout.splitlines()) == PARTITIONS:
            return
        time.sleep(2)
    raise AssertionError("the 10,000 partitions never all had a leader")


def _leaders(bootstrap: str) -> int:
    """The partitions of ``wide`` with a leader and no error, in kcat's metadata."""
    listed = subprocess.run(["kcat", "-L", "-b", bootstrap, "-t", "wide", "-J"],
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    topics = json.loads(listed.stdout or "{}").get("topics") or [{}]
    parts = topics[0].get("partitions") or []
    return sum(1 for p in parts if p.get("leader", -1) >= 0 and not p.get("err"))


def test_a_10000_partition_topic_is_analyzed_whole_and_reported_readably(
    wide: str, tmp_path: Path
) -> None:
    report = tmp_path / "wide.json"
    r = run_cli("analyze", "--bootstrap-server", wide, "--topic", "wide", "--to", str(TO),
                "--format", "json", "--output", str(report))  # fmt: skip
    assert r.returncode == 0, r.stderr
    (t,) = json.loads(report.read_text(encoding="utf-8"))["topics"]
    assert t["current_partitions"] == PARTITIONS and len(t["partitions"]) == PARTITIONS
    assert t["records_scanned"] == KEYS and t["partitioner"] == "murmur2"
    keys = [f"key-{i}".encode() for i in range(KEYS)]
    flows = Counter((java_partition(k, PARTITIONS), java_partition(k, TO)) for k in keys)
    (c,) = t["candidates"]
    assert c["matrix"] is None  # 120 million cells, nearly all empty
    assert c["flows"] == sorted([p, q, n] for (p, q), n in flows.items())
    assert c["moved_keys"] == sum(n for (p, q), n in flows.items() if p != q)
    assert len(c["load"]) == TO

    text = run_cli("render", str(report))
    assert text.returncode == 0, text.stderr
    assert len(text.stdout.splitlines()) < 60, text.stdout
    assert "10000 x 12000 matrix: too large to draw" in text.stdout
    markdown = run_cli("render", "--format", "markdown", str(report))
    assert markdown.returncode == 0, markdown.stderr
    assert len(markdown.stdout) < 100_000 and "<svg" not in markdown.stdout
    assert "nonzero cells are the flows of --format json" in markdown.stdout


def test_planning_10000_tasks_is_a_page() -> None:
    count = str(DESCRIBE / "count.txt")
    for fmt in ("text", "markdown"):
        p = run_cli("plan", "--topology", count, "--partitions", f"orders={PARTITIONS}",
                    "--format", fmt)  # fmt: skip
        assert p.returncode == 0, p.stderr
        assert len(p.stdout.splitlines()) < 80, p.stdout
        assert "10000" in p.stdout


def test_5_million_distinct_keys_under_a_512m_driver(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("distinct", 12)
    keys = [f"k{i:x}" for i in range(5_000_000)]
    subprocess.run(
        ["kcat", "-P", "-b", kafka.bootstrap, "-t", topic, "-K", "\t", "-X", "linger.ms=50",
         "-X", "batch.num.messages=10000", "-X", "queue.buffering.max.messages=1000000"],
        input="".join(f"{k}\tv\n" for k in keys), text=True, check=True, timeout=300,
    )  # fmt: skip
    report = tmp_path / "distinct.json"
    r = run_cli("analyze", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to",
                "16", "--full", "--conf", "spark.driver.memory=512m", "--format", "json",
                "--output", str(report), timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    (t,) = json.loads(report.read_text(encoding="utf-8"))["topics"]
    assert t["records_scanned"] == t["distinct_keys"] == len(keys)
    assert t["partitioner"] == "consistent_random" and t["conformance"] == 1.0
    moved = sum(crc_partition(k.encode(), 12) != crc_partition(k.encode(), 16) for k in keys)
    assert t["candidates"][0]["moved_keys"] == moved
