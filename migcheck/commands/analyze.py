"""``analyze`` end to end: plan the read, aggregate on Spark, build the report, apply the gate.

This module wires the steps together and returns the report with its exit
code; it neither renders nor prints (the CLI does).  Every failure a user can
fix becomes a :class:`~migcheck.errors.MigcheckError`, including the ones that
happen inside a Spark task and reach the driver only as a traceback's text.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from migcheck.analysis.aggregate import aggregate, concurrently, figure_spec, scored_pairs
from migcheck.analysis.entries import topic_entry
from migcheck.analysis.errors import spark_errors
from migcheck.analysis.verdicts import GateRules, gate
from migcheck.commands.options import Connection, SparkSettings
from migcheck.errors import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_UNPREDICTABLE,
    MigcheckError,
    UsageError,
)
from migcheck.hashing.partitioners import check_can_grow
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.kafka.reader import plan_units
from migcheck.model.analyze import KeyLayout, Mode, Report, Source, SourceKind, TopicEntry
from migcheck.model.header import report_header

#: Shows progress while records are read: given Spark's records-read accumulator
#: and the total expected, it returns a context manager that runs for the read.
Progress = Callable[[Any, int], AbstractContextManager[object]]


@dataclass
class AnalyzeOptions:
    """Everything ``analyze`` was asked to do, apart from how to render the report."""

    candidates: list[int]
    topics: list[str] = field(default_factory=list)
    full: bool = False
    sample_per_partition: int = 20_000
    partitioner: str = "auto"
    moved_keys_out: str | None = None
    moved_key_sample: int = 10
    fail_if_moved: bool = False
    max_moved_fraction: float | None = None
    keys_file: str | None = None
    from_partitions: int | None = None
    key_encoding: str = "hex"
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)
    #: The key layouts to try (``KeyLayout`` values).  ``migcheck app --state`` allows
    #: window and session changelog keys; ``analyze`` hashes whole keys only.
    key_layouts: tuple[str, ...] = (KeyLayout.PLAIN,)

    @property
    def exact(self) -> bool:
        """Every record is read: a full scan, or an offline key file."""
        return self.full or self.keys_file is not None


@dataclass(frozen=True)
class Outcome:
    """The report and the exit code it calls for (0, 1 gate failed, 2 refused to predict)."""

    report: Report
    exit_code: int


def validate(o: AnalyzeOptions) -> None:
    """Refuse contradictory options before anything is read."""
    _layouts(o)
    if o.keys_file:
        if o.connection.bootstrap or o.topics:
            raise UsageError("use either --keys-file or --bootstrap-server/--topic, not both")
        if o.from_partitions is None:
            raise UsageError("--keys-file needs --from N, the current partition count")
        check_can_grow(o.from_partitions, o.candidates)
        return
    if not o.connection.bootstrap:
        raise UsageError("--bootstrap-server is required (or --keys-file for an export)")
    if not o.topics:
        raise UsageError("at least one --topic is required")
    if o.from_partitions is not None:
        raise UsageError("--from goes with --keys-file; a topic's count is read from Kafka")
    if o.moved_keys_out and not o.full:
        raise UsageError("--moved-keys-out needs --full: a sample would list only some keys")


@dataclass(frozen=True)
class _Plan:
    """What to read, before Spark starts: the topics, a loader and the records expected."""

    topics: list[TopicMeta]
    source: Source
    load: Callable[[Any], tuple[Any, Any]]  # spark -> (records or histories, counter or None)
    total: int
    workers: bool = True  # Spark's jobs need Python workers (else none is warmed)
    #: Spark's JVM holds a row per key (else the read tasks or the driver compute the
    #: figures, and the JVM only passes them on: a short run's JVM, however many records)
    per_key: bool = True


def _layouts(o: AnalyzeOptions) -> tuple[KeyLayout, ...]:
    """The key layouts allowed, refused when unknown or none: a typo must not silently
    mean "plain"."""
    known = [layout.value for layout in KeyLayout]
    unknown = [name for name in o.key_layouts if name not in known]
    if unknown or not o.key_layouts:
        what = f"unknown key layout {unknown[0]!r}" if unknown else "no key layout given"
        raise UsageError(f"{what}; known: {', '.join(known)}")
    return tuple(KeyLayout(name) for name in o.key_layouts)


def _plan_file(o: AnalyzeOptions) -> _Plan:
    from migcheck.analysis.sources import read_keys_file

    table = read_keys_file(o.keys_file or "", o.key_encoding)
    names = sorted(set(table.column("topic").to_pylist()))
    metas = [TopicMeta(t, "delete", o.from_partitions or 1) for t in names]
    source: Source = {"kind": SourceKind.FILE, "path": o.keys_file or ""}
    return _Plan(metas, source, lambda spark: (spark.createDataFrame(table), None), table.num_rows)


def _plan_kafka(o: AnalyzeOptions) -> _Plan:
    from migcheck.analysis.shipping import embedded_local
    from migcheck.analysis.sources import (
        DRIVER_READ_RECORDS,
        DriverRead,
        DriverShare,
        full_histories,
        kafka_histories,
        whole_partitions,
    )

    client = o.connection.client()
    metas = describe_topics(client, list(dict.fromkeys(o.topics)))  # named twice: read once
    for meta in metas:
        check_can_grow(meta.partition_count, o.candidates, f"--to (topic {meta.name!r})")
    units = plan_units(metas, None if o.full else o.sample_per_partition)
    source: Source = {"kind": SourceKind.KAFKA, "bootstrap_servers": o.connection.bootstrap or ""}
    total = sum(u.end - u.start for u in units)
    # The read tasks group their records into key histories: a sample's task whole
    # partitions' windows; a full scan's chunks of partitions, which Spark then merges.
    # A small read on the embedded session is the driver's, started now, while Spark
    # starts.  A cluster's executors read: its driver may be sized to plan, not to read.
    scored = scored_pairs(o.partitioner, _layouts(o))
    # Without --moved-keys-out no row per key is needed, only the figures, which the
    # read tasks (or the driver) compute from the whole partitions they hold.
    figures = not o.moved_keys_out
    local = embedded_local(o.spark.master, o.spark.conf)
    if total <= DRIVER_READ_RECORDS and local:
        driver = DriverRead(client, units, scored, every=o.full)
        load = partial(driver.load, figures=figures)
        return _Plan(metas, source, load, total, workers=not figures, per_key=not figures)
    in_tasks = figures and (not o.full or whole_partitions(units))
    # Tasks of whole partitions share them with the driver, which starts reading now.
    spec = figure_spec(metas, scored, o.candidates, o.moved_key_sample)
    share = DriverShare(client, units, spec, every=o.full).start() if in_tasks and local else None
    read = full_histories if o.full else kafka_histories
    load = partial(read, client=client, units=units, scored=scored, figures=figures, share=share)
    # With a share, the tasks start their workers themselves if they run at all.
    return _Plan(metas, source, load, total, workers=share is None, per_key=not in_tasks)


def run_analyze(o: AnalyzeOptions, progress: Progress | None = None) -> Outcome:
    """Read, aggregate and judge; write ``--moved-keys-out``; return the report and exit code."""
    return run_analyses([o], progress)[0]


def run_analyses(
    options: Sequence[AnalyzeOptions], progress: Progress | None = None
) -> list[Outcome]:
    """:func:`run_analyze` for each of ``options`` (one connection, one Spark), at once.

    ``app --state`` analyzes the changed topics and the changelogs: run one after the
    other, the second read waited for the first's jobs, and each analysis left the
    cores idle between its jobs.  Here every read is planned first (a small one starts
    in the driver at once, while Spark starts), then every analysis's jobs are
    submitted together, so Spark fills one's gaps with the other's tasks."""
    for o in options:
        validate(o)
    if not any(o.exact for o in options):  # samples: a short run, whatever the topics
        start_early(options[0].spark, short_run=True)
    plans = [_plan_file(o) if o.keys_file else _plan_kafka(o) for o in options]
    entries = _aggregate_all(options, plans, progress or _no_progress)
    return [_outcome(o, plan, e) for o, plan, e in zip(options, plans, entries, strict=True)]


def start_early(spark: SparkSettings, short_run: bool) -> None:
    """Launch the embedded JVM while the command still reads Kafka's metadata (see
    :func:`migcheck.analysis.spark.start_early`)."""
    from migcheck.analysis.spark import start_early as launch

    launch(spark.master, spark.conf, short_run)


def _outcome(o: AnalyzeOptions, plan: _Plan, entries: list[TopicEntry]) -> Outcome:
    report: Report = {
        **report_header(),
        "source": plan.source,
        "mode": Mode.FULL if o.exact else Mode.SAMPLE,
        "sample_per_partition": _sample(o),
        "candidates": o.candidates,
        "topics": entries,
        "gate": gate(entries, GateRules(o.fail_if_moved, o.max_moved_fraction)),
    }
    return Outcome(report, exit_code(report))


def _sample(o: AnalyzeOptions) -> int | None:
    """The records read per partition, or None when every record is."""
    return None if o.exact else o.sample_per_partition


def exit_code(report: Report) -> int:
    """3 when a topic could not be predicted, 1 when the gate failed, else 0."""
    if any(not t["predictable"] for t in report["topics"]):
        return EXIT_UNPREDICTABLE
    return EXIT_GATE if report["gate"]["failed"] else EXIT_OK


#: Up to this many records, a full scan runs as a sample does (the client JIT and no
#: adaptive execution, see :func:`~migcheck.analysis.spark.get_session`).  Measured on
#: bench-scan's topics (two alternating runs each, 2026-11-25): 1,000,000 records took
#: 9.6 s so against 12.3 s as a long run; at 5,000,000 the two were equal (20.3 s and
#: 19.8 to 20.7 s).  The bound sits between, well inside where it pays.
SHORT_RUN_RECORDS = 2_000_000


#: Up to this many records in all (every analysis of the command), a short run's
#: expressions are interpreted, not compiled (see
#: :func:`~migcheck.analysis.spark.small_data_settings`): a cold JVM's compiling costs
#: more than interpreting a few thousand histories.  Full scans measured on bench-scan's
#: broker (alternating hand runs, 2026-11-25): 10,000 records 0.3 s faster, 30,000
#: records 0.1 s, 100,000 records 1 s slower; ``app --state`` on a 1,000-record topic
#: 6.1 s to 5.5 s.
TINY_RUN_RECORDS = 20_000


def _short(o: AnalyzeOptions, plan: _Plan) -> bool:
    """Whether the analysis's JVM works for a few seconds only: a sample, a small full
    scan, or a full scan whose read tasks compute the figures (the 5 M bench topic:
    11.4 to 11.8 s so against 13.0 s, three alternating runs, 2026-11-25)."""
    return not o.exact or plan.total <= SHORT_RUN_RECORDS or not plan.per_key


def _aggregate_all(
    options: Sequence[AnalyzeOptions], plans: list[_Plan], progress: Progress
) -> list[list[TopicEntry]]:
    """Each analysis's topic entries, their Spark jobs run together on one session."""
    from migcheck.analysis.spark import get_session, small_data

    first = options[0]
    short = all(_short(o, plan) for o, plan in zip(options, plans, strict=True))
    with spark_errors():
        spark = get_session(  # in this thread: it owns Ctrl-C
            first.spark.master,
            first.spark.conf,
            short_run=short,
            bootstrap=first.connection.bootstrap,
            warm=any(plan.workers for plan in plans),
        )
        tiny = sum(plan.total for plan in plans) <= TINY_RUN_RECORDS
        with small_data(spark, first.spark.conf, tiny) if short else nullcontext():
            return concurrently(
                *(
                    partial(_aggregate, o, plan, spark, progress)
                    for o, plan in zip(options, plans, strict=True)
                )
            )


def _aggregate(o: AnalyzeOptions, plan: _Plan, spark: Any, progress: Progress) -> list[TopicEntry]:
    """One analysis's topic entries; ``--moved-keys-out`` written."""
    records, counter = plan.load(spark)
    with progress(counter, plan.total):
        aggregates, moved_df = aggregate(
            records,
            plan.topics,
            o.candidates,
            o.partitioner,
            o.moved_key_sample,
            _layouts(o),
        )
    if o.moved_keys_out:
        _write_moved_keys(moved_df, o.moved_keys_out)
    forced = o.partitioner != "auto"
    return [
        topic_entry(meta, o.candidates, aggregates[meta.name], forced, _sample(o))
        for meta in plan.topics
    ]


def _no_progress(counter: Any, total: int) -> AbstractContextManager[object]:
    return nullcontext()


def _write_moved_keys(moved_df: Any, path: str) -> None:
    """Stream every moved key to CSV on the driver, one partition of results at a time."""
    try:
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(
                ["topic", "key_hex", "partition", "candidate_partitions", "new_partition"]
            )
            for row in moved_df.orderBy(
                "topic", "candidate_partitions", "key_hex"
            ).toLocalIterator():
                writer.writerow(list(row))
    except OSError as e:
        raise MigcheckError(f"--moved-keys-out {path}: {e.strerror}") from None
