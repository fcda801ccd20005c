"""Spark's failures as one line, on the texts PySpark 4.2 really hands the driver.

Each text is ``str(e)`` of an exception a real Spark raised (a local session, or
a standalone cluster whose worker cannot see the driver's checkout), with the
JVM's ``at ...`` frames cut to two per block; nothing else is changed.
"""

from __future__ import annotations

import pytest

from migcheck.analysis.errors import spark_error_message

LOG = "/var/tmp/spark.log"

#: A cluster's executor without migcheck, unpickling migcheck's UDF (PythonException).
NO_MIGCHECK_ON_THE_EXECUTOR = """\
An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/tmp/clusterpy/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/worker.py", line 3602, in main
    func, profiler, deserializer, serializer = read_udfs(
                                               ^^^^^^^^^^
  File "/tmp/clusterpy/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/worker.py", line 1079, in read_single_udf
    f, return_type = read_command(pickleSer, infile)
                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/clusterpy/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 454, in loads
    return cloudpickle.loads(obj, encoding=encoding)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ModuleNotFoundError: No module named 'migcheck'"""  # noqa: E501

#: PYSPARK_PYTHON naming a program the executors do not have (Py4JJavaError of a
#: DataFrame's collect: the Py4J object name first).
NO_SUCH_PYTHON = """\
An error occurred while calling o46.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most recent failure: Lost task 0.0 in stage 0.0 (TID 0) (192.0.2.2 executor driver): java.io.IOException: Cannot run program "/nonexistent/bin/python3": error=2, No such file or directory
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1073)
\t...
Caused by: java.io.IOException: error=2, No such file or directory
\tat java.base/java.lang.ProcessImpl.forkAndExec(Native Method)
\tat java.base/java.lang.ProcessImpl.<init>(ProcessImpl.java:314)
\t...
\t... 32 more

Driver stacktrace:
\tat org.apache.spark.scheduler.DAGScheduler.$anonfun$abortStage$3(DAGScheduler.scala:3318)
\tat scala.Option.getOrElse(Option.scala:201)
\t...
Caused by: java.io.IOException: Cannot run program "/nonexistent/bin/python3": error=2, No such file or directory
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1073)
\t...
\t... 1 more
Caused by: java.io.IOException: error=2, No such file or directory
\tat java.base/java.lang.ProcessImpl.forkAndExec(Native Method)
\tat java.base/java.lang.ProcessImpl.<init>(ProcessImpl.java:314)
\t...
\t... 32 more"""  # noqa: E501

#: Executors on Python 3.12 under a 3.11 driver: PySpark's worker refuses first.
PYTHON_312_WORKER = """\
An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/work/main/.tox/test/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/worker.py", line 3569, in main
    check_python_version(infile)
  File "/work/main/.tox/test/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/worker_util.py", line 86, in check_python_version
    raise PySparkRuntimeError(
pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION_MISMATCH] Python in worker has different version: 3.12 than that in driver: 3.11, PySpark cannot run with different minor versions.
Please check environment variables PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON are correctly set."""  # noqa: E501

#: A JVM Kafka client with no broker at the address (a JVM error: no traceback).
NO_BROKER = """\
An error occurred while calling o40.collectToPython.
: java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: listNodes
\tat java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)
\tat java.base/java.util.concurrent.CompletableFuture.get(CompletableFuture.java:2073)
\t...
Caused by: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: listNodes"""  # noqa: E501

#: A migcheck error raised inside an RDD task.
READ_ERROR_IN_A_TASK = """\
An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/work/main/.tox/test/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/worker.py", line 3622, in main
    process()
  File "/work/main/.tox/test/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/util.py", line 159, in wrapper
    return f(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^
  File "/tmp/cap/capture2.py", line 25, in t
    raise ReadError("orders-3: no records between offset 5 and 9 for 30s")
migcheck.errors.ReadError: orders-3: no records between offset 5 and 9 for 30s"""  # noqa: E501

#: A path that does not exist (AnalysisException: one line, no trace).
NO_PATH = "[PATH_NOT_FOUND] Path does not exist: file:/nonexistent/path/x.parquet. SQLSTATE: 42K03"


#: 5 M distinct keys under a 512 MiB driver: the sums' hash aggregate could not get
#: execution memory (SparkOutOfMemoryError of a DataFrame's collect).
EXECUTION_MEMORY = """\
An error occurred while calling o186.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 8 in stage 2.0 failed 1 times, most recent failure: Lost task 8.0 in stage 2.0 (TID 20) (192.0.2.2 executor driver): org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 262144 bytes of memory, got 71288. SQLSTATE: 53200
\tat org.apache.spark.errors.SparkCoreErrors$.outOfMemoryError(SparkCoreErrors.scala:456)
\tat org.apache.spark.errors.SparkCoreErrors.outOfMemoryError(SparkCoreErrors.scala)
\t...

Driver stacktrace:
\tat org.apache.spark.scheduler.DAGScheduler.$anonfun$abortStage$3(DAGScheduler.scala:3318)
\tat scala.Option.getOrElse(Option.scala:201)
\t...
Caused by: org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 262144 bytes of memory, got 71288. SQLSTATE: 53200
\tat org.apache.spark.errors.SparkCoreErrors$.outOfMemoryError(SparkCoreErrors.scala:456)
\tat org.apache.spark.errors.SparkCoreErrors.outOfMemoryError(SparkCoreErrors.scala)
\t..."""  # noqa: E501


@pytest.fixture(autouse=True)
def spark_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGCHECK_SPARK_LOG", LOG)


def test_a_python_workers_error_is_its_exception_line() -> None:
    assert spark_error_message(RuntimeError(NO_MIGCHECK_ON_THE_EXECUTOR)) == (
        f"Spark failed: ModuleNotFoundError: No module named 'migcheck' (Spark's log: {LOG})"
    )


def test_a_missing_python_program_names_the_setting() -> None:
    assert spark_error_message(RuntimeError(NO_SUCH_PYTHON)) == (
        "the executors cannot run Python /nonexistent/bin/python3 (error=2, No such file or "
        "directory): point spark.pyspark.python (or PYSPARK_PYTHON) at a Python the workers "
        f"have (Spark's log: {LOG})"
    )


def test_another_python_version_on_the_workers_names_both_versions() -> None:
    assert spark_error_message(RuntimeError(PYTHON_312_WORKER)) == (
        "the executors run Python 3.12 and this driver 3.11: PySpark needs the same minor "
        "version; point spark.pyspark.python (or PYSPARK_PYTHON) at a Python 3.11 on the "
        f"workers (Spark's log: {LOG})"
    )


def test_the_old_version_mismatch_wording_is_translated_too() -> None:
    old = "Exception: Python in worker has different version (3, 12) than that in driver 3.11"
    assert "run Python 3.12 and this driver 3.11" in spark_error_message(RuntimeError(old))


def test_a_jvm_error_is_its_deepest_cause() -> None:
    assert spark_error_message(RuntimeError(NO_BROKER)) == (
        "Spark failed: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for "
        f"a node assignment. Call: listNodes (Spark's log: {LOG})"
    )


def test_a_failed_tasks_exception_without_a_cause() -> None:
    lost = (
        "An error occurred while calling o12.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage "
        "2.0 failed 4 times, most recent failure: Lost task 3.3 in stage 2.0 (TID 17) "
        "(10.0.0.7 executor 2): java.lang.OutOfMemoryError: Java heap space\n"
        "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n"
    )
    assert spark_error_message(RuntimeError(lost)).startswith(
        "Spark ran out of memory (java.lang.OutOfMemoryError: Java heap space): "
    )


def test_execution_memory_names_the_settings_that_give_more() -> None:
    assert spark_error_message(RuntimeError(EXECUTION_MEMORY)) == (
        "Spark ran out of memory (org.apache.spark.memory.SparkOutOfMemoryError: "
        "[UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 262144 bytes of memory, got 71288. "
        "SQLSTATE: 53200): give it more with --conf spark.driver.memory=4g on a local "
        f"master, or spark.executor.memory on a cluster (Spark's log: {LOG})"
    )


def test_no_py4j_object_name_and_no_empty_worker_header() -> None:
    for text in (NO_MIGCHECK_ON_THE_EXECUTOR, NO_SUCH_PYTHON, NO_BROKER, EXECUTION_MEMORY):
        message = spark_error_message(RuntimeError(text))
        assert "o46." not in message
        assert "o40." not in message
        assert "thrown from the Python worker" not in message
    bare = "An error occurred while calling o382.collectToPython."
    assert (
        spark_error_message(RuntimeError(bare))
        == f"Spark failed: RuntimeError (Spark's log: {LOG})"
    )


def test_a_migcheck_error_raised_in_a_task_is_its_message() -> None:
    assert spark_error_message(RuntimeError(READ_ERROR_IN_A_TASK)) == (
        "orders-3: no records between offset 5 and 9 for 30s"
    )


def test_a_one_line_error_stays_as_it_is() -> None:
    assert (
        spark_error_message(RuntimeError(NO_PATH))
        == f"Spark failed: {NO_PATH} (Spark's log: {LOG})"
    )
