"""Reading keys: Kafka topics (strictly read-only) or an offline key export.

This is the only module that talks to Kafka.  It never joins a consumer group,
never commits an offset and never creates anything: every consumer has
``group_id=None`` and ``enable_auto_commit=False`` and is ``assign()``-ed to
exact offset ranges.  Records are read with ``isolation_level=read_committed``,
so aborted transactions never count.

Each (topic, partition, offset range) is a :class:`WorkUnit`; Spark runs one
task per unit (``mapInArrow``), and each task yields Arrow batches of
:data:`RECORD_SCHEMA`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

#: What every reader yields, one row per record.  A null ``key`` is a null key;
#: a null ``value_size`` is a tombstone (null value).
RECORD_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("key", pa.binary()),
        ("key_size", pa.int32()),
        ("value_size", pa.int32()),
        ("timestamp", pa.int64()),
    ]
)

#: The same schema in Spark's DDL, for ``mapInArrow``.
RECORD_DDL = (
    "topic string, partition int, offset long, key binary, key_size int, value_size int, "
    "timestamp long"
)

#: Kafka client properties whose values are secrets: never printed, never logged.
SECRET_PROPERTIES = frozenset(
    {
        "sasl.jaas.config",
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.truststore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.certificates",
        "sasl.oauthbearer.token",
    }
)


class ReadError(Exception):
    """Kafka or a key file could not be read; the message is safe to print (no secrets)."""


# --- client configuration ------------------------------------------------------


def parse_properties(text: str) -> dict[str, str]:
    """Parse a Java ``.properties`` file as Kafka's ``--command-config`` files are written.

    Handles ``key=value`` and ``key: value``, ``#``/``!`` comments and backslash
    line continuations, which JAAS configs often use.
    """
    props: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", logical)
        if match:
            props[match.group(1)] = match.group(2).strip()
        elif logical:
            props[logical] = ""
        logical = ""
    return props


def _jaas_option(jaas: str, name: str) -> str | None:
    match = re.search(rf'\b{name}\s*=\s*"((?:[^"\\]|\\.)*)"', jaas)
    return match.group(1) if match else None


@dataclass(frozen=True)
class ClientConfig:
    """How to reach the cluster: bootstrap servers plus kafka-python security options.

    ``repr`` shows the bootstrap servers and option *names* only, so the object
    can appear in logs and tracebacks without leaking a password.
    """

    bootstrap_servers: str
    options: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return f"ClientConfig({self.bootstrap_servers!r}, options={sorted(self.options)})"

    @classmethod
    def from_properties(cls, bootstrap_servers: str, props: dict[str, str]) -> ClientConfig:
        """Translate Kafka client properties (as Kafka's tools take them) to kafka-python."""
        opts: dict[str, Any] = {}
        protocol = props.get("security.protocol", "PLAINTEXT").upper()
        if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
            raise ReadError(f"--command-config: unsupported security.protocol {protocol!r}")
        opts["security_protocol"] = protocol
        if protocol.startswith("SASL"):
            mechanism = props.get("sasl.mechanism", "GSSAPI").upper()
            opts["sasl_mechanism"] = mechanism
            if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
                jaas = props.get("sasl.jaas.config", "")
                user = _jaas_option(jaas, "username")
                password = _jaas_option(jaas, "password")
                if user is None or password is None:
                    raise ReadError(
                        '--command-config: sasl.jaas.config needs username="..." and '
                        'password="..." for ' + mechanism
                    )
                opts["sasl_plain_username"] = user
                opts["sasl_plain_password"] = password
            elif mechanism == "GSSAPI":
                opts["sasl_kerberos_service_name"] = props.get(
                    "sasl.kerberos.service.name", "kafka"
                )
            else:
                raise ReadError(f"--command-config: unsupported sasl.mechanism {mechanism!r}")
        if protocol.endswith("SSL"):
            for kind, target in (("truststore", "ssl_cafile"), ("keystore", "ssl_certfile")):
                location = props.get(f"ssl.{kind}.location")
                if not location:
                    continue
                if props.get(f"ssl.{kind}.type", "JKS").upper() != "PEM":
                    raise ReadError(
                        f"--command-config: ssl.{kind}.type must be PEM "
                        "(JKS and PKCS12 stores are Java-only)"
                    )
                opts[target] = location
                if kind == "keystore":
                    opts["ssl_keyfile"] = props.get("ssl.key.location", location)
            if "ssl.key.password" in props:
                opts["ssl_password"] = props["ssl.key.password"]
            if props.get("ssl.endpoint.identification.algorithm", "https") == "":
                opts["ssl_check_hostname"] = False
        return cls(bootstrap_servers, opts)

    @classmethod
    def load(cls, bootstrap_servers: str, command_config: str | None) -> ClientConfig:
        if command_config is None:
            return cls(bootstrap_servers, {"security_protocol": "PLAINTEXT"})
        try:
            text = Path(command_config).read_text()
        except OSError as e:
            raise ReadError(f"--command-config {command_config}: {e.strerror}") from None
        return cls.from_properties(bootstrap_servers, parse_properties(text))

    def kafka_kwargs(self) -> dict[str, Any]:
        return {"bootstrap_servers": self.bootstrap_servers.split(","), **self.options}


def _consumer(client: ClientConfig, **extra: Any):  # -> kafka.KafkaConsumer
    """A consumer that cannot write: no group, no commits, committed reads only."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    try:
        return KafkaConsumer(
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            request_timeout_ms=30_000,
            bootstrap_timeout_ms=10_000,
            max_partition_fetch_bytes=8 * 1024 * 1024,
            client_id="migcheck",
            **client.kafka_kwargs(),
            **extra,
        )
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(f"cannot reach Kafka at {where}: {_describe(e)}") from None


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0]


# --- metadata ------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionMeta:
    partition: int
    log_start_offset: int
    log_end_offset: int  # the last stable offset: read_committed reads up to it

    @property
    def records(self) -> int:
        """Offsets in range: an upper bound on records (compaction and markers leave gaps)."""
        return self.log_end_offset - self.log_start_offset


@dataclass(frozen=True)
class TopicMeta:
    name: str
    cleanup_policy: str
    partitions: tuple[PartitionMeta, ...]

    @property
    def compacted(self) -> bool:
        return "compact" in self.cleanup_policy


def describe_topics(client: ClientConfig, topics: Iterable[str]) -> list[TopicMeta]:
    """Partitions, log start/end offsets and ``cleanup.policy`` of each topic (read-only)."""
    from kafka import TopicPartition
    from kafka.errors import KafkaError

    topics = list(dict.fromkeys(topics))
    consumer = _consumer(client)
    try:
        existing = consumer.topics()
        missing = [t for t in topics if t not in existing]
        if missing:
            raise ReadError(f"topic {missing[0]!r} does not exist at {client.bootstrap_servers}")
        policies = _cleanup_policies(client, topics)
        metas = []
        for topic in topics:
            parts = sorted(consumer.partitions_for_topic(topic) or ())
            tps = [TopicPartition(topic, p) for p in parts]
            start = consumer.beginning_offsets(tps)
            end = consumer.end_offsets(tps)
            metas.append(
                TopicMeta(
                    topic,
                    policies[topic],
                    tuple(PartitionMeta(tp.partition, start[tp], end[tp]) for tp in tps),
                )
            )
        return metas
    except KafkaError as e:
        where = client.bootstrap_servers
        raise ReadError(f"reading metadata from {where}: {_describe(e)}") from None
    finally:
        consumer.close(autocommit=False)


def _cleanup_policies(client: ClientConfig, topics: list[str]) -> dict[str, str]:
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(
        client_id="migcheck", request_timeout_ms=30_000, **client.kafka_kwargs()
    )
    try:
        result = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics], config_filter="all"
        )
    finally:
        admin.close()
    # kafka-python 3: {"topic": {name: {config: {"value": ...}}}}
    described = result.get("topic", {}) if isinstance(result, dict) else {}
    policies = {}
    for topic in topics:
        entry = described.get(topic, {}).get("cleanup.policy") or {}
        policies[topic] = entry.get("value") or "delete"
    return policies


# --- work units ------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class WorkUnit:
    """One Spark task's share: ``topic``/``partition`` offsets ``[start, end)``."""

    topic: str
    partition: int
    start: int
    end: int


def plan_units(
    metas: Iterable[TopicMeta],
    sample_per_partition: int | None,
    chunk_records: int = 200_000,
    windows: int = 8,
) -> list[WorkUnit]:
    """Split each partition's offset range into units.

    Full scan: consecutive chunks of ``chunk_records`` offsets, so big partitions
    spread over tasks.  Sample: a partition with more than ``sample_per_partition``
    offsets is read in ``windows`` evenly spaced windows that add up to about
    ``sample_per_partition`` records, so the sample sees old and new data alike.
    """
    units: list[WorkUnit] = []
    for meta in metas:
        for p in meta.partitions:
            start, end = p.log_start_offset, p.log_end_offset
            size = end - start
            if size <= 0:
                continue
            if sample_per_partition is None or size <= sample_per_partition:
                for s in range(start, end, chunk_records):
                    units.append(WorkUnit(meta.name, p.partition, s, min(s + chunk_records, end)))
                continue
            count = max(1, min(windows, sample_per_partition))
            width = max(1, sample_per_partition // count)
            gap = (size - width) / max(1, count - 1)
            for i in range(count):
                s = start + round(i * gap) if count > 1 else start
                units.append(WorkUnit(meta.name, p.partition, s, min(s + width, end)))
    return units


# --- reading records ---------------------------------------------------------------

_BATCH_ROWS = 50_000


def read_units(
    client: ClientConfig, units: Iterable[WorkUnit], idle_timeout_s: float = 30.0
) -> Iterator[pa.RecordBatch]:
    """Yield the committed records of ``units`` as Arrow batches (runs inside Spark tasks).

    One consumer serves all the units of a task: connecting costs more than
    reading a small partition.  A unit ends at its end offset; compaction gaps,
    transaction markers and aborted records simply do not appear.  A partition
    that stops answering for ``idle_timeout_s`` fails the task rather than
    hanging it.
    """
    from kafka import TopicPartition

    consumer = _consumer(client, fetch_max_bytes=64 * 1024 * 1024)
    try:
        for unit in units:
            tp = TopicPartition(unit.topic, unit.partition)
            consumer.assign([tp])
            consumer.seek(tp, unit.start)
            cols: dict[str, list[Any]] = {name: [] for name in RECORD_SCHEMA.names}
            last_progress = time.monotonic()
            while consumer.position(tp) < unit.end:
                polled = consumer.poll(timeout_ms=1000, max_records=10_000).get(tp, [])
                if not polled:
                    if time.monotonic() - last_progress > idle_timeout_s:
                        raise ReadError(
                            f"{unit.topic}-{unit.partition}: no records between offset "
                            f"{consumer.position(tp)} and {unit.end} for {idle_timeout_s:.0f}s"
                        )
                    continue
                last_progress = time.monotonic()
                for r in polled:
                    if r.offset >= unit.end:
                        break
                    cols["offset"].append(r.offset)
                    cols["key"].append(r.key)
                    cols["key_size"].append(None if r.key is None else len(r.key))
                    cols["value_size"].append(None if r.value is None else len(r.value))
                    cols["timestamp"].append(r.timestamp)
                if len(cols["offset"]) >= _BATCH_ROWS:
                    yield _batch(unit, cols)
                    cols = {name: [] for name in RECORD_SCHEMA.names}
            if cols["offset"]:
                yield _batch(unit, cols)
    finally:
        consumer.close(autocommit=False)


def pack_units(units: list[WorkUnit], tasks: int) -> list[list[WorkUnit]]:
    """Share units out over at most ``tasks`` tasks of about equal size (largest first)."""
    bins: list[list[WorkUnit]] = [[] for _ in range(max(1, min(tasks, len(units))))]
    sizes = [0] * len(bins)
    for unit in sorted(units, key=lambda u: u.end - u.start, reverse=True):
        i = sizes.index(min(sizes))
        bins[i].append(unit)
        sizes[i] += unit.end - unit.start
    return [b for b in bins if b]


def _batch(unit: WorkUnit, cols: dict[str, list[Any]]) -> pa.RecordBatch:
    n = len(cols["offset"])
    cols["topic"] = [unit.topic] * n
    cols["partition"] = [unit.partition] * n
    return pa.RecordBatch.from_pydict(cols, schema=RECORD_SCHEMA)


# --- offline key exports -----------------------------------------------------------


def read_keys_file(path: str, key_encoding: str, topic: str | None = None) -> pa.Table:
    """Load a key export (Parquet, CSV or JSON lines) as a table of :data:`RECORD_SCHEMA`.

    Columns: ``key`` (hex or text, see ``key_encoding``; empty cell = null key),
    ``partition`` (where the record is), and optionally ``value_size``,
    ``offset`` and ``topic``.  Without a ``topic`` column the file's stem names it.
    """
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.is_file():
        raise ReadError(f"--keys-file {path}: no such file")
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            table = pq.read_table(p)
        elif suffix == ".csv":
            table = pacsv.read_csv(
                p,
                convert_options=pacsv.ConvertOptions(
                    column_types={"key": pa.string()}, strings_can_be_null=True
                ),
            )
        elif suffix in (".json", ".jsonl", ".ndjson"):
            table = pajson.read_json(p)
        else:
            raise ReadError(f"--keys-file {path}: use .parquet, .csv or .jsonl")
    except (pa.ArrowInvalid, OSError) as e:
        raise ReadError(f"--keys-file {path}: {_describe(e)}") from None
    for required in ("key", "partition"):
        if required not in table.column_names:
            raise ReadError(f"--keys-file {path}: no {required!r} column")
    keys = _decode_keys(table.column("key").to_pylist(), key_encoding, path)
    n = table.num_rows
    value_size = (
        table.column("value_size").to_pylist() if "value_size" in table.column_names else [0] * n
    )
    offsets = table.column("offset").to_pylist() if "offset" in table.column_names else range(n)
    topics = (
        [str(t) for t in table.column("topic").to_pylist()]
        if "topic" in table.column_names
        else [topic or p.stem] * n
    )
    return pa.table(
        {
            "topic": topics,
            "partition": pa.array(table.column("partition").to_pylist(), pa.int32()),
            "offset": pa.array(list(offsets), pa.int64()),
            "key": pa.array(keys, pa.binary()),
            "key_size": pa.array([None if k is None else len(k) for k in keys], pa.int32()),
            "value_size": pa.array(value_size, pa.int32()),
            "timestamp": pa.array([None] * n, pa.int64()),
        },
        schema=RECORD_SCHEMA,
    )


def _decode_keys(values: list[Any], encoding: str, path: str) -> list[bytes | None]:
    from migcheck.keys import KeyFormatError, decode_text

    out: list[bytes | None] = []
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
        elif isinstance(v, bytes):
            out.append(v)
        else:
            try:
                out.append(decode_text(str(v), encoding))
            except KeyFormatError as e:
                raise ReadError(f"--keys-file {path}, row {i + 1}: {e}") from None
    return out


def kafka_records(
    spark: Any, client: ClientConfig, units: list[WorkUnit], records_per_task: int = 500_000
) -> tuple[Any, Any]:
    """The records of ``units`` as a Spark DataFrame, read by parallel Spark tasks.

    Units are packed into at least one task per core and about
    ``records_per_task`` records per task.  Returns the DataFrame and an
    accumulator of records read, which the driver polls for the progress bar.
    """
    counter = spark.sparkContext.accumulator(0)
    total = sum(u.end - u.start for u in units)
    tasks = max(spark.sparkContext.defaultParallelism, -(-total // records_per_task))
    packed = pack_units(units, tasks)
    # as many slices as bins: each slice (Spark task) holds exactly one bin
    bins = spark.sparkContext.parallelize(
        [[(u.topic, u.partition, u.start, u.end) for u in b] for b in packed], len(packed)
    )
    units_df = spark.createDataFrame(
        bins.flatMap(lambda b: b), "topic string, partition int, start long, end long"
    )

    def read_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        mine = [
            WorkUnit(r["topic"], r["partition"], r["start"], r["end"])
            for batch in batches
            for r in batch.to_pylist()
        ]
        for out in read_units(client, mine):
            counter.add(out.num_rows)
            yield out

    return units_df.mapInArrow(read_task, RECORD_DDL), counter
