"""The read, planned before Spark starts: which strategy reads, for which figures, and
how Spark's JVM is started for it.

A read is planned from what the command asks (:class:`ReadRequest`) and the session's
kind (the embedded one on a local master, or a cluster's):

- a small read on the embedded session is the driver's, started at once, while Spark
  starts (:class:`~migcheck.analysis.scan.driver.DriverRead`);
- otherwise the read tasks group their records into key histories: a sample's tasks
  whole partitions' windows (:class:`~migcheck.analysis.scan.tasks.SampleRead`), a full
  scan's chunks which Spark then merges, or whole partitions when each fits in a chunk
  (:class:`~migcheck.analysis.scan.chunks.FullScan`); tasks of whole partitions share
  them with the driver, which starts reading now, on the embedded session
  (:class:`~migcheck.analysis.scan.share.DriverShare`);
- a keys file is read by the driver and grouped by Spark
  (:class:`~migcheck.analysis.scan.keysfile.KeysFile`).

A cluster's executors read: its driver may be sized to plan, not to read.  Without a
row per moved key (``--moved-keys-out``), the read tasks or the driver compute the
figures from the whole partitions they hold, and Spark's JVM only passes them on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from migcheck.analysis.figures import Spec, figure_spec
from migcheck.analysis.histories import scored_pairs
from migcheck.analysis.scan.chunks import FullScan, whole_partitions
from migcheck.analysis.scan.driver import DriverRead
from migcheck.analysis.scan.keysfile import KeysFile, read_keys_file
from migcheck.analysis.scan.share import DriverShare
from migcheck.analysis.scan.strategy import Strategy
from migcheck.analysis.scan.tasks import SampleRead
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, plan_units, records_in
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout
from migcheck.model.partitioner import PartitionerChoice

#: Up to this many records, the driver reads and groups them itself (:class:`DriverRead`)
#: while Spark's JVM starts.
DRIVER_READ_RECORDS = 100_000

#: Up to this many records, a full scan runs as a sample does (the client JIT and no
#: adaptive execution, see :func:`~migcheck.analysis.spark.get_session`): between the
#: sizes where the short run was faster and where the two were equal
#: (docs/benchmarks.md).
SHORT_RUN_RECORDS = 2_000_000

#: Up to this many records in all (every analysis of the command), a short run's
#: expressions are interpreted, not compiled (see
#: :func:`~migcheck.analysis.spark.small_data_settings`): a cold JVM's compiling costs
#: more than interpreting a few thousand histories (docs/benchmarks.md).
TINY_RUN_RECORDS = 20_000


@dataclass(frozen=True)
class ReadRequest:
    """What the command asks of the read."""

    candidates: tuple[int, ...]
    partitioner: PartitionerChoice
    key_layouts: tuple[KeyLayout, ...]
    moved_key_sample: int
    #: records read per partition; None: every record (a full scan, a keys file)
    sample_per_partition: int | None
    #: a row per moved key is wanted (``--moved-keys-out``): Spark holds a row per key
    per_key: bool
    #: the session is the embedded one on a local master (the driver may read)
    local: bool
    #: the session is on a Spark Connect server: up already, so the driver reads a small
    #: topic alone (no session at all), and shares no larger read (nothing to overlap)
    remote: bool = False


@dataclass(frozen=True)
class JvmProfile:
    """How Spark's JVM is started and tuned for the reads of one command."""

    records: int  # records expected in all
    short: bool  # works for a few seconds only (the client JIT, no adaptive execution)
    workers: bool  # Spark's jobs need Python workers (else none is warmed)

    @property
    def tiny(self) -> bool:
        """Few enough records that interpreting beats compiling the expressions."""
        return self.records <= TINY_RUN_RECORDS


@dataclass(frozen=True)
class ReadPlan:
    """A planned read: its topics, the figures' spec (built once, here), the strategy that
    computes them, the records expected, and the JVM it wants."""

    topics: list[TopicMeta]
    spec: Spec
    strategy: Strategy
    total: int
    jvm: JvmProfile


def plan_kafka(request: ReadRequest, client: ClientConfig, topics: list[TopicMeta]) -> ReadPlan:
    """The read of ``topics`` from Kafka; a driver's read or share starts now."""
    scored = scored_pairs(request.partitioner, request.key_layouts)
    spec = figure_spec(topics, scored, request.candidates, request.moved_key_sample)
    every = request.sample_per_partition is None
    units = plan_units(topics, request.sample_per_partition)
    total = records_in(units)
    figures = not request.per_key
    if total <= DRIVER_READ_RECORDS and (request.local or request.remote):
        driver = DriverRead(client, units, spec, every, figures)
        return ReadPlan(topics, spec, driver, total, _jvm(request, total, figures, not figures))
    in_tasks = figures and (not every or whole_partitions(units))
    share = _share(client, units, spec, every) if in_tasks and request.local else None
    strategy = _tasks(client, units, spec, every, figures, share)
    # With a share, the tasks start their workers themselves if they run at all.
    return ReadPlan(topics, spec, strategy, total, _jvm(request, total, in_tasks, share is None))


def plan_file(request: ReadRequest, path: str, key_encoding: str, partitions: int) -> ReadPlan:
    """The read of a key export whose topics had ``partitions`` partitions."""
    table = read_keys_file(path, key_encoding)
    names = sorted(set(table.column("topic").to_pylist()))
    topics = [TopicMeta(t, "delete", partitions) for t in names]
    scored = scored_pairs(request.partitioner, request.key_layouts)
    spec = figure_spec(topics, scored, request.candidates, request.moved_key_sample)
    strategy = KeysFile(table, spec)
    return ReadPlan(topics, spec, strategy, table.num_rows, _jvm(request, table.num_rows))


def _share(client: ClientConfig, units: list[WorkUnit], spec: Spec, every: bool) -> DriverShare:
    return DriverShare(client, units, spec, every).start()


def _tasks(
    client: ClientConfig,
    units: list[WorkUnit],
    spec: Spec,
    every: bool,
    figures: bool,
    share: DriverShare | None,
) -> Strategy:
    if every:
        return FullScan(client, units, spec, figures, share)
    return SampleRead(client, units, spec, figures, share)


def _jvm(
    request: ReadRequest, total: int, figures_outside: bool = False, workers: bool = True
) -> JvmProfile:
    """A read's JVM: short for a sample, a small full scan, or a full scan whose read
    tasks or driver compute the figures (``figures_outside``: Spark's JVM holds no row
    per key, only passes the figures on)."""
    exact = request.sample_per_partition is None
    short = not exact or short_jvm(total) or figures_outside
    return JvmProfile(total, short, workers)


def short_jvm(records: int) -> bool:
    """Whether a job over ``records`` ends before the JVM's optimizing compiler pays off
    (:data:`SHORT_RUN_RECORDS`): a copy of a small topic, like a small full scan, starts
    the client JIT only, which halved a 5,000-record copy's driver CPU (12.5 s to 7 s)."""
    return records <= SHORT_RUN_RECORDS


def combined(profiles: Sequence[JvmProfile]) -> JvmProfile:
    """One session for several reads: short only if every read is, warmed if any needs
    workers, and tiny by the records of them all."""
    return JvmProfile(
        sum(p.records for p in profiles),
        all(p.short for p in profiles),
        any(p.workers for p in profiles),
    )
