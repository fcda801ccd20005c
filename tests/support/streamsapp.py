"""Drive the real Kafka Streams fixture app (fixtures/java/streams) through an alter.

The scenario is FINDINGS.md's: 400 keys ``k0..k399`` on a 3-partition input,
key ``ki`` written ``1 + i % 3`` times (799 records), the app run until idle;
then, after the alter, one more record per key and a second run.  Expected
outcomes come from the app itself (its crash line, its stores' contents) and
from kafka-python's murmur2 (tests/oracles.py), never from migcheck.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafkatest import (
    QUICK_JVM,
    REPO,
    STREAMS_SRC,
    Kafka,
    cds_options,
    compile_fixture,
    run,
    settle_archive,
    state_dir,
)
from oracles import java_partition, run_cli, run_here

KEYS = [f"k{i}" for i in range(400)]
LOG_CONFIG = REPO / "fixtures" / "java" / "streams" / "log4j2.yaml"
DESCRIBE = REPO / "fixtures" / "java" / "streams" / "describe"


def phase1() -> list[tuple[str, str]]:
    """799 records: key ``ki`` ``1 + i % 3`` times, value ``v<i % 50>``."""
    return [(k, f"v{i % 50}") for i, k in enumerate(KEYS) for _ in range(1 + i % 3)]


def phase2() -> list[tuple[str, str]]:
    return [(k, f"v{(i + 7) % 50}") for i, k in enumerate(KEYS)]


def joined_counts(orders: list[tuple[str, str]]) -> Counter[str]:
    """What join-rekey counts, from the records a test produced: each order's value joined
    with its key's customer, ``c<i>`` for ``KEYS[i]`` (the customers produced before any
    order, so every order finds one), counted per joined value."""
    customer = {k: f"c{i}" for i, k in enumerate(KEYS)}
    return Counter(f"{v}|{customer[k]}" for k, v in orders)


def moved_keys(old: int, new: int) -> set[str]:
    """The keys the Java producer's rule sends elsewhere, by kafka-python's murmur2."""
    return {k for k in KEYS if java_partition(k.encode(), old) != java_partition(k.encode(), new)}


#: RocksDB's name for this machine's JNI library inside its jar, by ``platform.machine()``.
ROCKSDB_JNI = {"x86_64": "linux64", "aarch64": "linux-aarch64"}


def rocksdb_native(cp: str) -> list[str]:
    """``-Djava.library.path`` to a directory holding RocksDB's JNI library, unpacked once
    from the rocksdbjni jar on ``cp``; none where the jar has no library of this machine's
    name (RocksDB then unpacks its own, as without the option).  RocksDB looks there first
    (its NativeLibraryLoader's ``System.loadLibrary("rocksdbjni-linux64")``); without it,
    each JVM unpacks its own 15 MB copy into ``java.io.tmpdir``, which an app the test kills
    leaves behind: 28 a run, 420 MB (docs/development.md, run R)."""
    jar = next(Path(e) for e in cp.split(os.pathsep) if Path(e).name.startswith("rocksdbjni-"))
    where = state_dir() / "rocksdb-native" / jar.stem
    lib = where / f"librocksdbjni-{ROCKSDB_JNI.get(platform.machine(), 'none')}.so"
    if not lib.exists():
        with zipfile.ZipFile(jar) as z:
            if lib.name not in z.namelist():
                return []
            data = z.read(lib.name)
        where.mkdir(parents=True, exist_ok=True)
        tmp = where / f"{lib.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_bytes(data)
        tmp.replace(lib)  # whole or not at all: another session may load it now
    return [f"-Djava.library.path={where}"]


@dataclass(frozen=True)
class Run:
    code: int
    crash: str | None  # the app's CRASH: line, without the prefix
    state: list[tuple[str, str, str]]  # (store, key, value) over every local task's store
    stderr: str

    def values(self, store: str) -> Counter[str]:
        """How many tasks' stores hold each key (2: the key's state is split)."""
        return Counter(k for s, k, _ in self.state if s == store)


def _parse(code: int, out: str, err: str) -> Run:
    crash = next(
        (ln[len("CRASH: ") :] for ln in out.splitlines() if ln.startswith("CRASH: ")), None
    )
    state = [tuple(ln.split("\t")[1:4]) for ln in out.splitlines() if ln.startswith("STATE\t")]
    return Run(code, crash, state, err)  # type: ignore[arg-type]


class Live:
    """The app run with ``--live``: it goes on while the test alters topics, each of its
    output lines kept with the (monotonic) time it came; :meth:`finish` ends the live phase."""

    def __init__(self, command: list[str], max_seconds: int) -> None:
        self.max_seconds = max_seconds
        self.lines: list[tuple[float, str, str]] = []  # (time, "out" or "err", line)
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._pumps = [
            threading.Thread(target=self._pump, args=(stream, tag), daemon=True)
            for stream, tag in ((self.proc.stdout, "out"), (self.proc.stderr, "err"))
        ]
        for pump in self._pumps:
            pump.start()

    def _pump(self, stream: object, tag: str) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append((time.monotonic(), tag, line.rstrip("\n")))

    def first(self, text: str, since: float = 0.0) -> float | None:
        """When a line holding ``text`` first came (at or after ``since``), if it did."""
        return next((t for t, _, ln in list(self.lines) if t >= since and text in ln), None)

    def wait_for(self, text: str, timeout: float, since: float = 0.0) -> float:
        """Wait for a line holding ``text``; its time."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = self.first(text, since)
            if found is not None:
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        found = self.first(text, since)
        assert found is not None, f"no {text!r} within {timeout} s: {self.text('err')[-3000:]}"
        return found

    def text(self, tag: str) -> str:
        return "\n".join(ln for _, t, ln in list(self.lines) if t == tag)

    def finish(self) -> Run:
        """Close the app's input (the end of its live phase) and wait for its end."""
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        code = self.proc.wait(timeout=self.max_seconds + 60)
        settle_archive(self.proc.args)  # type: ignore[arg-type]
        for pump in self._pumps:
            pump.join(timeout=10)
        return _parse(code, self.text("out"), self.text("err"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass
class StreamsApp:
    """One application of the fixture: its topics, id and state directory."""

    kafka: Kafka
    topology: str
    protocol: str = "classic"
    input_partitions: int = 3
    app_id: str = ""
    input: str = ""
    table: str = ""
    output: str = ""
    state_dir: Path = field(default_factory=Path)
    #: Another Kafka's jars (its kafka-local ``classpath``) and state directory: the app
    #: then runs as that Kafka Streams client; default the session's kafka-local.
    classpath: str | None = None
    home: Path | None = None
    #: The classic protocol's session.timeout.ms (the fixture's --session-timeout-ms);
    #: None: the client's default, 45 s.
    session_timeout_ms: int | None = None
    #: The main consumer's isolation.level (the fixture's --isolation-level), as a
    #: runbook names it; None: the client's default (read_uncommitted at at-least-once).
    isolation_level: str | None = None
    #: The application id's prefix (a unique suffix follows); default ``app-<topology>``.
    app_prefix: str = ""
    #: An input topic that exists already, shared with other readers; default a new one.
    shared_input: str = ""

    def __post_init__(self) -> None:
        k = self.kafka
        self.app_id = k.unique(self.app_prefix or f"app-{self.topology}")
        self.input = self.shared_input or k.create_topic(
            f"{self.app_id}-orders", self.input_partitions
        )
        self.table = k.create_topic(f"{self.app_id}-customers", 3)
        self.output = k.create_topic(f"{self.app_id}-enriched", 3)
        home = self.home or state_dir()
        self.state_dir = home / "streams-state" / self.app_id
        self.cp = compile_fixture(home, STREAMS_SRC, self.classpath)

    def produce(self, topic: str, records: list[tuple[str, str]]) -> None:
        """Records placed by Kafka's Java producer's default partitioner."""
        self.kafka.produce(topic, [(k.encode(), v.encode(), None) for k, v in records])

    def command(
        self,
        max_seconds: int = 60,
        run_seconds: int = 0,
        threads: int = 1,
        instance: int = 0,
        close: str = "leave",
        extra: Sequence[str] = (),
    ) -> list[str]:
        """The fixture's ``run`` command line; instance ``i > 0`` gets its own state dir,
        as instances on one host must.  ``close="plain"`` closes as most real apps do,
        without leaving the group, so a classic-protocol member outlives the process by
        its session timeout (a streams-protocol one leaves anyway; FINDINGS.md); the
        default leaves, so the next run does not wait for it."""
        state = self.state_dir if instance == 0 else self.state_dir / f"instance-{instance}"
        return [
            *self._fixture(
                "run",
                *cds_options(self.cp, "StreamsFixture"),
                *QUICK_JVM,
                f"-Dlog4j2.configurationFile={LOG_CONFIG}",
                *rocksdb_native(self.cp),
            ),
            "--bootstrap-server",
            self.kafka.bootstrap,
            "--application-id",
            self.app_id,
            "--state-dir",
            str(state),
            "--protocol",
            self.protocol,
            "--threads",
            str(threads),
            "--idle-ms",
            "1500",
            "--run-seconds",
            str(run_seconds),
            "--max-seconds",
            str(max_seconds),
            "--close",
            close,
            *(
                ["--session-timeout-ms", str(self.session_timeout_ms)]
                if self.session_timeout_ms is not None
                else []
            ),
            *(["--isolation-level", self.isolation_level] if self.isolation_level else []),
            *extra,
        ]

    def _fixture(self, action: str, *jvm_options: str) -> list[str]:
        """``java ... StreamsFixture ACTION`` with this app's topology and topic names."""
        return [
            "java",
            *jvm_options,
            "-cp",
            self.cp,
            "StreamsFixture",
            action,
            "--topology",
            self.topology,
            "--input",
            self.input,
            "--table",
            self.table,
            "--output",
            self.output,
        ]

    def migcheck(
        self, command: str, *args: str, here: pytest.CaptureFixture[str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``migcheck COMMAND`` on this app (its broker and application id) as a process;
        given ``here`` (pytest's capsys), in this process (oracles.run_here)."""
        full = (command, "--bootstrap-server", self.kafka.bootstrap, "--application-id",
                self.app_id, *args)  # fmt: skip
        return run_cli(*full) if here is None else run_here(here, *full)

    def run(self, max_seconds: int = 60, close: str = "leave") -> Run:
        """Run the app until it is idle, crashes or times out; read its stores.  ``close``
        as for :meth:`command`."""
        rc, out, err = run(self.command(max_seconds, close=close), timeout=max_seconds + 60)
        return _parse(rc, out, err)

    @contextlib.contextmanager
    def live(self, max_seconds: int = 90, uncaught: str = "shutdown-client") -> Iterator[Live]:
        """The app running (``--live``) while the test alters its topics; ``uncaught`` is
        what its uncaught-exception handler does (shutdown-client, replace-thread or none,
        Kafka Streams' own default).  Killed at the end if the test did not finish it."""
        extra = ("--live", "--uncaught", uncaught)
        app = Live(self.command(max_seconds, extra=extra), max_seconds)
        try:
            yield app
        finally:
            app.stop()

    def alter(self, topic: str, partitions: int) -> None:
        rc, out, err = self.kafka.tool(
            "kafka-topics",
            "--bootstrap-server",
            self.kafka.bootstrap,
            "--alter",
            "--topic",
            topic,
            "--partitions",
            str(partitions),
        )
        assert rc == 0, f"kafka-topics --alter failed: {out} {err}"

    def describe(self, path: Path) -> Path:
        """The app's own Topology#describe() with its real topic names, written to ``path``."""
        rc, out, err = run(self._fixture("describe", *QUICK_JVM))
        assert rc == 0, err
        path.write_text(out, encoding="utf-8")
        return path

    def describe_file(self) -> Path:
        """The committed describe() fixture, with the generic names (``orders``...)."""
        return DESCRIBE / f"{self.topology}.txt"


def ran_once(kafka: Kafka, topology: str = "count") -> StreamsApp:
    """A real app that has run once over :func:`phase1`: its input, store and changelog."""
    app = StreamsApp(kafka, topology)
    app.produce(app.input, phase1())
    assert app.run().code == 0
    return app


TOPOLOGY_EXCEPTION = "org.apache.kafka.streams.errors.TopologyException: "
STREAMS_EXCEPTION = "org.apache.kafka.streams.errors.StreamsException: "
#: Classic's co-partitioning TopologyException: "Invalid topology: " and the thread's name
#: come before the text CopartitionedTopicsEnforcer formats.
CLASSIC_TOPOLOGY = TOPOLOGY_EXCEPTION + "Invalid topology: "
#: The log prefix a classic TopologyException carries: the thread's name holds the
#: process's random UUID, so migcheck quotes what follows it.
THREAD = re.compile(r"stream-thread \[[^\]]*\] ")


def quoted_crash(crash: str | None, exception: str) -> str:
    """The app's CRASH line as migcheck quotes it: without the exception's class and the
    thread's name (FINDINGS.md, "A join before a repartition topic")."""
    assert crash is not None and crash.startswith(exception), crash
    return THREAD.sub("", crash.removeprefix(exception), count=1)
