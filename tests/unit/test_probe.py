"""The executors' probe: what it reports, that it runs without migcheck, and its verdict.

The verdict is a pure function of a probe's result; the results here are written
by hand as an executor would report them.
"""

from __future__ import annotations

import ast
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark import cloudpickle

from migcheck.analysis import probe
from migcheck.errors import MigcheckError

DRIVER = probe.Driver("3.11", "linux-x86_64", "4.2.0")
EXE = "/usr/bin/python3"


def result(**changes: Any) -> dict[str, Any]:
    """A healthy executor's report, with ``changes``."""
    found: dict[str, Any] = {
        "python": "3.11",
        "platform": "linux-x86_64",
        "executable": EXE,
        "imports": dict.fromkeys((*probe.PYSPARK_NEEDS, *probe.SHIPPED)),
        "brokers": {"kafka-1:9092": None, "kafka-2:9092": None},
    }
    found.update(changes)
    return found


def imports(**errors: str) -> dict[str, str | None]:
    return {**dict.fromkeys((*probe.PYSPARK_NEEDS, *probe.SHIPPED)), **errors}


def test_a_healthy_executor_passes() -> None:
    assert probe.verdict(result(), DRIVER) is None
    assert probe.verdict(result(brokers={}), DRIVER) is None  # a key file: no brokers


def test_another_python_minor_version_names_the_setting() -> None:
    assert probe.verdict(result(python="3.12"), DRIVER) == (
        "the executors run Python 3.12 and this driver 3.11: PySpark needs the same minor "
        "version; point spark.pyspark.python (or PYSPARK_PYTHON) at a Python 3.11 on the workers"
    )


def test_another_platform_cannot_load_the_shipped_compiled_code() -> None:
    message = probe.verdict(result(platform="linux-aarch64"), DRIVER)
    assert message is not None
    assert message.startswith(
        "the executors run on linux-aarch64 and this driver on linux-x86_64: "
    )
    assert "compiled code" in message


def test_missing_pyspark_requirements_name_the_pip_install() -> None:
    found = result(
        imports=imports(
            pyarrow="ModuleNotFoundError: No module named 'pyarrow'",
            migcheck="ModuleNotFoundError: No module named 'pyarrow'",
        )
    )
    assert probe.verdict(found, DRIVER) == (
        f"the executors' Python ({EXE}) lacks PySpark's own requirements (pyarrow; "
        "ModuleNotFoundError: No module named 'pyarrow'): install them on the workers with "
        "pip install 'pyspark[sql]==4.2.0'"
    )


def test_a_shipped_module_that_does_not_import_names_the_archive() -> None:
    found = result(imports=imports(migcheck="ModuleNotFoundError: No module named 'migcheck'"))
    message = probe.verdict(found, DRIVER)
    assert message is not None
    assert message.startswith(
        "the executors cannot import migcheck from the archive migcheck ships them "
        "(ModuleNotFoundError: No module named 'migcheck'): "
    )


def test_brokers_fail_only_when_none_answers() -> None:
    one_down = {"kafka-1:9092": "[Errno 111] Connection refused", "kafka-2:9092": None}
    assert probe.verdict(result(brokers=one_down), DRIVER) is None
    all_down = {"kafka-1:9092": "timed out", "kafka-2:9092": "[Errno 111] Connection refused"}
    assert probe.verdict(result(brokers=all_down), DRIVER) == (
        "the executors cannot reach the Kafka brokers (kafka-1:9092: timed out; kafka-2:9092: "
        "[Errno 111] Connection refused): the executors, not only this driver, must reach the "
        "bootstrap servers; use addresses the workers can connect to"
    )


def test_the_first_cause_is_named() -> None:
    found = result(python="3.12", brokers={"kafka-1:9092": "timed out"})
    assert "Python 3.12" in (probe.verdict(found, DRIVER) or "")


@pytest.fixture
def listening() -> Iterator[str]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield f"127.0.0.1:{server.getsockname()[1]}"


def test_the_probe_reports_this_interpreter(listening: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"  # bound, not listening: refused
    found = probe.probe([listening, closed, "[::1]:notaport"], timeout_s=1.0)
    assert found["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert found["executable"] == sys.executable
    assert found["imports"] == dict.fromkeys((*probe.PYSPARK_NEEDS, *probe.SHIPPED))
    assert found["brokers"][listening] is None
    assert found["brokers"][closed]
    assert "invalid literal" in found["brokers"]["[::1]:notaport"]
    assert probe.verdict(found, probe.Driver(found["python"], found["platform"], "4.2.0")) is None


def test_the_probe_imports_nothing_of_migcheck() -> None:
    tree = ast.parse(Path(probe.__file__).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[0] == "migcheck"}


def test_the_probe_runs_where_migcheck_cannot_be_imported() -> None:
    """Pickled by value, as Spark ships it: unpickled where ``import migcheck`` fails."""
    cloudpickle.register_pickle_by_value(probe)
    try:
        payload = cloudpickle.dumps(probe.probe)
    finally:
        cloudpickle.unregister_pickle_by_value(probe)
    code = (
        "import sys, pickle; sys.modules['migcheck'] = None; "
        "found = pickle.loads(sys.stdin.buffer.read())([]); "
        "print(found['imports']['migcheck'])"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], input=payload, capture_output=True, timeout=60, check=True
    )
    assert run.stdout.decode().startswith("ModuleNotFoundError: import of migcheck halted")


class FakeTracker:
    """A status tracker listing the driver and ``executors`` executors."""

    def __init__(self) -> None:
        self.executors = 0

    def getExecutorInfos(self) -> list[str]:
        return ["driver"] + ["executor"] * self.executors


class FakeContext:
    """A SparkContext's job tags, master and status tracker."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.tags: list[str] = []
        self.master = "spark://master:7077"
        self.tracker = FakeTracker()

    def statusTracker(self) -> FakeTracker:
        return self.tracker

    def addJobTag(self, tag: str) -> None:
        self.tags.append(tag)

    def removeJobTag(self, tag: str) -> None:
        self.tags.remove(tag)

    def cancelJobsWithTag(self, tag: str) -> None:
        assert tag in self.tags
        self.cancelled.set()


class FakeSession:
    """A classic session (its SparkContext's job tags), and its probe job: it blocks until
    its tag is cancelled, or returns ``found`` at once."""

    def __init__(self, found: dict[str, Any] | None = None) -> None:
        self.found = found
        self.jobs = FakeContext()  # its tags, whichever kind of session keeps them
        self.sparkContext = self.jobs
        self.stopped = False

    def probe_job(self, spark: Any, brokers: list[str]) -> dict[str, Any]:
        assert spark is self
        if self.found is not None:
            return self.found
        self.jobs.cancelled.wait(10)
        raise RuntimeError("Job 0 cancelled part of cancelled job tag migcheck-probe")

    def stop(self) -> None:
        self.stopped = True


class ContextlessSession(FakeSession):
    """A session without a SparkContext (Spark Connect's kind): its own operation tags."""

    def __init__(self, found: dict[str, Any] | None = None) -> None:
        super().__init__(found)
        del self.sparkContext

    def __getattr__(self, name: str) -> Any:
        if name == "sparkContext":  # Spark Connect raises an AttributeError for it
            raise AttributeError("[JVM_ATTRIBUTE_NOT_SUPPORTED] sparkContext")
        raise AttributeError(name)

    def addTag(self, tag: str) -> None:
        self.jobs.addJobTag(tag)

    def removeTag(self, tag: str) -> None:
        self.jobs.removeJobTag(tag)

    def interruptTag(self, tag: str) -> list[str]:
        self.jobs.cancelJobsWithTag(tag)
        return ["operation-1"]


def fake_session(
    monkeypatch: pytest.MonkeyPatch, found: dict[str, Any] | None = None, kind: type = FakeSession
) -> Any:
    """A fake session whose ``probe_job`` runs in place of Spark's probe job."""
    from migcheck.analysis import spark

    session = kind(found)
    monkeypatch.setattr(spark, "_probe_job", session.probe_job)
    return session


@pytest.mark.parametrize("kind", [FakeSession, ContextlessSession])
def test_a_probe_no_executor_runs_is_cancelled(monkeypatch: pytest.MonkeyPatch, kind: type) -> None:
    from migcheck.analysis import spark

    monkeypatch.setattr(spark, "PROBE_TIMEOUT_S", 0.2)
    session = fake_session(monkeypatch, kind=kind)
    with pytest.raises(MigcheckError, match=r"^no executor ran migcheck's probe task within"):
        spark.check_executors(session, "kafka-1:9092")
    assert session.jobs.cancelled.is_set()
    assert session.jobs.tags == []  # later jobs carry no probe tag
    assert session.stopped


def test_a_probe_an_executor_joined_for_waits_the_longer_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beside CI's other tests, executors that had joined took more than the first bound
    to fetch the archive and start their Python: their probe is given the second."""
    from migcheck.analysis import spark

    monkeypatch.setattr(spark, "PROBE_TIMEOUT_S", 0.05)
    monkeypatch.setattr(spark, "PROBE_RUN_TIMEOUT_S", 0.6)
    monkeypatch.setattr(spark, "PROBE_POLL_S", 0.01)
    session = fake_session(monkeypatch)
    session.jobs.tracker.executors = 2
    started = time.monotonic()
    with pytest.raises(MigcheckError, match=r"^an executor joined but did not finish .* 1 s"):
        spark.check_executors(session, "kafka-1:9092")
    assert time.monotonic() - started >= 0.6
    assert session.jobs.cancelled.is_set() and session.stopped


@pytest.mark.parametrize(("master", "executors", "joined"), [
    ("local[*]", 0, True), ("local", 0, True), ("local-cluster[2,1,1024]", 0, False),
    ("spark://m:7077", 0, False), ("spark://m:7077", 1, True),
])  # fmt: skip
def test_an_executor_has_joined_when_the_tracker_lists_one_besides_the_driver(
    master: str, executors: int, joined: bool
) -> None:
    from migcheck.analysis.session import executors_joined

    session = FakeSession()
    session.jobs.master = master
    session.jobs.tracker.executors = executors
    assert executors_joined(session) is joined
    assert executors_joined(ContextlessSession()) is False


def test_a_probe_verdict_stops_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from migcheck.analysis import spark

    monkeypatch.setenv("MIGCHECK_SPARK_LOG", "/var/tmp/spark.log")
    here = probe.probe([])
    session = fake_session(monkeypatch, {**here, "python": "3.9"})
    with pytest.raises(
        MigcheckError, match=r"run Python 3\.9 .*\(Spark's log: /var/tmp/spark.log\)$"
    ):
        spark.check_executors(session, None)
    assert session.stopped
    healthy = fake_session(monkeypatch, here)
    spark.check_executors(healthy, None)
    assert not healthy.stopped


BUILD = probe.Build("0.1.0", "2ce6c5f452c8d825")
BUILT = probe.Driver("3.11", "linux-x86_64", "4.2.0", BUILD, "FIX")


def test_workers_that_run_this_archive_pass() -> None:
    found = result(migcheck={"version": "0.1.0", "archive": "2ce6c5f452c8d825"})
    assert probe.verdict(found, BUILT) is None
    assert not probe.needs_archive(found, BUILT)


def test_an_installed_migcheck_of_this_version_passes() -> None:
    found = result(migcheck={"version": "0.1.0", "archive": None})
    assert probe.verdict(found, BUILT) is None


def test_another_archive_or_version_is_another_build() -> None:
    for theirs in ({"version": "0.1.0", "archive": "0000000000000000"},
                   {"version": "0.0.9", "archive": None}):  # fmt: skip
        found = result(migcheck=theirs)
        message = probe.verdict(found, BUILT)
        assert message is not None
        assert message.startswith("the executors import another migcheck than this driver's")
        assert message.endswith(": FIX")
        assert probe.needs_archive(found, BUILT)


def test_the_archive_is_what_workers_lack_only_when_their_python_fits() -> None:
    missing = imports(migcheck="ModuleNotFoundError: No module named 'migcheck'")
    nothing = {"version": None, "archive": None}
    assert probe.needs_archive(result(imports=missing, migcheck=nothing), BUILT)
    assert not probe.needs_archive(result(python="3.12", imports=missing), BUILT)
    no_arrow = imports(pyarrow="ModuleNotFoundError: No module named 'pyarrow'")
    assert not probe.needs_archive(result(imports=no_arrow, migcheck=nothing), BUILT)
