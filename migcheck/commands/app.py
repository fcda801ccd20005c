"""``migcheck app`` end to end: discover, model, judge each candidate, measure state.

It returns the report and its exit code and neither renders nor prints.  The
verdict needs only metadata; ``--state`` adds the analysis pipeline's figures
for every store whose sub-topology changes, read from its changelog (or, for
a store with no changelog, from the source topic that feeds it), and the route
each store's state can take instead of a rebuild (apps/movable.py): moved, with
its changelog's size, or why not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from migcheck.apps.build import WOULD_ADD, Model
from migcheck.apps.discovery import (
    Discovery,
    app_model,
    check_read,
    discover_app,
    lost_history,
)
from migcheck.apps.judgement import Case, judge
from migcheck.apps.movable import store_routes, unmovable
from migcheck.apps.rules import (
    App,
    AppLevel,
    Check,
    Reason,
    external_counts,
    health,
    sizes,
)
from migcheck.apps.sets import must_move_together
from migcheck.apps.strategy import direct_stores
from migcheck.commands.analyze import AnalyzeOptions, run_analyses
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_GATE, EXIT_OK, EXIT_UNPREDICTABLE, ReadError, UsageError
from migcheck.frameworks.registry import AUTO_FRAMEWORK, framework_said
from migcheck.frameworks.topology import read_topology
from migcheck.kafka.metadata import log_sizes
from migcheck.model.analyze import CandidateEntry, Mode, SourceKind, TopicEntry
from migcheck.model.app import (
    AppCandidate,
    AppGroup,
    AppReason,
    AppReport,
    AppState,
    AppSubtopology,
    AppTopic,
    ErrorCandidate,
    StateRoute,
    StoreImpact,
    SubtopologyVerdict,
)
from migcheck.model.header import report_header
from migcheck.model.history import Trimmed, remedy_loses_history
from migcheck.model.migrate import ShadowState
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.runbook import Strategy
from migcheck.model.topics import check_can_grow


@dataclass
class AppOptions:
    """Everything ``migcheck app`` was asked, apart from how to render the report."""

    app_id: str
    topics: list[str]
    candidates: list[int]
    topology_file: str | None = None
    fixed_repartition: list[str] = field(default_factory=list)
    state: bool = False
    full: bool = False
    sample_per_partition: int = 20_000
    partitioner: PartitionerChoice = PartitionerChoice.AUTO
    moved_keys_out: str | None = None
    framework: str = AUTO_FRAMEWORK  # --framework: a ReaderKind's value, on the user's word
    #: Other topics of the same change, at their proposed counts (the gate's plan): the app
    #: is judged on all its changed inputs together, as it meets them (issue 71).
    planned: Mapping[str, int] = field(default_factory=dict)
    connection: Connection = field(default_factory=Connection)
    spark: SparkSettings = field(default_factory=SparkSettings)


def run_app(options: AppOptions) -> Outcome[AppReport]:
    """Discover the app, judge every candidate, measure its state when asked."""
    if options.moved_keys_out and not (options.state and options.full):
        raise UsageError("--moved-keys-out needs --state --full: a sample lists only some keys")
    topology = read_topology(options.topology_file)
    # Spark's JVM is launched by run_analyses once the state's reads are planned, and
    # only if one needs it: a small app's reads are the driver's (docs/benchmarks.md).
    said = framework_said(options.framework)
    changed = [*options.topics, *(t for t in options.planned if t not in options.topics)]
    disc = discover_app(options.connection.client(), options.app_id, topology, changed, said)
    _check_topics(options, disc)
    model = app_model(disc, topology, options.fixed_repartition)
    check_read(options.topics, model.app, disc, topology is not None)
    direct = {t: direct_stores(model, t).stores for t in changed}
    candidates = [candidate(model, direct, n, options.planned) for n in options.candidates]
    movable = unmovable(disc, model, topology) is None
    _remedies(candidates, lost_history(disc), movable, disc.facts.framework.shadow is not None)
    unpredictable = False
    state: AppState | None = None
    if options.state:
        state, unpredictable = _state(options, model.app, candidates)
        state["routes"] = _routes(options, disc, model)
    report = _report(options, disc, model, candidates, state)
    if unpredictable:
        return Outcome(report, EXIT_UNPREDICTABLE)
    safe = all(c["verdict"] == AppLevel.SAFE for c in candidates)
    return Outcome(report, EXIT_OK if safe else EXIT_GATE)


def _remedies(
    candidates: list[AppCandidate], lost: tuple[Trimmed, ...], movable: bool, shadowed: bool
) -> None:
    """What every remedy of a change that is not SAFE would lose: each rebuilds the state
    from the sources, and some lost records (model/history.py); but moving the state,
    where every store can move (``movable``: the runbook's own decision, apps/movable.py),
    offline, and online too where the framework has a shadow (``shadowed``)."""
    move_state = f"--strategy {Strategy.MOVE_STATE}" if movable else ""
    online = f"--shadow-state {ShadowState.MOVE}" if movable and shadowed else ""
    for cand in candidates:
        if lost and cand["verdict"] is not AppLevel.SAFE:
            cand["lost_history"] = remedy_loses_history(lost, move_state, online)
            cand["move_state"] = movable


def _check_topics(options: AppOptions, disc: Discovery) -> None:
    for topic in options.topics:
        if disc.topics.get(topic) is None:
            raise ReadError(f"topic {topic!r} does not exist at {options.connection.bootstrap}")
    for topic in options.topics:  # an unchanged count still reports the app's health
        check_can_grow(disc.topics[topic].partition_count, options.candidates, f"--to ({topic})")


def _unchanged(options: AppOptions, disc: Discovery) -> list[str]:
    """Said when no ``--to`` changes any topic: the report is the app's health today (the
    runbook's last check asks for it with the new count)."""
    counts = {t: disc.topics[t].partition_count for t in options.topics}
    if any(n != c for n in options.candidates for c in counts.values()):
        return []
    named = ", ".join(f"{t} has {n} partitions already" for t, n in counts.items())
    return [f"nothing changes: {named} (--to): the report shows the app's health today"]


def candidate(
    model: Model,
    direct: Mapping[str, tuple[str, ...]],
    n: int,
    planned: Mapping[str, int] | None = None,
) -> AppCandidate:
    """``n``'s verdict on every shape of ``model``; ``direct``: each changed topic's stores
    that read it directly, each changed to ``n`` unless ``planned`` proposes another count
    for it.  The runbook's header and the gate quote its first error."""
    app = model.app
    j = judge(model, {t: (planned or {}).get(t, n) for t in direct})
    v = j.verdict
    crashes = any(o.first for o in j.cases)
    subs: list[SubtopologyVerdict] = [
        {
            "id": sub.id,
            "tasks": v.tasks.get(sub.id, (0, 0))[0],
            "new_tasks": v.tasks.get(sub.id, (0, 0))[1],
            "verdict": v.subtopologies[sub.id],
        }
        for sub in app.topology.subtopologies
    ]
    return {
        "partitions": n,
        "verdict": v.level,
        "error": j.error,
        "error_releases": app.framework.releases(app.protocol) if crashes else None,
        "error_when": app.framework.failing_when(app.protocol) if crashes else None,
        "after_cleanup": _after_cleanup(app, [r for r, _ in j.reasons], direct),
        "reasons": [_reason(r, condition) for r, condition in j.reasons],
        "subtopologies": subs,
        "stores": None,
        "error_candidates": None if j.certain else [_error_candidate(o) for o in j.cases],
    }


def _error_candidate(o: Case) -> ErrorCandidate:
    return {
        "error": o.first.text if o.first else None,
        "verdict": o.level,
        "check": o.first.check if o.first else None,
        "condition": o.condition or "",
    }


#: The checks whose crash the framework's clean-up clears: it recreates internal topics.
_CLEARED = (Check.CHANGELOG, Check.REPARTITION)


def _after_cleanup(
    app: App, reasons: Sequence[Reason], direct: Mapping[str, tuple[str, ...]]
) -> str | None:
    """What the clean-up the error leads to leaves behind, when the app would start again
    (every crash is an internal topic's) and a store reads a changed topic directly."""
    crashes = [r for r in reasons if r.level == AppLevel.CRASH]
    fed = sorted((topic, stores) for topic, stores in direct.items() if stores)  # one order
    if not crashes or not fed or any(r.check not in _CLEARED for r in crashes):
        return None
    read = "; ".join(f"{', '.join(stores)} read {topic} directly" for topic, stores in fed)
    return (
        f"CORRUPT after the clean-up the error leads to ({app.framework.cleanup}): the app "
        f"starts, but {read}, so each moved key's old records stay in its old partition and "
        "the reprocess splits its history over two tasks. migcheck runbook writes the copy "
        "into a new topic that avoids it."
    )


def _reason(r: Reason, condition: str | None = None) -> AppReason:
    """A reason as the report says it; one that holds only in another shape of the app
    names no sub-topology (that shape numbers its own)."""
    return {
        "level": r.level,
        "subtopology": None if r.subtopology < 0 or condition else r.subtopology,
        "text": r.text,
        "topics": list(r.topics),
        "stores": list(r.stores),
        "check": r.check,
        "condition": condition,
    }


def _report(
    options: AppOptions,
    disc: Discovery,
    model: Model,
    candidates: list[AppCandidate],
    state: AppState | None,
) -> AppReport:
    app = model.app
    today = sizes(app, external_counts(app))
    group = disc.group
    group_entry: AppGroup = {
        "type": group.group_type if group else "none",
        "state": group.state if group else None,
        "members": len(group.members) if group else 0,
    }
    largest = max(candidates, key=lambda c: c["partitions"])
    return {
        **report_header(),
        "source": {
            "kind": SourceKind.KAFKA,
            "bootstrap_servers": options.connection.bootstrap or "",
        },
        "application_id": options.app_id,
        "framework": app.framework.kind,
        "group": group_entry,
        "protocol": app.protocol,
        "basis": model.basis,
        "basis_note": (WOULD_ADD[model.basis] or None) if app.framework.takes_topology else None,
        "notes": [*model.notes, *_unchanged(options, disc)],
        "topics": _topics(disc),
        "subtopologies": _subtopologies(app, today.tasks),
        "health": [_reason(r) for r in health(app)],
        "together": [{"topics": list(t.topics), "why": t.why} for t in must_move_together(model)],
        "changes": list(options.topics),
        "candidates": candidates,
        "verdict": largest["verdict"],
        "state": state,
    }


def _topics(disc: Discovery) -> list[AppTopic]:
    internal = disc.facts.internal
    rows: list[AppTopic] = []
    for name, meta in disc.topics.items():
        role = "source"
        if name in internal:
            role = "repartition" if disc.facts.framework.is_repartition(name) else "changelog"
        rows.append(
            {
                "topic": name,
                "role": role,
                "partitions": meta.partition_count,
                "cleanup_policy": meta.cleanup_policy,
            }
        )
    return rows


def _subtopologies(app: App, tasks: dict[int, int]) -> list[AppSubtopology]:
    return [
        {
            "id": sub.id,
            "is_global": sub.is_global,
            "sources": list(sub.source_topics),
            "sinks": list(sub.sink_topics),
            "stores": list(sub.stores),
            "tasks": 0 if sub.is_global else tasks.get(sub.id, 0),
        }
        for sub in app.topology.subtopologies
    ]


# --- --state: what each store's move costs -------------------------------------------


@dataclass(frozen=True)
class _StoreRef:
    store: str
    subtopology: int
    changelog: str | None  # None: no changelog (logging disabled, or a source topic)


def _stores(app: App) -> list[_StoreRef]:
    return [
        _StoreRef(
            store, sub.id, app.changelog(store) if app.changelog(store) in app.counts else None
        )
        for sub in app.topology.subtopologies
        if not sub.is_global
        for store in sub.stores
    ]


def _state(options: AppOptions, app: App, candidates: list[AppCandidate]) -> tuple[AppState, bool]:
    """Analyze the changed topics and every affected changelog; fill each candidate's stores."""
    tasks = {
        c["partitions"]: {s["id"]: s["new_tasks"] for s in c["subtopologies"]} for c in candidates
    }
    stores = _stores(app)
    entries: dict[str, TopicEntry] = {}
    unpredictable = False
    jobs: list[tuple[list[str], list[int], str | None, tuple[str, ...]]] = [
        (list(options.topics), list(options.candidates), options.moved_keys_out, ("plain",))
    ]
    for current, logs in _changelog_groups(app, stores).items():
        wanted = sorted({tasks[n][s.subtopology] for n in tasks for s in logs} - {current})
        if wanted:
            names = [s.changelog for s in logs if s.changelog]
            jobs.append((names, wanted, None, ("plain", "window", "session")))
    for outcome in run_analyses([_analyze_options(options, *job) for job in jobs]):
        unpredictable |= outcome.exit_code == EXIT_UNPREDICTABLE
        entries.update({t["topic"]: t for t in outcome.report["topics"]})
    for cand in candidates:
        cand["stores"] = [
            _impact(app, s, cand["partitions"], tasks[cand["partitions"]], entries, options.topics)
            for s in stores
        ]
    mode = Mode.FULL if options.full else Mode.SAMPLE
    sample = None if options.full else options.sample_per_partition
    return {"mode": mode, "sample_per_partition": sample, "topics": list(entries.values())}, (
        unpredictable
    )


def _routes(options: AppOptions, disc: Discovery, model: Model) -> list[StateRoute]:
    """Each store's route (apps/movable.py), a movable one with its changelog's size:
    records by its offsets, bytes by the brokers' log dirs (both read-only; bytes None
    where no broker described the changelog's log)."""
    routes = store_routes(disc, model)
    movable = [r.changelog for r in routes if r.reason is None]
    sizes = log_sizes(options.connection.client(), movable)
    return [
        {
            "store": r.store,
            "changelog": r.changelog,
            "movable": r.reason is None,
            "records": disc.topics[r.changelog].records if r.reason is None else None,
            "bytes": sizes.get(r.changelog) if r.reason is None else None,
            "reason": r.reason,
        }
        for r in routes
    ]


def _changelog_groups(app: App, stores: list[_StoreRef]) -> dict[int, list[_StoreRef]]:
    """Logged stores by their changelog's count: one analysis run per count (Kafka only grows)."""
    groups: dict[int, list[_StoreRef]] = {}
    for s in stores:
        if s.changelog and app.framework.changelog_by_key:
            groups.setdefault(app.counts[s.changelog], []).append(s)
    return groups


def _analyze_options(
    options: AppOptions,
    topics: list[str],
    counts: list[int],
    moved_out: str | None,
    layouts: tuple[str, ...],
) -> AnalyzeOptions:
    return AnalyzeOptions(
        candidates=counts,
        topics=topics,
        connection=options.connection,
        full=options.full,
        sample_per_partition=options.sample_per_partition,
        partitioner=options.partitioner,
        moved_keys_out=moved_out,
        spark=options.spark,
        key_layouts=layouts,
    )


def _impact(
    app: App,
    s: _StoreRef,
    n: int,
    new_tasks: dict[int, int],
    entries: dict[str, TopicEntry],
    changed: Sequence[str],
) -> StoreImpact:
    """One store under candidate ``n``: its changelog's figures, or its feeding source's."""
    sub = next(x for x in app.topology.subtopologies if x.id == s.subtopology)
    if s.changelog and app.framework.changelog_by_key:
        topic, target = s.changelog, new_tasks[s.subtopology]
    else:
        topic = next((t for t in sub.source_topics if t in changed), changed[0])
        target = n
    entry = entries.get(topic)
    current = app.counts.get(topic, 0)
    cand = _candidate_entry(entry, target) if entry and target != current else None
    restore = entry if (entry and topic == s.changelog) else None
    return {
        "store": s.store,
        "subtopology": s.subtopology,
        "logged": s.changelog is not None,
        "analyzed_topic": topic,
        "partitions": current,
        "new_partitions": target,
        "moved_keys": cand["moved_keys"] if cand else 0,
        "moved_keys_interval": cand["moved_keys_interval"] if cand else None,
        "moved_keys_bounds": cand.get("moved_keys_bounds") if cand else None,
        "moved_bytes": cand["moved_bytes"] if cand else 0,
        "moved_bytes_interval": cand["moved_bytes_interval"] if cand else None,
        "moved_bytes_bounds": cand.get("moved_bytes_bounds") if cand else None,
        "restore_records": restore["state_records"] if restore else 0,
        "restore_bytes": restore["state_bytes"] if restore else 0,
    }


def _candidate_entry(entry: TopicEntry, partitions: int) -> CandidateEntry | None:
    return next((c for c in entry["candidates"] if c["partitions"] == partitions), None)
