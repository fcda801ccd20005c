"""``analyze`` end to end: plan the read, aggregate on Spark, build the report, apply the gate.

This module wires the steps together and returns the report with its exit
code; it neither renders nor prints (the CLI does).  Every failure a user can
fix becomes a :class:`~migcheck.errors.MigcheckError`, including the ones that
happen inside a Spark task and reach the driver only as a traceback's text.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from migcheck.analysis.aggregate import aggregate
from migcheck.analysis.entries import topic_entry
from migcheck.analysis.errors import spark_errors
from migcheck.analysis.figures import MovedKeyRow
from migcheck.analysis.verdicts import GateRules, gate
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.errors import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_UNPREDICTABLE,
    MigcheckError,
    UsageError,
)
from migcheck.kafka.metadata import describe_topics
from migcheck.model.analyze import KeyLayout, Mode, Report, Source, SourceKind, TopicEntry
from migcheck.model.header import report_header
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.topics import check_can_grow, check_changes

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from migcheck.analysis.scan.plan import ReadPlan, ReadRequest
    from migcheck.analysis.scan.strategy import Counter

#: Shows progress while records are read: given the records-read counter (None: the
#: read is done) and the total expected, it returns a context manager for the read.
Progress = Callable[["Counter | None", int], AbstractContextManager[object]]


@dataclass
class AnalyzeOptions:
    """Everything ``analyze`` was asked to do, apart from how to render the report."""

    candidates: list[int]
    topics: list[str] = field(default_factory=list)
    full: bool = False
    sample_per_partition: int = 20_000
    partitioner: PartitionerChoice = PartitionerChoice.AUTO
    moved_keys_out: str | None = None
    moved_key_sample: int = 10
    fail_if_moved: bool = False
    max_moved_fraction: float | None = None
    keys_file: str | None = None
    partitions: int | None = None
    key_encoding: str = "hex"
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)
    #: The key layouts to try (``KeyLayout`` values).  ``migcheck app --state`` allows
    #: window and session changelog keys; ``analyze`` hashes whole keys only.
    key_layouts: tuple[str, ...] = (KeyLayout.PLAIN,)
    #: Keep every moved key in the outcome (``runbook``: the keys whose history splits).
    collect_moved_keys: bool = False

    @property
    def exact(self) -> bool:
        """Every record is read: a full scan, or an offline key file."""
        return self.full or self.keys_file is not None

    @property
    def per_key(self) -> bool:
        """A row per moved key is wanted: written out, or kept in the outcome."""
        return bool(self.moved_keys_out) or self.collect_moved_keys


@dataclass(frozen=True)
class AnalyzeOutcome(Outcome[Report]):
    """Every command's outcome (exit 0; 1 the gate failed; 3 a topic could not be
    predicted), and every moved key when asked (``collect_moved_keys``)."""

    moved_keys: tuple[MovedKeyRow, ...] = ()


def validate(options: AnalyzeOptions) -> None:
    """Refuse contradictory options before anything is read."""
    _layouts(options)
    if options.keys_file:
        if options.connection.bootstrap or options.topics:
            raise UsageError("use either --keys-file or --bootstrap-server/--topic, not both")
        if options.partitions is None:
            raise UsageError("--keys-file needs --partitions N, the current partition count")
        check_can_grow(options.partitions, options.candidates)
        return
    if not options.connection.bootstrap:
        raise UsageError("--bootstrap-server is required (or --keys-file for an export)")
    if not options.topics:
        raise UsageError("at least one --topic is required")
    if options.partitions is not None:
        raise UsageError("--partitions goes with --keys-file; a topic's count is read from Kafka")
    if options.per_key and not options.full:
        raise UsageError("--moved-keys-out needs --full: a sample would list only some keys")


def _layouts(options: AnalyzeOptions) -> tuple[KeyLayout, ...]:
    """The key layouts allowed, refused when unknown or none: a typo must not silently
    mean "plain"."""
    known = [layout.value for layout in KeyLayout]
    unknown = [name for name in options.key_layouts if name not in known]
    if unknown or not options.key_layouts:
        what = f"unknown key layout {unknown[0]!r}" if unknown else "no key layout given"
        raise UsageError(f"{what}; known: {', '.join(known)}")
    return tuple(KeyLayout(name) for name in options.key_layouts)


def _request(options: AnalyzeOptions) -> ReadRequest:
    from migcheck.analysis.scan.plan import ReadRequest
    from migcheck.analysis.shipping import embedded_local

    return ReadRequest(
        candidates=tuple(options.candidates),
        partitioner=options.partitioner,
        key_layouts=_layouts(options),
        moved_key_sample=options.moved_key_sample,
        sample_per_partition=_sample(options),
        per_key=options.per_key,
        local=options.spark.remote is None
        and embedded_local(options.spark.master, options.spark.conf),
        remote=options.spark.remote is not None,
    )


def _plan(options: AnalyzeOptions) -> ReadPlan:
    """The analysis's read, planned (a small one starts in the driver now)."""
    from migcheck.analysis.scan.plan import plan_file, plan_kafka

    if options.keys_file:
        partitions = options.partitions or 1
        return plan_file(_request(options), options.keys_file, options.key_encoding, partitions)
    client = options.connection.client()
    metas = describe_topics(client, list(dict.fromkeys(options.topics)))  # named twice: read once
    check_changes({meta.name: meta.partition_count for meta in metas}, options.candidates)
    return plan_kafka(_request(options), client, metas)


def _source(options: AnalyzeOptions) -> Source:
    """Where the report says its records came from."""
    if options.keys_file:
        return {"kind": SourceKind.FILE, "path": options.keys_file}
    return {"kind": SourceKind.KAFKA, "bootstrap_servers": options.connection.bootstrap or ""}


def run_analyze(options: AnalyzeOptions, progress: Progress | None = None) -> AnalyzeOutcome:
    """Read, aggregate and judge; write ``--moved-keys-out``; return the report and exit code."""
    return run_analyses([options], progress)[0]


def run_analyses(
    asked: Sequence[AnalyzeOptions], progress: Progress | None = None
) -> list[AnalyzeOutcome]:
    """:func:`run_analyze` for each of ``asked`` (one connection, one Spark), at once.

    ``app --state`` analyzes the changed topics and the changelogs: run one after the
    other, the second read waited for the first's jobs, and each analysis left the
    cores idle between its jobs.  Here every read is planned first (a small one starts
    in the driver at once, while Spark starts), then every analysis's jobs are
    submitted together, so Spark fills one's gaps with the other's tasks.

    Spark's JVM is launched once the reads are planned, and only if one of them needs
    it: a small topic's read is the driver's, figures included (``read.driver``), and a
    command that starts no JVM and imports no pyspark answers in about a second
    (docs/benchmarks.md).  Launched before the plan, it overlapped the topics' metadata
    but competed for the cores with the driver's read and imports."""
    for options in asked:
        validate(options)
    plans = [_plan(options) for options in asked]
    spark_free = not any(_needs_spark(plan) for plan in plans)
    if not spark_free and not any(options.exact for options in asked):  # samples: short runs
        start_early(asked[0].spark, short_run=True)
    analyses = _analyze_all(asked, plans, progress or _no_progress, spark_free)
    return [_outcome(options, *analysis) for options, analysis in zip(asked, analyses, strict=True)]


def start_early(spark: SparkSettings, short_run: bool) -> None:
    """Launch the embedded JVM while the command still reads Kafka's metadata (see
    :func:`migcheck.analysis.spark.start_early`)."""
    from migcheck.analysis.spark import start_early as launch

    if spark.remote is None:  # a Spark Connect server is up already
        launch(spark.master, spark.conf, short_run)


def _outcome(
    options: AnalyzeOptions, entries: list[TopicEntry], moved: tuple[MovedKeyRow, ...]
) -> AnalyzeOutcome:
    report: Report = {
        **report_header(),
        "source": _source(options),
        "mode": Mode.FULL if options.exact else Mode.SAMPLE,
        "sample_per_partition": _sample(options),
        "candidates": options.candidates,
        "topics": entries,
        "gate": gate(entries, GateRules(options.fail_if_moved, options.max_moved_fraction)),
    }
    return AnalyzeOutcome(report, exit_code(report), moved)


def _sample(options: AnalyzeOptions) -> int | None:
    """The records read per partition, or None when every record is."""
    return None if options.exact else options.sample_per_partition


def exit_code(report: Report) -> int:
    """3 when a topic could not be predicted, 1 when the gate failed, else 0."""
    if any(not t["predictable"] for t in report["topics"]):
        return EXIT_UNPREDICTABLE
    return EXIT_GATE if report["gate"]["failed"] else EXIT_OK


def _needs_spark(plan: ReadPlan) -> bool:
    """Whether ``plan``'s figures need Spark: all but a read the driver does and computes
    the figures of itself (a small topic's, :class:`~migcheck.analysis.scan.driver.DriverRead`
    without a row per moved key)."""
    from migcheck.analysis.scan.driver import DriverRead

    return not (isinstance(plan.strategy, DriverRead) and plan.strategy.figures)


def _analyze_all(
    asked: Sequence[AnalyzeOptions],
    plans: list[ReadPlan],
    progress: Progress,
    spark_free: bool = False,
) -> list[tuple[list[TopicEntry], tuple[MovedKeyRow, ...]]]:
    """Each analysis's topic entries and moved keys, their Spark jobs run together on one
    session; with ``spark_free`` (every read the driver's), no session at all."""
    from migcheck.analysis.scan.plan import combined
    from migcheck.analysis.scan.session import concurrently, read_session

    if spark_free:
        return [
            _analyze(options, plan, None, progress)
            for options, plan in zip(asked, plans, strict=True)
        ]
    first = asked[0]
    profile = combined([plan.jvm for plan in plans])
    settings, bootstrap = first.spark, first.connection.bootstrap
    where = (settings.master, settings.conf, bootstrap, settings.remote)
    with spark_errors(), read_session(profile, *where) as spark:
        jobs = [
            partial(_analyze, options, plan, spark, progress)
            for options, plan in zip(asked, plans, strict=True)
        ]
        return concurrently(*jobs)


def _analyze(
    options: AnalyzeOptions, plan: ReadPlan, spark: SparkSession | None, progress: Progress
) -> tuple[list[TopicEntry], tuple[MovedKeyRow, ...]]:
    """One analysis's topic entries, and its moved keys when asked; ``--moved-keys-out``
    written.  ``spark`` is None only for a plan that does not need it (:func:`_needs_spark`).
    What Spark cached for it is dropped at the end: on a Spark Connect server the session
    outlives the check, and a cached read left there held the server's memory and served
    the same plan's next check from it (measured: 1.8 s against 6.3 s for 5 M records)."""
    source, counter = plan.strategy.load(spark)  # type: ignore[arg-type]  # None: see above
    try:
        with progress(counter, plan.total):
            aggregates, moved = aggregate(source, options.partitioner)
        kept: tuple[MovedKeyRow, ...] = ()
        if moved is not None and options.collect_moved_keys:  # one Spark job for both uses
            kept = tuple(moved.rows())
        if moved is not None and options.moved_keys_out:
            rows = kept if options.collect_moved_keys else moved.rows()
            _write_moved_keys(rows, options.moved_keys_out)
    finally:
        source.release()
    forced = options.partitioner != PartitionerChoice.AUTO
    entries = [
        topic_entry(meta, options.candidates, aggregates[meta.name], forced, _sample(options))
        for meta in plan.topics
    ]
    return entries, kept


def _no_progress(counter: Counter | None, total: int) -> AbstractContextManager[object]:
    return nullcontext()


def _write_moved_keys(rows: Iterable[MovedKeyRow], path: str) -> None:
    """Stream every moved key to CSV, as the driver receives them."""
    try:
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(
                ["topic", "key_hex", "partition", "candidate_partitions", "new_partition"]
            )
            writer.writerows(rows)
    except OSError as e:
        raise MigcheckError(f"--moved-keys-out {path}: {e.strerror}") from None
