"""``migcheck plan`` end to end: the model, the deployment, today's figures and a change's.

Live, the application comes from discovery (as ``migcheck app`` finds it) and
the deployment from its group's members: one member per stream thread, its
tasks from its assignment.  Offline, a ``describe()`` and the partition counts
a user gives stand in for the cluster.  It returns the report and its exit
code and neither renders nor prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from migcheck.apps import advice
from migcheck.apps.build import Model, offline
from migcheck.apps.discovery import Discovery, app_model, discover_app, only_kafka_streams
from migcheck.apps.parallelism import Deployment, Figures, figures, observed, uniform
from migcheck.apps.rules import App, AppLevel, external_counts, verdict
from migcheck.commands.options import Connection
from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_GATE, EXIT_OK, UsageError
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.topology import Topology, read_topology
from migcheck.model.header import report_header
from migcheck.model.plan import (
    PlanFigures,
    PlanInstance,
    PlanProposal,
    PlanReport,
    PlanSubtopology,
)
from migcheck.model.topics import check_can_grow

#: The application id an offline plan names internal topics with, when none is given.
OFFLINE_APP_ID = "<application.id>"


@dataclass
class PlanOptions:
    """Everything ``migcheck plan`` was asked, apart from how to render the report."""

    app_id: str | None = None
    topology_file: str | None = None
    partitions: dict[str, int] = field(default_factory=dict)
    changes: dict[str, int] = field(default_factory=dict)
    instances: int | None = None
    threads: int | None = None
    standby_replicas: int = 0
    fixed_repartition: list[str] = field(default_factory=list)
    connection: Connection = field(default_factory=Connection)


@dataclass(frozen=True)
class _Setting:
    """What a plan is computed on: the model, who runs it, and the changelogs' sizes."""

    model: Model
    deployment: Deployment
    records: Mapping[str, list[int]] | None
    mode: str
    notes: tuple[str, ...] = ()


def run_plan(options: PlanOptions) -> Outcome[PlanReport]:
    """Today's parallelism and, with ``--to``, the proposed change's, with its verdict."""
    setting = _live(options) if options.connection.bootstrap else _offline(options)
    app = setting.model.app
    today = figures(
        app, external_counts(app), setting.deployment, options.standby_replicas, setting.records
    )
    unchanged = _unchanged(app, options.changes)
    if unchanged:  # today's parallelism is still the plan's answer: said, not refused
        setting = replace(setting, notes=(*setting.notes, unchanged))
    proposal = _proposal(options, setting, today) if options.changes and not unchanged else None
    report = _report(options, setting, today, proposal)
    gate = proposal is not None and proposal["verdict"] != AppLevel.SAFE
    return Outcome(report, EXIT_GATE if gate else EXIT_OK)


def _live(options: PlanOptions) -> _Setting:
    if not options.app_id:
        raise UsageError("--bootstrap-server needs --application-id (the app's group id)")
    if options.partitions:
        raise UsageError("--partitions is for an offline plan; live counts come from the cluster")
    topology = read_topology(options.topology_file)
    disc = discover_app(
        options.connection.client(), options.app_id, topology, list(options.changes)
    )
    only_kafka_streams(disc, "plan")
    model = app_model(disc, topology, options.fixed_repartition)
    deployment, notes = _live_deployment(options, model.app, disc)
    records = {t: [p.records for p in meta.partitions] for t, meta in disc.topics.items()}
    return _Setting(model, deployment, records, "live", notes)


def _live_deployment(
    options: PlanOptions, app: App, disc: Discovery
) -> tuple[Deployment, tuple[str, ...]]:
    """The group's members, unless --instances/--threads describe another deployment."""
    members = disc.group.members if disc.group else ()
    seen = observed(app, members)
    if options.instances is None and options.threads is None and members:
        return seen, ()
    instances = options.instances or len(seen.instances) or 1
    threads = options.threads or (seen.threads_per_instance if members else 1)
    shape = f"{instances} instance(s) of {threads} thread(s)"
    if members:
        note = f"figures for {shape}, as given"
    elif options.instances or options.threads:
        note = f"group {app.app_id!r} has no member: figures for {shape}, as given"
    else:
        note = (
            f"group {app.app_id!r} has no member: figures for {shape}; "
            "pass --instances and --threads for the real deployment"
        )
    return uniform(instances, threads), (note,)


def _offline(options: PlanOptions) -> _Setting:
    if not options.topology_file or not options.partitions:
        raise UsageError(
            "pass --application-id and --bootstrap-server (live), or --topology and "
            "--partitions TOPIC=N (offline)"
        )
    topology = read_topology(options.topology_file)
    assert topology is not None
    _check_offline_counts(topology, options.partitions)
    # a Topology#describe() is Kafka Streams' own: plan serves Kafka Streams alone
    model = offline(options.app_id or OFFLINE_APP_ID, topology, options.partitions, KAFKA_STREAMS)
    deployment = uniform(options.instances or 1, options.threads or 1)
    return _Setting(model, deployment, None, "offline")


def _check_offline_counts(topology: Topology, partitions: Mapping[str, int]) -> None:
    app = App(OFFLINE_APP_ID, topology, {}, framework=KAFKA_STREAMS)
    named = {t for sub in topology.subtopologies for t in sub.source_topics + sub.sink_topics}
    for topic in partitions:
        if topic not in named:
            raise UsageError(f"--partitions {topic}: the topology reads no topic of that name")
    for sub in topology.subtopologies:
        for topic in sub.source_topics:
            if not app.is_repartition(topic) and topic not in partitions:
                raise UsageError(f"--partitions needs {topic}=N: sub-topology {sub.id} reads it")


def _proposal(options: PlanOptions, setting: _Setting, today: Figures) -> PlanProposal:
    app = setting.model.app
    _check_changes(app, options.changes)
    v = verdict(app, options.changes)
    changed = replace(app, counts={**app.counts, **options.changes})
    # After a change the assignor starts over: predict it for the same instances and threads.
    shape = Deployment(tuple(replace(i, thread_tasks=None) for i in setting.deployment.instances))
    after = figures(
        changed, external_counts(changed), shape, options.standby_replicas, setting.records
    )
    return {
        **_figures(changed, after, advice.recommend_change(today, after, v.level)),
        "changes": dict(options.changes),
        "verdict": v.level,
        "verdict_reasons": [r.text for r in v.reasons],
    }


def _unchanged(app: App, changes: Mapping[str, int]) -> str:
    """``migcheck: nothing changes``'s words when every ``--to`` is today's count."""
    _check_changes(app, changes)
    if not changes or any(app.counts[t] != n for t, n in changes.items()):
        return ""
    named = ", ".join(f"{t} has {n} partitions already" for t, n in changes.items())
    return f"nothing changes: {named} (--to): the plan shows today's parallelism only"


def _check_changes(app: App, changes: Mapping[str, int]) -> None:
    for topic, n in changes.items():
        if topic not in app.counts:
            raise UsageError(f"--to {topic}: application {app.app_id!r} has no such topic")
        check_can_grow(app.counts[topic], [n], f"--to (topic {topic!r})")


def _figures(app: App, numbers: Figures, recommendation: str) -> PlanFigures:
    subs: list[PlanSubtopology] = [
        {
            "id": sub.id,
            "sources": [app.internal(t) if app.is_repartition(t) else t for t in sub.source_topics],
            "stores": list(sub.stores),
            "tasks": numbers.subtopology_tasks[sub.id],
        }
        for sub in app.topology.subtopologies
        if not sub.is_global
    ]
    return {
        "recommendation": recommendation,
        "tasks": numbers.tasks,
        "ceiling": numbers.ceiling,
        "subtopologies": subs,
        "instances": numbers.instances,
        "threads": numbers.threads,
        "active_threads": numbers.active_threads,
        "idle_threads": numbers.idle_threads,
        "instances_needed": numbers.instances_needed,
        "threads_needed": numbers.threads_needed,
        "tasks_per_instance": list(numbers.tasks_per_instance),
        "tasks_per_thread": list(numbers.tasks_per_thread),
        "balance": {
            "busiest_over_least_pct": numbers.imbalance_pct,
            "even_split": list(numbers.even_split),
            "even_instances": list(numbers.even_instances),
        },
        "standby": {
            "replicas": numbers.standby.replicas,
            "tasks": numbers.standby.tasks,
            "unplaced": numbers.standby.unplaced,
            "restore_records": numbers.standby.restore_records,
            "largest_task_records": numbers.standby.largest_task_records,
        },
        "narrow_repartitions": [
            {
                "topic": n.topic,
                "partitions": n.partitions,
                "upstream_tasks": n.upstream_tasks,
                "downstream_subtopologies": list(n.downstream),
                "stores": list(n.stores),
            }
            for n in numbers.narrow
        ],
    }


def _report(
    options: PlanOptions, setting: _Setting, today: Figures, proposal: PlanProposal | None
) -> PlanReport:
    app = setting.model.app
    text = advice.recommend(today)
    if proposal is not None and today.threads < today.tasks:
        text += " The proposed partition change is not needed for that."
    members: list[PlanInstance] = [
        {
            "instance": i.name,
            "threads": i.threads,
            "tasks": None if i.thread_tasks is None else sum(i.thread_tasks),
            "tasks_per_thread": None if i.thread_tasks is None else list(i.thread_tasks),
        }
        for i in setting.deployment.instances
    ]
    return {
        **_figures(app, today, text),
        **report_header(),
        "application_id": options.app_id,
        "mode": setting.mode,
        "basis": str(setting.model.basis),
        "assignment": "observed" if setting.deployment.observed else "predicted",
        "members": members,
        "notes": [*setting.model.notes, *setting.notes],
        "proposed": proposal,
    }
