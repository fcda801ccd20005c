"""`migcheck copy` on a real broker: every record once, where librdkafka would put it.

The data comes from kcat (librdkafka's producer, with headers), and is read
back with kcat: the expected partition of a key is zlib's CRC-32 modulo the
count (librdkafka's `consistent` rule), never migcheck's kernels.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from copykill import (
    kill,
    read_state,
    resume,
    session_pids,
    signal_session,
    start_copy,
    wait_mid_round,
)
from kafkatest import Kafka, Whole
from oracles import crc_partition, java_partition, run_cli
from terminal import on_a_terminal

from migcheck.cli import main
from migcheck.copy.rounds import CHUNK  # sizes the data, never an expected value

pytestmark = pytest.mark.kafka


def _kcat_produce(kafka: Kafka, topic: str, lines: list[str], *extra: str) -> None:
    subprocess.run(
        ["kcat", "-P", "-b", kafka.bootstrap, "-t", topic, "-K", "\t", "-z", "none", *extra],
        input="\n".join(lines) + "\n",
        text=True,
        check=True,
        timeout=120,
    )


def _kcat_dump(kafka: Kafka, topic: str) -> list[tuple[int, int, str, str, str, str]]:
    """(partition, offset, key, timestamp, headers, value) of every record, by kcat."""
    out = subprocess.run(
        [
            "kcat",
            "-C",
            "-b",
            kafka.bootstrap,
            "-t",
            topic,
            "-e",
            "-q",
            "-X",
            "isolation.level=read_committed",
            "-f",
            "%p\t%o\t%k\t%T\t%h\t%s\n",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    rows = []
    for line in out.splitlines():
        p, o, k, ts, h, v = line.split("\t")
        rows.append((int(p), int(o), k, ts, h, v))
    return rows


def _copy(kafka: Kafka, topic: str, into: str, *extra: str):
    return run_cli(
        "copy", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--into", into, *extra
    )


def _copy_here(
    capsys: pytest.CaptureFixture[str], kafka: Kafka, topic: str, into: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """:func:`_copy` run by the real CLI in this process, on the test session's Spark (the
    ``spark`` fixture), as test_analyze_kafka runs ``analyze``: the same command and
    checkpoint, without a Spark start of its own for each run (a JVM and its Python
    workers, 10 to 20 s of a loaded machine's CPU).  For the tests whose assertions are
    the exit code and stdout; a refusal's stderr, with Spark's own output kept out of it,
    is a process's (:func:`_copy`)."""
    args = ["copy", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--into", into]
    with pytest.raises(SystemExit) as exit_:
        main([*args, *extra])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess([*args, *extra], exit_.value.code, out, err)


def _per_key(rows: list[tuple[int, int, str, str, str, str]]) -> dict[str, list[tuple[str, ...]]]:
    """Each key's records (timestamp, headers, value) in offset order."""
    by_key: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for _, _, k, ts, h, v in sorted(rows, key=lambda r: (r[0], r[1])):
        by_key[k].append((ts, h, v))
    return dict(by_key)


def _check_exact_copy(
    kafka: Kafka, topic: str, into: str, partitions: int, upto: dict[int, int] | None = None
) -> None:
    """The destination holds each source record once (those before ``upto``'s offsets,
    when given), on its key's partition by zlib's CRC-32, each key's in order."""
    src, dst = _kcat_dump(kafka, topic), _kcat_dump(kafka, into)
    if upto is not None:
        src = [r for r in src if r[1] < upto[r[0]]]
    keyed = [r for r in dst if r[2]]
    assert all(p == zlib.crc32(k.encode()) % partitions for p, _, k, *_ in keyed)
    assert Counter(r[2:] for r in src) == Counter(r[2:] for r in dst)  # each record once
    src_keyed = {k: v for k, v in _per_key(src).items() if k}
    assert {k: v for k, v in _per_key(dst).items() if k} == src_keyed  # order per key


@pytest.mark.spark
def test_copy_places_every_record_once_and_catches_up(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("copy-src", 3)
    into = kafka.create_topic("copy-dst", 6)
    _kcat_produce(kafka, topic, [f"k{i % 300}\tv{i}" for i in range(2000)], "-H", "h1=x")
    subprocess.run(
        ["kcat", "-P", "-b", kafka.bootstrap, "-t", topic],
        input="n1\nn2\nn3\n",
        text=True,
        check=True,
    )
    checkpoint = tmp_path / "copy.json"
    p = _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "copied this run: 2003 records (3 with a null key, round-robin)" in p.stdout
    # one read: every chunk's task took its records from the partitioner's detection read
    assert "read once: 2003 of them from the read that detected the partitioner" in p.stdout
    assert "missing 0, duplicated 0, misplaced 0: OK" in p.stdout
    _check_exact_copy(kafka, topic, into, 6)
    _check_null_keys_round_robin(kafka, topic, into, 3, 6)

    _kcat_produce(kafka, topic, [f"k{i}\tlate{i}" for i in range(100)])
    # more than a driver's round: the follow's first round is a Spark job, the next ones
    # run in its driver (migcheck.copy.follow.DRIVER_ROUND_OFFSETS)
    _kcat_produce(kafka, topic, [f"{k}\tbulk" for k in _keys_of(1, 3, CHUNK + CHUNK // 5)])
    copied = _follow_until_stopped(kafka, topic, into, checkpoint)
    assert len(_kcat_dump(kafka, into)) == 2003 + copied
    _check_exact_copy(kafka, topic, into, 6, upto=_nexts(checkpoint))

    # a catch-up places keys as the first run did: another partitioner is refused
    other = _copy(kafka, topic, into, "--checkpoint", str(checkpoint), "--partitioner", "fnv1a")
    assert other.returncode == 2 and other.stderr.count("\n") == 1, other.stderr[-2000:]
    assert "placed keys with consistent_random" in other.stderr


#: Records of source partition 0 that the follow finds at once: three rounds' worth.
FOLLOW_BACKLOG = 2 * CHUNK + CHUNK // 5


def _follow_until_stopped(kafka: Kafka, topic: str, into: str, checkpoint: Path) -> int:
    """``copy --follow`` resumed from ``checkpoint`` (a round and more behind it): it copies
    what producers commit while it runs, a committed transaction's records but never an
    aborted one's, then a backlog of three rounds in which a SIGTERM ends it once the
    round in flight has committed.  Its lag lines and summary are checked; the records it
    copied are returned."""
    proc = start_copy(kafka, topic, into, checkpoint, "--follow", "--format", "json",
                      "--reporting-interval", "200")  # fmt: skip
    try:
        _wait_caught_up(kafka, topic, checkpoint, proc)
        _transaction(kafka, topic, [f"t{i}" for i in range(50)], commit=True)
        _transaction(kafka, topic, [f"a{i}" for i in range(50)], commit=False)
        _kcat_produce(kafka, topic, [f"k{i}\tlive{i}" for i in range(100)])
        _wait_caught_up(kafka, topic, checkpoint, proc)
        # a Spark round, then the driver's again: the round's tasks fenced its producers
        _kcat_produce(kafka, topic, [f"{k}\tbulk2" for k in _keys_of(1, 3, CHUNK + 10)])
        _wait_caught_up(kafka, topic, checkpoint, proc)
        backlog = _keys_of(0, 3, FOLLOW_BACKLOG)
        # the follow finds the whole backlog at once, so its rounds cut it as counted below:
        # one that polled while kcat still wrote it cut it elsewhere (CI's load, stop 76)
        signal_session(proc.pid, signal.SIGSTOP)
        _kcat_produce(kafka, topic, [f"{k}\tbacklog" for k in backlog])
        resume(proc)
        wait_mid_round(kafka, checkpoint, into, proc)  # returns with the copy stopped
        proc.send_signal(signal.SIGTERM)  # to the driver: taken once it runs again
        resume(proc)
        out, err = proc.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-2000:]
    *lags, summary = (json.loads(line) for line in out.splitlines())
    assert lags and all(set(lag) == {"records_behind", "seconds_behind"} for lag in lags)
    assert {"records_behind": 0, "seconds_behind": 0.0} in lags  # caught up, said so
    state = read_state(checkpoint)
    assert state["pending"] is None  # the round in flight committed before the exit
    left = sum(_source_ends(kafka, topic).values()) - sum(_nexts(checkpoint).values())
    assert left >= CHUNK // 5  # it stopped: at least the backlog's last round is left
    assert summary["verification"]["ok"] and summary["verification"]["records"] > 2103 + CHUNK
    return int(summary["copied"])


def _transaction(kafka: Kafka, topic: str, keys: list[str], commit: bool) -> None:
    """``keys`` written in one transaction by kafka-python, each on its key's partition
    (zlib's CRC-32, the topic's rule), then committed or aborted."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, transactional_id=f"t-{commit}")
    producer.init_transactions()
    producer.begin_transaction()
    for k in keys:
        producer.send(topic, key=k.encode(), value=b"txn", partition=crc_partition(k.encode(), 3))
    if commit:
        producer.commit_transaction()
    else:
        producer.abort_transaction()
    producer.close()


def _keys_of(partition: int, partitions: int, n: int) -> list[str]:
    """``n`` keys that zlib's CRC-32 puts on ``partition``."""
    keys = (f"b{i}" for i in range(n * partitions * 4))
    found = [k for k in keys if crc_partition(k.encode(), partitions) == partition][:n]
    assert len(found) == n
    return found


def _source_ends(kafka: Kafka, topic: str) -> dict[int, int]:
    """Where ``topic``'s committed records end, per partition, as kafka-python's
    read_committed consumer sees it."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap, isolation_level="read_committed")
    try:
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        return {tp.partition: int(o) for tp, o in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def _nexts(checkpoint: Path) -> dict[int, int]:
    return {int(p): int(n) for p, n in read_state(checkpoint).get("next", {}).items()}


def _wait_caught_up(kafka: Kafka, topic: str, checkpoint: Path, proc: subprocess.Popen) -> None:
    """Until the follow's checkpoint has settled every record committed in ``topic``
    before this call."""
    ends = _source_ends(kafka, topic)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        nexts = _nexts(checkpoint)
        if read_state(checkpoint).get("pending") is None and all(
            nexts.get(p, 0) >= end for p, end in ends.items()
        ):
            return
        time.sleep(0.05)  # the checkpoint is a file: ask it again
    raise AssertionError(f"the follow did not catch up (exit {proc.poll()})")


def _check_null_keys_round_robin(kafka: Kafka, topic: str, into: str, n: int, n2: int) -> None:
    """Each source partition's null keys alternate over the destination partitions equal
    to it modulo ``n``: no two source partitions send null keys to one partition."""
    source_of = {v: p for p, _, k, _, _, v in _kcat_dump(kafka, topic) if not k}
    landed: dict[int, Counter[int]] = defaultdict(Counter)
    for q, _, k, _, _, v in _kcat_dump(kafka, into):
        if not k:
            landed[source_of[v]][q] += 1
    assert sum(sum(c.values()) for c in landed.values()) == len(source_of)
    for p, counts in landed.items():
        share = [q for q in range(n2) if q % n == p]
        assert set(counts) <= set(share), (p, counts)
        assert max(counts.values()) - min(counts[q] for q in share) <= 1, (p, counts)


@pytest.mark.spark
def test_a_record_copied_twice_fails_the_verification(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kafka import KafkaProducer  # kafka-python: a second, independent writer

    # 3 partitions: on 2, librdkafka's CRC-32 (unsigned) and Sarama's (absolute value)
    # put every key alike, and they part at 4, so `auto` could not choose
    topic = kafka.create_topic("copy-dup-src", 3)
    into = kafka.create_topic("copy-dup-dst", 6)
    _kcat_produce(kafka, topic, [f"k{i}\tv{i}" for i in range(50)])
    checkpoint = tmp_path / "copy.json"
    assert _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint)).returncode == 0
    p, _, k, ts, _, v = _kcat_dump(kafka, into)[0]
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap)
    # the same key, value and timestamp, without headers, as the copy wrote it
    producer.send(into, key=k.encode(), value=v.encode(), partition=p, timestamp_ms=int(ts))
    producer.flush()
    producer.close()
    again = _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint))
    assert again.returncode == 1, again.stdout + again.stderr[-1000:]
    assert "duplicated 1" in again.stdout and "FAILED" in again.stdout

    # a twin of another record, on a partition its key does not hash to: misplaced too
    q, _, k, ts, _, v = next(r for r in _kcat_dump(kafka, into) if r[2] != k)
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap)
    producer.send(into, key=k.encode(), value=v.encode(), partition=(q + 1) % 6,
                  timestamp_ms=int(ts))  # fmt: skip
    producer.flush()
    producer.close()
    third = _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint))
    assert third.returncode == 1, third.stdout + third.stderr[-1000:]
    assert "duplicated 2, misplaced 1: FAILED" in third.stdout, third.stdout


def test_auto_refuses_a_topic_that_no_partitioner_placed_whole(
    kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    """Keys placed by CRC-32 first, then by the Java producer (murmur2), each partition's
    first thousand records all CRC-32's: ``analyze --full`` refuses to name a partitioner,
    and the copy must refuse before writing, or each key's history splits."""
    topic = kafka.create_topic("copy-mixed-src", 3)
    into = kafka.create_topic("copy-mixed-dst", 6)
    keys = [f"k{i}".encode() for i in range(4000)]
    kafka.produce(
        topic, [(k, b"old", crc_partition(k, 3)) for k in keys] + [(k, b"new", None) for k in keys]
    )
    p = _copy(kafka, topic, into)
    assert p.returncode == 3, p.stdout + p.stderr[-2000:]  # cannot predict
    assert p.stderr.startswith("migcheck: error: no known partitioner placed every key")
    assert len(p.stderr.splitlines()) == 1, p.stderr  # Spark's own output is in its log
    assert _kcat_dump(kafka, into) == []
    # a partitioner given and checked (a runbook's state move): refused before writing too
    checked = _copy_here(capsys, kafka, topic, into, "--partitioner", "murmur2",
                         "--check-placement")  # fmt: skip
    assert checked.returncode == 3, checked.stdout + checked.stderr[-2000:]
    assert checked.stderr.startswith(
        f"migcheck: error: the keyed records of {topic} are not all placed by murmur2 ("
    ), checked.stderr
    assert "pass --partitioner murmur2 without --check-placement" in checked.stderr
    assert len(checked.stderr.splitlines()) == 1, checked.stderr
    assert _kcat_dump(kafka, into) == []
    alone = _copy_here(capsys, kafka, topic, into, "--check-placement")  # auto reads them all
    assert alone.returncode == 2 and alone.stderr.startswith(
        "migcheck: error: --check-placement checks a --partitioner given"
    ), alone.stderr


@pytest.mark.spark
def test_an_interrupted_chunk_is_not_mistaken_for_an_equal_record(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A driver killed inside a round, after it recorded the round (both partitions' chunks
    and the destination's ends) and partition 0's task committed, while partition 1's task
    had its transaction open with a record equal to one of partition 0's (null key, same
    value and timestamp): the re-run must resume that round, skip partition 0's committed
    chunk and copy partition 1's record, not take the other one for it.  The kill is
    staged: the checkpoint and the open transaction it would leave."""
    from kafka import KafkaProducer  # kafka-python: explicit partitions and timestamps

    topic = kafka.create_topic("copy-twin-src", 2)
    into = kafka.create_topic("copy-twin-dst", 2)
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap)
    ts = int(time.time() * 1000)  # recent: retention would delete records dated 1970
    for partition, value in ((0, b"y"), (0, b"x")):
        producer.send(topic, value=value, partition=partition, timestamp_ms=ts).get(30)
    checkpoint = tmp_path / "copy.json"
    assert _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint)).returncode == 0
    producer.send(topic, value=b"x", partition=1, timestamp_ms=ts).get(30)
    producer.close()
    _open_transaction(kafka, f"migcheck-copy-{topic}-{into}-1", into, 1, b"x", ts)
    state = json.loads(checkpoint.read_text(encoding="utf-8"))
    chunks = {"0": {"from": 0, "to": 2}, "1": {"from": 0, "to": 1}}
    state.update(
        next={"0": 0, "1": 0},
        round_robin={},
        pending={"chunks": chunks, "ends": {"0": 0, "1": 0}},  # before either task wrote
    )
    checkpoint.write_text(json.dumps(state), encoding="utf-8")

    p = _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint))
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    assert "copied this run: 1 records (1 with a null key" in p.stdout  # partition 1's only
    assert "missing 0, duplicated 0, misplaced 0: OK" in p.stdout
    assert Counter(r[5] for r in _kcat_dump(kafka, into)) == {"y": 1, "x": 2}
    assert not Path(f"{checkpoint}.parts").exists()  # no state beside the checkpoint


def _open_transaction(
    kafka: Kafka, txn_id: str, topic: str, partition: int, value: bytes, ts: int
) -> None:
    """What a task killed mid-chunk leaves: a transaction under its id, written, never
    committed (kafka-python's close neither commits nor aborts it)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, transactional_id=txn_id)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, value=value, partition=partition, timestamp_ms=ts).get(30)
    producer.close()


# Three rounds per source partition (the last one short), so a kill lands mid-copy.
KILL_PARTITIONS, KILL_RECORDS = 3, 3 * (2 * CHUNK + CHUNK // 5)


def _killable_copy(kafka: Kafka, prefix: str, checkpoint: Path, *extra: str):
    topic = kafka.create_topic(f"{prefix}-src", KILL_PARTITIONS)
    into = kafka.create_topic(f"{prefix}-dst", 6)
    _kcat_produce(kafka, topic, [f"key-{i % 5000}\tvalue-{i}" for i in range(KILL_RECORDS)])
    return topic, into, start_copy(kafka, topic, into, checkpoint, *extra)


@pytest.mark.spark
def test_a_killed_copy_resumes_without_a_duplicate(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "copy.json"
    topic, into, proc = _killable_copy(kafka, "copy-kill", checkpoint)
    try:
        wait_mid_round(kafka, checkpoint, into, proc)
    finally:
        kill(proc)
    assert 0 < len(_kcat_dump(kafka, into)) < KILL_RECORDS  # killed in the middle

    p = _copy_here(capsys, kafka, topic, into, "--checkpoint", str(checkpoint))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "missing 0, duplicated 0, misplaced 0: OK" in p.stdout
    _check_exact_copy(kafka, topic, into, 6)
    assert not Path(f"{checkpoint}.parts").exists()


def test_a_task_retried_within_the_job_copies_its_chunk_once(kafka: Kafka, tmp_path: Path) -> None:
    """An executor lost mid-task: the Python workers running a round's tasks are killed
    while their transactions write, and Spark retries the tasks (``local[2,4]``: four
    attempts each).  Each retry gets its chunk from the driver, fences the dead attempt
    and settles the chunk: the run ends with every record once, counted once."""
    checkpoint = tmp_path / "copy.json"
    topic, into, proc = _killable_copy(kafka, "copy-retry", checkpoint, "--master", "local[2,4]")
    try:
        wait_mid_round(kafka, checkpoint, into, proc)
        killed = _kill_python_workers(proc.pid)
        resume(proc)  # the driver and Spark's JVM go on, and retry the tasks
        out, err = proc.communicate(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever of it is left
    assert killed, "no Python worker was running a task"
    assert proc.returncode == 0, err[-2000:]
    assert f"copied this run: {KILL_RECORDS} records" in out
    assert "missing 0, duplicated 0, misplaced 0: OK" in out
    _check_exact_copy(kafka, topic, into, 6)


def _kill_python_workers(session: int) -> list[int]:
    """SIGKILL the Python workers that PySpark's daemon forked, in the copy's session."""
    procs = {}
    for pid in session_pids(session):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            procs[pid] = (int(fields[1]), cmdline)
        except (OSError, ValueError, IndexError):
            continue
    daemons = {pid for pid, (_, cmd) in procs.items() if b"pyspark.daemon" in cmd}
    workers = [pid for pid, (ppid, _) in procs.items() if ppid in daemons]
    for pid in workers:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return workers


def _cli() -> list[str]:
    return [sys.executable, "-m", "migcheck"]


def test_refusals_are_one_line_and_exit_2(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("copy-ref-src", 3)
    full = kafka.create_topic("copy-ref-full", 6)
    _kcat_produce(kafka, full, ["a\tb"])
    other = tmp_path / "other.json"
    other.write_text('{"topic": "x", "into": "y", "next": {}}', encoding="utf-8")
    cases = [
        ((topic, "no-such-topic"), "does not exist"),
        ((topic, topic), "must differ"),
        ((topic, full), "is not empty and no --checkpoint"),
        ((topic, full, "--checkpoint", str(other)), "records a copy of x into y"),
        ((topic, full, "--follow"), "--follow needs --checkpoint"),
    ]
    for args, words in cases:
        p = _copy(kafka, *args)
        assert p.returncode == 2, p.stdout + p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.startswith("migcheck: error: ") and words in p.stderr, p.stderr


@pytest.mark.spark
def test_every_byte_of_every_record_is_copied_as_javas_consumer_reads_it(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values with tabs, newlines and binary bytes, empty and null values, null keys,
    headers (an empty and a null header value among them) and a record of timestamp 0,
    which librdkafka cannot write (its chunk goes through kafka-python's producer): each
    record copied byte for byte, first on a terminal (its progress bar drawn), then a
    catch-up summarised as JSON.  The oracle is Kafka's Java producer writing the source
    and its consumer reading both topics; kcat cannot be it (it prints headers unescaped
    and a null key like an empty one)."""
    topic, into = kafka.create_topic("bytes", 3), kafka.create_topic("bytes-into", 5)
    rng = random.Random(55)
    now = int(time.time() * 1000)
    lines = []
    for i in range(600):
        key = "~" if i % 10 == 0 else f"k{i % 40}".encode().hex()
        # neither key nor value: librdkafka writes it, kafka-python refuses it (as above)
        nothing = "~" if i < 500 else ""
        values = [b"a\tb\nc\r\\".hex(), "", nothing, rng.randbytes(rng.randrange(1, 64)).hex()]
        stamp = 0 if i == 507 else now - 600 + i  # recent: time retention keeps them
        # a null header value: librdkafka writes it, kafka-python (which writes the
        # timestamp 0 of the catch-up) refuses it, so none in the catch-up
        gone = ",gone:~" if i < 500 else ""
        headers = "" if i % 3 else f"trace:{rng.randbytes(4).hex()},empty:{gone}"
        lines.append(f"{key}\t{values[i % 4]}\t\t{stamp}\t{headers}")
    kafka.produce(topic, lines[:500])
    checkpoint = tmp_path / "bytes.json"
    base = ["--partitioner", "murmur2", "--checkpoint", str(checkpoint)]

    argv = [sys.executable, "-m", "migcheck", "copy", "--bootstrap-server", kafka.bootstrap,
            "--topic", topic, "--into", into, *base]  # fmt: skip
    code, terminal = on_a_terminal(argv)
    assert code == 0, terminal
    assert "copying records" in terminal and "/500" in terminal, terminal  # the progress bar
    assert "verified: 500 source records" in terminal

    kafka.produce(topic, lines[500:])  # the catch-up, summarised as JSON
    r = _copy_here(capsys, kafka, topic, into, *base, "--format", "json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["copied"], summary["null_keys"]) == (100, 10)
    assert summary["verification"] == {
        "records": 600, "missing": 0, "duplicated": 0, "misplaced": 0, "ok": True,
    }  # fmt: skip
    assert "copying records" not in r.stderr  # no progress bar with JSON

    src, dst = kafka.dump_records(topic), kafka.dump_records(into)

    def whole(w: Whole) -> tuple[object, ...]:
        return w.key, w.value, w.timestamp, w.headers

    assert Counter(map(whole, dst)) == Counter(map(whole, src))  # every record once, whole
    assert any(w.timestamp == 0 for w in dst) and any(w.key is None for w in dst)
    assert any(w.headers and w.headers[-1] == ("gone", None) for w in dst)
    assert all(w.partition == java_partition(w.key, 5) for w in dst if w.key is not None)

    def per_key(rows: list[Whole]) -> dict[bytes, list[tuple[object, ...]]]:
        by_key: dict[bytes, list[tuple[object, ...]]] = defaultdict(list)
        for w in sorted(rows, key=lambda w: (w.partition, w.offset)):
            if w.key is not None:
                by_key[w.key].append(whole(w))
        return dict(by_key)

    assert per_key(dst) == per_key(src)  # each key's records in their order


def _read_back(kafka: Kafka, topic: str) -> list:  # kafka-python's ConsumerRecord
    """Every committed record of ``topic``, read by kafka-python's own consumer."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap, isolation_level="read_committed",
                             enable_auto_commit=False)  # fmt: skip
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends, records = consumer.end_offsets(tps), []
        deadline = time.monotonic() + 120
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            assert time.monotonic() < deadline, f"{topic} not read to its end"
            for batch in consumer.poll(timeout_ms=1000).values():
                records += batch
        return records
    finally:
        consumer.close(autocommit=False)


@pytest.mark.spark
def test_latest_per_key_copies_each_keys_last_record_once_where_java_places_it(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Several records per key over three partitions (one key deleted last, one deleted
    then written again), each with its timestamp and headers, copied with
    --latest-per-key into five: the destination, read back by kafka-python, holds each
    live key's last produced record once, on the partition Java's murmur2 rule gives it,
    and nothing of the deleted key.  A re-run resumes with nothing left; a source that
    grew since refuses it, and a null key is refused before anything is written."""
    from kafka import KafkaProducer

    topic = kafka.create_topic("latest-src", 3)
    into = kafka.create_topic("latest-dst", 5)
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap)
    stamp, last = int(time.time() * 1000) - 10_000, {}  # recent: time retention keeps them
    for r in range(6):  # a round of every key, flushed before the next: each key in order
        for i in range(40):
            key = f"k{i}".encode()
            value = None if (i == 7 and r == 5) or (i == 8 and r == 2) else f"v{i}-{r}".encode()
            headers = [("round", str(r).encode()), ("of", key)]
            stamp += 1
            producer.send(topic, key=key, value=value, partition=java_partition(key, 3),
                          timestamp_ms=stamp, headers=headers)  # fmt: skip
            last[key] = (value, stamp, headers)
        producer.flush()
    live = {k: v for k, v in last.items() if v[0] is not None}
    assert len(live) == 39 and b"k7" not in live and live[b"k8"][0] == b"v8-5"

    checkpoint = tmp_path / "latest.json"
    args = ["--partitioner", "murmur2", "--check-placement", "--latest-per-key",
            "--checkpoint", str(checkpoint)]  # fmt: skip
    p = _copy_here(capsys, kafka, topic, into, *args)
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    assert "copied this run: 39 records" in p.stdout, p.stdout
    assert "missing 0, duplicated 0, misplaced 0: OK" in p.stdout, p.stdout
    dst = _read_back(kafka, into)
    assert Counter(r.key for r in dst) == Counter(live.keys())  # each live key once, k7 absent
    for r in dst:
        assert (r.value, r.timestamp, list(r.headers)) == live[r.key]
        assert r.partition == java_partition(r.key, 5)

    again = _copy_here(capsys, kafka, topic, into, *args)  # resumed: nothing left to copy
    assert again.returncode == 0, again.stdout + again.stderr[-2000:]
    assert "copied this run: 0 records" in again.stdout, again.stdout
    assert len(_read_back(kafka, into)) == 39

    producer.send(topic, key=b"k1", value=b"later", partition=java_partition(b"k1", 3))
    producer.flush()
    grew = _copy_here(capsys, kafka, topic, into, *args)
    assert grew.returncode == 2 and "began a copy of the source up to other" in grew.stderr
    assert len(_read_back(kafka, into)) == 39

    nulls = kafka.create_topic("latest-null-src", 3)
    nulls_into = kafka.create_topic("latest-null-dst", 5)
    producer.send(nulls, key=b"k1", value=b"a", partition=java_partition(b"k1", 3))
    producer.send(nulls, key=None, value=b"no key", partition=0)
    producer.flush()
    producer.close()
    refused = _copy_here(capsys, kafka, nulls, nulls_into, "--partitioner", "murmur2",
                         "--latest-per-key")  # fmt: skip
    assert refused.returncode == 2, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("migcheck: error: --latest-per-key") and "null key" in line, line
    assert _read_back(kafka, nulls_into) == []
