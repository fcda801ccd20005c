"""The phases' I/O on the cluster, the copy's follow and the operator: the one place
where :class:`~migcheck.online.phases.MigrateIO` is built for real.

The phases (:mod:`migcheck.online.phases`) decide and order; this adapter looks at the
broker for them (ends, committed offsets, members, readers, an app's lag), commits a
moved group's offsets (:mod:`migcheck.online.writes`), and passes the operator's answers,
the follow's state and the copy's range checks (:mod:`migcheck.online.follower`) on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from migcheck.frameworks.base import Framework
from migcheck.frameworks.registry import STATEFUL_KINDS
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import describe_group, topics_with_prefix
from migcheck.kafka.metadata import TopicEnds, TopicMeta, wait_until_settled
from migcheck.model.copy import CopyLag, CopyResult, Ranges, Verification
from migcheck.model.runbook import StateMove
from migcheck.online.barrier import SourceEnds
from migcheck.online.follower import Checker, Ends, Follower
from migcheck.online.phases import AppPlan, MigrateIO
from migcheck.online.sequence import State
from migcheck.online.writes import commit_offsets
from migcheck.readers.discovery import find_readers


@dataclass(frozen=True)
class Operator:
    """The person at the terminal (or their automation): ``ask`` prints a ``MANUAL:``
    line and says whether they answered y, ``choose`` returns their answer, ``decide``
    returns the person's own answer (--yes never gives it: MigrateIO.decide), ``say``
    prints a line of progress.  Their answers may come on stdin or through the control
    socket (:mod:`migcheck.online.control`)."""

    ask: Callable[[str], bool]
    choose: Callable[[str], str]
    decide: Callable[[str], str]
    say: Callable[[str], None]
    #: whether they hold the cut-over back (--postpone-cut-over-flag-file exists, or the
    #: control socket's postpone)
    postponed: Callable[[], bool] = lambda: False
    #: told the state the walk enters and its copy's lag: where the run stands, for the
    #: control socket's status (:mod:`migcheck.online.control`)
    entered: Callable[[State, Callable[[], CopyLag | None]], None] = lambda state, lag: None


@contextlib.contextmanager
def open_migrate_io(
    client: ClientConfig,
    topics: tuple[TopicMeta, TopicMeta],
    follower: Follower,
    verify: Callable[[Ranges, Ranges], Verification],
    apps: tuple[AppPlan, ...],
    operator: Operator,
    starts: tuple[Ends, Ends] | None = None,
    move_state: Callable[[StateMove, dict[int, int]], CopyResult] | None = None,
) -> Iterator[MigrateIO]:
    """Build the phases' I/O for one copy of ``topics`` (the forward one, or the reverse
    one from the barrier's ``starts``), its ranges checked by ``verify``, a seeded
    shadow's state moved by ``move_state`` (the copy engine's, which lives above); its
    clients opened here and closed when the block ends."""
    source, dest = topics
    ends = TopicEnds(client, source.name)  # the phases' own: a client is for one thread
    # each topic an app's lag is counted on, its clients kept open: the barrier asks ten
    # times a second
    opened: dict[str, TopicEnds] = {}

    def highs(topic: str) -> dict[int, int]:
        if topic not in opened:
            opened[topic] = TopicEnds(client, topic)
        return opened[topic].high()

    if starts is None:  # the forward copy: both topics from their logs' starts
        starts = ({p.partition: p.log_start_offset for p in source.partitions},
                  {p.partition: p.log_start_offset for p in dest.partitions})  # fmt: skip

    checker = Checker(verify, (source.name, dest.name), follower, starts)
    # each app's and shadow's framework: only an app's phases ask its lag
    frameworks = {i: a.framework for a in apps for i in (a.app_id, a.shadow_id)}
    ids = tuple(frameworks)

    def source_ends() -> SourceEnds:
        return SourceEnds(ends.high(), ends.stable())

    def topic_ends(topic: str) -> dict[int, int]:
        meta = wait_until_settled(client, topic)
        return {p.partition: p.log_end_offset for p in meta.partitions}

    def committed(group: str, topic: str) -> dict[int, int]:
        info = describe_group(client, group)
        found = info.committed if info else {}
        return {p: o for (t, p), o in found.items() if t == topic}

    def has_members(group: str) -> bool:
        info = describe_group(client, group)
        return bool(info and info.members)

    def lag() -> CopyLag | None:
        follower.raise_error()
        return follower.lag

    io = MigrateIO(
        ask=operator.ask,
        choose=operator.choose,
        decide=operator.decide,
        say=operator.say,
        lag=lag,
        check=checker.check,
        checking=checker.checking,
        source_ends=source_ends,
        copied_to=follower.wait_copied_to,
        stop_copy=follower.stop.set,
        ends=topic_ends,
        app_lag=lambda app_id, topic: app_lag(
            client, app_id, topic, highs, ids, frameworks.get(app_id)
        ),
        shadows=lambda: [
            f.group.group_id
            for f in find_readers(client, [dest.name])[dest.name]
            if f.evidence.kind in STATEFUL_KINDS
        ],
        committed=committed,
        has_members=has_members,
        readers=lambda topic: [
            f.group.group_id
            for f in find_readers(client, [topic])[topic]
            if any(t == topic for m in f.group.members for t, _ in m.partitions)
        ],
        set_offsets=lambda group, topic, offsets: commit_offsets(client, group, topic, offsets),
        postponed=operator.postponed,
        wait=time.sleep,  # between looks at the broker: nothing to wait on but time
        clock=time.monotonic,
    )
    if move_state is not None:
        io = replace(io, move_state=move_state)
    try:
        yield io
    finally:
        ends.close()
        for opened_ends in opened.values():
            opened_ends.close()


def app_lag(
    client: ClientConfig,
    app: str,
    topic: str,
    highs: Callable[[str], dict[int, int]],
    others: tuple[str, ...],
    framework: Framework | None,
) -> int:
    """How many records the app ``app`` of ``framework`` has still to read of ``topic``
    and of its own repartition topics (the framework's naming says which), by its
    committed offsets (none committed: from 0).  The offsets are read before the ends:
    lag 0 then means every record written by the time of the look was read, and, since
    the app flushes its writes before it commits, its outputs hold every result of them."""
    info = describe_group(client, app)
    committed = info.committed if info else {}
    if framework is None:  # no app: nothing of its own to read
        return records_left(app, topic, committed, [], highs, others, lambda _: False)
    named = framework.internal_topics(app, topics_with_prefix(client, f"{app}-"))
    return records_left(app, topic, committed, named, highs, others, framework.is_repartition)


def records_left(
    app: str,
    topic: str,
    committed: Mapping[tuple[str, int], int],
    named: list[str],
    highs: Callable[[str], dict[int, int]],
    others: tuple[str, ...],
    is_repartition: Callable[[str], bool],
) -> int:
    """What :func:`app_lag` counts, from the app's ``committed`` offsets and its internal
    topics ``named``: ``topic`` and the app's repartition topics, but those of ``others``
    (a shadow ``<app>-pN`` shares the app's prefix), each partition's high watermark less
    its committed offset (never below 0)."""
    theirs = tuple(f"{o}-" for o in others if o != app)
    internal = [t for t in named if is_repartition(t) and not t.startswith(theirs)]
    return sum(
        max(0, end - committed.get((t, p), 0))
        for t in (topic, *internal)
        for p, end in highs(t).items()
    )
