"""Full scans through Spark's own Kafka source: JVM consumers reading offset ranges in parallel.

A full scan decodes every record.  Done in Python (kafka-python inside Spark
tasks) that ran at a twentieth of Kafka's own consumer; Spark's Kafka source
(``spark-sql-kafka-0-10``, of the Spark version pyspark bundles) decodes in the
JVM, hands Spark rows without a Python step, and is what Spark users already
run on a cluster.  Samples stay on kafka-python (:mod:`migcheck.kafka.reader`):
they read little, and a Python reader can size each fetch to its window.

The jars come from Maven Central the way Spark resolves packages
(``spark.jars.packages``, Ivy) on the first run, are cached under
:func:`cache_dir`, and are given to later sessions as ``spark.jars`` so no run
after the first resolves anything.  Offline, ``MIGCHECK_SPARK_KAFKA_JARS``
names the jars (a directory or a comma-separated list); under spark-submit the
user passes ``--packages`` (see :func:`missing_source_message`).

The read is strictly read-only: the partitions are *assigned* with explicit
offset ranges, nothing is committed, and only committed transactions are read.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from migcheck.kafka.config import FETCH_MAX_WAIT_MS, ClientConfig
from migcheck.kafka.reader import WorkUnit

ARTIFACT = "spark-sql-kafka-0-10_2.13"

#: Jars pyspark already bundles: resolving them again only costs a 60 MB download.
_BUNDLED = (
    "org.apache.hadoop:hadoop-client-runtime",
    "org.apache.hadoop:hadoop-client-api",
    "at.yawk.lz4:lz4-java",
    "org.lz4:lz4-java",
    "org.xerial.snappy:snappy-java",
    "org.slf4j:slf4j-api",
    "com.google.code.findbugs:jsr305",
    "org.scala-lang.modules:scala-parallel-collections_2.13",
)

#: Client properties never passed to the source: Spark refuses them, or they would
#: let a read join a group, commit or read uncommitted data.
_NOT_PASSED = frozenset(
    {
        "bootstrap.servers",
        "group.id",
        "group.instance.id",
        "enable.auto.commit",
        "auto.offset.reset",
        "key.deserializer",
        "value.deserializer",
        "interceptor.classes",
        "isolation.level",
    }
)


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def package() -> str:
    """The Maven coordinate of the source for the Spark that pyspark bundles."""
    return f"org.apache.spark:{ARTIFACT}:{spark_version()}"


def cache_root() -> Path:
    """migcheck's cache: ``$MIGCHECK_CACHE_DIR``, or ``migcheck`` in the XDG cache."""
    return Path(
        os.environ.get("MIGCHECK_CACHE_DIR")
        or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "migcheck"
        )
    )


def cache_dir() -> Path:
    """Where the resolved jars are kept."""
    return cache_root() / f"spark-kafka-{spark_version()}"


def _manifest() -> Path:
    return cache_dir() / "jars.txt"


def _offline_jars() -> list[str] | None:
    """``MIGCHECK_SPARK_KAFKA_JARS``: a directory of jars or a comma-separated list."""
    given = os.environ.get("MIGCHECK_SPARK_KAFKA_JARS")
    if not given:
        return None
    if os.path.isdir(given):
        return sorted(str(p) for p in Path(given).glob("*.jar"))
    return [p for p in given.split(",") if p]


def _cached_jars() -> list[str] | None:
    try:
        jars = _manifest().read_text().split()
    except OSError:
        return None
    return jars if jars and all(os.path.isfile(j) for j in jars) else None


def jar_settings(conf: dict[str, str]) -> dict[str, str]:
    """Spark settings that put the source on an embedded session's classpath.

    A user who set ``spark.jars`` or ``spark.jars.packages`` keeps them.  The first
    run says, on stderr, that it is fetching; :func:`remember_jars` then records
    what Ivy fetched so that later runs skip the resolution.
    """
    if "spark.jars" in conf or "spark.jars.packages" in conf:
        return {}
    jars = _offline_jars() or _cached_jars()
    if jars:
        return {"spark.jars": ",".join(jars)}
    print(
        f"migcheck: fetching Spark's Kafka source ({package()}) from Maven Central "
        f"into {cache_dir()} (first run only)",
        file=sys.stderr,
    )
    return {
        "spark.jars.packages": package(),
        "spark.jars.ivy": str(cache_dir() / "ivy"),
        "spark.jars.excludes": ",".join(_BUNDLED),
    }


def remember_jars(settings: dict[str, str]) -> None:
    """After a session resolved the source with Ivy, record its jars for the next runs."""
    if settings.get("spark.jars.packages") != package():
        return
    jars = sorted(str(p) for p in (cache_dir() / "ivy" / "jars").glob("*.jar"))
    if jars:
        tmp = _manifest().with_suffix(f".tmp-{os.getpid()}")
        tmp.write_text("\n".join(jars) + "\n")
        tmp.replace(_manifest())


def missing_source_message() -> str:
    """What to do when a session lacks the source (a spark-submit without ``--packages``)."""
    return (
        f"Spark's Kafka source is not on this Spark's classpath: run spark-submit with "
        f"--packages {package()} (or --jars with that jar and its dependencies)"
    )


# --- the read -------------------------------------------------------------------------


def source_options(client: ClientConfig, units: Iterable[WorkUnit]) -> dict[str, str]:
    """The source's options for reading exactly ``units`` (one range per partition).

    The user's ``--command-config`` properties go to the JVM consumer as Kafka's
    own tools would take them; secrets stay inside this dict, which is never printed.
    """
    starts: dict[str, dict[str, int]] = {}
    ends: dict[str, dict[str, int]] = {}
    for u in units:
        starts.setdefault(u.topic, {})[str(u.partition)] = u.start
        ends.setdefault(u.topic, {})[str(u.partition)] = u.end
    # Measured on a 5M-record topic: fewer, larger polls read it 15% faster.
    options = {
        "kafka.max.poll.records": "20000",
        "kafka.max.partition.fetch.bytes": str(4 << 20),
        "kafka.fetch.max.wait.ms": str(FETCH_MAX_WAIT_MS),
        # Offsets are listed once, by the driver: a dead broker fails that in 15 s, not
        # Spark's default three tries of a minute.
        "kafka.request.timeout.ms": "15000",
        "kafka.default.api.timeout.ms": "15000",  # Kafka wants it >= the request timeout
        "fetchOffset.numRetries": "1",
    }
    options.update({f"kafka.{k}": v for k, v in client.properties.items() if k not in _NOT_PASSED})
    options.update(
        {
            "kafka.bootstrap.servers": client.bootstrap_servers,
            "kafka.isolation.level": "read_committed",
            "assign": json.dumps({t: sorted(int(p) for p in ps) for t, ps in starts.items()}),
            "startingOffsets": json.dumps(starts),
            "endingOffsets": json.dumps(ends),
            # Records deleted under the scan fail it: a report must never look whole
            # when part of the topic went unread.
            "failOnDataLoss": "true",
            # A broker that stops answering fails the task in 20 s rather than Spark's
            # default 120 s: an operator waits for an answer, not for a hung scan.
            "kafkaConsumer.pollTimeoutMs": "20000",
        }
    )
    return options


def whole_partitions(units: Iterable[WorkUnit]) -> list[WorkUnit]:
    """One range per partition (the source reads one range each; it splits them itself)."""
    spans: dict[tuple[str, int], WorkUnit] = {}
    for u in units:
        seen = spans.get((u.topic, u.partition))
        start = u.start if seen is None else min(seen.start, u.start)
        end = u.end if seen is None else max(seen.end, u.end)
        spans[(u.topic, u.partition)] = WorkUnit(u.topic, u.partition, start, end)
    return sorted(spans.values())


def jvm_records(spark: Any, client: ClientConfig, units: list[WorkUnit]) -> tuple[Any, Any]:
    """The records of ``units`` (whole partitions' ranges) as a DataFrame of
    :data:`~migcheck.kafka.reader.RECORD_SCHEMA` columns, read by Spark's Kafka source,
    and a progress counter over its tasks."""
    from pyspark.sql import functions as F

    ranges = whole_partitions(units)
    total = sum(u.end - u.start for u in ranges)
    reader = spark.read.format("kafka").options(**source_options(client, ranges))
    # Big partitions split over several tasks, so every core has work to the end.
    tasks = max(len(ranges), 4 * spark.sparkContext.defaultParallelism)
    reader = reader.option("minPartitions", str(tasks))
    records = reader.load().select(
        "topic",
        "partition",
        "offset",
        "key",
        F.length("key").alias("key_size"),
        F.length("value").alias("value_size"),
        F.unix_millis("timestamp").alias("timestamp"),
    )
    return records, TaskProgress(spark, total)


class TaskProgress:
    """Records read so far, estimated from Spark's finished tasks: the JVM read has no
    Python step to count records in, and tasks are of about equal size."""

    def __init__(self, spark: Any, total: int) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.total = total
        self.first_stage = max(self._stages(), default=-1) + 1
        self.done = 0

    def _stages(self) -> list[int]:
        return list(self.tracker.getActiveStageIds())

    @property
    def value(self) -> int:
        """Records of the first read stage started after this object, by finished tasks."""
        for stage_id in sorted(self._stages()):
            if stage_id >= self.first_stage:
                info = self.tracker.getStageInfo(stage_id)
                if info and info.numTasks:
                    done = self.total * info.numCompletedTasks // info.numTasks
                    self.done = max(self.done, done)
                break
        return self.done
