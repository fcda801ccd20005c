"""Helpers for tests against the real Kafka broker.

Data is placed by Kafka's own Java producer (``fixtures/java/KafkaFixture.java``)
and read back by Kafka's own Java consumer, so expected values never come from
migcheck.  Topics get unique names, so tests never see each other's data.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer
from kafka.admin import NewTopic
from kafka.errors import KafkaError, KafkaTimeoutError, UnrecognizedBrokerVersion

REPO = Path(__file__).resolve().parents[2]
KAFKA_LOCAL = REPO / "scripts" / "kafka-local"
FIXTURE_SRC = REPO / "fixtures" / "java" / "KafkaFixture.java"
STREAMS_SRC = REPO / "fixtures" / "java" / "streams" / "StreamsFixture.java"

#: A record for :meth:`Kafka.produce`: (key, value, partition).  ``value`` is bytes,
#: None (tombstone) or an int (that many filler bytes); ``partition`` None lets the
#: Java producer's default partitioner decide.  The strings "!begin", "!commit" and
#: "!abort" are transaction markers.
Record = tuple[bytes | None, bytes | int | None, int | None] | str

#: A broker just started, not yet registered: worth another try.
_NOT_READY = (KafkaTimeoutError, UnrecognizedBrokerVersion)


@dataclass(frozen=True)
class Dumped:
    partition: int
    offset: int
    key: bytes | None
    value_size: int  # -1 for a null value (tombstone)


@dataclass(frozen=True)
class Whole:
    """A committed record as Kafka's Java consumer reads it, byte for byte."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str, bytes | None], ...]


def session_pids(session: int) -> list[int]:
    """The processes of ``session`` now, from /proc."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):
            if os.getsid(int(entry.name)) == session:
                pids.append(int(entry.name))
    return pids


def _hex_or_none(field: str) -> bytes | None:
    return None if field == "~" else bytes.fromhex(field)


def run(cmd: Sequence[str], stdin: str | None = None, timeout: float = 300) -> tuple[int, str, str]:
    try:
        r = subprocess.run(
            list(cmd), input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
    finally:
        settle_archive(cmd)
    return r.returncode, r.stdout, r.stderr


@contextlib.contextmanager
def locked(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``lock`` (created if missing): the suite's
    workers (pytest-xdist) share the broker, the fixtures' builds and the caches."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def state_dir() -> Path:
    """kafka-local's state directory (``MIGCHECK_KAFKA_HOME``, default ``.kafka-local``)."""
    return Path(os.environ.get("MIGCHECK_KAFKA_HOME", REPO / ".kafka-local"))


def kafka_classpath() -> str:
    # The first call resolves the jars with Maven into one cache file: one worker at a time.
    with locked(state_dir() / ".classpath.lock"):
        rc, out, err = run([str(KAFKA_LOCAL), "classpath"])
    if rc != 0:
        raise RuntimeError(f"scripts/kafka-local classpath failed: {err.strip()}")
    return out.strip().splitlines()[-1]


def compile_fixture(state_dir: Path, source: Path = FIXTURE_SRC, cp: str | None = None) -> str:
    """Compile a Java fixture once per source version and Kafka classpath (``cp``, default
    kafka-local's: another Kafka version's jars get classes of their own); return the
    classpath to run it.  A lock keeps two workers from compiling into one directory."""
    cp = kafka_classpath() if cp is None else cp
    digest = hashlib.sha256(source.read_bytes() + b"\0" + cp.encode()).hexdigest()[:12]
    classes = state_dir / f"{source.stem}-classes-{digest}"
    # A jar, not the directory: class data sharing (cds_options) maps classes from jars only.
    jar = state_dir / f"{source.stem}-classes-{digest}.jar"
    with locked(state_dir / f".{source.stem}-classes-{digest}.lock"):
        if not jar.exists():
            classes.mkdir(parents=True, exist_ok=True)
            rc, _, err = run(["javac", "-nowarn", "-d", str(classes), "-cp", cp, str(source)])
            if rc != 0:
                raise RuntimeError(f"javac {source.name} failed: {err}")
            rc, _, err = run(["jar", "cf", f"{jar}.tmp", "-C", str(classes), "."])
            if rc != 0:
                raise RuntimeError(f"jar {source.stem} failed: {err}")
            Path(f"{jar}.tmp").replace(jar)
    return f"{jar}{os.pathsep}{cp}"


def cds_options(cp: str, main: str) -> list[str]:
    """The JVM options that run ``main`` with class data sharing (AppCDS), as
    ``scripts/kafka-local tool`` runs Kafka's tools: the classes its first run loads are
    archived, and every later run maps them, which halves a short run's CPU (0.7 s to
    0.35 s for a tool; the suite starts Java fixtures some 300 times).  One archive per
    main class and classpath; the first run writes it under a name of its own, which
    :func:`settle_archive` renames into place after the JVM exits.  The JVM's cds logging
    is off: a dump warns on stdout, which the tests parse."""
    key = hashlib.sha256(cp.encode()).hexdigest()[:12]
    archive = state_dir() / "cds" / f"{main}-{key}.jsa"
    quiet = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    _adopt_finished(archive)
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", *quiet]
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = f"{archive}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp"
    return [f"-XX:ArchiveClassesAtExit={tmp}", *quiet]


#: The JVM options of the suite's Java fixtures (the producer and consumer oracles, the
#: Streams apps), as ``scripts/kafka-local tool`` runs Kafka's tools: the client JIT only
#: and the serial collector.  Their runs last seconds over a few thousand records, before
#: the optimizing compiler and G1's threads pay off: a Streams app's run took 3.5 s of CPU
#: with the JVM's defaults and 2 s with these.  Nothing they compute depends on them.
QUICK_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def quick_java(cp: str, main: str, *args: str) -> list[str]:
    """A short-lived Java fixture's command: :func:`cds_options` and :data:`QUICK_JVM`.
    :func:`run` settles its archive."""
    return ["java", *cds_options(cp, main), *QUICK_JVM, "-cp", cp, main, *args]


def _adopt_finished(archive: Path) -> None:
    """Put in place an archive that a JVM run by a caller who could not settle it (a
    process a test started and left) finished writing: one untouched for 30 s."""
    if archive.exists():
        return
    for tmp in archive.parent.glob(f"{archive.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.stat().st_size > 0 and time.time() - tmp.stat().st_mtime > 30:
                tmp.replace(archive)
                return


def settle_archive(cmd: Sequence[str]) -> None:
    """Rename an archive a finished JVM wrote (:func:`cds_options`) into place: whole, or not
    at all, so that a concurrent run never maps half a file."""
    flag = next((a for a in cmd if a.startswith("-XX:ArchiveClassesAtExit=")), None)
    if flag is None:
        return
    tmp = Path(flag.split("=", 1)[1])
    if tmp.exists() and tmp.stat().st_size > 0:
        tmp.replace(tmp.with_name(tmp.name.split(".jsa.", 1)[0] + ".jsa"))
    else:
        tmp.unlink(missing_ok=True)


def _encode(record: Record) -> str:
    if isinstance(record, str):
        return record
    key, value, partition = record
    k = "~" if key is None else key.hex()
    if value is None:
        v = "~"
    elif isinstance(value, int):
        v = f"#{value}"
    else:
        v = value.hex()
    return f"{k}\t{v}" + ("" if partition is None else f"\t{partition}")


#: Seconds a kafka-python member may go unassigned before a test restarts it, as an
#: operator restarts a stuck consumer.  kafka-python 3.0 was seen, under CI's load,
#: assigning a member nothing for 120 s (runs W and G, docs/development.md); such a
#: member has read nothing, so a new one starts where it would have.
REJOIN_AFTER_S = 40


def subscribe_once_known(consumer: KafkaConsumer, topic: str, timeout: float = 60) -> None:
    """Subscribe ``consumer`` (kafka-python's, with a group) to ``topic`` once its own
    metadata lists the topic's partitions.

    kafka-python joins its group without waiting for the metadata of the topics it
    subscribed to, and a metadata update that arrives while the join is in flight is
    lost (as in Kafka's KAFKA-3949): its leader then assigned nothing ("No partition
    metadata for topic"), and nothing rebalanced the group for minutes under load."""
    deadline = time.monotonic() + timeout
    while not consumer.partitions_for_topic(topic):
        assert time.monotonic() < deadline, f"{topic} is not in the consumer's metadata"
        time.sleep(0.1)
    consumer.subscribe([topic])


class GroupKeptRebalancing(AssertionError):
    """A member's commit met rebalances until the wait ran out: nothing committed."""


def commit_settled(consumer: KafkaConsumer, timeout: float = 60) -> list[Any]:
    """Commit the consumer's positions as an application does: a commit that meets a
    rebalance (kafka-python's RebalanceInProgressError or CommitFailedError) polls, to
    take part in it, and commits again.  Under CI's load a group's first commit met the
    rebalance its own join had started.  The records those polls return are committed
    too, so they are returned: the caller has read them."""
    from kafka.errors import CommitFailedError, RebalanceInProgressError

    deadline = time.monotonic() + timeout
    polled: list[Any] = []
    while True:
        try:
            consumer.commit()
            return polled
        except (RebalanceInProgressError, CommitFailedError) as error:
            if time.monotonic() > deadline:
                stuck = "the group kept rebalancing: nothing committed"
                raise GroupKeptRebalancing(stuck) from error
            for batch in consumer.poll(timeout_ms=500).values():
                polled += batch


def read_and_commit(
    make: Callable[[], KafkaConsumer],
    read: Callable[[KafkaConsumer], list[Any]],
    attempts: int = 3,
) -> tuple[KafkaConsumer, list[Any]]:
    """A member made by ``make``, that ``read`` its records and committed them, and those
    records.  A member whose commit kept meeting rebalances for ``REJOIN_AFTER_S`` is
    closed without committing and a new one reads the same records again, as an operator
    restarts a stuck consumer: kafka-python 3.0.12, under CI's load, once went on
    rebalancing a one-member group for 60 s (the landing run of 0e1d7fc, test_gate's
    fixture)."""
    for attempt in range(1, attempts + 1):
        consumer = make()
        try:
            records = read(consumer)
            return consumer, records + commit_settled(consumer, REJOIN_AFTER_S)
        except BaseException as error:
            consumer.close(autocommit=False)
            if attempt == attempts or not isinstance(error, GroupKeptRebalancing):
                raise
    raise ValueError(f"attempts must be at least 1, not {attempts}")


def read_records(consumer: KafkaConsumer, count: int) -> list[tuple[str, str]]:
    """The first ``count`` records ``consumer`` reads (at least), as (key, value), in the
    order read."""
    records: list[tuple[str, str]] = []
    deadline = time.monotonic() + 120
    while len(records) < count and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records += [(r.key.decode(), r.value.decode()) for r in batch]
    assert len(records) >= count, f"read {len(records)} of {count} records"
    return records


def read_as_group(kafka: Kafka, topic: str, group_id: str, count: int = 1) -> KafkaConsumer:
    """A kafka-python consumer of ``group_id`` (from the earliest: it joins after the
    records were written), a member of its group, that read at least ``count`` records of
    ``topic`` and committed what it read; the caller closes it."""

    def make() -> KafkaConsumer:
        consumer = KafkaConsumer(
            bootstrap_servers=kafka.bootstrap, group_id=group_id, auto_offset_reset="earliest"
        )
        subscribe_once_known(consumer, topic)
        return consumer

    return read_and_commit(make, lambda c: read_records(c, count))[0]


def _tail(path: Path, keep: Callable[[str], bool], lines: int = 15) -> list[str]:
    """The last ``lines`` lines of ``path`` that ``keep`` keeps, headed by the file's name."""
    try:
        kept = [line for line in path.read_text(errors="replace").splitlines() if keep(line)]
    except OSError:
        return [f"{path.name}: absent"]
    return [f"{path.name} ({len(kept)} lines kept, the last {lines}):", *kept[-lines:]]


def _long_pause(line: str) -> bool:
    """A G1 pause of half a second or more, in Java's unified GC log (``... 612.345ms``)."""
    match = re.search(r"Pause.* (\d+(?:\.\d+)?)ms$", line)
    return match is not None and float(match.group(1)) >= 500


class Kafka:
    """The broker under test: its address, plus Java-side produce, dump and tools."""

    _names = itertools.count()

    def __init__(
        self,
        bootstrap: str,
        fixture_cp: str,
        sasl_bootstrap: str | None,
        ssl_bootstrap: str | None = None,
        ca: str | None = None,
        state: Path | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.state = state  # kafka-local's state directory, when this suite started the broker
        self.fixture_cp = fixture_cp
        self.sasl_bootstrap = sasl_bootstrap  # PLAIN and SCRAM-SHA-512
        self.ssl_bootstrap = ssl_bootstrap  # TLS, server certificate signed by ``ca``
        self.ca = ca
        self._admin_client: KafkaAdminClient | None = None
        self._admin_lock = threading.Lock()

    def close(self) -> None:
        """Closes the admin client: left open, its thread would keep asking a stopped
        broker for metadata, and log about it in whatever test runs next."""
        with self._admin_lock:
            if self._admin_client is not None:
                self._admin_client.close()
                self._admin_client = None

    def diagnose(self) -> str:
        """What the broker was doing, for a failure's message: whether it runs, its last
        warnings and errors, and its garbage collector's long pauses.  A CI run once lost
        two tests to a broker that answered nothing for two minutes, and said no more."""
        if self.state is None:
            return "(a broker this suite did not start: no logs to show)"
        pid = self.state / "broker.pid"
        alive = pid.exists() and Path(f"/proc/{pid.read_text().strip()}").exists()
        lines = [f"broker {'running' if alive else 'NOT running'} ({self.state})"]
        warned = re.compile(" (WARN|ERROR) ").search
        lines += _tail(self.state / "server.log", lambda line: warned(line) is not None)
        lines += _tail(self.state / "gc.log", _long_pause)
        return "\n".join(lines)

    def unique(self, prefix: str) -> str:
        return f"{prefix}-{next(self._names)}-{uuid.uuid4().hex[:6]}"

    def tool(self, name: str, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        """Run one of Kafka's own command-line tools through scripts/kafka-local."""
        return run([str(KAFKA_LOCAL), "tool", name, *args], stdin=stdin)

    def partition_counts(self, pattern: str) -> dict[str, int]:
        """Each topic matching ``pattern`` (kafka-topics' regex) and its count, as Kafka's
        own ``kafka-topics --describe`` prints them: one JVM for them all."""
        rc, out, err = self.tool(
            "kafka-topics", "--bootstrap-server", self.bootstrap, "--describe", "--topic", pattern
        )
        assert rc == 0, out + err
        return {
            line.split()[1]: int(line.split("PartitionCount: ")[1].split()[0])
            for line in out.splitlines()
            if "PartitionCount: " in line
        }

    def partition_count(self, topic: str) -> int:
        """``topic``'s count, as ``kafka-topics --describe`` prints it (its name matched
        whole, not as the tool's regex)."""
        return self.partition_counts(re.escape(topic))[topic]

    def create_topic(self, prefix: str, partitions: int, **configs: str) -> str:
        """A new topic, created through kafka-python's admin client (the CreateTopics call
        kafka-topics makes): tests create some 400 topics, and a tool's JVM for each cost
        more CPU than any other fixture (docs/development.md, "The suite's time").  Tests
        whose subject is kafka-topics itself run the tool."""
        name = self.unique(prefix)
        topic = NewTopic(
            name, partitions, 1, topic_configs={k.replace("_", "."): v for k, v in configs.items()}
        )
        deadline = time.monotonic() + 60
        while True:  # a broker just started on a loaded machine may not be registered yet
            try:
                with self._admin_lock:
                    self._admin().create_topics([topic], timeout_ms=30_000)
                break
            except KafkaError as e:
                retry = getattr(e, "retriable", False) or isinstance(e, _NOT_READY)
                if time.monotonic() > deadline or not retry:
                    raise AssertionError(f"creating topic {name} failed: {e!r}") from e
                time.sleep(0.5)
        self._until_led(name, partitions, deadline)
        return name

    def _until_led(self, name: str, partitions: int, deadline: float) -> None:
        """Until the broker's metadata lists every partition of ``name`` with a leader.

        CreateTopics answers once the controller has the topic, before the broker's
        metadata lists it.  A kafka-python group that joined in between was once assigned
        nothing for 120 s under load: its leader assigned with no partitions for the topic
        ("No partition metadata for topic ..."), and nothing rebalanced it when they
        appeared.  kafka-topics' own JVM start used to hide the gap."""
        while True:
            led: list[dict[str, int]] = []
            try:
                with self._admin_lock:
                    (described,) = self._admin().describe_topics([name])
                led = [p for p in described["partitions"] if p["leader_id"] >= 0]
                if described["error_code"] == 0 and len(led) == partitions:
                    return
            except KafkaError as e:  # not in the broker's metadata yet: retriable
                if not getattr(e, "retriable", False):
                    raise
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"topic {name}: {len(led)} of {partitions} partitions led after 60 s\n"
                    f"{self.diagnose()}"
                )
            time.sleep(0.1)

    def _admin(self) -> KafkaAdminClient:
        """One admin client per broker and process (kafka-python's is not thread-safe:
        callers hold ``_admin_lock``)."""
        if self._admin_client is None:
            self._admin_client = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        return self._admin_client

    def produce(
        self,
        topic: str,
        records: Iterable[Record],
        transactional_id: str | None = None,
        *properties: str,
    ) -> None:
        """Send records with Kafka's Java producer (its default partitioner places keys)."""
        cmd = quick_java(
            self.fixture_cp, "KafkaFixture", "produce", "--bootstrap-server", self.bootstrap,
            "--topic", topic,
        )  # fmt: skip
        if transactional_id:
            cmd += ["--transactional-id", transactional_id]
        for prop in properties:
            cmd += ["--property", prop]
        rc, _, err = run(cmd, stdin="\n".join(_encode(r) for r in records) + "\n")
        assert rc == 0, f"Java producer failed: {err}\n{self.diagnose()}"

    def dump(self, topic: str) -> list[Dumped]:
        """Every committed record, read back by Kafka's Java consumer."""
        cmd = quick_java(
            self.fixture_cp, "KafkaFixture", "dump", "--bootstrap-server", self.bootstrap,
            "--topic", topic,
        )  # fmt: skip
        rc, out, err = run(cmd)
        assert rc == 0, f"dump failed: {err}\n{self.diagnose()}"
        rows = []
        for line in out.splitlines():
            p, o, k, v = line.split("\t")
            rows.append(Dumped(int(p), int(o), None if k == "~" else bytes.fromhex(k), int(v)))
        return rows

    def dump_records(self, topic: str) -> list[Whole]:
        """Every committed record whole (value, timestamp, headers), read back by Kafka's
        Java consumer: the oracle of a byte-for-byte copy."""
        cmd = quick_java(
            self.fixture_cp, "KafkaFixture", "dump-records", "--bootstrap-server",
            self.bootstrap, "--topic", topic,
        )  # fmt: skip
        rc, out, err = run(cmd)
        assert rc == 0, f"dump failed: {err}\n{self.diagnose()}"
        rows = []
        for line in out.splitlines():
            p, o, k, v, ts, hs = line.split("\t")
            headers = tuple(
                (name, _hex_or_none(value))
                for name, value in (h.split(":", 1) for h in hs.split(",") if h)
            )
            rows.append(Whole(int(p), int(o), _hex_or_none(k), _hex_or_none(v), int(ts), headers))
        return rows

    def serialize(self, items: Iterable[tuple[str, str]]) -> list[bytes]:
        """The bytes Kafka's own serializers write for (type, text) pairs."""
        rc, out, err = run(
            quick_java(self.fixture_cp, "KafkaFixture", "serialize"),
            stdin="".join(f"{t}\t{v}\n" for t, v in items),
        )
        assert rc == 0, f"serialize failed: {err}"
        return [bytes.fromhex(line) for line in out.split()]
