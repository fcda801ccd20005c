"""The plan's recommendation: the cheapest fix that raises an application's parallelism.

Pure text from :class:`~migcheck.apps.parallelism.Figures`.  The order is
the cost order an operator pays: more threads (a config change and a
restart), then more instances (machines), and only then more partitions,
which for a stateful app is a migration (`migcheck app`, ``migcheck
runbook``).  Balance and standby remarks follow the main advice.
"""

from __future__ import annotations

from migcheck.apps.parallelism import Figures
from migcheck.apps.rules import AppLevel
from migcheck.words import plural


def recommend(f: Figures) -> str:
    """One paragraph: the main advice first, then what else the figures show."""
    parts = [_main(f), *_narrow(f), *_balance(f), *_standby(f)]
    return " ".join(p for p in parts if p)


def _main(f: Figures) -> str:
    if f.tasks == 0:
        return "The application has no tasks: none of its source topics has a partition."
    if f.threads < f.tasks:
        return f"More threads, no partition change: {_threads_short(f)}"
    idle = f" ({plural(f.idle_threads, 'thread')} idle)" if f.idle_threads else ""
    return (
        f"Every one of the {plural(f.tasks, 'task')} already has its own thread{idle}: more "
        f"threads or instances add nothing. Only more partitions raise the parallelism above "
        f"{f.ceiling} tasks per sub-topology; check the change with migcheck app "
        "and follow migcheck runbook."
    )


def _threads_short(f: Figures) -> str:
    """Threads first (cheapest), then instances; either gives every task a thread."""
    busiest = f.tasks_per_thread[0] if f.tasks_per_thread else f.tasks
    where = "its one instance" if f.instances == 1 else f"each of the {f.instances} instances"
    return (
        f"{plural(f.threads, 'thread')} run {plural(f.tasks, 'task')} (the busiest thread "
        f"runs {busiest}). Set num.stream.threads={f.threads_needed} on {where} (given "
        f"{plural(f.threads_needed, 'core')}{'' if f.instances == 1 else ' each'}), or run "
        f"{f.instances_needed} instances of "
        f"{plural(f.threads_per_instance, 'thread')}: either gives every task its own thread "
        "with no migration."
    )


def _narrow(f: Figures) -> list[str]:
    return [
        f"The repartition topic {n.topic} has {n.partitions} partitions while its upstream "
        f"runs {n.upstream_tasks} tasks: it caps sub-topology "
        f"{', '.join(map(str, n.downstream))} at {n.partitions} tasks. Widening it is itself "
        "a state migration"
        + (f" for the stores downstream ({', '.join(n.stores)})." if n.stores else ".")
        for n in f.narrow
    ]


def _balance(f: Figures) -> list[str]:
    loads = f.tasks_per_instance
    if len(loads) < 2 or max(loads) == min(loads):
        return []
    split = "/".join(map(str, loads))
    if min(loads) == 0:
        head = f"Tasks split {split} over {f.instances} instances: an instance runs none."
    else:
        head = (
            f"Tasks split {split} over {f.instances} instances: the busiest does about "
            f"{f.imbalance_pct}% more work than the least busy."
        )
    even = " or ".join(map(str, f.even_instances))
    tail = f" {even} instances would split them evenly."
    if f.observed and tuple(loads) != f.even_split:
        tail = f" The most even split is {'/'.join(map(str, f.even_split))};" + tail
    return [head + tail]


def _standby(f: Figures) -> list[str]:
    s = f.standby
    if not s.replicas:
        return []
    volume = (
        ""
        if s.restore_records is None or not s.tasks
        else (f", restoring {plural(s.restore_records, 'record')}")
    )
    text = f"num.standby.replicas={s.replicas} adds {plural(s.tasks, 'standby task')}{volume}."
    if s.unplaced:
        text += (
            f" {s.unplaced} more cannot be placed: a standby never shares an instance with its "
            f"active task, so {s.replicas} standby replicas need {s.replicas + 1} instances."
        )
    return [text]


def recommend_change(today: Figures, after: Figures, level: AppLevel) -> str:
    """The advice on a proposed partition change: its verdict first, then its figures."""
    if level == AppLevel.SAFE:
        head = "migcheck app calls this change SAFE."
    else:
        head = (
            f"migcheck app says {level} for this change: do it only through "
            "migcheck runbook (a new topic, a reset and a reprocess)."
        )
    if today.threads < today.tasks:
        head += " It is not needed to use more threads: today's tasks outnumber the threads."
    gain = f" Tasks {today.tasks} -> {after.tasks}, ceiling {today.ceiling} -> {after.ceiling}."
    if after.threads < after.tasks:
        then = f" After it, {_threads_short(after)}"
    else:
        idle = plural(after.idle_threads, "thread")
        then = f" After it, every task has its own thread ({idle} idle)."
    rest = [*_narrow(after), *_balance(after), *_standby(after)]
    return " ".join([head + gain + then, *rest])
