"""``migcheck analyze`` end to end: read → partition → analyze → render, and the gate.

This module only wires the steps together and turns every failure into a
:class:`~migcheck.cli.MigcheckError` (one line, exit 2).  The steps themselves
live in :mod:`migcheck.read`, :mod:`migcheck.spark`, :mod:`migcheck.analyze`
and :mod:`migcheck.render`.
"""

from __future__ import annotations

import csv
import datetime as dt
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from migcheck import __version__
from migcheck.analyze import TopicFacts, analyze
from migcheck.cli import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_USAGE,
    MigcheckError,
    check_can_grow,
    write_text,
)
from migcheck.read import (
    ClientConfig,
    ReadError,
    TopicMeta,
    describe_topics,
    kafka_records,
    plan_units,
    read_keys_file,
)


@dataclass
class AnalyzeOptions:
    """Everything ``migcheck analyze`` was asked to do (one field per CLI option)."""

    candidates: list[int]
    topics: list[str] = field(default_factory=list)
    bootstrap: str | None = None
    command_config: str | None = None
    full: bool = False
    sample_per_partition: int = 20_000
    partitioner: str = "auto"
    fmt: str = "text"
    output: str | None = None
    moved_keys_out: str | None = None
    moved_key_sample: int = 10
    fail_if_moved: bool = False
    max_moved_fraction: float | None = None
    keys_file: str | None = None
    from_partitions: int | None = None
    key_encoding: str = "hex"
    master: str | None = None
    conf: dict[str, str] = field(default_factory=dict)


def _validate(o: AnalyzeOptions) -> None:
    if o.keys_file:
        if o.bootstrap or o.topics:
            raise MigcheckError("use either --keys-file or --bootstrap-server/--topic, not both")
        if o.from_partitions is None:
            raise MigcheckError("--keys-file needs --from N, the current partition count")
        check_can_grow(o.from_partitions, o.candidates)
        return
    if not o.bootstrap:
        raise MigcheckError("--bootstrap-server is required (or --keys-file for an export)")
    if not o.topics:
        raise MigcheckError("at least one --topic is required")
    if o.from_partitions is not None:
        raise MigcheckError("--from goes with --keys-file; a topic's count is read from Kafka")
    if o.moved_keys_out and not o.full:
        raise MigcheckError("--moved-keys-out needs --full: a sample would list only some keys")


def run_analyze(o: AnalyzeOptions) -> int:
    """Run the analysis and write the report; return the exit code (0, 1 gate, 2 refused)."""
    _validate(o)
    try:
        if o.keys_file:
            table = read_keys_file(o.keys_file, o.key_encoding)
            topics = sorted(set(table.column("topic").to_pylist()))
            facts = [TopicFacts(t, "delete", o.from_partitions or 1, {}) for t in topics]
            source = {"kind": "file", "path": o.keys_file}
            load: Callable[[Any], tuple[Any, Any]] = lambda spark: (  # noqa: E731
                spark.createDataFrame(table),
                None,
            )
            total = table.num_rows
        else:
            client = ClientConfig.load(o.bootstrap or "", o.command_config)
            metas = describe_topics(client, o.topics)
            for meta in metas:
                check_can_grow(len(meta.partitions), o.candidates, f"--to (topic {meta.name!r})")
            k = None if o.full else o.sample_per_partition
            units = plan_units(metas, k)
            facts = [_facts(meta, k) for meta in metas]
            source = {"kind": "kafka", "bootstrap_servers": o.bootstrap}
            load = lambda spark: kafka_records(spark, client, units)  # noqa: E731
            total = sum(u.end - u.start for u in units)
    except ReadError as e:
        raise MigcheckError(str(e)) from None

    from migcheck.spark import get_session

    try:
        spark = get_session(o.master, o.conf)
        records, counter = load(spark)
        with _Progress(counter, total):
            entries, moved_df = analyze(
                records, facts, o.candidates, o.partitioner, o.moved_key_sample
            )
        if o.moved_keys_out:
            _write_moved_keys(moved_df, o.moved_keys_out)
    except MigcheckError:
        raise
    except Exception as e:  # Spark wraps task errors (e.g. a broker gone mid-read)
        raise MigcheckError(_spark_error(e)) from None

    report = {
        "migcheck_version": __version__,
        "generated_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": source,
        "mode": "full" if o.full or o.keys_file else "sample",
        "sample_per_partition": None if o.full or o.keys_file else o.sample_per_partition,
        "candidates": o.candidates,
        "topics": entries,
        "gate": _gate(entries, o),
    }
    _write_report(report, o)

    if any(not t["predictable"] for t in entries):
        return EXIT_USAGE
    return EXIT_GATE if report["gate"]["failed"] else EXIT_OK


def _facts(meta: TopicMeta, sample_per_partition: int | None) -> TopicFacts:
    offsets = {p.partition: (p.log_start_offset, p.log_end_offset) for p in meta.partitions}
    sampled = sample_per_partition is not None and any(
        p.records > sample_per_partition for p in meta.partitions
    )
    return TopicFacts(meta.name, meta.cleanup_policy, len(meta.partitions), offsets, sampled)


def _gate(entries: list[dict[str, Any]], o: AnalyzeOptions) -> dict[str, Any]:
    reasons = []
    for t in entries:
        for c in t["candidates"]:
            if o.fail_if_moved and c["moved_keys"] > 0:
                reasons.append(
                    f"{t['topic']}: {c['moved_keys']:,} keys move at {c['partitions']} partitions"
                )
            elif o.max_moved_fraction is not None and c["moved_fraction"] > o.max_moved_fraction:
                reasons.append(
                    f"{t['topic']}: {c['moved_fraction']:.1%} of keys move at {c['partitions']} "
                    f"partitions (limit {o.max_moved_fraction:.1%})"
                )
    return {
        "fail_if_moved": o.fail_if_moved,
        "max_moved_fraction": o.max_moved_fraction,
        "failed": bool(reasons),
        "reason": "; ".join(reasons) or None,
    }


def _write_report(report: dict[str, Any], o: AnalyzeOptions) -> None:
    from migcheck.render import render

    write_text(render(report, o.fmt), o.output)


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


def _spark_error(e: Exception) -> str:
    """The useful last line of a Spark/Python-worker error, e.g. our ReadError's message."""
    text = str(e)
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("migcheck.read.ReadError:"):
            return line.split(":", 1)[1].strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return f"Spark failed: {lines[0] if lines else type(e).__name__}"


class _Progress:
    """A progress bar of records read against the total, on an interactive stderr only."""

    def __init__(self, counter: Any, total: int) -> None:
        self.counter = counter
        self.total = total
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Progress:
        if self.counter is not None and sys.stderr.isatty() and self.total > 0:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread:
            self.thread.join()

    def _run(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        # Spark reports accumulator updates as each read task ends, so the bar moves
        # per task (about 500k records); once all are read, aggregation follows.
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("reading records", total=self.total)
            while not self.stop.wait(0.5):
                done = min(self.counter.value, self.total)
                label = "aggregating" if done >= self.total else "reading records"
                bar.update(task, completed=done, description=label)
