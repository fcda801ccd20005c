"""Session fixtures: a real Kafka broker and a real Spark session, never mocks.

The broker comes, in this order, from
1. ``MIGCHECK_TEST_BOOTSTRAP`` (an existing cluster; the SASL tests then need
   ``MIGCHECK_TEST_SASL_BOOTSTRAP`` with users as in scripts/kafka-local),
2. a testcontainers Kafka container, when a Docker engine answers,
3. ``scripts/kafka-local start --sasl`` (Apache Kafka's jars from Maven Central).

If none starts, the tests that need Kafka FAIL with the reason; they never skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import connectserver
import pytest
import sparkcluster
from kafkatest import KAFKA_LOCAL, REPO, Kafka, compile_fixture, locked, run, state_dir
from sparkcluster import ClusterError, SparkCluster

HERE = Path(__file__).resolve().parent

#: The test files of some 30 s or more, longest first (seconds of a fresh machine's run,
#: 2026-12-06, stop 79: test_cluster 688 ... test_sampled_intervals 33).  pytest-xdist
#: hands whole files to its workers in collection order, so these go first and the short
#: ones fill in at the end: a long file started last would leave the other workers idle
#: while it runs.  The unit lane's trials (tests/unit's test_untrusted, some 50 s) rank too:
#: unranked, they came last.  Only the order depends on this list; a stale one costs
#: minutes, never a test.
LONGEST_FIRST = (
    "test_cluster", "test_app_joins", "test_migrate", "test_client_partitioners", "test_copy",
    "test_quix", "test_app_streams", "test_analyze_kafka", "test_runbook_streams",
    "test_runbook_move_state", "test_jvmarchive", "test_runbook_groups", "test_scale",
    "test_runbook_move_copies", "test_kafka_versions", "test_runbook_strategy",
    "test_runbook_close", "test_faust", "test_spark_udf", "test_read_only", "test_faults",
    "test_runbook_loss", "test_connect", "test_plan_streams", "test_secured", "test_gate",
    "test_app_streams_protocol", "test_readers", "test_render_glance", "test_harness",
    "test_untrusted_runbooks", "test_untrusted", "test_group_protocols", "test_install_route",
    "test_runbook_lost_history", "test_groups", "test_key_layouts", "test_sampled_intervals",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/integration is marked ``integration``, so that CI's
    integration phase can select it beside the unit lane's trials (tox.ini); the longest
    files are put first (:data:`LONGEST_FIRST`)."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.integration)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: files stay whole


def _docker_answers() -> bool:
    try:
        return (
            subprocess.run(
                ["docker", "info"], capture_output=True, timeout=10, check=False
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def kafka() -> Iterator[Kafka]:
    """The broker under test (see the module docstring for where it comes from)."""
    state = state_dir()
    try:
        fixture_cp = compile_fixture(state)
    except Exception as e:  # Maven, javac: the harness itself could not be built
        pytest.fail(f"cannot build the Kafka test fixture: {e}", pytrace=False)

    existing = os.environ.get("MIGCHECK_TEST_BOOTSTRAP")
    if existing:
        sasl = os.environ.get("MIGCHECK_TEST_SASL_BOOTSTRAP")
        with _closing(Kafka(existing, fixture_cp, sasl)) as k:
            yield k
        return

    if _docker_answers():
        from testcontainers.kafka import KafkaContainer

        with (
            KafkaContainer() as container,
            _closing(Kafka(container.get_bootstrap_server(), fixture_cp, None)) as k,
        ):
            yield k
        return

    with _shared_broker(state) as bootstrap:
        secured = []
        for command in ("sasl-address", "ssl-address", "ca"):
            rc, out, _ = run([str(KAFKA_LOCAL), command])
            secured.append(out.strip() if rc == 0 else None)
        sasl, ssl, ca = secured
        with _closing(Kafka(bootstrap, fixture_cp, sasl, ssl, ca, state=state)) as k:
            yield k


@contextmanager
def _shared_broker(state: Path) -> Iterator[str]:
    """``scripts/kafka-local start --sasl``, shared by this run's pytest-xdist workers.

    Under a lock, the first worker starts the broker unless one is running already, and
    records this run as its owner; each worker using it counts itself in.  The last one
    out stops it, if this run started it (and ``MIGCHECK_KEEP_KAFKA`` is not 1): a
    broker that was running before is left running, as a serial run always did."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid-{os.getpid()}")
    lock, owner, users = (state / f".test-broker.{n}" for n in ("lock", "owner", "users"))
    with locked(lock):
        if run([str(KAFKA_LOCAL), "status"])[0] != 0:
            rc, _, err = run([str(KAFKA_LOCAL), "start", "--sasl"])
            if rc != 0:
                log = state / "server.log"
                tail = log.read_text()[-3000:] if log.exists() else ""
                pytest.fail(f"scripts/kafka-local start failed (exit {rc}): {err.strip()}\n{tail}",
                            pytrace=False)  # fmt: skip
            owner.write_text(run_id)
            users.write_text("0")
        users.write_text(str(_count(users) + 1))
        rc, out, err = run([str(KAFKA_LOCAL), "address"])
        if rc != 0:
            pytest.fail(f"scripts/kafka-local address failed: {err.strip()}", pytrace=False)
    try:
        yield out.strip().splitlines()[-1]
    finally:
        with locked(lock):
            left = max(_count(users) - 1, 0)
            users.write_text(str(left))
            ours = owner.exists() and owner.read_text() == run_id
            if not left and ours and os.environ.get("MIGCHECK_KEEP_KAFKA") != "1":
                run([str(KAFKA_LOCAL), "stop"])
                owner.unlink()


@contextmanager
def _closing(kafka: Kafka) -> Iterator[Kafka]:
    """``kafka``, its admin client closed at the end (see :meth:`Kafka.close`)."""
    try:
        yield kafka
    finally:
        kafka.close()


def _count(path: Path) -> int:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return 0


@pytest.fixture(scope="module")
def private_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kafka]:
    """A broker of the module's own (``scripts/kafka-local start`` in a state directory of
    its own, no SASL), stopped at the module's end: for the tests that snapshot the
    whole cluster, which the other workers' tests would change under them."""
    env = {**os.environ, "MIGCHECK_KAFKA_HOME": str(tmp_path_factory.mktemp("broker"))}
    p = subprocess.run([str(KAFKA_LOCAL), "start"], env=env, capture_output=True, text=True,
                       timeout=300, check=False)  # fmt: skip
    if p.returncode != 0:
        pytest.fail(f"scripts/kafka-local start (a private broker) failed: {p.stderr[-3000:]}",
                    pytrace=False)  # fmt: skip
    try:
        with _closing(Kafka(p.stdout.strip().splitlines()[-1], compile_fixture(state_dir()), None,
                            state=Path(env["MIGCHECK_KAFKA_HOME"]))) as k:  # fmt: skip
            yield k
    finally:
        subprocess.run([str(KAFKA_LOCAL), "stop"], env=env, capture_output=True, check=False)


@pytest.fixture(scope="session", autouse=True)
def spark_class_archive() -> None:
    """``migcheck warm`` before any test starts Spark, as the README's install runs it:
    Spark's class archive saved (every later JVM starts about 3 s sooner) and the hash
    kernels compiled into the cache (no test compiles them in front of its clock)."""
    from migcheck.analysis import jvmarchive
    from migcheck.files import cache_root

    archive = jvmarchive.archive_path(cache_root())
    if archive is None or archive.is_file():
        return
    with locked(archive.with_name(archive.name + ".test-lock")):  # one worker saves it
        if archive.is_file():
            return
        rc, out, err = run([sys.executable, "-m", "migcheck", "warm"], timeout=600)
        if rc != 0 or not archive.is_file():
            pytest.fail(f"migcheck warm did not save {archive} (exit {rc}): {out}{err[-2000:]}")


@pytest.fixture(scope="session")
def spark():  # -> pyspark.sql.SparkSession
    """A real embedded Spark session (local mode, two cores)."""
    from migcheck.analysis.spark import get_session

    session = get_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[connectserver.Server]:
    """A real Spark Connect server per test worker, started and stopped by migcheck's own
    ``server start`` and ``server stop`` (tests/support/connectserver.py)."""
    try:
        server = connectserver.start(tmp_path_factory.mktemp("connect-server"))
    except AssertionError as e:
        pytest.fail(f"cannot start a Spark Connect server: {e}", pytrace=False)
    yield server
    connectserver.stop(server)


@pytest.fixture
def on_connect_server(
    connect_server: connectserver.Server, monkeypatch: pytest.MonkeyPatch
) -> connectserver.Server:
    """The test's migcheck commands, and its runbooks', run on the worker's Spark Connect
    server (``MIGCHECK_REMOTE``), as an operator's checks do after ``migcheck server
    start``: the files whose tests run many Spark commands (copies, migrations) take it,
    and so start no Spark application per command.  A command that runs in this process
    takes the test session's own Spark instead (it wins over the environment's server),
    and a copy that a test kills runs embedded (``connectserver.embedded``)."""
    for key, value in connect_server.remote_env().items():
        monkeypatch.setenv(key, value)
    return connect_server


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A real Spark standalone cluster on loopback: a master and two workers of one core,
    run by a virtualenv of PySpark's requirements only (under the state directory), each
    worker in a mount namespace where the driver's virtualenv, ``migcheck/``, migcheck's
    cache and pytest's temporary files are empty directories (tests/support/sparkcluster.py).
    Shared by every cluster test; killed, with every process it started, at the end."""
    state = state_dir()
    try:
        venv = sparkcluster.workers_venv(state)
        root = sparkcluster.new_run_dir(state)
    except (ClusterError, OSError) as e:
        pytest.fail(f"cannot prepare the Spark cluster: {e}", pytrace=False)
    hidden = sparkcluster.driver_paths(REPO, tmp_path_factory.getbasetemp())
    cluster = SparkCluster(root, venv, hidden, quick_executors=True)
    try:
        cluster.start()
    except (ClusterError, OSError) as e:
        tails = cluster.log_tails()
        cluster.stop()
        pytest.fail(f"the Spark cluster did not start: {e}\n{tails}", pytrace=False)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def other_python() -> str:
    """An interpreter of another Python minor version than the driver's, with PySpark's
    requirements: executors the driver cannot use.  From ``$MIGCHECK_TEST_OTHER_PYTHON``,
    pyenv's versions or a ``python3.N`` on PATH."""
    python = sparkcluster.other_minor_python()
    if python is None:
        pytest.fail(
            "no CPython 3.10+ of another minor version than the driver's: install one "
            "(pyenv install 3.12) or set MIGCHECK_TEST_OTHER_PYTHON",
            pytrace=False,
        )
    try:
        return str(sparkcluster.workers_venv(state_dir(), python) / "bin" / "python")
    except ClusterError as e:
        pytest.fail(f"cannot build a virtualenv of {python}: {e}", pytrace=False)


@pytest.fixture(scope="session")
def pyspark_only_python() -> str:
    """The driver's Python minor version with pyspark alone (no pandas, pyarrow, numpy)."""
    try:
        return str(sparkcluster.pyspark_only_venv(state_dir()) / "bin" / "python")
    except ClusterError as e:
        pytest.fail(f"cannot build the pyspark-only virtualenv: {e}", pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def no_work_directory_in_the_checkout() -> Iterator[None]:
    """Executed runbooks keep their work directories in the test's sandbox: a test that
    leaves one in the checkout (the script's default, relative to its directory) fails
    the run here."""
    before = set(REPO.glob("migcheck-runbook-*"))
    yield
    left = sorted(str(p) for p in set(REPO.glob("migcheck-runbook-*")) - before)
    assert not left, f"runbook work directories left in the checkout: {left}"
