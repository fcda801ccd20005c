"""``migcheck gate`` end to end: read the proposals, ask the cluster, judge every change.

Strictly read-only, as ``readers``, ``app`` and ``analyze`` are, which it reuses: the live
count of each topic, every reader of it (``readers``), each stateful app's verdict for the
change (``app``), and the share of keys that move (``analyze``, one Spark job for every
growing topic, from a sample unless ``--full``).  The verdicts are
:mod:`migcheck.gate.judge`'s; the acceptances :mod:`migcheck.gate.acceptances`'.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from migcheck.apps.rules import Check
from migcheck.commands.analyze import AnalyzeOptions, run_analyze
from migcheck.commands.app import AppOptions, run_app
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.commands.readers import reader_entries
from migcheck.errors import EXIT_GATE, EXIT_OK, EXIT_UNPREDICTABLE, MigcheckError, UsageError
from migcheck.frameworks.registry import STATEFUL_KINDS
from migcheck.gate.acceptances import load_acceptances, match
from migcheck.gate.inputs import read_proposals
from migcheck.gate.judge import (
    Judged,
    app_reader,
    judge_by_readers,
    judge_without_readers,
    plain_reader,
    unknown_reader,
)
from migcheck.gate.next_steps import next_steps
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import topics_with_prefix
from migcheck.kafka.metadata import describe_topics
from migcheck.model.app import AppCandidate, AppLevel, first_error
from migcheck.model.gate import (
    Acceptance,
    GateAcceptance,
    GateChange,
    GateMoved,
    GateReader,
    GateReport,
    GateVerdict,
    Proposal,
    RuleCode,
    worst,
)
from migcheck.model.header import report_header
from migcheck.model.readers import ReaderEntry
from migcheck.readers.discovery import Found, find_readers
from migcheck.untrusted import quoted

TOPOLOGY_SETTLES = "migcheck gate --topology APP_ID=FILE (the app's Topology#describe()) settles it"


@dataclass
class GateOptions:
    """Everything ``migcheck gate`` was asked."""

    terraform_plans: Sequence[str] = ()
    manifests: Sequence[str] = ()
    gitops_plans: Sequence[str] = ()
    changes: Sequence[str] = ()
    groups: Sequence[str] = ()  # ids the user vouches are plain consumer groups (--group)
    #: application id -> its Topology#describe() file (--topology ID=FILE)
    topologies: Mapping[str, str] = field(default_factory=dict)
    accept: str | None = None
    max_moved_fraction: float | None = None
    full: bool = False
    sample_per_partition: int = 20_000
    today: dt.date | None = None  # the acceptances' expiry is judged on it (default: today)
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


def run_gate(options: GateOptions) -> Outcome[GateReport]:
    """Every proposed change judged; exit 1 when one blocks, 3 when a growing topic's
    placement cannot be predicted, else 0.  Bad input raises before the cluster is asked."""
    proposals = read_proposals(
        options.terraform_plans, options.manifests, options.gitops_plans, options.changes
    )
    if not proposals:
        raise UsageError(
            "nothing to judge: no topic's partition count changes in the inputs given "
            "(--terraform-plan, --manifests, --kafka-gitops-plan, --change)"
        )
    accepted = load_acceptances(options.accept) if options.accept else []
    client = options.connection.client()
    live = _live_counts(client, proposals)
    topics = list(dict.fromkeys(p.topic for p in proposals))
    found = find_readers(client, topics, set(options.groups))
    moved, unpredictable = _moved(options, proposals, live)
    growing = {p.topic: p.after for p in proposals if _grows(p, live) and p.after is not None}
    today = options.today or dt.date.today()
    gate = _Gate(options, client, found, moved, accepted, today, growing)
    changes = [_change(gate, p, live[p.topic]) for p in proposals]
    report = GateReport(
        **report_header(),
        bootstrap_servers=client.bootstrap_servers,
        verdict=worst([c["verdict"] for c in changes]),
        passed=not any(c["blocking"] for c in changes),
        changes=changes,
        notes=_notes(options, unpredictable),
    )
    if not report["passed"]:
        return Outcome(report, EXIT_GATE)
    return Outcome(report, EXIT_UNPREDICTABLE if unpredictable else EXIT_OK)


def _live_counts(client: ClientConfig, proposals: Sequence[Proposal]) -> dict[str, int]:
    """Each proposed topic's partition count on the cluster: the truth the change meets."""
    existing = set(topics_with_prefix(client, ""))
    for p in proposals:
        if p.topic not in existing:
            raise UsageError(
                f"topic {quoted(p.topic)} ({p.source.address}"
                f"{f' in {p.source.file}' if p.source.file else ''}) does not exist at "
                f"{client.bootstrap_servers}: is this the cluster the change is for?"
            )
    metas = describe_topics(client, list(dict.fromkeys(p.topic for p in proposals)))
    return {m.name: m.partition_count for m in metas}


def _grows(p: Proposal, live: Mapping[str, int]) -> bool:
    """Whether the change reaches the topic and grows it (its readers then decide)."""
    return judge_without_readers(p, live[p.topic]) is None


def _moved(
    options: GateOptions, proposals: Sequence[Proposal], live: Mapping[str, int]
) -> tuple[dict[tuple[str, int], GateMoved], list[str]]:
    """The keys that move for each growing (topic, count), measured in one analysis; and
    the topics whose placement cannot be predicted."""
    growing = [p for p in proposals if _grows(p, live)]
    if not growing:
        return {}, []
    outcome = run_analyze(
        AnalyzeOptions(
            candidates=sorted({p.after for p in growing if p.after is not None}),
            topics=list(dict.fromkeys(p.topic for p in growing)),
            full=options.full,
            sample_per_partition=options.sample_per_partition,
            connection=options.connection,
            spark=options.spark,
        )
    )
    moved: dict[tuple[str, int], GateMoved] = {}
    unpredictable = []
    for t in outcome.report["topics"]:
        if not t["predictable"]:
            unpredictable.append(t["topic"])
            continue
        for c in t["candidates"]:
            moved[(t["topic"], c["partitions"])] = GateMoved(
                keys=c["moved_keys"],
                fraction=c["moved_fraction"],
                records=c["moved_records"],
                bytes=c["moved_bytes"],
                exact=options.full,
            )
    return moved, unpredictable


@dataclass
class _Gate:
    """What every change of one run is judged with, asked of the cluster once; several
    proposals of one change (a plan and a manifest) share their readers' judgements."""

    options: GateOptions
    client: ClientConfig
    found: Mapping[str, Sequence[Found]]
    moved: Mapping[tuple[str, int], GateMoved]
    accepted: Sequence[Acceptance]
    today: dt.date
    growing: Mapping[str, int]  # the plan's growing topics, at their proposed counts
    #: (topic, proposed count or None) -> its readers' entries and judgements
    readers: dict[tuple[str, int | None], list[GateReader]] = field(default_factory=dict)
    #: the apps whose every store can move instead of a rebuild (migcheck app's
    #: move_state), each with its --topology file: their runbook moves the state
    moves: dict[str, str] = field(default_factory=dict)

    def _planned(self, p: Proposal, reader: str) -> dict[str, int]:
        """The plan's other growing topics that ``reader`` reads, at their proposed
        counts: a stateful app meets all its changed inputs together (a join's sides)."""
        return {
            topic: after
            for topic, after in self.growing.items()
            if topic != p.topic and any(f.group.group_id == reader for f in self.found[topic])
        }

    def judged_readers(self, p: Proposal, live: int, grows: bool) -> list[GateReader]:
        """The topic's readers: judged for a growing topic, else listed."""
        key = (p.topic, p.after if grows else None)
        if key not in self.readers:
            entries = reader_entries(self.client, p.topic, live, self.found[p.topic], key[1])
            self.readers[key] = [
                _reader(self.options, p, e, self._planned(p, e["id"]), self.moves)
                if grows
                else _listed(e)
                for e in entries
            ]
        return self.readers[key]


def _change(gate: _Gate, p: Proposal, live: int) -> GateChange:
    judged = judge_without_readers(p, live)
    readers = gate.judged_readers(p, live, grows=judged is None)
    measured = None
    if judged is None:  # the topic grows: its readers decide
        measured = gate.moved.get((p.topic, p.after)) if p.after is not None else None
        judged = judge_by_readers(p, live, readers, measured, gate.options.max_moved_fraction)
    acceptance, covered = _acceptance(p, judged, gate.accepted, gate.today)
    return {
        "topic": p.topic,
        "from": live,
        "to": p.after,
        "source": {"kind": p.source.kind, "file": p.source.file, "address": p.source.address},
        "verdict": judged.verdict,
        "blocking": judged.blocks and not covered,
        "rules": list(judged.rules),
        "accepted": covered,
        "acceptance": acceptance,
        "moved": measured,
        "readers": readers,
        "next": next_steps(
            gate.client.bootstrap_servers,
            gate.options.connection.command_config,
            p,
            judged.verdict,
            readers,
            gate.growing,
            gate.moves,
        ),
    }


def _listed(entry: ReaderEntry) -> GateReader:
    """A reader of a change that does not grow the topic: listed, not judged."""
    return GateReader(
        kind=entry["kind"], id=entry["id"], verdict=GateVerdict.SAFE, reasons=[], rules=[]
    )


def _reader(
    options: GateOptions,
    p: Proposal,
    entry: ReaderEntry,
    planned: Mapping[str, int],
    moves: dict[str, str],
) -> GateReader:
    """A reader of a growing topic: a stateful app by ``migcheck app``'s verdict on the
    change together with the plan's other changes it reads (``planned``), any other by the
    readers' judgements; an app whose every store can move is noted in ``moves``."""
    kind, id = entry["kind"], entry["id"]
    if kind not in STATEFUL_KINDS:
        return plain_reader(kind, id, entry["judgements"])
    try:
        outcome = run_app(
            AppOptions(
                app_id=id,
                topology_file=options.topologies.get(id),
                topics=[p.topic],
                candidates=[p.after] if p.after is not None else [],
                framework=kind,
                planned=planned,
                connection=options.connection,
                spark=options.spark,
            )
        )
    except MigcheckError as e:
        return unknown_reader(kind, id, f"migcheck app could not judge it: {e}")
    (cand,) = outcome.report["candidates"]
    if cand.get("move_state") and id in options.topologies:  # movable needs the topology
        moves[id] = options.topologies[id]
    # a CORRUPT that only says no store is visible is unknown, not split
    unseen = [r for r in cand["reasons"] if r.get("check") == Check.UNSEEN_STATE]
    if cand["verdict"] == AppLevel.CORRUPT and len(unseen) == len(cand["reasons"]):
        return unknown_reader(kind, id, f"{unseen[0]['text']}; {TOPOLOGY_SETTLES}")
    reader = app_reader(kind, id, cand["verdict"], _app_reasons(cand), stalls=_stalls(cand))
    groups = outcome.report.get("together") or []
    reader["together"] = [g["topics"] for g in groups if p.topic in g["topics"]]
    return reader


def _app_reasons(cand: AppCandidate) -> list[tuple[AppLevel | RuleCode, str]]:
    """The app's reasons as the gate cites them, each with its level: its first error (as
    migcheck app and the runbook's header quote it) at the app's level, else every reason;
    then the split state its clean-up leaves (CORRUPT), and what every remedy would lose
    (MC204)."""
    first = first_error(cand)
    reasons: list[tuple[AppLevel | RuleCode, str]] = (
        [(cand["verdict"], first)] if first else [(r["level"], r["text"]) for r in cand["reasons"]]
    )
    if cand.get("after_cleanup"):
        reasons.append((AppLevel.CORRUPT, cand["after_cleanup"] or ""))
    if cand.get("lost_history"):
        reasons.append((RuleCode.REMEDY_LOSES_HISTORY, cand["lost_history"] or ""))
    return reasons


def _stalls(cand: AppCandidate) -> bool:
    """Whether the app's first error, for certain, is the unchecked join's stall: the
    first CRASH reason (reasons come in the order Kafka Streams checks them) trips no
    check, and no candidate of another shape could come first."""
    if cand.get("error_candidates"):
        return False
    crashes = [r for r in cand["reasons"] if r["level"] == AppLevel.CRASH]
    return bool(crashes) and crashes[0].get("check") == Check.UNCHECKED_JOIN


def _acceptance(
    p: Proposal, judged: Judged, accepted: Sequence[Acceptance], today: dt.date
) -> tuple[GateAcceptance | None, bool]:
    """The acceptance that covers the change, or the stale one nearest to it."""
    if not accepted or p.after is None:  # a deleted topic has no count to accept
        return None, False
    codes = [r["code"] for r in judged.rules]
    m = match(accepted, p.topic, p.after, judged.verdict, codes, today)
    if m.acceptance is None:
        return None, False
    a = m.acceptance
    entry = GateAcceptance(
        topic=a.topic,
        to=a.to,
        verdict=a.verdict,
        reason=a.reason,
        expires=a.expires,
        stale=list(m.stale),
    )
    return entry, m.accepted


def _notes(options: GateOptions, unpredictable: Sequence[str]) -> list[str]:
    notes = [] if options.full else [
        "moved shares are a sample's estimates (--sample-per-partition "
        f"{options.sample_per_partition:,}); --full reads every record"
    ]  # fmt: skip
    notes += [
        f"{t}: no known partitioner placed every key, so what moves cannot be predicted "
        "(migcheck analyze says why)"
        for t in unpredictable
    ]
    return notes
