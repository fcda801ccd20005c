"""Every command that writes a name from the cluster or the data, as a function of that name.

``tests/unit/test_untrusted.py`` walks :data:`WRITERS` with hostile names and checks each
output where it lands (a terminal, a CommonMark renderer, an HTML parser, bash and
shellcheck).  A command joins the registry or ``test_every_command_writes_through_the_registry``
fails: a new command cannot skip the check.

Each writer puts the name wherever the cluster or the data could: group and application
ids, client ids and hosts of members, store and topic names (a key file's ``topic``
column is any text), record keys, and the reasons and notes that quote them.  The reports
start from the hand-written ones of :mod:`sample_report` and ``migcheck plan``'s offline
JSON; the runbooks from the facts a cluster would give.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sample_report
from click.testing import CliRunner

from migcheck.cli.main import cli
from migcheck.errors import MigcheckError
from migcheck.frameworks.faust import FAUST, faust_changelog
from migcheck.frameworks.registry import runbook_steps as app_steps
from migcheck.gate.judge import app_reader, judge, plain_reader
from migcheck.gate.next_steps import next_steps
from migcheck.model.copy import CopyResult, PartitionCopied, Verification
from migcheck.model.gate import GateChange, Proposal, Source, SourceKind
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.readers import Protocol, ReaderKind, ReaderRisk
from migcheck.model.runbook import (
    GroupLag,
    GroupsFacts,
    RunbookFacts,
    StateMove,
    Strategy,
)
from migcheck.model.server import ConnectServer, ServerState
from migcheck.model.warm import ArchiveState, ClassArchive, Warmth
from migcheck.report import render
from migcheck.report.copy import render_copy_summary
from migcheck.report.runbook import render_markdown, render_sh
from migcheck.report.server import render_server_text
from migcheck.report.warm import render_warm_text
from migcheck.report.why import analyze_lines, app_lines, gate_lines, plan_lines
from migcheck.runbook.groups import steps as groups_steps

REPO = Path(__file__).resolve().parents[2]
DESCRIBE = REPO / "fixtures" / "java" / "streams" / "describe"


@dataclass
class Written:
    """What a writer wrote for one name, by the output it lands in; ``refused`` is the
    one line of a writer that refuses the name (a runbook), and then nothing else is."""

    text: list[str] = field(default_factory=list)  # a terminal's text, stderr lines
    markdown: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)
    sh: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    refused: str | None = None


#: Fields whose value is one name; fields whose value is text that may quote names.
_NAME_FIELDS = {"topic", "application_id", "store", "key", "instance", "analyzed_topic", "id"}
_NAME_LISTS = {"sources", "sinks", "stores", "changes", "evidence"}
_TEXT_FIELDS = {"text", "reason", "error", "basis_note", "recommendation"}


def infect(value: Any, name: str) -> Any:
    """The report with ``name`` in every field a cluster or its data could put it."""
    if isinstance(value, list):
        return [infect(v, name) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for k, v in value.items():
        if k in _NAME_FIELDS and isinstance(v, str):
            out[k] = name
        elif k in _NAME_LISTS and isinstance(v, list) and all(isinstance(x, str) for x in v):
            out[k] = [name for _ in v]
        elif k in _TEXT_FIELDS and isinstance(v, str):
            out[k] = f"{v} (named {name})"
        elif k == "notes" and isinstance(v, list):
            out[k] = [*v, f"a note naming {name}"]
        else:
            out[k] = infect(v, name)
    return out


def _report_outputs(report: dict[str, Any], why: Callable[[Any], list[str]]) -> Written:
    return Written(
        text=[render(report, "text"), *why(report)],  # type: ignore[arg-type]
        markdown=[render(report, "markdown")],  # type: ignore[arg-type]
        html=[render(report, "html")],  # type: ignore[arg-type]
        json=[render(report, "json")],  # type: ignore[arg-type]
    )


def analyze_writer(name: str) -> Written:
    return _report_outputs(infect(sample_report.report(), name), analyze_lines)


def readers_writer(name: str) -> Written:
    return _report_outputs(infect(sample_report.readers_report(), name), lambda r: [])


def app_writer(name: str) -> Written:
    """The Kafka Streams report, and a Faust app's whose error quotes the names as Faust's
    PartitionsMismatch does (through repr(), over several lines)."""
    streams = _report_outputs(infect(sample_report.app_report(), name), app_lines)
    faust = infect(sample_report.app_report(), name)
    cand = faust["candidates"][0]
    cand["error"] = FAUST.invalid(
        Protocol.CLASSIC, faust_changelog(name, name), 6, 4, source=name, app_id=name
    )
    cand["error_releases"] = FAUST.releases(Protocol.CLASSIC)
    cand["error_when"] = FAUST.fails_when
    faust["framework"] = FAUST.kind.value
    more = _report_outputs(faust, app_lines)
    return Written(
        text=[*streams.text, *more.text],
        markdown=[*streams.markdown, *more.markdown],
        html=[*streams.html, *more.html],
        json=[*streams.json, *more.json],
    )


_PLAN: dict[str, Any] = {}


def _plan_report() -> dict[str, Any]:
    """``migcheck plan``'s offline JSON, as the command writes it (made once)."""
    if not _PLAN:
        args = ["plan", "--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=4"]
        result = CliRunner().invoke(cli, [*args, "--instances", "3", "--format", "json"])
        assert result.exit_code == 0, result.output
        _PLAN.update(json.loads(result.output))
    return json.loads(json.dumps(_PLAN))


def plan_writer(name: str) -> Written:
    report = _plan_report()
    report["application_id"] = name
    return _report_outputs(infect(report, name), plan_lines)


def render_writer(name: str) -> Written:
    """``migcheck render`` of saved reports of every kind: the CLI reads them back."""
    out = Written()
    reports = [
        infect(sample_report.report(), name),
        infect(sample_report.app_report(), name),
        infect(_plan_report(), name),
    ]
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as where:
        for i, report in enumerate(reports):
            saved = Path(where) / f"r{i}.json"
            saved.write_text(json.dumps(report), encoding="utf-8")
            for fmt, into in (("text", out.text), ("markdown", out.markdown), ("html", out.html)):
                result = runner.invoke(cli, ["render", str(saved), "--format", fmt])
                assert result.exit_code == 0, result.output
                into.append(result.output)
    return out


def partition_writer(name: str) -> Written:
    """``migcheck partition``: keys from the command line, shown in its table."""
    out = Written()
    for fmt, into in (("text", out.text), ("json", out.json)):
        args = ["partition", "--partitions", "6", "--to", "8", "--format", fmt, "--", name]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 2), result.output
        into.append(result.output)
    return out


def copy_writer(name: str) -> Written:
    """``migcheck copy``'s summary: the topics it names."""
    result = CopyResult(
        topic=name,
        into=f"{name}-p6",
        partitioner="murmur2",
        partitions=(PartitionCopied(0, 3, 0),),
        verification=Verification(records=3, missing=0, duplicated=0, misplaced=0),
    )
    return Written(text=[render_copy_summary(result)])


def migrate_writer(name: str) -> Written:
    """``migcheck migrate``'s last lines, finished and stopped: the topics and groups."""
    from migcheck.model.migrate import MigrateResult
    from migcheck.report.migrate import render_migrate_text

    topics = ((name, f"{name}-p6"), (f"{name}.b", f"{name}.b-p6"))  # a set of two
    partitioners = {name: "murmur2", f"{name}.b": "crc32"}  # each named: they differ
    done = MigrateResult(topics, partitioners, {name: {0: 5}}, {f"{name}-p6": {0: 7}}, 2.5,
                         (name,), shadows=(f"{name}-p6",), downstream=(name,))  # fmt: skip
    stopped = MigrateResult(topics, partitioners, stopped=f"group {name} stopped")
    return Written(text=[render_migrate_text(done), render_migrate_text(stopped)])


def _runbooks(facts: RunbookFacts | GroupsFacts, build: Callable[[Any], list[Any]]) -> Written:
    try:
        steps = build(facts)
    except MigcheckError as e:
        return Written(refused=str(e))
    return Written(
        markdown=[render_markdown(facts, steps, "0.1.0", "2026-11-26T10:00:00Z")],
        sh=[render_sh(facts, steps, "0.1.0", "2026-11-26T10:00:00Z")],
    )


def groups_facts(names: tuple[str, ...], bootstrap: str = "127.0.0.1:9092") -> GroupsFacts:
    groups = tuple(GroupLag(g, members=0, lag=0) for g in names)
    # the last group's loss risk accepted: its name in the header and the offsets step too
    return GroupsFacts(
        bootstrap, None, "orders", 3, 6, groups, discovered=True, accept_loss_risk=names[-1:]
    )


def streams_facts(
    app_id: str, strategy: str, kind: ReaderKind = ReaderKind.KAFKA_STREAMS, split: bool = False
) -> RunbookFacts:
    """A runbook's facts for the app ``app_id`` of framework ``kind``: its internal topics
    named as Kafka Streams names them, or as Quix does (the group inside the name)."""
    internal = (
        f"changelog__{app_id}--orders--default"
        if kind is ReaderKind.QUIX_STREAMS
        else f"{app_id}-counts-changelog"
    )
    return RunbookFacts(
        kind=kind,
        split_keys=3 if split else None,
        app_id=app_id,
        bootstrap="127.0.0.1:9092",
        command_config="/etc/kafka/client.properties",
        topic="orders",
        partitions=3,
        to=6,
        new_topic="orders-p6",
        strategy=strategy,
        protocol="classic",
        internal=(internal,),
        expected_internal={internal: 6},
        state_dir="/var/lib/kafka-streams",
        verdict="CRASH",
        members=2,
    )


def _online(facts: RunbookFacts, name: str) -> RunbookFacts:
    """An online runbook's facts: the name as an output topic and as the groups moved."""
    return replace(facts, outputs=("totals", name), downstream=(name,), groups=(name,))


def _moved(facts: RunbookFacts, name: str) -> RunbookFacts:
    """A move-state runbook's facts: the name as the app's id, so in the new id, each
    changelog's name and the barrier's files; the name a source too."""
    changelog = facts.internal[0]
    move = StateMove("counts", changelog, f"{name}-p6-counts-changelog", 6,
                     {"cleanup.policy": "compact"}, 1000, PartitionerChoice.MURMUR2)  # fmt: skip
    return replace(facts, moved_app_id=f"{name}-p6", moves=(move,), sources=("orders", name),
                   history=5000, history_gone=4000)  # fmt: skip


def runbook_writer(name: str) -> Written:
    """Every runbook: plain groups (the name among other groups; in place and online) and
    an app (the name as its id: Kafka Streams new topic, in place and online, the name
    also an output and the groups moved; Quix Streams new topic and in place splitting
    state, a ksqlDB query, a Faust app; Kafka Streams' and Faust's state moved, the name
    also a source and in the new id and its changelog).  ksqlDB's online runbook adds no
    writer of its own: its steps are the statement's and the migrate step, both here
    already."""
    out = Written()
    quix, ksql, faust = ReaderKind.QUIX_STREAMS, ReaderKind.KSQLDB, ReaderKind.FAUST
    for written in (
        _runbooks(groups_facts(("billing", name)), groups_steps),
        _runbooks(replace(groups_facts(("billing", name)), strategy=Strategy.ONLINE), groups_steps),
        _runbooks(streams_facts(name, Strategy.NEW_TOPIC), app_steps),
        _runbooks(streams_facts(name, Strategy.IN_PLACE), app_steps),
        _runbooks(streams_facts(name, Strategy.NEW_TOPIC, quix), app_steps),
        _runbooks(streams_facts(name, Strategy.IN_PLACE, quix, split=True), app_steps),
        _runbooks(streams_facts(name, Strategy.NEW_TOPIC, ksql), app_steps),
        _runbooks(streams_facts(name, Strategy.NEW_TOPIC, faust), app_steps),
        _runbooks(_online(streams_facts(name, Strategy.ONLINE), name), app_steps),
        _runbooks(_moved(streams_facts(name, Strategy.MOVE_STATE), name), app_steps),
        _runbooks(_moved(streams_facts(name, Strategy.MOVE_STATE, faust), name), app_steps),
    ):
        out.markdown += written.markdown
        out.sh += written.sh
        out.refused = out.refused or written.refused
    return out


def gate_writer(name: str) -> Written:
    """The gate's report, the name as the topic, a Terraform address, every reader's id
    and the words of their reasons, and in the next commands; judged by the gate's own
    pure steps, as the command does."""
    source = Source(SourceKind.TERRAFORM, f"plans/{name}.json", f"kafka_topic.{name}")
    p = Proposal(name, 3, 6, source)
    readers = [
        app_reader(
            "kafka-streams", name, "CRASH", [("CRASH", f"Existing internal topic {name}-c")]
        ),
        plain_reader("consumer-group", name, [{"risk": ReaderRisk.ORDER, "text": name}]),
    ]
    judged = judge(p, 4, readers, None, None)  # 4 live: the plan's 3 is drift
    change: GateChange = {
        "topic": name, "from": 4, "to": 6,
        "source": {"kind": source.kind, "file": source.file, "address": source.address},
        "verdict": judged.verdict, "blocking": judged.blocks, "rules": list(judged.rules),
        "accepted": False,
        "acceptance": {"topic": name, "to": 12, "verdict": "CRASH", "reason": f"ticket {name}",
                       "expires": None, "stale": ["to"]},
        "moved": {"keys": 3, "fraction": 0.5, "records": 9, "bytes": 90, "exact": False},
        "readers": readers,
        "next": next_steps("127.0.0.1:9092", None, p, judged.verdict, readers),
    }  # fmt: skip
    report = {
        "report": "gate", "migcheck_version": "0", "generated_at": "2026-01-01T00:00:00Z",
        "bootstrap_servers": "127.0.0.1:9092", "verdict": judged.verdict, "passed": False,
        "changes": [change], "notes": [f"a note naming {name}"],
    }  # fmt: skip
    return _report_outputs(report, gate_lines)


def warm_writer(name: str) -> Written:
    """``migcheck warm``'s summary: the cache path it names (the user's, not the cluster's,
    but a terminal must not run what a path holds either)."""
    archive = ClassArchive(f"/cache/{name}/classes.jsa", ArchiveState.SAVED, 2_000_000, 9.0)
    return Written(text=[render_warm_text(Warmth(archive, 5, 1.0))])


def server_writer(name: str) -> Written:
    """``migcheck server``'s answer: the log path and master it names (the user's, and a
    master's URL may come from a cluster's own name)."""
    found = ConnectServer(ServerState.RUNNING, "sc://localhost:15002", 42, f"spark://{name}:7077",
                          f"/cache/{name}/server.log")  # fmt: skip
    return Written(text=[render_server_text(found)])


#: Every command, and how it writes a name.  ``test_every_command_writes_through_the_registry``
#: compares the keys with the CLI's commands.
WRITERS: dict[str, Callable[[str], Written]] = {
    "partition": partition_writer,
    "analyze": analyze_writer,
    "render": render_writer,
    "app": app_writer,
    "plan": plan_writer,
    "runbook": runbook_writer,
    "copy": copy_writer,
    "migrate": migrate_writer,
    "readers": readers_writer,
    "gate": gate_writer,
    "warm": warm_writer,
    "server": server_writer,
}
