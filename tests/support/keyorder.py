"""Keyed records written and read in order, for real: the plain consumer groups' runbook
tests (tests/integration/test_runbook_groups.py, test_runbook_loss.py).

A :class:`Producer` (kafka-python's, whose default partitioner is the Java client's
murmur2 rule) writes ``<key>:<seq>`` for every key, round after round, and records from
each record's own metadata where it went.  A :class:`Reader` is a group's member, Kafka's
own console consumer, recording the sequence numbers of each key in the order it printed
them.  :func:`execute` runs a generated ``sh`` runbook with ``--execute`` the way an
operator does, acting at its manual steps.  Expected values come from the producer's
metadata and the consumers' output, never from migcheck.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from itertools import pairwise
from pathlib import Path

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError
from kafkatest import KAFKA_LOCAL, Kafka
from runbookops import plain_tools, run_script

KEYS = [f"key-{i}" for i in range(40)]


class Producer:
    """A thread writing ``<key>:<seq>`` for every key, one round per ``interval``, in
    order per key (one request in flight), until stopped or, given ``rounds``, for that
    many rounds.  ``partitions``: where each key's records went; ``placed``: each record's
    partition by (key, seq), from the producer's own record metadata."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        seq: int = 0,
        interval: float = 0.05,
        keys: Iterable[str] = KEYS,
        rounds: int | None = None,
    ) -> None:
        self.bootstrap, self.topic, self.seq, self.interval = bootstrap, topic, seq, interval
        self.keys = list(keys)
        self.last = None if rounds is None else seq + rounds
        self.partitions: dict[str, set[int]] = {k: set() for k in self.keys}
        self.placed: dict[tuple[str, int], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _placed(self, key: str, seq: int, partition: int) -> None:
        self.partitions[key].add(partition)
        self.placed[(key, seq)] = partition

    def _run(self) -> None:
        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap,
            metadata_max_age_ms=1000,
            max_in_flight_requests_per_connection=1,
            batch_size=16,  # a batch per record: small fetches return a few records
            linger_ms=0,
        )
        try:
            while not self._stop.is_set() and self.seq != self.last:
                for key in self.keys:
                    future = producer.send(
                        self.topic, key=key.encode(), value=f"{key}:{self.seq}".encode()
                    )
                    future.add_callback(
                        lambda md, k=key, s=self.seq: self._placed(k, s, md.partition)
                    )
                producer.flush()
                self.seq += 1
                time.sleep(self.interval)
        finally:
            producer.close()

    def stop(self) -> int:
        """Stop after the current round; the rounds written (the next sequence number)."""
        self._stop.set()
        return self.join()

    def join(self, timeout: float = 60) -> int:
        """Until its rounds are written; the next sequence number."""
        self._thread.join(timeout=timeout)
        assert not self._thread.is_alive(), f"the producer still writes after {timeout} s"
        return self.seq


def out_of_order(order: dict[str, list[int]]) -> set[str]:
    """The keys whose sequence numbers were not seen strictly increasing."""
    return {k for k, seqs in order.items() if any(a >= b for a, b in pairwise(seqs))}


#: The console consumer's settings the ordering test gives its readers: from the start,
#: new partitions seen at once, frequent commits, short fetch waits.
EAGER = (
    "auto.offset.reset=earliest",
    "metadata.max.age.ms=1000",  # sees the new partitions at once
    "auto.commit.interval.ms=200",
    "fetch.max.wait.ms=50",
)


class Reader:
    """A group's one member, Kafka's own console consumer (a JVM of its own), and a thread
    recording, per key, the sequence numbers in the order it printed them; a record seen
    again (redelivered after a rebalance) counts once.  ``settings`` are its consumer
    properties (``--command-property``); those not given keep the Java client's defaults.

    Kafka's Java consumer, the client most plain consumers run: kafka-python's consumer,
    used here before, now and then never completed a rejoin on CI's loaded two cores
    (after the topic first appeared in its metadata, or after the alter), whatever the
    runbook did.  A busy group's thread reads the consumer's output slower than the
    producer writes; the pipe fills, the consumer blocks between polls, and its group
    lags as a slow application's would.
    """

    def __init__(
        self,
        kafka: Kafka,
        topic: str,
        group: str,
        small_fetches: bool = False,
        settings: Iterable[str] = EAGER,
    ) -> None:
        self.group, self.small = group, small_fetches
        self.order: dict[str, list[int]] = {k: [] for k in KEYS}
        self.read: set[tuple[int, int]] = set()
        settings = list(settings)
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
                self.order.setdefault(key, []).append(int(seq))
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
        return out_of_order(self.order)


def until_committed(kafka: Kafka, topic: str, groups: list[str]) -> None:
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


def until_lagging(kafka: Kafka, topic: str, group: str, at_least: int = 100) -> int:
    """Until ``group``'s committed offsets on ``topic`` trail its end by ``at_least``
    records: a busy group lags only once its console consumer's pipe has filled, some
    seconds after it starts.  Its lag then."""
    from kafka import KafkaConsumer, TopicPartition

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap)
    try:
        deadline = time.monotonic() + 120  # a hang guard
        while True:
            offsets = admin.list_group_offsets([group]).get(group, {})
            committed = {tp: m.offset for tp, m in offsets.items() if tp.topic == topic}
            ends = consumer.end_offsets([TopicPartition(topic, p) for p in
                                         consumer.partitions_for_topic(topic) or ()])  # fmt: skip
            lag = sum(end - committed.get(tp, 0) for tp, end in ends.items())
            if lag >= at_least:
                return lag
            assert time.monotonic() < deadline, f"{group} never lagged: {lag}"
            time.sleep(0.2)
    finally:
        admin.close()
        consumer.close()


def partition_count(kafka: Kafka, topic: str) -> int:
    """The topic's partition count, as Kafka's kafka-topics describes it."""
    return kafka.partition_count(topic)


def execute(
    script: Path,
    work: Path,
    at_manual: Callable[[str], None] = lambda line: None,
    yes: bool = False,
    timeout: float = 300,
) -> tuple[int, str]:
    """Runs the script with ``--execute`` (``yes``: and ``--yes``) and Kafka's tools as
    they are (:func:`runbookops.run_script`), its work directory ``work``: at each
    ``MANUAL:`` line ``at_manual`` acts as the operator, who then answers ``y``."""
    env = {**os.environ, **plain_tools(), "MIGCHECK_RUNBOOK_DIR": str(work)}

    def answer(line: str) -> bool:
        at_manual(line)
        return True

    return run_script(script, env, answer, yes=yes, timeout=timeout)
