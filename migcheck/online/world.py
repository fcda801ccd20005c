"""The phases' I/O on the cluster, the copy's follow and the operator: the one place
where :class:`~migcheck.online.phases.MigrateIO` is built for real.

The phases (:mod:`migcheck.online.phases`) decide and order; this adapter looks at the
broker for them (ends, committed offsets, members, readers, an app's lag), commits a
moved group's offsets (:mod:`migcheck.online.writes`), and passes the operator's answers,
the follows' state and the copies' range checks (:mod:`migcheck.online.follower`) on: one
copy per topic of the migration's set, seen by the phases as one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from migcheck.frameworks.base import Framework
from migcheck.frameworks.registry import STATEFUL_KINDS
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import describe_group, topics_with_prefix
from migcheck.kafka.metadata import TopicEnds, TopicMeta, wait_until_settled
from migcheck.model.copy import CopyLag, CopyResult, Ranges, Verification
from migcheck.model.runbook import StateMove
from migcheck.online.barrier import SourceEnds
from migcheck.online.follower import Checker, Ends, Follower, summed
from migcheck.online.phases import AppPlan, Marks, MigrateIO
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


@dataclass(frozen=True)
class CopyLane:
    """One copy of the set as the phases' I/O sees it: its topics (the source, the
    destination), its follow, its ranges' check, and where its ranges start (None: each
    topic's log start, as the forward copy; the reverse one starts at the barrier)."""

    topics: tuple[TopicMeta, TopicMeta]
    follower: Follower
    verify: Callable[[Ranges, Ranges], Verification]
    starts: tuple[Ends, Ends] | None = field(default=None)

    def checker(self) -> Checker:
        source, dest = self.topics
        starts = self.starts or (
            {p.partition: p.log_start_offset for p in source.partitions},
            {p.partition: p.log_start_offset for p in dest.partitions},
        )
        return Checker(self.verify, (source.name, dest.name), self.follower, starts)


@contextlib.contextmanager
def open_migrate_io(
    client: ClientConfig,
    copies: tuple[CopyLane, ...],
    apps: tuple[AppPlan, ...],
    operator: Operator,
    move_state: Callable[[StateMove, dict[int, int]], CopyResult] | None = None,
) -> Iterator[MigrateIO]:
    """Build the phases' I/O for the set's ``copies`` (the forward ones, or the reverse
    ones from the barrier), a seeded shadow's state moved by ``move_state`` (the copy
    engine's, which lives above); its clients opened here and closed when the block
    ends."""
    # the phases' own: a client is for one thread
    sources = {c.topics[0].name: TopicEnds(client, c.topics[0].name) for c in copies}
    # each topic an app's lag is counted on, its clients kept open: the barrier asks ten
    # times a second
    opened: dict[str, TopicEnds] = {}

    def highs(topic: str) -> dict[int, int]:
        if topic not in opened:
            opened[topic] = TopicEnds(client, topic)
        return opened[topic].high()

    checkers = [(c.topics[0].name, c.topics[1].name, c.checker()) for c in copies]
    dests = [c.topics[1].name for c in copies]
    # each app's and shadow's framework: only an app's phases ask its lag
    frameworks = {i: a.framework for a in apps for i in (a.app_id, a.shadow_id)}
    ids = tuple(frameworks)

    def source_ends() -> dict[str, SourceEnds]:
        return {t: SourceEnds(e.high(), e.stable()) for t, e in sources.items()}

    def check(old: Marks | None, new: Marks | None) -> Verification:
        return summed([
            checker.check(None if old is None else old[src], None if new is None else new[dst])
            for src, dst, checker in checkers
        ])  # fmt: skip

    @contextlib.contextmanager
    def checking() -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for _, _, checker in checkers:
                stack.enter_context(checker.checking())
            yield

    def copied_to(ends: Marks, deadline: float) -> bool:
        return all(c.follower.wait_copied_to(ends[c.topics[0].name], deadline) for c in copies)

    def stop_copy() -> None:
        for c in copies:
            c.follower.stop.set()

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
        for c in copies:
            c.follower.raise_error()
        return combined([c.follower.lag for c in copies])

    io = MigrateIO(
        ask=operator.ask,
        choose=operator.choose,
        decide=operator.decide,
        say=operator.say,
        lag=lag,
        check=check,
        checking=checking,
        source_ends=source_ends,
        copied_to=copied_to,
        stop_copy=stop_copy,
        ends=topic_ends,
        app_lag=lambda app_id, topics: app_lag(
            client, app_id, topics, highs, ids, frameworks.get(app_id)
        ),
        shadows=lambda: list(
            dict.fromkeys(
                f.group.group_id
                for found in find_readers(client, dests).values()
                for f in found
                if f.evidence.kind in STATEFUL_KINDS
            )
        ),
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
        for opened_ends in (*sources.values(), *opened.values()):
            opened_ends.close()


def combined(lags: list[CopyLag | None]) -> CopyLag | None:
    """The set's copies' lag as one: the records behind summed (the barrier drains them
    all), the seconds the worst; None (or None seconds) while any copy has not said."""
    if any(lag is None for lag in lags):
        return None
    known = [lag for lag in lags if lag is not None]
    seconds = [lag.seconds for lag in known]
    worst = None if any(s is None for s in seconds) else max(s for s in seconds if s is not None)
    return CopyLag(sum(lag.records for lag in known), worst)


def app_lag(
    client: ClientConfig,
    app: str,
    topics: tuple[str, ...],
    highs: Callable[[str], dict[int, int]],
    others: tuple[str, ...],
    framework: Framework | None,
) -> int:
    """How many records the app ``app`` of ``framework`` has still to read of ``topics``
    and of its own repartition topics (the framework's naming says which), by its
    committed offsets (none committed: from 0).  The offsets are read before the ends:
    lag 0 then means every record written by the time of the look was read, and, since
    the app flushes its writes before it commits, its outputs hold every result of them."""
    info = describe_group(client, app)
    committed = info.committed if info else {}
    if framework is None:  # no app: nothing of its own to read
        return records_left(app, topics, committed, [], highs, others, lambda _: False)
    named = framework.internal_topics(app, topics_with_prefix(client, f"{app}-"))
    return records_left(app, topics, committed, named, highs, others, framework.is_repartition)


def records_left(
    app: str,
    topics: tuple[str, ...],
    committed: Mapping[tuple[str, int], int],
    named: list[str],
    highs: Callable[[str], dict[int, int]],
    others: tuple[str, ...],
    is_repartition: Callable[[str], bool],
) -> int:
    """What :func:`app_lag` counts, from the app's ``committed`` offsets and its internal
    topics ``named``: ``topics`` and the app's repartition topics, but those of ``others``
    (a shadow ``<app>-pN`` shares the app's prefix), each partition's high watermark less
    its committed offset (never below 0)."""
    theirs = tuple(f"{o}-" for o in others if o != app)
    internal = [t for t in named if is_repartition(t) and not t.startswith(theirs)]
    return sum(
        max(0, end - committed.get((t, p), 0))
        for t in (*topics, *internal)
        for p, end in highs(t).items()
    )
