"""Spark: the session migcheck runs on, and the partitioner as a Spark column function.

The column functions wrap :func:`migcheck.hashing.partitioners.placement_values` in an
Arrow-native UDF (``pyspark.sql.functions.arrow_udf``, Spark 4.1+), so Spark
hands the kernel whole Arrow batches of keys and the same compiled code runs
on the driver, in tests and on executors.

The UDF returns the *placement value* (the number a client takes modulo the
partition count) rather than a partition, so one hashing pass serves any number
of candidate counts: each candidate is then a native ``%`` in Spark SQL.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import arrow_udf

from migcheck.analysis import (
    jvmarchive,
    probe,
    pyspark_private,
    remote,
    remote_artifacts,
    shipping,
)
from migcheck.analysis.errors import spark_error_message, spark_log_path
from migcheck.analysis.remote import Remote
from migcheck.analysis.session import executors_joined, job_tag, task_slots
from migcheck.errors import MigcheckError
from migcheck.files import cache_root
from migcheck.hashing.partitioners import get_partitioner, placement_values
from migcheck.hashing.sampling import sample_ranks
from migcheck.model.topics import check_partition_count
from migcheck.model.warm import ArchiveState, ClassArchive
from migcheck.untrusted import visible
from migcheck.version import __version__

#: Settings for the embedded session.  Any of them can be overridden with ``--conf``.
EMBEDDED_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # migcheck draws its own progress bar
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
    # The histories' cache (built once, scanned by every report job) uncompressed:
    # compressing it column by column in the read tasks cost seconds of a full scan and
    # of a sample (docs/benchmarks.md).  About 150 bytes a history; what does not fit
    # spills to disk, and 5,000,000 distinct keys still pass under a 512 MiB driver
    # (test_scale).
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    # Redact secrets wherever Spark prints options or settings (plans, logs, errors): a
    # user's --conf may carry them.
    "spark.sql.redaction.options.regex": "(?i)url|jaas|password|secret|token|ssl\\..*key",
    "spark.redaction.regex": "(?i)secret|password|token|access[.]?key|jaas",
}


def _quiet_log4j() -> str:
    """The JVM option that points Spark's log4j2 at our WARN-to-stderr-only config."""
    path = resources.files("migcheck.analysis").joinpath("log4j2-spark.properties")
    return f"-Dlog4j2.configurationFile=file:{path}"


def _start_quietly(master: str, settings: dict[str, str]) -> None:
    """Launch Spark's JVM with its stdout and stderr in :func:`spark_log_path`.

    ``SparkSession.builder`` would let the JVM inherit the terminal; starting the
    gateway ourselves is the one place its output can be redirected.  The session
    built afterwards joins this context.
    """
    from pyspark import SparkConf

    conf = SparkConf().setAppName("migcheck").setMaster(master).setAll(list(settings.items()))
    before = _children()
    try:  # the last run's log, not every run's
        pyspark_private.launch_quietly(conf, spark_log_path())
    except BaseException:  # Ctrl-C or a failure while Spark starts: leave no JVM behind
        for pid in _children() - before:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        raise


def _children() -> set[int]:
    """This process's child processes (from /proc; empty where there is none)."""
    me, found = str(os.getpid()), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            if stat.read_text().rsplit(")", 1)[1].split()[1] == me:
                found.add(int(stat.parent.name))
    return found


@contextlib.contextmanager
def small_data(spark: SparkSession, conf: dict[str, str], tiny: bool = False) -> Iterator[None]:
    """Run a short run's jobs (a sample, a small full scan) with :func:`small_data_settings`,
    each unless the user set it; ``tiny``: the command reads so few records
    (:data:`~migcheck.analysis.scan.plan.TINY_RUN_RECORDS`) that interpreting them beats compiling.

    The session may be shared (tests, a notebook), so the settings are put back
    afterwards.
    """
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions") or 1)
    wanted = small_data_settings(min(task_slots(spark), shuffle), tiny)
    changed = {key: spark.conf.get(key, None) for key in wanted if key not in conf}
    for key in changed:
        spark.conf.set(key, wanted[key])
    try:
        yield
    finally:
        for key, before in changed.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


def small_data_settings(slots: int, tiny: bool = False) -> dict[str, str]:
    """A short run's SQL settings on a session of ``slots`` task slots, or fewer
    shuffle partitions set (:func:`small_data`).

    - Adaptive execution off.  A short run's jobs are small (a sample's few hundred
      thousand rows, or a row per read task): adaptive execution splits each collect
      into two or three Spark jobs and has little to coalesce (docs/benchmarks.md).
    - One shuffle partition per slot, not the embedded default of 8.  With adaptive
      execution off nothing coalesces them, and every stage after a shuffle ran 8 tasks
      of a few rows each, four waves on two cores.
    - ``tiny`` only: expressions interpreted, not compiled (Spark's codegen factory mode
      ``NO_CODEGEN``, which also turns off whole-stage codegen).  A cold JVM compiles
      every job's generated classes before its first row, and interpreted rows cost
      more, so only a tiny read gains (docs/benchmarks.md).
    """
    settings = {
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.shuffle.partitions": str(max(1, slots)),
    }
    if tiny:
        settings["spark.sql.codegen.factoryMode"] = "NO_CODEGEN"
    return settings


def _driver_jvm_options(short_run: bool) -> str:
    """The embedded driver JVM's options: our log4j config, and a JVM tuned for one batch.

    Parallel GC, not the default G1: on two cores G1's concurrent threads and write
    barriers take CPU that a full scan needs (docs/benchmarks.md).  A short run (a
    sample, a small full scan, one whose tasks compute the figures) also stops at the
    client JIT: its jobs end before the optimizing compiler pays off, while the long
    loops of a large full scan whose histories Spark holds need it (docs/benchmarks.md).
    """
    options = [_quiet_log4j(), "-XX:+UseParallelGC"]
    if short_run:
        options.append("-XX:TieredStopAtLevel=1")
    return " ".join(options)


def get_session(
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    short_run: bool = False,
    bootstrap: str | None = None,
    warm: bool = True,
    class_options: Sequence[str] | None = None,
    remote: Remote | None = None,
) -> SparkSession:
    """Start (or join) the Spark session the pipeline runs on.

    With no ``master``: inside spark-submit (``PYSPARK_GATEWAY_PORT`` is set) the
    submitted master is used; otherwise the embedded ``local[*]`` default.  The
    JVM's own output goes to :func:`spark_log_path` unless ``MIGCHECK_VERBOSE`` is set.
    ``short_run`` tunes a JVM that this call starts for a job of a few seconds.

    On a cluster (any master but ``local[...]``) a context this call creates gets
    migcheck and its dependencies as an archive (:mod:`shipping`), and one probe task
    checks an executor first (:func:`check_executors`; ``bootstrap``: the Kafka
    servers the executors must reach, comma-separated).  A local session warms its
    Python workers (:func:`warm_workers`) unless ``warm`` is false: the caller's jobs
    start none.  ``class_options``: the class archive's JVM options for a JVM this call
    launches (:func:`save_class_archive`), instead of those that map it.

    With ``remote``, a session on that Spark Connect server instead (:mod:`remote`): no
    JVM starts here, and the probe checks the server's workers.
    """
    conf = dict(conf or {})
    implied_only = remote is not None and remote.implied
    if implied_only and ("PYSPARK_GATEWAY_PORT" in os.environ or pyspark_private.has_context()):
        remote = None  # this process's own Spark wins over the environment's server
    if remote is not None:
        return _remote_session(remote, conf, bootstrap)
    early = _join_early()
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    fresh = early is not None or not pyspark_private.has_context()
    submitted = _submitted_conf() if under_submit and fresh else {}
    chosen = master or conf.get("spark.master") or submitted.get("spark.master") or "local[*]"
    cluster = not shipping.is_local(chosen)
    _choose_worker_python(conf, local_workers=shipping.embedded_local(master, conf))
    settings = {} if under_submit else _embedded_settings(short_run)
    settings.update(conf)
    if fresh and cluster:
        deps = shipping.ensure_archive()
        settings.update(shipping.executor_settings({**submitted, **settings}, deps))
    starting = not under_submit and fresh
    launch = starting and early is None
    if launch and "spark.driver.extraJavaOptions" not in conf:  # the user's options win
        _with_class_archive(settings, class_options)
    if launch and not os.environ.get("MIGCHECK_VERBOSE"):
        _start_quietly(chosen, settings)
    builder = SparkSession.builder.appName("migcheck")
    if master:
        builder = builder.master(master)
    elif not under_submit and "spark.master" not in conf:
        builder = builder.master("local[*]")
    # pyspark hints map as a dict (invariant) of any primitive: a dict[str, str] is one.
    session = builder.config(map=settings).getOrCreate()  # type: ignore[arg-type]
    session.sparkContext.setLogLevel("ERROR")
    if starting and threading.current_thread() is threading.main_thread():
        # pyspark's own Ctrl-C handler calls into the JVM from inside the interrupted
        # call and logs py4j tracebacks; a plain KeyboardInterrupt lets the CLI end
        # Spark itself (stop_now) with one line.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if fresh and cluster:
        check_executors(session, bootstrap)
    if fresh and not cluster and warm:
        warm_workers(session)
    return session


def _remote_session(where: Remote, conf: dict[str, str], bootstrap: str | None) -> SparkSession:
    """A session on the Spark Connect server ``where`` names, its workers probed as a
    cluster's executors are (the server may run anywhere)."""
    session: SparkSession = remote.open_session(where, conf)
    slot = remote.opened_slot(where)
    check_executors(
        session,
        bootstrap,
        ship=lambda python: remote_artifacts.ship(session, slot, python),
        fix=remote_artifacts.FIX,
    )
    return session


@dataclass
class _EarlyStart:
    """The embedded JVM :func:`start_early` launches, and what :func:`get_session` needs
    of it: the error to raise, if its launch failed."""

    thread: threading.Thread | None = None
    error: BaseException | None = None


_early: _EarlyStart | None = None


def start_early(master: str | None, conf: Mapping[str, str] | None, short_run: bool) -> None:
    """Launch the embedded session's JVM now, in the background; :func:`get_session`
    joins it.

    Spark's start is on a sample's critical path: the driver's reads (its share) overlap
    it.  ``commands.analyze`` calls it once the reads are planned, and only when one
    needs Spark: a small topic's read is the driver's alone and starts no JVM
    (docs/benchmarks.md, issue 45).  Only where
    :func:`get_session` would launch the same JVM: the embedded local master, outside
    spark-submit, no context yet, and no ``MIGCHECK_VERBOSE`` (whose JVM prints to the
    terminal).  A command that fails before it needs Spark leaves nothing: the JVM ends
    when this process does (its gateway reads our pipe)."""
    global _early
    settings = dict(conf or {})
    if _early is not None or pyspark_private.has_context():
        return
    if not shipping.embedded_local(master, settings) or os.environ.get("MIGCHECK_VERBOSE"):
        return
    early = _EarlyStart()
    args = (early, master or settings.get("spark.master") or "local[*]", settings, short_run)
    early.thread = threading.Thread(
        target=_launch_early, args=args, name="migcheck-spark-start", daemon=True
    )
    _early = early
    early.thread.start()


def _launch_early(early: _EarlyStart, master: str, conf: dict[str, str], short: bool) -> None:
    """:func:`get_session`'s launch of a fresh embedded JVM, in :func:`start_early`'s thread."""
    try:
        _choose_worker_python(conf, local_workers=True)
        settings = {**_embedded_settings(short), **conf}
        if "spark.driver.extraJavaOptions" not in conf:
            _with_class_archive(settings)
        _start_quietly(master, settings)
    except BaseException as e:  # raised in get_session's thread
        early.error = e


def _join_early() -> _EarlyStart | None:
    """The JVM :func:`start_early` launched, once it is up (None: none was); its failure
    is raised here, where Spark's errors become one line."""
    global _early
    early, _early = _early, None
    if early is None or early.thread is None:
        return None
    early.thread.join()
    if early.error is not None:
        raise early.error
    return early


def warm_workers(spark: Any) -> None:
    """Start, in the background, a job that readies a local session's Python workers.

    A read task's first second or more goes to its worker: starting it, importing
    pyarrow, kafka-python and numba, and loading the compiled loops from numba's disk
    cache.  Spark reuses an idle worker for the next task, so a job of one tiny task
    per core, run while the driver still reads the topics' metadata and plans its
    jobs, hands the read tasks workers that are ready.  It is a ``mapInArrow`` job like
    theirs: an RDD job's workers (another environment) are not reused by them.
    :func:`get_session` calls it for local masters only: a cluster's executors start
    later and elsewhere.  Its failure is ignored: it only costs speed."""
    slots = task_slots(spark)

    def run() -> None:
        with contextlib.suppress(Exception):
            spark.range(0, slots, 1, slots).mapInArrow(_warm, "warm int").collect()

    threading.Thread(target=run, name="migcheck-warm", daemon=True).start()


def _warm(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A worker's first task: the imports and compiled loops a read task needs."""
    # What the read tasks run, and its imports (pyarrow, kafka-python):
    from migcheck.hashing.partitioners import AUTO_CANDIDATES
    from migcheck.kafka.recordbatch import warm

    warm()
    keys = pa.array([b"warm"] * 65, pa.binary())  # the imports; the loops load at >4,000 keys
    for name in AUTO_CANDIDATES:
        placement_values(keys, name)
    for _ in batches:
        pass
    yield pa.record_batch({"warm": pa.array([1], pa.int32())})


def pyspark_version() -> str:
    """The Spark version pyspark bundles (the probe compares the executors' with it)."""
    import pyspark

    return pyspark.__version__


def _embedded_settings(short_run: bool) -> dict[str, str]:
    """The defaults of a session whose JVM this process starts (not spark-submit's)."""
    return {**EMBEDDED_DEFAULTS, "spark.driver.extraJavaOptions": _driver_jvm_options(short_run)}


def server_settings(master: str, conf: Mapping[str, str]) -> dict[str, str]:
    """A Spark Connect server's settings (:mod:`connect_server`): the embedded session's,
    for a JVM that runs for hours (the optimizing JIT kept), its class archive, and on a
    cluster's master migcheck's archive for the executors; the user's ``--conf`` last."""
    settings = {**_embedded_settings(short_run=False), **conf}
    if "spark.driver.extraJavaOptions" not in conf:  # the user's options win
        _with_class_archive(settings)
    if not shipping.is_local(master):  # the user's archives are kept, after ours
        archive = shipping.ensure_archive()
        settings.update(shipping.executor_settings(settings, archive, sessions=True))
    return settings


def spark_home() -> Path:
    """The Spark that pyspark bundles (its ``bin/spark-submit``, its jars)."""
    import pyspark

    return Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent)


def _submitted_conf() -> dict[str, str]:
    """spark-submit's settings (its master, a user's ``--archives``), read from the JVM
    it started before our context exists."""
    return pyspark_private.submitted_settings()


def _choose_worker_python(conf: dict[str, str], local_workers: bool) -> None:
    """The interpreter Python workers run, which pyspark takes from ``PYSPARK_PYTHON``.

    A user's ``spark.pyspark.python`` wins, as in spark-submit.  Local workers run this
    interpreter (it has migcheck and its kernels), not whatever ``python3`` is first on
    PATH.  A cluster's workers run their own Python (the user's ``PYSPARK_PYTHON``, else
    ``python3`` on the workers' PATH): this one's path means nothing on another host.
    """
    if conf.get("spark.pyspark.python"):
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    elif local_workers:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


#: How long the probe waits for an executor to join the application: one that has not
#: joined by then has no free cores or memory, or cannot connect back to this driver.
PROBE_TIMEOUT_S = 60.0

#: How long the probe waits in all once an executor has joined.  It then fetches and
#: unpacks the shipped archive and starts its Python, and a probe that fails there is
#: retried ``spark.task.maxFailures`` times: beside CI's other tests that took more than
#: the 60 s the first bound allows (stop 76's CI run), while the executors were there.
PROBE_RUN_TIMEOUT_S = 300.0

#: How often the probe's watcher asks whether an executor has joined.
PROBE_POLL_S = 0.5


def check_executors(
    spark: SparkSession,
    bootstrap: str | None,
    ship: Callable[[str], None] | None = None,
    fix: str = probe.ARCHIVES_FIX,
) -> None:
    """Run :func:`probe.probe` as one task before the first job; on what cannot work
    (another Python, another platform, a missing requirement, another migcheck, no route
    to Kafka, no executor at all), stop the session and raise the one line that names
    the fix (``fix``: the one for an archive that does not reach the executors).

    ``ship``: where the executors lack only migcheck's archive, it ships the archive for
    the Python the probe found (a Spark Connect session's artifacts), and the probe runs
    again."""
    brokers = [b.strip() for b in (bootstrap or "").split(",") if b.strip()]
    try:
        found = _run_probe(spark, brokers)
        if ship is not None and probe.needs_archive(found, _driver(found, fix)):
            ship(str(found.get("executable") or ""))
            found = _run_probe(spark, brokers)
        problem = probe.verdict(found, _driver(found, fix))
    except MigcheckError:
        spark.stop()
        raise
    if problem:
        spark.stop()
        raise MigcheckError(f"{visible(problem)} (Spark's log: {spark_log_path()})")


def _driver(found: Mapping[str, Any], fix: str) -> probe.Driver:
    """What the executors the probe ``found`` must match: this driver's Python, platform,
    pyspark and migcheck build.  The build's archive key (0.15 s: every source file read)
    only where theirs came from an archive; no build where migcheck runs from a checkout
    without its metadata (no archive can be made of it, nor compared)."""
    theirs = (found.get("migcheck") or {}).get("archive")
    try:
        build: probe.Build | None = probe.Build(
            __version__, shipping.archive_key() if theirs else ""
        )
    except MigcheckError:
        build = None
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return probe.Driver(python, sysconfig.get_platform(), pyspark_version(), build, fix)


def _run_probe(spark: SparkSession, brokers: list[str]) -> dict[str, Any]:
    """The probe's result from one executor, cancelled as :func:`_watch_probe` decides.

    The probe's module is pickled by value: the executor may not import migcheck.
    """
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(probe)
    done, why = threading.Event(), list[str]()
    with job_tag(spark, f"migcheck-probe-{os.getpid()}") as cancel_jobs:
        watcher = threading.Thread(
            target=_watch_probe,
            args=(done, lambda: executors_joined(spark), cancel_jobs, why),
            name="migcheck-probe-watch",
            daemon=True,
        )
        watcher.start()
        try:
            return _probe_job(spark, brokers)
        except Exception as e:
            failure = spark_error_message(e)
        finally:
            done.set()
            watcher.join()
    raise MigcheckError(why[0] if why else failure)


def _watch_probe(
    done: threading.Event,
    joined: Callable[[], bool],
    cancel: Callable[[], object],
    why: list[str],
) -> None:
    """Until ``done``, cancel the probe (and say why in ``why``) when no executor has
    ``joined`` within :data:`PROBE_TIMEOUT_S`, or one has and the probe is still running
    after :data:`PROBE_RUN_TIMEOUT_S`.  Where ``joined`` cannot tell (a session without
    a SparkContext), it answers False and the first bound holds."""
    started = time.monotonic()
    seen = False
    while not done.wait(PROBE_POLL_S):
        waited = time.monotonic() - started
        seen = seen or joined()
        if waited >= (PROBE_RUN_TIMEOUT_S if seen else PROBE_TIMEOUT_S):
            why.append(_slow_message() if seen else _timeout_message())
            cancel()
            return


def _probe_job(spark: SparkSession, brokers: list[str]) -> dict[str, Any]:
    """:func:`probe.probe` as a one-row DataFrame job (a session without a SparkContext
    has no RDDs).  A plain Python UDF, whose rows cross pickled, not as Arrow: an executor
    whose Python lacks pyarrow still runs it, and is told so (:func:`probe.verdict`)."""
    from pyspark.sql.types import StringType

    found = F.udf(lambda: json.dumps(probe.probe(brokers)), StringType(), useArrow=False)
    row = spark.range(0, 1, 1, 1).select(found().alias("found")).collect()[0]
    found_json: dict[str, Any] = json.loads(row["found"])
    return found_json


def _timeout_message() -> str:
    return (
        f"no executor ran migcheck's probe task within {PROBE_TIMEOUT_S:.0f} s: the cluster "
        f"has no free cores or memory for this application's executors, or its workers "
        f"cannot connect back to this driver (set spark.driver.host to an address they reach) "
        f"(Spark's log: {spark_log_path()})"
    )


def _slow_message() -> str:
    return (
        f"an executor joined but did not finish migcheck's probe task within "
        f"{PROBE_RUN_TIMEOUT_S:.0f} s: its Python workers did not start in time (read the "
        f"executor's stderr in its worker's work directory) (Spark's log: {spark_log_path()})"
    )


def _with_class_archive(settings: dict[str, str], options: Sequence[str] | None = None) -> None:
    """Add the class-data archive's options to the driver JVM's: ``options``, else those
    that map the archive if it is there (see :mod:`jvmarchive`)."""
    if options is None:
        archive = jvmarchive.archive_path(cache_root())
        options = jvmarchive.jvm_options(archive)
        if options and archive is not None:
            jvmarchive.mark_used(archive)
    key = "spark.driver.extraJavaOptions"
    settings[key] = " ".join([settings.get(key, ""), *options]).strip()


def save_class_archive(say: Callable[[str], None]) -> ClassArchive:
    """Spark's class archive for this Java and pyspark, saved in the foreground
    (``migcheck warm``): an embedded JVM runs what a check's jobs run, then exits and
    dumps the classes it loaded (:mod:`jvmarchive`).  An archive already there is only
    touched.  ``say`` hears each step: the dump takes 5 to 20 s after the jobs."""
    started = time.monotonic()
    archive = jvmarchive.archive_path(cache_root())
    if archive is None:
        return ClassArchive(None, ArchiveState.NO_JAVA, 0, 0.0)
    if archive.is_file():
        jvmarchive.mark_used(archive)
        return ClassArchive(str(archive), ArchiveState.PRESENT, archive.stat().st_size, 0.0)
    if not pyspark_private.jvm_reachable():
        return ClassArchive(str(archive), ArchiveState.NO_JVM, 0, 0.0)
    dumping = jvmarchive.dump_options(archive)
    if dumping is None:
        return ClassArchive(str(archive), ArchiveState.UNWRITABLE, 0, 0.0)
    options, dump = dumping
    say("starting Spark and running a check's jobs, to load their classes")
    session = get_session("local[*]", class_options=options, warm=False)
    try:
        _exercise(session)
    finally:
        session.stop()
    say(f"saving Spark's classes to {archive} (the JVM writes them as it exits)")
    whole = jvmarchive.finish_dump(pyspark_private.jvm_process(), dump, archive)
    state = ArchiveState.SAVED if whole else ArchiveState.NOT_WHOLE
    size = archive.stat().st_size if whole else 0
    return ClassArchive(str(archive), state, size, time.monotonic() - started)


def _exercise(spark: SparkSession) -> None:
    """The kinds of job a check runs, on a few thousand made-up keys: Arrow UDFs (the
    placement and the sampling rank), a shuffle and an aggregation, and a ``mapInArrow``
    job like the reads'.  Each class they load goes into the archive; one this misses
    is loaded from its jar as before."""
    keys = spark.range(0, 5000, 1, 2).select(F.col("id").cast("string").cast("binary").alias("key"))
    placed = keys.select(
        (placement_column("key") % 7).alias("p"), sample_rank_column("key").alias("r")
    )
    placed.groupBy("p").agg(F.count(F.lit(1)), F.min("r")).collect()
    spark.range(0, 2, 1, 2).mapInArrow(_warm, "warm int").collect()


def stop_now(grace_s: float = 5.0) -> None:
    """End an embedded Spark at once, its JVM and Python workers included (Ctrl-C).

    Cancelling the jobs does not stop tasks already reading Kafka, and the JVM, when
    the driver leaves, runs a shutdown hook that waits for them: a Ctrl-C would leave
    a Spark JVM behind, still reading.  Under spark-submit the JVM is not ours to end.
    """
    _kill(pyspark_private.jvm_process(), grace_s)
    remote.release_opened()  # a Spark Connect session's jobs run on its server


def _kill(proc: Any, grace_s: float = 5.0) -> None:
    """Kill the JVM we launched: a killed read writes nothing, and the copy is built to
    survive a kill."""
    if proc is None:
        return
    proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(grace_s)


@functools.cache
def _placement_udf(partitioner: str, suffix: int):  # returns a pyspark UserDefinedFunction
    get_partitioner(partitioner)  # fail on the driver, not inside a task

    # Spark infers the UDF's kind from the function's hints; pyspark's overloads all want
    # functionType.
    @arrow_udf("long")  # type: ignore[call-overload]
    def placement(keys: pa.Array) -> pa.Array:
        return placement_values(keys, partitioner, suffix)

    return placement


def placement_column(key: Column | str, partitioner: str = "murmur2", suffix: int = 0) -> Column:
    """The placement value of a binary key column: null where the key is not hashed.
    ``suffix``: that many trailing bytes are not hashed (see ``placement_values``)."""
    return _placement_udf(partitioner, suffix)(key)


def partition_column(
    key: Column | str, num_partitions: int | Column, partitioner: str = "murmur2"
) -> Column:
    """Each key's partition among ``num_partitions``: null where the key is not hashed.

    ``num_partitions`` is an int or an integer column, so candidates can be
    compared side by side over one placement value.
    """
    n = (
        F.lit(check_partition_count(num_partitions))
        if isinstance(num_partitions, int)
        else (num_partitions)
    )
    return (placement_column(key, partitioner) % n).cast("int")


@functools.cache
def _sample_rank_udf():  # returns a pyspark UserDefinedFunction
    @arrow_udf("long")  # type: ignore[call-overload]  # as in _placement_udf
    def rank(keys: pa.Array) -> pa.Array:
        return sample_ranks(keys)

    return rank


def sample_rank_column(key: Column | str) -> Column:
    """A key's consistent sampling rank (mmh3): keep the lowest ranks for a stable sample."""
    return _sample_rank_udf()(key)
