"""``migcheck runbook`` end to end for a Kafka Streams app: discover it, pick the
strategy, write the steps.

Read-only like ``migcheck app``: it finds the application's real topics, the
topic's own configs and each source's log start offsets, and judges the
in-place change with the same rules.  ``--strategy auto`` (the default) picks
in place when no store reads the topic directly (:mod:`migcheck.streams.strategy`),
else a new topic.  ``--strategy in-place`` on an app with such stores is refused,
naming those stores and every key whose history would split (a full scan
through the analysis pipeline), unless ``--accept-split-history`` is given.
"""

from __future__ import annotations

import csv
import os
import tempfile
from dataclasses import dataclass, field

from migcheck.commands.analyze import AnalyzeOptions, run_analyze
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.streams_app import discover_app, read_topology
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.hashing.keys import printable
from migcheck.hashing.partitioners import check_can_grow
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import topic_configs
from migcheck.model.header import report_header
from migcheck.model.runbook import (
    AUTO,
    GROUP_TIMEOUT,
    IN_PLACE,
    LAG_TIMEOUT,
    NEW_TOPIC,
    RunbookFacts,
)
from migcheck.report.runbook import refusal_line, render_markdown, render_refusal, render_sh
from migcheck.streams.build import Model
from migcheck.streams.discovery import Discovery, app_model, not_read
from migcheck.streams.rules import AppLevel, external_counts, sizes, verdict
from migcheck.streams.steps import steps
from migcheck.streams.strategy import Choice, choose, direct_stores


@dataclass
class RunbookOptions:
    """Everything ``migcheck runbook`` was asked."""

    app_id: str
    topic: str
    to: int
    topology_file: str | None = None
    new_topic: str | None = None
    strategy: str = AUTO
    state_dir: str | None = None
    group_timeout: int = GROUP_TIMEOUT
    lag_timeout: int = LAG_TIMEOUT
    fmt: str = "markdown"
    accept_split_history: bool = False
    fixed_repartition: list[str] = field(default_factory=list)
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


@dataclass(frozen=True)
class RunbookOutcome:
    text: str
    exit_code: int
    message: str | None = None  # one line for stderr (a refusal)


def run_runbook(o: RunbookOptions) -> RunbookOutcome:
    """The runbook, or the refusal of an in-place change that would split state."""
    topology = read_topology(o.topology_file)
    client = o.connection.client()
    new_topic = o.new_topic or f"{o.topic}-p{o.to}"
    disc = discover_app(client, o.app_id, topology, [o.topic, new_topic])
    model = app_model(disc, topology, o.fixed_repartition)
    _check(o, disc, new_topic, topology is not None)
    choice = choose(o.strategy, model, o.topic)
    _check_new_topic(o, disc, choice.strategy, new_topic)
    level = verdict(model.app, {o.topic: o.to}).level
    split = None
    stores = _splitting_stores(model, o.topic, level) if choice.strategy == IN_PLACE else ()
    if stores is None or stores:  # None: unseen state may split
        keys = _split_keys(o)
        if keys and not o.accept_split_history:
            return _refusal(o, level, stores, keys)
        split = len(keys) or None
    facts = _facts(o, disc, model, client, new_topic, level, split, choice)
    header = report_header()
    render = render_sh if o.fmt == "sh" else render_markdown
    text = render(facts, steps(facts), header["migcheck_version"], header["generated_at"])
    return RunbookOutcome(text, EXIT_OK)


def _splitting_stores(model: Model, topic: str, level: AppLevel) -> tuple[str, ...] | None:
    """The stores whose history an in-place alter splits: those that read the topic
    directly.  None when the model may miss such a store and the verdict is not SAFE:
    state may split that only --topology would name."""
    direct = direct_stores(model, topic)
    if direct.stores or direct.certain or level == AppLevel.SAFE:
        return direct.stores
    return None


def _check(o: RunbookOptions, disc: Discovery, new_topic: str, topology_given: bool) -> None:
    meta = disc.topics.get(o.topic)
    if meta is None:
        raise UsageError(f"topic {o.topic!r} does not exist at {o.connection.bootstrap}")
    if o.topic not in disc.facts.sources and o.topic not in disc.facts.internal:
        raise not_read(disc, o.topic, topology_given)
    check_can_grow(meta.partition_count, [o.to], f"--to (topic {o.topic!r})")


def _check_new_topic(o: RunbookOptions, disc: Discovery, strategy: str, new_topic: str) -> None:
    if strategy != NEW_TOPIC:
        return
    if new_topic == o.topic:
        raise UsageError("--new-topic must differ from --topic")
    existing = disc.topics.get(new_topic)
    if existing and existing.partition_count != o.to:
        raise UsageError(
            f"--new-topic {new_topic} exists with {existing.partition_count} partitions, not {o.to}"
        )


def _facts(
    o: RunbookOptions,
    disc: Discovery,
    model: Model,
    client: ClientConfig,
    new_topic: str,
    level: AppLevel,
    split: int | None,
    choice: Choice,
) -> RunbookFacts:
    app = model.app
    after = {**external_counts(app), o.topic: o.to}
    lost = tuple(
        t
        for t in disc.facts.sources
        if any(p.log_start_offset > 0 for p in disc.topics[t].partitions)
    )
    return RunbookFacts(
        app_id=o.app_id,
        bootstrap=o.connection.bootstrap or "",
        command_config=o.connection.command_config,
        topic=o.topic,
        partitions=disc.topics[o.topic].partition_count,
        to=o.to,
        new_topic=new_topic,
        strategy=choice.strategy,
        protocol=str(disc.facts.protocol),
        internal=tuple(sorted(disc.facts.internal)),
        expected_internal=sizes(app, after).internal,
        history_lost=lost,
        state_dir=o.state_dir,
        verdict=str(level),
        split_keys=split,
        members=len(disc.group.members) if disc.group else 0,
        configs=topic_configs(client, o.topic),
        strategy_reason=choice.reason,
        on_users_word=disc.on_users_word,
        group_timeout=o.group_timeout,
        lag_timeout=o.lag_timeout,
    )


def _split_keys(o: RunbookOptions) -> list[str]:
    """Every key of the topic that changes partition: its history would split."""
    fd, path = tempfile.mkstemp(prefix="migcheck-split-", suffix=".csv")
    os.close(fd)
    try:
        run_analyze(
            AnalyzeOptions(
                candidates=[o.to],
                topics=[o.topic],
                connection=o.connection,
                full=True,
                moved_keys_out=path,
                spark=o.spark,
            )
        )
        with open(path, encoding="utf-8", newline="") as f:
            return [printable(bytes.fromhex(row["key_hex"])) for row in csv.DictReader(f)]
    finally:
        os.unlink(path)


def _refusal(
    o: RunbookOptions, level: AppLevel, stores: tuple[str, ...] | None, keys: list[str]
) -> RunbookOutcome:
    text = render_refusal(o.app_id, o.topic, o.to, str(level), stores, keys, o.fmt)
    return RunbookOutcome(text, EXIT_GATE, refusal_line(o.topic, stores, keys))
