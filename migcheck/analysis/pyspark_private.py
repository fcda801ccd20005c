"""Every use of pyspark's private API, fenced by pyspark's version.

migcheck needs four things of pyspark that its public API does not give:

1. whether this process has a SparkContext already (``SparkContext._active_spark_context``),
   to know whether a session it asks for is one it starts, with its settings;
2. spark-submit's settings before a context exists (``SparkContext._ensure_initialized``),
   to add the executors' archive to a submitted application's own;
3. the JVM process pyspark launched (``SparkContext._gateway.proc``), to end it at
   Ctrl-C and, in ``migcheck warm``, to end it and wait for its class archive;
4. a JVM whose output goes to a file, not the terminal (``pyspark.java_gateway.
   launch_gateway(..., popen_kwargs=...)``, an undocumented function).

Each lives here and nowhere else, written for :data:`TESTED_PYSPARK` (the pin in
``pyproject.toml``; a unit test holds the two together).  Outside that range, each takes a
public path, and the first use says so on stderr, once per process:

1. ``SparkSession.getActiveSession()``: a context made in another thread goes unseen, and
   is joined with its own settings;
2. none: the submitted settings are those pyspark's ``SparkConf`` reads from the
   environment alone;
3. none: Ctrl-C leaves the JVM to end with this process (it reads our pipe), and
   ``migcheck warm`` saves no class archive;
4. ``SparkSession.builder``: the JVM's output reaches the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet

from migcheck.fence import VersionFence

#: The pyspark releases every private use here is written and tested for: the same range
#: as the pin ``pyspark[sql,connect]==4.2.0`` in pyproject.toml (a unit test holds the two
#: together).
TESTED_PYSPARK = SpecifierSet(">=4.2,<4.3")


def fence(version: str | None = None) -> VersionFence:
    """pyspark's fence: of ``version`` for a test, else of the installed pyspark, read at
    its first use (importing this module never imports pyspark)."""
    return VersionFence(
        "pyspark", "pyspark", TESTED_PYSPARK,
        "Spark's output may reach the terminal, and Ctrl-C and `migcheck warm` find "
        "Spark's JVM by this process's children",
        given_version=version,
    )  # fmt: skip


#: The fence of this process's pyspark.
FENCE = fence()


def has_context() -> bool:
    """Use 1: whether this process has a SparkContext now."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if FENCE.open():
        return SparkContext._active_spark_context is not None
    return SparkSession.getActiveSession() is not None


def submitted_settings() -> dict[str, str]:
    """Use 2: spark-submit's settings (its master, a user's ``--archives``), read from the
    JVM it started, before our context exists."""
    from pyspark import SparkConf, SparkContext

    if FENCE.open():
        SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


def launch_quietly(conf: Any, log: str | Path) -> None:
    """Use 4: a SparkContext for ``conf`` whose JVM writes its output to ``log``; outside
    the range, one started as ``SparkSession.builder`` starts it."""
    from pyspark import SparkContext

    if not FENCE.open():
        SparkContext.getOrCreate(conf)
        return
    from pyspark.java_gateway import launch_gateway

    with open(log, "wb") as out:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": out, "stderr": out})
    SparkContext(conf=conf, gateway=gateway)


def jvm_process() -> Any:
    """Use 3: the JVM process pyspark launched (a ``Popen``); None when spark-submit's JVM
    is not ours, or outside the range."""
    from pyspark import SparkContext

    if not jvm_reachable():
        return None
    return getattr(SparkContext._gateway, "proc", None)


def jvm_reachable() -> bool:
    """Whether :func:`jvm_process` can find the JVM (inside the range)."""
    return FENCE.open()
