"""The plain consumer groups' runbook, run for real: per-key order kept under load.

A producer (kafka-python's, whose default partitioner is the Java client's murmur2 rule)
writes ``<key>:<seq>`` for 40 keys, round after round, while two consumer groups read
the topic with Kafka's own console consumer (the Java consumer, subscribed, a metadata
age of 1 s so they see new partitions at once, ``auto.offset.reset=earliest``), each
member a JVM of its own.  Each consumer records the order in which it sees each key's sequence
numbers.  One group is busy: it reads in small fetches (a few records per partition
each) and slower than the producer writes, so it lags under load and interleaves the
partitions.

- The runbook (``--format sh``, run with ``--execute``, its manual steps answered as an
  operator: the producer stopped at "Pause", restarted at "Resume"), executed under
  load, keeps every key in order in both groups, with none missing.
- The naive alter under load (the producer keeps writing, one group stopped and lagging
  when ``kafka-topics --alter`` runs, then started) breaks the order, and only for keys
  whose partition changed (kafka-python's murmur2 is the oracle, never migcheck).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError
from kafkatest import KAFKA_LOCAL, Kafka
from oracles import java_partition, run_cli
from streamsapp import StreamsApp

pytestmark = pytest.mark.kafka

BIN = Path(sys.executable).parent
KEYS = [f"key-{i}" for i in range(40)]
OLD, NEW = 3, 6


def moved(key: str) -> bool:
    """Whether the Java producer's rule sends ``key`` elsewhere after the alter."""
    return java_partition(key.encode(), OLD) != java_partition(key.encode(), NEW)


class Producer:
    """A thread writing ``<key>:<seq>`` for every key, one round per ``interval``, in
    order per key (one request in flight); it records where each key's records went."""

    def __init__(self, bootstrap: str, topic: str, seq: int = 0, interval: float = 0.05) -> None:
        self.bootstrap, self.topic, self.seq, self.interval = bootstrap, topic, seq, interval
        self.partitions: dict[str, set[int]] = {k: set() for k in KEYS}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap,
            metadata_max_age_ms=1000,
            max_in_flight_requests_per_connection=1,
            batch_size=16,  # a batch per record: small fetches return a few records
            linger_ms=0,
        )
        try:
            while not self._stop.is_set():
                for key in KEYS:
                    future = producer.send(
                        self.topic, key=key.encode(), value=f"{key}:{self.seq}".encode()
                    )
                    future.add_callback(lambda md, k=key: self.partitions[k].add(md.partition))
                producer.flush()
                self.seq += 1
                time.sleep(self.interval)
        finally:
            producer.close()

    def stop(self) -> int:
        """Stop after the current round; the rounds written (the next sequence number)."""
        self._stop.set()
        self._thread.join(timeout=30)
        return self.seq


class Reader:
    """A group's one member, Kafka's own console consumer (a JVM of its own), and a thread
    recording, per key, the sequence numbers in the order it printed them; a record seen
    again (redelivered after a rebalance) counts once.

    Kafka's Java consumer, the client most plain consumers run: kafka-python's consumer,
    used here before, now and then never completed a rejoin on CI's loaded two cores
    (after the topic first appeared in its metadata, or after the alter), whatever the
    runbook did.  A busy group's thread reads the consumer's output slower than the
    producer writes; the pipe fills, the consumer blocks between polls, and its group
    lags as a slow application's would.
    """

    def __init__(self, kafka: Kafka, topic: str, group: str, small_fetches: bool) -> None:
        self.group, self.small = group, small_fetches
        self.order: dict[str, list[int]] = {k: [] for k in KEYS}
        self.read: set[tuple[int, int]] = set()
        settings = [
            "auto.offset.reset=earliest",
            "metadata.max.age.ms=1000",  # sees the new partitions at once
            "auto.commit.interval.ms=200",
            "fetch.max.wait.ms=50",
        ]
        if small_fetches:  # a few records per partition per fetch: partitions interleave
            settings += ["max.partition.fetch.bytes=300", "max.poll.records=5"]
        args = [str(KAFKA_LOCAL), "tool", "kafka-console-consumer"]
        args += ["--bootstrap-server", kafka.bootstrap, "--topic", topic, "--group", group]
        args += ["--formatter-property", "print.partition=true"]
        args += ["--formatter-property", "print.offset=true"]
        for setting in settings:
            args += ["--command-property", setting]
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """Each ``Partition:P<TAB>Offset:O<TAB><key>:<seq>`` line (others are the tool's
        notices); a busy group at most 300 records/s."""
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if not line.startswith("Partition:"):
                continue
            fields = line.rstrip("\n").split("\t")
            partition, offset = int(fields[0].split(":")[1]), int(fields[1].split(":")[1])
            if (partition, offset) not in self.read:
                key, seq = fields[2].split(":")
                self.order[key].append(int(seq))
                self.read.add((partition, offset))
            if self.small:
                time.sleep(0.003)

    def wait_for(self, records: int, timeout: float = 180) -> None:
        """Until this group has read ``records``: a hang guard, generous because a loaded
        machine (CI's two cores) can stall a client's requests until they time out and
        it reconnects and rejoins (seen once: "No node available", a rebalance)."""
        deadline = time.monotonic() + timeout
        while len(self.read) < records:
            assert time.monotonic() < deadline, (
                f"{self.group} read {len(self.read)} of {records}; per partition, records read"
                f" {self.per_partition()}; its process exited {self._proc.poll()}"
            )
            time.sleep(0.2)

    def per_partition(self) -> dict[int, int]:
        """Records read per partition (for a failure's message)."""
        counts: dict[int, int] = {}
        for partition, _ in list(self.read):
            counts[partition] = counts.get(partition, 0) + 1
        return dict(sorted(counts.items()))

    def stop(self) -> None:
        """SIGTERM: the tool's shutdown hook closes its consumer, which leaves the group,
        as an operator stops it."""
        self._proc.terminate()
        self._proc.wait(timeout=30)
        self._thread.join(timeout=30)

    def out_of_order(self) -> set[str]:
        """The keys whose sequence numbers this group did not see strictly increasing."""
        return {k for k, seqs in self.order.items() if any(a >= b for a, b in pairwise(seqs))}


@contextmanager
def readers(kafka: Kafka, topic: str, *groups: tuple[str, bool]) -> Iterator[list[Reader]]:
    started = [Reader(kafka, topic, g, small) for g, small in groups]
    try:
        yield started
    finally:
        for reader in started:
            reader.stop()


def _until_committed(kafka: Kafka, topic: str, groups: list[str]) -> None:
    """Until every group has committed an offset on ``topic`` (discovery finds it then)."""
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        deadline = time.monotonic() + 180  # a hang guard: a loaded machine joins groups slowly
        while True:
            try:
                offsets = admin.list_group_offsets(groups)
            except KafkaError as e:  # a fresh broker's offsets topic not yet led: retriable
                if not e.retriable:
                    raise
                offsets = {}
            if all(any(tp.topic == topic for tp in offsets.get(g, {})) for g in groups):
                return
            assert time.monotonic() < deadline, f"no committed offsets: {offsets}"
            time.sleep(0.2)
    finally:
        admin.close()


def _count(kafka: Kafka, topic: str) -> int:
    rc, out, err = kafka.tool(
        "kafka-topics", "--bootstrap-server", kafka.bootstrap, "--describe", "--topic", topic
    )
    assert rc == 0, err
    return int(out.split("PartitionCount:")[1].split()[0])


class Operator:
    """Runs the script with --execute, answering its manual steps: at "Pause" it stops the
    producer, at "Resume" it starts a new one (fresh metadata) where the first stopped."""

    def __init__(self, kafka: Kafka, topic: str, producer: Producer) -> None:
        self.kafka, self.topic, self.producer = kafka, topic, producer

    def run(self, script: Path, work: Path) -> tuple[int, str]:
        env = {
            **os.environ,
            "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool",
            "MIGCHECK_RUNBOOK_DIR": str(work),
        }
        proc = subprocess.Popen(
            ["bash", str(script), "--execute"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        seen: list[str] = []
        for line in proc.stdout:
            seen.append(line)
            if "MANUAL: Pause every producer" in line:
                self.rounds = self.producer.stop()
            elif "MANUAL: Resume every producer" in line:
                self.producer = Producer(self.kafka.bootstrap, self.topic, seq=self.rounds)
            if "MANUAL:" in line:
                proc.stdin.write("y\n")
                proc.stdin.flush()
        return proc.wait(timeout=300), "".join(seen)


def test_the_runbook_keeps_every_key_in_order_in_both_groups_under_load(
    kafka: Kafka, tmp_path: Path
) -> None:
    topic = kafka.create_topic("ordered", OLD)
    steady, busy = kafka.unique("steady"), kafka.unique("busy")
    with readers(kafka, topic, (steady, False), (busy, True)) as groups:
        operator = Operator(kafka, topic, Producer(kafka.bootstrap, topic))
        _until_committed(kafka, topic, [steady, busy])

        # no --group: every group with committed offsets on the topic
        p = run_cli(
            "runbook",
            "--bootstrap-server",
            kafka.bootstrap,
            "--topic",
            topic,
            "--to",
            str(NEW),
            "--format",
            "sh",
            "--lag-timeout",
            "90",
            "--assign-timeout",
            "60",
        )
        assert p.returncode == 0, p.stderr
        header = [ln for ln in p.stdout.splitlines() if ln.startswith("# ")]
        assert "found by their committed offsets on it" in header[0]
        assert sorted(ln.split(":")[0][2:] for ln in header if " on " + topic in ln) == sorted(
            [steady, busy]
        )
        script = tmp_path / "runbook.sh"
        script.write_text(p.stdout, encoding="utf-8")
        lint = subprocess.run([str(BIN / "shellcheck"), str(script)], capture_output=True)
        assert lint.returncode == 0, lint.stdout

        code, out = operator.run(script, tmp_path / "work")
        assert code == 0, out
        assert "Runbook complete." in out
        lagged = re.search(rf"{busy}: members 1, lag (\d+) on {topic}", out)
        assert lagged and int(lagged[1]) > 0, out  # the busy group lagged under load
        assert f"lag of {busy} on {topic}: 0" in out
        assert f"{busy} owns all {NEW} partitions of {topic}" in out
        time.sleep(2)  # load after the change
        rounds = operator.producer.stop()
        for reader in groups:
            reader.wait_for(rounds * len(KEYS))

    assert _count(kafka, topic) == NEW
    placed = operator.producer.partitions
    assert any(max(placed[k]) >= OLD for k in KEYS if moved(k))  # moved keys did move
    for reader in groups:
        assert reader.out_of_order() == set(), reader.group
        assert all(reader.order[k] == list(range(rounds)) for k in KEYS), reader.group


def test_the_naive_alter_under_load_breaks_the_order_of_moved_keys_only(
    kafka: Kafka, tmp_path: Path
) -> None:
    topic = kafka.create_topic("naive", OLD)
    steady, lagging = kafka.unique("steady"), kafka.unique("lagging")
    with readers(kafka, topic, (steady, False)) as groups:
        producer = Producer(kafka.bootstrap, topic)
        time.sleep(1.5)  # records accumulate for the stopped group
        rc, _, err = kafka.tool(
            "kafka-topics",
            "--bootstrap-server",
            kafka.bootstrap,
            "--alter",
            "--topic",
            topic,
            "--partitions",
            str(NEW),
        )
        assert rc == 0, err
        deadline = time.monotonic() + 30  # the producer keeps writing, now to new partitions
        while not any(max(producer.partitions[k], default=0) >= OLD for k in KEYS):
            assert time.monotonic() < deadline, "the producer never used a new partition"
            time.sleep(0.1)
        time.sleep(1)
        rounds = producer.stop()
        groups.append(Reader(kafka, topic, lagging, small_fetches=True))
        for reader in groups:
            reader.wait_for(rounds * len(KEYS))

    late = groups[1]
    assert late.out_of_order(), "the lagging group saw every key in order"
    assert all(moved(k) for k in late.out_of_order()), late.out_of_order()
    assert all(moved(k) for k in groups[0].out_of_order())
    for reader in groups:  # out of order, but nothing lost
        assert all(sorted(reader.order[k]) == list(range(rounds)) for k in KEYS), reader.group


def test_a_streams_application_is_refused_with_its_option(kafka: Kafka) -> None:
    """A real Kafka Streams app's group (stopped: its group is Empty, its changelog stays)
    is found reading the topic and refused, named or found."""
    app = StreamsApp(kafka, "count")
    app.produce(app.input, [(k, "v") for k in KEYS])
    assert app.run().code == 0
    base = ["runbook", "--bootstrap-server", kafka.bootstrap, "--topic", app.input, "--to", "6"]
    for extra in ([], ["--group", app.app_id]):
        p = run_cli(*base, *extra)
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr.startswith(f"migcheck: error: group '{app.app_id}' is a Kafka Streams")
        assert f"use --application-id {app.app_id} for its runbook" in p.stderr
        assert p.stderr.count("\n") == 1, p.stderr
