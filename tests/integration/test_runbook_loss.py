"""The plain consumer groups' runbook loses no record of the new partitions, for real.

A consumer that meets a partition with no committed offset starts where its
``auto.offset.reset`` says, ``latest`` by default in kafka-python and Kafka's Java
client: after the records already there.  A producer (kafka-python's) writes
``<key>:<seq>`` for 40 keys, round after round, over the 6 partitions after the change;
where each record went comes from the producer's own record metadata, what each group
got from the consumers themselves (kafka-python's ``KafkaConsumer`` with its defaults,
and Kafka's console consumer, the Java client), never from migcheck.

1. The loss, shown: a stopped group with lag 0, a naive ``kafka-topics --alter``, the
   records written, the group restarted: it gets every record of the old partitions and
   none of the new ones.
2. The runbook (``--format sh``, ``--execute --yes``; the producer writes only once the
   script says "Resume") with the group stopped: it commits the new partitions' start
   for the group, which then gets every record, each key in order.
3. The same with the groups running through the change (a kafka-python and a Java
   consumer, both with the defaults but for a metadata age of 1 s): they commit the new
   partitions themselves, the runbook waits for that, and nothing is lost.
4. A group whose member never commits stops the runbook in one line; a runbook written
   with ``--accept-loss-risk`` for it resumes there and goes on.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient
from kafka.errors import CommitFailedError, RebalanceInProgressError
from kafkatest import REJOIN_AFTER_S, Kafka, subscribe_once_known
from keyorder import KEYS, Producer, Reader, execute, until_committed
from oracles import run_cli

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]

OLD, NEW = 3, 6
BEFORE, AFTER = 5, 15  # rounds of every key written before the change and after it


class PyReader:
    """A group's one member, kafka-python's ``KafkaConsumer`` with its defaults
    (``auto_offset_reset='latest'``, auto-commit every 5 s) but for ``options``, polling
    in a thread of its own; it records, per key, the sequence numbers in the order it got
    them (a record redelivered after a rebalance counts once).

    ``settle``: at its first assignment it takes its position on each partition and
    commits it, as a group that ran before has committed offsets: records written after
    that are its to read, whatever its reset policy."""

    def __init__(
        self, kafka: Kafka, topic: str, group: str, settle: bool = False, **options: object
    ) -> None:
        self.group, self.settle = group, settle
        self.order: dict[str, list[int]] = {k: [] for k in KEYS}
        self.read: set[tuple[int, int]] = set()
        self.assigned: frozenset[int] = frozenset()
        self.last_read = time.monotonic()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self.kafka, self.topic, self._options = kafka, topic, options
        self.rejoins = 0
        self._consumer = self._join()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _join(self) -> KafkaConsumer:
        consumer = KafkaConsumer(
            bootstrap_servers=self.kafka.bootstrap, group_id=self.group, **self._options
        )
        subscribe_once_known(consumer, self.topic)
        return consumer

    def _run(self) -> None:
        try:
            self._poll()
        except BaseException as e:  # reported by the test thread (_alive)
            self.error = e
        finally:
            self._consumer.close()  # commits first when auto-commit is on, and leaves the group

    def _poll(self) -> None:
        """Polls until stopped.  As an operator restarts a stuck consumer, it restarts
        (``close()``, which commits, then a new member) one that owned less than every
        partition its metadata lists for ``REJOIN_AFTER_S``: the group's one member owns
        them all once it has rebalanced.  kafka-python 3.0.12 under CI's load once kept a
        member on the old three partitions for minutes after the runbook saw it own all
        six (the run of 3cc8a40)."""
        whole = time.monotonic()  # when it last owned every partition, or (re)joined
        while not self._stop.is_set():
            if time.monotonic() - whole > REJOIN_AFTER_S:
                self._consumer.close()
                self._consumer, whole = self._join(), time.monotonic()
                self.rejoins += 1
            consumer = self._consumer
            for records in consumer.poll(timeout_ms=200).values():
                for r in records:
                    if (r.partition, r.offset) not in self.read:
                        key, seq = r.value.decode().split(":")
                        self.order[key].append(int(seq))
                        self.read.add((r.partition, r.offset))
                        self.last_read = time.monotonic()
            self.assigned = frozenset(tp.partition for tp in consumer.assignment())
            if self.assigned and self.assigned >= (
                consumer.partitions_for_topic(self.topic) or set()
            ):
                whole = time.monotonic()
            if self.assigned and not self.ready.is_set():
                if self.settle and not self._committed(consumer):
                    continue  # a rebalance came first: poll, then commit again
                self.ready.set()

    @staticmethod
    def _committed(consumer: KafkaConsumer) -> bool:
        """Commit the position on each assigned partition; False when a rebalance is in
        progress (kafka-python says to poll and commit again, as an application does)."""
        for tp in consumer.assignment():
            consumer.position(tp)
        try:
            consumer.commit()
        except (RebalanceInProgressError, CommitFailedError):
            return False
        return True

    def _alive(self) -> None:
        assert self.error is None, f"{self.group}'s consumer failed: {self.error!r}"
        assert self._thread.is_alive(), f"{self.group}'s consumer stopped"

    def wait_ready(self, timeout: float = 120) -> None:
        """Until it owns partitions (and, settling, has committed its positions)."""
        deadline = time.monotonic() + timeout
        while not self.ready.wait(0.2):
            self._alive()
            assert time.monotonic() < deadline, (
                f"{self.group} was not ready: owns {sorted(self.assigned)} after "
                f"{self.rejoins} rejoins\n{self.kafka.diagnose()}"
            )

    def wait_for(self, records: int, timeout: float = 180) -> None:
        """Until it has read ``records``: a hang guard for a loaded machine."""
        deadline = time.monotonic() + timeout
        while len(self.read) < records:
            self._alive()
            assert time.monotonic() < deadline, (
                f"{self.group} read {len(self.read)} of {records}; owns {sorted(self.assigned)}"
            )
            time.sleep(0.2)

    def drain(self, partitions: int, idle: float = 4, timeout: float = 120) -> None:
        """Reads until it owns every partition and has got nothing for ``idle`` s."""
        deadline = time.monotonic() + timeout
        while len(self.assigned) < partitions or time.monotonic() - self.last_read < idle:
            self._alive()
            assert time.monotonic() < deadline, f"{self.group} owns {sorted(self.assigned)}"
            time.sleep(0.2)

    def got(self) -> set[tuple[str, int]]:
        """Every (key, seq) it read."""
        return {(k, s) for k, seqs in self.order.items() for s in seqs}

    def stop(self) -> None:
        """``close()``, as an application stopping: it commits (with auto-commit) and
        leaves the group."""
        self._stop.set()
        self._thread.join(timeout=60)
        assert self.error is None, f"{self.group}'s consumer failed: {self.error!r}"


def _lag(kafka: Kafka, group: str, topic: str) -> int:
    """The group's lag on ``topic``: end offsets less committed offsets, from kafka-python's
    admin and consumer clients (a partition without an offset counts its whole end)."""
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    ends_of = KafkaConsumer(bootstrap_servers=kafka.bootstrap)
    try:
        offsets = admin.list_group_offsets([group])[group]
        committed = {tp: m.offset for tp, m in offsets.items()}
        ends = ends_of.end_offsets([tp for tp in committed if tp.topic == topic])
        return sum(end - committed[tp] for tp, end in ends.items())
    finally:
        ends_of.close()
        admin.close()


def _settled_group(kafka: Kafka, topic: str, group: str, **options: object) -> PyReader:
    """A kafka-python group that has read the first ``BEFORE`` rounds and committed them."""
    reader = PyReader(kafka, topic, group, settle=True, **options)
    reader.wait_ready()
    Producer(kafka.bootstrap, topic, rounds=BEFORE).join()
    reader.wait_for(BEFORE * len(KEYS))
    return reader


def _runbook(kafka: Kafka, topic: str, path: Path, *args: str) -> Path:
    """``migcheck runbook --format sh`` for the groups named in ``args``, written to
    ``path``; this checkout's code writes it (its offsets step is there)."""
    p = run_cli(
        "runbook", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to", str(NEW),
        "--format", "sh", "--lag-timeout", "180", "--assign-timeout", "180", *args,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "check ensure_offsets " in p.stdout
    path.write_text(p.stdout, encoding="utf-8")
    return path


class Resume:
    """The operator's part with ``--yes``: at "Resume every producer" the producer writes
    the ``AFTER`` rounds, nothing before."""

    def __init__(self, kafka: Kafka, topic: str) -> None:
        self.kafka, self.topic = kafka, topic
        self.producer: Producer | None = None

    def __call__(self, line: str) -> None:
        if "MANUAL: Resume every producer" in line and self.producer is None:
            self.producer = Producer(self.kafka.bootstrap, self.topic, seq=BEFORE, rounds=AFTER)

    def placed(self) -> dict[tuple[str, int], int]:
        """Once its rounds are written: each record's partition, from its metadata."""
        assert self.producer is not None, "the script never said to resume the producers"
        self.producer.join()
        return self.producer.placed


def _every_key_in_order(order: dict[str, list[int]], first: int) -> None:
    missing = {k: sorted(set(range(first, BEFORE + AFTER)) - set(s)) for k, s in order.items()}
    assert {k: m for k, m in missing.items() if m} == {}, "records lost"
    assert order == {k: list(range(first, BEFORE + AFTER)) for k in KEYS}, "out of order"


def test_a_naive_alter_loses_the_new_partitions_records_for_a_stopped_group(
    kafka: Kafka,
) -> None:
    topic = kafka.create_topic("loss-naive", OLD)
    group = kafka.unique("stopped")
    _settled_group(kafka, topic, group).stop()
    assert _lag(kafka, group, topic) == 0
    rc, _, err = kafka.tool(
        "kafka-topics", "--bootstrap-server", kafka.bootstrap, "--alter", "--topic", topic,
        "--partitions", str(NEW),
    )  # fmt: skip
    assert rc == 0, err
    placed = Producer(kafka.bootstrap, topic, seq=BEFORE, rounds=AFTER)
    placed.join()
    assert set(placed.placed.values()) == set(range(NEW)), "a partition got no record"
    new = {r for r, p in placed.placed.items() if p >= OLD}

    restarted = PyReader(kafka, topic, group)  # kafka-python's defaults: latest
    restarted.drain(NEW)
    restarted.stop()

    assert new  # records went to partitions 3-5 ...
    assert restarted.got() == set(placed.placed) - new  # ... and only those were lost


def test_the_runbook_commits_the_new_partitions_for_a_stopped_group_that_loses_nothing(
    kafka: Kafka, tmp_path: Path
) -> None:
    topic = kafka.create_topic("loss-stopped", OLD)
    group = kafka.unique("stopped")
    _settled_group(kafka, topic, group).stop()
    script = _runbook(kafka, topic, tmp_path / "runbook.sh", "--group", group)

    resume = Resume(kafka, topic)
    code, out = execute(script, tmp_path / "work", resume, yes=True)
    assert code == 0, out
    assert f"{group} has no members and no offset on partitions 3,4,5 of {topic}" in out
    assert f"--group {group} --topic {topic}:3,4,5 --to-earliest --execute" in out
    assert f"{group} holds an offset on every new partition of {topic} (committed)" in out
    placed = resume.placed()
    assert set(placed.values()) == set(range(NEW)), "a partition got no record"

    restarted = PyReader(kafka, topic, group)  # kafka-python's defaults: latest
    restarted.drain(NEW)
    restarted.stop()
    _every_key_in_order(restarted.order, BEFORE)


def test_groups_running_through_the_runbook_commit_the_new_partitions_and_lose_nothing(
    kafka: Kafka, tmp_path: Path
) -> None:
    topic = kafka.create_topic("loss-running", OLD)
    python_group, java_group = kafka.unique("python"), kafka.unique("java")
    # Kafka's console consumer with the Java client's defaults (latest, auto-commit every
    # 5 s) but for a metadata age of 1 s, as kafka-python's below
    java = Reader(kafka, topic, java_group, settings=["metadata.max.age.ms=1000"])
    try:
        until_committed(kafka, topic, [java_group])  # its positions taken: latest is 0
        python = _settled_group(kafka, topic, python_group, metadata_max_age_ms=1000)
        java.wait_for(BEFORE * len(KEYS))
        # The waits end at their events; the deadlines only bound a failure, and a loaded
        # machine once took the Java consumer's first auto-commit after its rebalance past
        # 40 s (issue 52).
        script = _runbook(
            kafka, topic, tmp_path / "runbook.sh", "--group", python_group, "--group",
            java_group, "--commit-timeout", "120",
        )  # fmt: skip

        resume = Resume(kafka, topic)
        code, out = execute(script, tmp_path / "work", resume, yes=True)
        assert code == 0, out
        for group in (python_group, java_group):
            assert f"{group} owns all {NEW} partitions of {topic}" in out
            assert f"{group} holds an offset on every new partition of {topic}" in out
        # a group with members commits for itself; kafka-python 3.0's member, under the
        # suite's load, may be out of its group between a failed commit and its rejoin
        # (run J), and the runbook then commits the start for the empty group, as it should
        assert f"--reset-offsets --group {java_group}" not in out
        placed = resume.placed()
        assert set(placed.values()) == set(range(NEW)), "a partition got no record"
        total = (BEFORE + AFTER) * len(KEYS)
        python.wait_for(total)
        java.wait_for(total)
        python.stop()
    finally:
        java.stop()
    _every_key_in_order(python.order, 0)
    _every_key_in_order(java.order, 0)


def test_members_that_commit_nothing_stop_the_runbook_unless_their_risk_is_accepted(
    kafka: Kafka, tmp_path: Path
) -> None:
    topic = kafka.create_topic("loss-silent", OLD)
    group = kafka.unique("silent")
    # commits by hand after what it processed (once, here), so never on an empty partition
    silent = PyReader(
        kafka, topic, group, settle=True, enable_auto_commit=False, metadata_max_age_ms=1000
    )
    try:
        silent.wait_ready()
        base = ("--group", group, "--commit-timeout", "6")
        p = run_cli(
            "runbook", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to",
            str(NEW), *base, "--accept-loss-risk", "other",
        )  # fmt: skip
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr == (
            "migcheck: error: --accept-loss-risk 'other' names no group of this runbook; "
            f"its groups: '{group}'\n"
        )
        # both written before the change, as a runbook is
        strict = _runbook(kafka, topic, tmp_path / "strict.sh", *base)
        accepting = _runbook(
            kafka, topic, tmp_path / "accepting.sh", *base, "--accept-loss-risk", group
        )
        assert "Its loss risk is accepted (--accept-loss-risk)" in accepting.read_text()

        code, out = execute(strict, tmp_path / "work", yes=True)
        assert code == 1, out
        assert f"{group} owns all {NEW} partitions of {topic}" in out
        assert [ln for ln in out.splitlines() if "FAILED" in ln] == [
            f"  FAILED: {group} has members but no offset on partitions 3,4,5 of {topic} "
            "after 6 s (--commit-timeout): with auto.offset.reset=latest they would skip the "
            "records written there first; stop its consumers and run the runbook again (it "
            f"then commits the offsets itself), or accept the risk (--accept-loss-risk {group})"
        ]
        assert "MANUAL: Resume" not in out

        code, out = execute(accepting, tmp_path / "work", yes=True)  # resumes at the step
        assert code == 0, out
        assert out.count("done before: skipped") == 5
        assert (
            f"  {group}: no offset on partitions 3,4,5 of {topic} after 6 s; its risk is "
            "accepted (--accept-loss-risk): it reads them as its auto.offset.reset says"
        ) in out
        assert "MANUAL: Resume every producer" in out and "Runbook complete." in out
    finally:
        silent.stop()
