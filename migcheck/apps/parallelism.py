"""How many tasks a Kafka Streams application has, and how its threads share them.

Pure functions over the application model of :mod:`migcheck.apps.rules`.
Kafka Streams makes one task per partition of each non-global sub-topology
(``rules.sizes``).  Its assignors (the HighAvailabilityTaskAssignor of the
classic protocol, the broker's sticky assignor of the streams protocol) give
each instance tasks in proportion to its threads, and each instance spreads
its tasks evenly over its threads.  A thread can run several tasks, but a task
runs on one thread, so:

- threads beyond the task count do nothing (idle threads);
- while threads are fewer than tasks, more threads or instances raise
  throughput with no partition change and no migration;
- only when every task has its own thread do more partitions help, and a
  partition change of a stateful app is a migration (``migcheck app``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from migcheck.apps.rules import App, sizes
from migcheck.kafka.groups import Member

#: A task: (sub-topology id, partition).
Task = tuple[int, int]


@dataclass(frozen=True)
class Instance:
    """One KafkaStreams instance: its threads and, when read from the group, their tasks."""

    name: str
    threads: int
    thread_tasks: tuple[int, ...] | None = None  # observed tasks per thread; None: predicted


@dataclass(frozen=True)
class Deployment:
    """The instances that run the app, given (offline) or read from its group (live)."""

    instances: tuple[Instance, ...]

    @property
    def threads(self) -> int:
        return sum(i.threads for i in self.instances)

    @property
    def observed(self) -> bool:
        """Whether every instance's tasks were read from the group (else they are predicted)."""
        return bool(self.instances) and all(i.thread_tasks is not None for i in self.instances)

    @property
    def threads_per_instance(self) -> int:
        """The usual thread count of one instance, for sizing advice."""
        return max(1, round(self.threads / max(1, len(self.instances))))


def uniform(instances: int, threads: int) -> Deployment:
    """``instances`` identical instances of ``threads`` threads each."""
    return Deployment(tuple(Instance(f"instance-{i + 1}", threads) for i in range(instances)))


#: A classic member's client id: ``<client.id>-StreamThread-<n>-consumer``, where the
#: client.id defaults to ``<application.id>-<process uuid>``: one prefix per instance.
_THREAD_CLIENT = re.compile(r"^(?P<instance>.+)-StreamThread-(?P<thread>\d+)-consumer$")


def instance_of(member: Member) -> str:
    """The instance a member (one stream thread) belongs to: its process id (streams
    protocol), else its client id without the thread suffix; a foreign client is its own."""
    if member.process_id:
        return member.process_id
    m = _THREAD_CLIENT.match(member.client_id)
    return m.group("instance") if m else member.client_id or member.member_id


def observed(app: App, members: Sequence[Member]) -> Deployment:
    """The deployment a group's members show: threads per instance and each one's tasks."""
    by_instance: dict[str, list[int]] = {}
    topic_subs = _topic_subtopologies(app)
    for member in members:
        by_instance.setdefault(instance_of(member), []).append(_member_tasks(member, topic_subs))
    return Deployment(
        tuple(Instance(name, len(t), tuple(t)) for name, t in sorted(by_instance.items()))
    )


def _topic_subtopologies(app: App) -> dict[str, set[int]]:
    """Each source topic's name on the cluster -> the sub-topologies that read it."""
    subs: dict[str, set[int]] = {}
    for sub in app.topology.subtopologies:
        for t in sub.source_topics:
            full = app.internal(t) if app.is_repartition(t) else t
            subs.setdefault(full, set()).add(sub.id)
    return subs


def _member_tasks(member: Member, topic_subs: Mapping[str, set[int]]) -> int:
    """A member's active tasks: as the broker lists them, or one per (sub-topology,
    partition) among the source partitions the classic assignment gave it."""
    if member.active_tasks:
        return sum(len(parts) for parts in member.active_tasks.values())
    return len({(s, p) for t, p in member.partitions for s in topic_subs.get(t, ())})


def spread(total: int, parts: int) -> list[int]:
    """``total`` tasks over ``parts`` equal shares, as even as possible, largest first."""
    if parts <= 0:
        return []
    base, extra = divmod(total, parts)
    return [base + 1] * extra + [base] * (parts - extra)


def weighted(total: int, capacities: Sequence[int]) -> list[int]:
    """``total`` tasks over instances of ``capacities`` threads, balanced per thread: each
    task goes to the instance whose load per thread stays lowest (ties: the first)."""
    loads = [0] * len(capacities)
    for _ in range(total):
        best = min(range(len(loads)), key=lambda i: ((loads[i] + 1) / capacities[i], i))
        loads[best] += 1
    return loads


@dataclass(frozen=True)
class Narrow:
    """A repartition topic with fewer partitions than its upstream: it caps what reads it."""

    topic: str  # the full name on the cluster
    partitions: int
    upstream_tasks: int
    downstream: tuple[int, ...]  # the sub-topologies that read it
    stores: tuple[str, ...]  # their stores: widening the topic moves their state


@dataclass(frozen=True)
class Standby:
    """What ``num.standby.replicas`` adds: standby tasks and the changelog each restores."""

    replicas: int
    tasks: int  # standby tasks placed (a standby needs an instance without that task)
    unplaced: int  # standby tasks with no instance to go to
    restore_records: int | None  # the records all placed standbys restore; None: sizes unknown
    largest_task_records: int | None  # the largest single standby task's restore


@dataclass(frozen=True)
class Figures:
    """An application's parallelism under one set of partition counts and one deployment."""

    subtopology_tasks: dict[int, int]
    stateful: tuple[int, ...]  # sub-topologies with a logged store (the ones standbys copy)
    instances: int
    threads: int
    tasks_per_instance: tuple[int, ...]  # largest first
    tasks_per_thread: tuple[int, ...]  # largest first
    observed: bool  # the two lists above were read from the group, not predicted
    standby: Standby
    narrow: tuple[Narrow, ...]
    threads_per_instance: int

    @property
    def tasks(self) -> int:
        return sum(self.subtopology_tasks.values())

    @property
    def ceiling(self) -> int:
        """The largest sub-topology's tasks: no stage runs on more threads than that."""
        return max(self.subtopology_tasks.values(), default=0)

    @property
    def active_threads(self) -> int:
        return sum(1 for n in self.tasks_per_thread if n > 0)

    @property
    def idle_threads(self) -> int:
        return self.threads - self.active_threads

    @property
    def instances_needed(self) -> int:
        """Instances of today's size that give every task its own thread."""
        return math.ceil(self.tasks / self.threads_per_instance) if self.tasks else 0

    @property
    def threads_needed(self) -> int:
        """Threads per instance, at today's instance count, that give every task a thread."""
        return math.ceil(self.tasks / self.instances) if self.instances else 0

    @property
    def even_split(self) -> tuple[int, ...]:
        """The most even split of the tasks over today's instances."""
        return tuple(spread(self.tasks, self.instances))

    @property
    def even_instances(self) -> tuple[int, ...]:
        """The instance counts nearest today's (below, above) that split the tasks evenly."""
        return even_counts(self.tasks, self.instances)

    @property
    def imbalance_pct(self) -> int | None:
        """How much more the busiest instance runs than the least busy, in percent; None
        when an instance runs no task (then it is idle, not slow)."""
        return imbalance(self.tasks_per_instance)


def imbalance(loads: Sequence[int]) -> int | None:
    """The busiest load over the lightest, in whole percent; None when the lightest is 0."""
    if not loads or min(loads) == 0:
        return None
    return round((max(loads) - min(loads)) * 100 / min(loads))


def even_counts(tasks: int, instances: int) -> tuple[int, ...]:
    """``instances`` itself when it divides ``tasks``, else the nearest divisors below and
    above it (no more instances than tasks: an instance without a task is idle)."""
    if tasks == 0 or instances <= 0 or tasks % instances == 0:
        return (instances,) if instances > 0 else ()
    below = next(d for d in range(instances, 0, -1) if tasks % d == 0)
    above = next((d for d in range(instances + 1, tasks + 1) if tasks % d == 0), None)
    return (below,) if above is None else (below, above)


def figures(
    app: App,
    external: Mapping[str, int],
    deployment: Deployment,
    replicas: int = 0,
    changelog_records: Mapping[str, Sequence[int]] | None = None,
) -> Figures:
    """The figures of ``app`` when its source topics have the ``external`` counts.

    ``changelog_records`` holds each changelog's records per partition (live);
    without it the standbys' restore volume is unknown.
    """
    tasks = sizes(app, external).tasks
    stateful = _stateful(app)
    per_instance, per_thread = _assignment(sum(tasks.values()), deployment)
    return Figures(
        subtopology_tasks=tasks,
        stateful=stateful,
        instances=len(deployment.instances),
        threads=deployment.threads,
        tasks_per_instance=per_instance,
        tasks_per_thread=per_thread,
        observed=deployment.observed,
        standby=_standby(
            app, tasks, stateful, len(deployment.instances), replicas, changelog_records
        ),
        narrow=narrow_repartitions(app, tasks),
        threads_per_instance=deployment.threads_per_instance,
    )


def _assignment(total: int, deployment: Deployment) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Tasks per instance and per thread, largest first: as read, or as the assignor would."""
    if deployment.observed:
        threads = [n for i in deployment.instances for n in i.thread_tasks or ()]
        instances = [sum(i.thread_tasks or ()) for i in deployment.instances]
    else:
        instances = weighted(total, [i.threads for i in deployment.instances])
        threads = [
            n
            for load, inst in zip(instances, deployment.instances, strict=True)
            for n in spread(load, inst.threads)
        ]
    return tuple(sorted(instances, reverse=True)), tuple(sorted(threads, reverse=True))


def _stateful(app: App) -> tuple[int, ...]:
    """Sub-topologies with a store that logs to a changelog: Kafka Streams keeps standbys
    only of those (a store without a changelog has nothing to restore from)."""
    return tuple(
        sub.id
        for sub in app.topology.subtopologies
        if not sub.is_global and any(app.changelog(s) in app.counts for s in sub.stores)
    )


def _standby(
    app: App,
    tasks: Mapping[int, int],
    stateful: Sequence[int],
    instances: int,
    replicas: int,
    records: Mapping[str, Sequence[int]] | None,
) -> Standby:
    stateful_tasks = sum(tasks[s] for s in stateful)
    placed = min(replicas, max(0, instances - 1))  # never beside its own active task
    volumes = None if records is None else _task_volumes(app, tasks, stateful, records)
    return Standby(
        replicas=replicas,
        tasks=stateful_tasks * placed,
        unplaced=stateful_tasks * (replicas - placed),
        restore_records=None if volumes is None else sum(volumes) * placed,
        largest_task_records=None if volumes is None or not placed else max(volumes, default=0),
    )


def _task_volumes(
    app: App,
    tasks: Mapping[int, int],
    stateful: Sequence[int],
    records: Mapping[str, Sequence[int]],
) -> list[int]:
    """Each stateful task's changelog records: partition ``p`` of each of its changelogs."""
    subs = {s.id: s for s in app.topology.subtopologies}
    volumes = []
    for sub_id in stateful:
        logs = [records.get(app.changelog(s), ()) for s in subs[sub_id].stores]
        for p in range(tasks[sub_id]):
            volumes.append(sum(log[p] for log in logs if p < len(log)))
    return volumes


def narrow_repartitions(app: App, tasks: Mapping[int, int]) -> tuple[Narrow, ...]:
    """Repartition topics the app sized below their upstream's task count."""
    found = []
    for sub in app.topology.subtopologies:
        for topic in sub.sink_topics:
            size = app.fixed.get(topic)
            if size is None or size >= tasks.get(sub.id, 0):
                continue
            readers = [s for s in app.topology.subtopologies if topic in s.source_topics]
            found.append(
                Narrow(
                    topic=app.internal(topic),
                    partitions=size,
                    upstream_tasks=tasks[sub.id],
                    downstream=tuple(s.id for s in readers),
                    stores=tuple(st for s in readers for st in s.stores),
                )
            )
    return tuple(found)
