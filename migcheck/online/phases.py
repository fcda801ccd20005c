"""What each phase of the online migration does once the copy has started: the
shadow's start, the wait until ready, the barrier (or its revert), the switch, the old
app's last commit, each reader's move, then the rollback window, the completion or the
rollback.  Their order lives in :mod:`migcheck.online.sequence`.  Pure decisions; the
I/O comes from the caller (:class:`MigrateIO`), so the phases are tested without a
broker, a clock or an operator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from enum import StrEnum

from migcheck.frameworks.base import Framework
from migcheck.model.copy import CopyLag, CopyResult, Verification
from migcheck.model.migrate import Seeded, ShadowState
from migcheck.model.runbook import StateMove
from migcheck.online.barrier import BarrierWatch, GroupAtBarrier, SourceEnds, at_barrier
from migcheck.words import listing

#: Each topic's offsets by partition, by topic: a set's ends (or a range's) at one look.
Marks = dict[str, dict[int, int]]

#: How often the source's ends are looked at while the barrier is awaited.
POLL_S = 0.1

#: How often a group is looked at while it reads up to the barrier or stops: after the
#: pause, so no hurry; a consumer commits every 5 s by default.
GROUP_POLL_S = 0.5


@dataclass(frozen=True)
class MigrateIO:
    """What the phases do to the world.

    ``ask`` prints one ``MANUAL:`` line and says whether the operator answered ``y``;
    ``choose`` prints one and returns the answer; ``decide`` does too, but for a choice
    that gives up the way back (completion, the old side's removal), which ``--yes``
    never makes; ``say`` prints a line of progress.
    A migration moves a set of topics, each with its own copy: ``lag`` is the copies'
    latest, summed (the worst of their seconds), and ``check`` checks what they copied
    and nobody has checked yet (up to the barrier's ends, by topic, when given); within
    ``checking()`` that goes on in the background.  ``source_ends`` are each old topic's.
    ``copied_to`` waits, until a deadline on ``clock``, for every copy to settle up to
    the given ends; ``stop_copy`` ends them.  ``ends`` are a topic's ends, settled (no
    transaction open).  ``app_lag`` is how many records a Kafka Streams app has still to
    read of the given topics and its repartition topics, by its committed offsets;
    ``shadows`` are the stateful apps that read a new topic.  The group calls read a
    group's committed offsets on a topic, tell whether it has members, name the groups
    whose members hold a topic, and commit a group's offsets on a topic.  ``move_state``
    moves one changelog, up to the given ends, into the shadow's (created like it),
    exactly once and checked, resuming from its own checkpoint: a shadow seeded with
    moved state (``--shadow-state move``).
    """

    ask: Callable[[str], bool]
    choose: Callable[[str], str]
    decide: Callable[[str], str]
    say: Callable[[str], None]
    lag: Callable[[], CopyLag | None]
    check: Callable[[Marks | None, Marks | None], Verification]
    checking: Callable[[], AbstractContextManager[None]]
    source_ends: Callable[[], dict[str, SourceEnds]]
    copied_to: Callable[[Marks, float], bool]
    stop_copy: Callable[[], None]
    ends: Callable[[str], dict[int, int]]
    app_lag: Callable[[str, tuple[str, ...]], int]
    shadows: Callable[[], list[str]]
    committed: Callable[[str, str], dict[int, int]]
    has_members: Callable[[str], bool]
    readers: Callable[[str], list[str]]  # the groups with a member assigned the topic
    postponed: Callable[[], bool]  # whether the cut-over waits (the flag file exists)
    set_offsets: Callable[[str, str, dict[int, int]], None]
    wait: Callable[[float], None]
    clock: Callable[[], float]
    move_state: Callable[[StateMove, dict[int, int]], CopyResult] = field(
        default=lambda move, ends: _no_move(move)
    )


def _no_move(move: StateMove) -> CopyResult:
    """A world that moves no state: only a plan seeded with moved state asks for it."""
    raise AssertionError(f"no state mover for {move.changelog}")


@dataclass(frozen=True)
class AppPlan:
    """A stateful app of the topic and its shadow: the same app under ``shadow_id``,
    reading the new topic from the start and writing each output's shadow, so that its
    state is rebuilt before the switch and nothing downstream sees the replay."""

    app_id: str
    shadow_id: str  # "": found once started (ksqlDB names a new query itself)
    outputs: tuple[tuple[str, str], ...]  # (the app's output, the shadow's)
    downstream: tuple[str, ...]  # groups reading the outputs, moved to the shadow's
    max_lag_records: int
    start_line: str  # the MANUAL line, the framework's (Framework.shadow)
    framework: Framework  # its naming: which internal topics its lag counts
    #: where the shadow's state comes from: rebuilt from the new topic before the
    #: cut-over, or moved (``moves``) from the old app's changelogs after the switch
    state: ShadowState = ShadowState.REBUILD
    moves: tuple[StateMove, ...] = ()
    #: the set's topics the app reads, each with its new one; none named: every topic of
    #: the plan
    reads: tuple[tuple[str, str], ...] = ()

    @property
    def moved(self) -> bool:
        """Whether the shadow starts after the switch, seeded with the moved state."""
        return self.state is ShadowState.MOVE


def app_ids(plan: Plan) -> list[str]:
    """The plan's apps, as a line names them."""
    return [a.app_id for a in plan.apps]


@dataclass(frozen=True)
class Plan:
    """The operator's settings of one migration: a set of topics (every side of a join,
    every topic its apps and groups read together), each widened into a new topic, all
    cut over at the one barrier."""

    topics: tuple[tuple[str, str], ...]  # each old topic and its new one
    groups: tuple[str, ...]
    max_lag: tuple[int, float]  # the copy's, records and seconds: ready under both
    cutover_timeout_s: float
    automatic: bool  # --yes: manual steps up to the switch answered y, a revert ends the run
    #: the stateful apps of the topic, each with its shadow (``--application-id`` repeated):
    #: all moved at the one barrier
    apps: tuple[AppPlan, ...] = ()
    #: --complete-after: the rollback window's length, after which the migration completes
    #: and the old side's removal is left to the operator, listed; None: the operator
    #: decides, on stdin (--yes never does)
    complete_after_s: float | None = None
    #: --leave-group: readers left on the old topic on purpose; the reverse copy keeps it
    #: current for them (never waiting on them), and nothing moves them
    left: tuple[str, ...] = ()
    #: the old topics each plain group reads; a group not here reads every one
    reads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def olds(self) -> tuple[str, ...]:
        return olds_of(self.topics)

    @property
    def news(self) -> tuple[str, ...]:
        return news_of(self.topics)

    def app_topics(self, app: AppPlan) -> tuple[tuple[str, str], ...]:
        """The topics of the set ``app`` reads, each with its new one."""
        return app.reads or self.topics

    def group_hops(self, group: str, barrier: Barrier) -> tuple[Hop, ...]:
        """The hops of a plain group: from each old topic it reads to its new one, at the
        barrier's ends."""
        reads = self.reads.get(group, self.olds)
        return tuple(
            Hop(old, barrier.old[old], new, barrier.new[new])
            for old, new in self.topics
            if old in reads
        )


def olds_of(pairs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The old topics of (old, new) pairs: a plan's, or an app's of it."""
    return tuple(old for old, _ in pairs)


def news_of(pairs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The new topics of (old, new) pairs."""
    return tuple(new for _, new in pairs)


@dataclass(frozen=True)
class Barrier:
    """Where the topics ended at the cut-over: each old topic's ends and each new one's,
    and how long the attempt that took it lasted (the pause, but for the switch itself)."""

    old: Marks
    new: Marks
    took_s: float = 0.0
    outputs: dict[str, dict[int, int]] = field(default_factory=dict)  # the shadow's ends


class Stopped(Exception):
    """The operator answered no at a manual step, or a reverted cut-over under --yes: the
    run ends (exit 1); the copy's checkpoint lets the next run go on."""


class CheckFailed(Exception):
    """A copied range did not check out: the migration stops before the switch."""


#: How often, at most, the copied ranges are checked while the copy catches up: each check
#: is a Spark job, and the copy's rounds share the cores with it.
CHECK_EVERY_S = 10.0


#: How long a shadow whose id its framework picks may take to show itself reading the new
#: topic after the operator said it runs.
SHADOW_FOUND_S = 60.0


def start_shadow(plan: Plan, io: MigrateIO) -> Plan:
    """The operator starts each app's shadow, one after another, with the settings (the
    framework's line) that make its state exact and its barrier quick; a no is a stop.  A
    shadow whose id the framework picks is then found: the one stateful app reading the
    new topic that is no other app's shadow."""
    started: list[AppPlan] = []
    for app in plan.apps:
        started.append(_started(plan, app, {a.shadow_id for a in (*started, *plan.apps)}, io))
    return replace(plan, apps=tuple(started))


def _started(plan: Plan, app: AppPlan, known: set[str], io: MigrateIO) -> AppPlan:
    """``app`` with its shadow started (and named, where its framework names it); ``known``
    are the other shadows' ids, never taken for this one."""
    if app.moved:  # it needs the state as of the barrier: started in the settle
        io.say(f"shadow {app.shadow_id}: started after the switch, seeded with the moved state")
        return app
    if not io.ask(app.start_line):
        raise Stopped("stopped before the shadow started; the copy's checkpoint resumes it")
    if app.shadow_id:
        return app
    deadline = io.clock() + SHADOW_FOUND_S
    while not (found := _new_shadows(io, known)) and io.clock() < deadline:
        io.wait(1.0)  # a new query shows itself once it is assigned or commits
    if len(found) != 1:
        raise Stopped(
            f"cannot tell the shadow: {len(found)} apps read {listing(plan.news)} "
            f"({', '.join(found) or 'none'}); run again with --shadow-application-id"
        )
    io.say(f"shadow: {found[0]} reads {listing(news_of(plan.app_topics(app)))}")
    return replace(app, shadow_id=found[0])


def _new_shadows(io: MigrateIO, known: set[str]) -> list[str]:
    return [s for s in io.shadows() if s not in known]


def wait_until_ready(plan: Plan, io: MigrateIO) -> None:
    """Until the copy is at most ``max_lag`` behind and the shadow (if any) at
    most its own, everything copied so far checked (so that the barrier's own check is
    small): a check every :data:`CHECK_EVERY_S` meanwhile, and one as it becomes ready.
    While the cut-over is postponed (``--postpone-cut-over-flag-file`` exists, or the
    control socket said ``postpone``) it waits at
    ready, the copy and the shadow kept current, and offers no cut-over."""
    checked_at: float | None = None
    held = False
    while True:
        lag = io.lag()
        ready = _copy_ready(plan, lag)
        shadow = _shadow_behind(plan, io)
        ready = ready and shadow is None
        if ready and io.postponed():
            if not held:
                io.say(f"ready; the cut-over waits while {POSTPONED}")
            held, ready = True, False
        if ready or checked_at is None or io.clock() - checked_at >= CHECK_EVERY_S:
            _checked(io, io.check(None, None))
            checked_at = io.clock()
        if ready:
            return
        if lag is not None and not held:
            records, seconds = plan.max_lag
            behind = "" if lag.seconds is None else f", {lag.seconds:.1f} s"
            io.say(
                f"copy: {lag.records} records{behind} behind (ready at {records}, {seconds:g} s)"
            )
        if shadow is not None:
            io.say(shadow)
        io.wait(1.0)


#: What holds the cut-over back, and what releases it (its one name in the lines that say so).
POSTPONED = (
    "it is postponed (--postpone-cut-over-flag-file exists, or the control socket said "
    "postpone): remove the file, or send unpostpone, to go on"
)


def _copy_ready(plan: Plan, lag: CopyLag | None) -> bool:
    """The copy is close enough behind: its history copied, and both its lags in bounds
    (records bound the barrier's drain; seconds are what a busy topic can keep)."""
    records, seconds = plan.max_lag
    return (
        lag is not None
        and lag.seconds is not None
        and lag.records <= records
        and lag.seconds <= seconds
    )


def _shadow_behind(plan: Plan, io: MigrateIO) -> str | None:
    """What the shadows have still to read before the cut-over is offered; None when each
    is ready (a seeded shadow starts after the switch)."""
    said = []
    for app in (a for a in plan.apps if not a.moved):
        behind = io.app_lag(app.shadow_id, news_of(plan.app_topics(app)))
        if behind > app.max_lag_records:
            said.append(
                f"shadow {app.shadow_id}: {behind} records behind (ready at {app.max_lag_records})"
            )
    return "; ".join(said) or None


def take_barrier(plan: Plan, io: MigrateIO) -> Barrier | None:
    """The barrier (:attr:`~migcheck.online.sequence.Phase.BARRIER`): the operator pauses
    the producers, then the barrier, the drain and the check; the copy stops there.
    None when it reverted: not done within ``--cutover-timeout``, the producers resume on
    the old topic and the migration is ready again (under --yes a revert ends the run)."""
    pause = f"pause every producer of {listing(plan.olds)}; answer y once they are paused"
    with io.checking():  # the operator may take hours: the copy is checked meanwhile
        paused = io.ask(pause)
    if not paused:
        raise Stopped("stopped before the cut-over; the copy's checkpoint resumes it")
    started = io.clock()
    barrier = attempt(plan, io, started)
    if barrier is not None:
        io.stop_copy()
        io.say(f"cut-over: barrier taken, copy drained and checked in {barrier.took_s:.1f} s")
        return barrier
    revert(plan, io, f"not done within {plan.cutover_timeout_s:g} s")
    return None


def revert(plan: Plan, io: MigrateIO, why: str) -> None:
    """The cut-over reverts to ready: the producers resume on the old topic, and the
    operator is asked again later (under --yes the run ends: it does not retry)."""
    io.say(f"cut-over reverted: {why}")
    if not io.ask(f"resume every producer on {listing(plan.olds)}; answer y once they write"):
        raise Stopped("stopped after a reverted cut-over")
    if plan.automatic:
        raise Stopped("cut-over reverted (--yes does not retry it): run again to retry")


def switch(plan: Plan, io: MigrateIO) -> None:
    """The switch (:attr:`~migcheck.online.sequence.Phase.SWITCH`), the pause's end: the
    producers write the new topic.  Asked again by a run that resumes there (the operator
    may have answered no, or the process died): a switch already made is answered y at
    once."""
    switches = listing([f"{old} to {new}" for old, new in plan.topics])
    line = (
        f"switch every producer of {switches} and resume them "
        "(the pause ends here); answer y once they write there"
    )
    if not io.ask(line):
        raise Stopped("stopped after the barrier: producers still paused")


def attempt(plan: Plan, io: MigrateIO, started: float) -> Barrier | None:
    """One attempt at the barrier, once the producers are paused: the barrier once the
    source's ends stay quiet, the copy drained to it, the tail checked, the shadow at
    lag 0; None when the deadline passes first (revert)."""
    deadline = started + plan.cutover_timeout_s
    watch = BarrierWatch()
    while (now := io.clock()) < deadline:
        ends = watch.observe(now, io.source_ends())
        if ends is not None:
            break
        io.wait(POLL_S)
    else:
        return None
    if not io.copied_to(ends, deadline):
        return None
    new = {topic: io.ends(topic) for topic in plan.news}
    _checked(io, io.check(ends, new))
    outputs = _shadow_at_barrier(plan, io, deadline)
    if outputs is None or io.clock() > deadline:  # the pause is bounded, the check included
        return None
    return Barrier(ends, new, io.clock() - started, outputs)


def _shadow_at_barrier(
    plan: Plan, io: MigrateIO, deadline: float
) -> dict[str, dict[int, int]] | None:
    """The barrier's last part: each shadow at lag 0 on the drained new topic, its commits
    made; then their outputs' ends, exact since nothing after the barrier exists yet.  None
    past the deadline (revert); empty without an app.  A shadow seeded with moved state
    has not started: its outputs' ends are their starts, and nothing is waited for."""
    for app in (a for a in plan.apps if not a.moved):
        while io.app_lag(app.shadow_id, news_of(plan.app_topics(app))) > 0:
            if io.clock() >= deadline:
                return None
            io.wait(POLL_S)
    return {new: io.ends(new) for app in plan.apps for _, new in app.outputs}


def settle_old_app(plan: Plan, barrier: Barrier, io: MigrateIO) -> list[Hop]:
    """The settle (:attr:`~migcheck.online.sequence.Phase.SETTLE`), after the pause: each
    old app reads the old topic to the barrier and commits (its caches flushed into its
    outputs); then each output's ends are where its downstream groups leave it for the
    shadow's output, at the barrier's ends there."""
    hops = []
    for app in plan.apps:
        said = None
        while (behind := io.app_lag(app.app_id, olds_of(plan.app_topics(app)))) > 0:
            if said != behind:
                io.say(f"app {app.app_id}: {behind} records left to read up to the barrier")
                said = behind
            io.wait(GROUP_POLL_S)
        io.say(f"app {app.app_id}: read to the barrier and committed")
        hops += [Hop(old, io.ends(old), new, barrier.outputs[new]) for old, new in app.outputs]
    return hops


def changelog_ends(plan: Plan, io: MigrateIO) -> dict[str, dict[int, int]]:
    """Each moved changelog's ends once the old apps settled: its state as of the
    barrier, since no record reaches the old topic before the reverse copy starts (the
    walk records them, so that a resumed run moves the same ones)."""
    return {move.changelog: io.ends(move.changelog) for app in plan.apps for move in app.moves}


def seed_shadow(
    plan: Plan,
    barrier: Barrier,
    ends: Mapping[str, dict[int, int]],
    io: MigrateIO,
    settled_at: float,
) -> Seeded:
    """Each shadow seeded with moved state (``--shadow-state move``), in the settle, one
    after another (:func:`_seeded`); the records moved in all, the longest restore, and the
    downstream groups' wait from ``settled_at``, reported."""
    moved, restored = 0, 0.0
    for app in (a for a in plan.apps if a.moved):
        records, took = _seeded(plan, app, barrier, ends, io)
        moved, restored = moved + records, max(restored, took)
    return Seeded(moved, restored, io.clock() - settled_at)


def _seeded(
    plan: Plan,
    app: AppPlan,
    barrier: Barrier,
    ends: Mapping[str, dict[int, int]],
    io: MigrateIO,
) -> tuple[int, float]:
    """``app``'s shadow seeded: each changelog moved up to its ``ends`` into the shadow's,
    the shadow's offsets on the new topic committed at the barrier's ends, then the
    operator starts it, and it restores and catches up before the downstream groups move
    to its outputs.  Each part may run again: the copy resumes from its checkpoint,
    offsets already there are kept, the start is asked again.  The records moved, and how
    long the shadow took to restore and catch up."""
    moved = 0
    for move in app.moves:
        v = io.move_state(move, ends[move.changelog]).verification
        if not v.ok:
            raise Stopped(
                f"the moved state's check failed on {move.into}: {v.missing} missing, "
                f"{v.duplicated} duplicated, {v.misplaced} misplaced of {v.records}; the "
                f"shadow is not started and the producers write {listing(plan.news)}: roll "
                "back by hand (docs/runbooks.md, Online: a stop after the barrier)"
            )
        moved += v.records
        io.say(f"state: {move.changelog} moved into {move.into}: {v.records} records, checked")
    news = news_of(plan.app_topics(app))
    for topic in news:
        _offsets_at_barrier(app.shadow_id, topic, barrier.new[topic], io)
    if not io.ask(app.start_line):
        raise Stopped(f"stopped before the shadow {app.shadow_id} started; run again to resume")
    started = io.clock()
    _until_caught_up(app, {topic: barrier.new[topic] for topic in news}, io)
    took = io.clock() - started
    io.say(f"shadow {app.shadow_id}: restored the moved state and caught up in {took:.1f} s")
    return moved, took


def _offsets_at_barrier(group: str, topic: str, offsets: dict[int, int], io: MigrateIO) -> None:
    """The shadow's offsets on the new topic at the barrier's ends, unless a run that
    stopped after committing them (or the shadow since) left them there or past."""
    if _holds(group, topic, offsets, io):
        io.say(f"group {group}: offsets on {topic} at the barrier already")
        return
    if io.has_members(group):
        raise Stopped(
            f"the shadow {group} runs before its offsets on {topic} were committed at the "
            "barrier: stop it, delete its group, internal topics and state directory, and run "
            "again"
        )
    io.set_offsets(group, topic, offsets)
    io.say(f"group {group}: offsets on {topic} set at the barrier")


#: How often, at most, the wait for a seeded shadow says how far it got.
SEEDED_SAID_S = 10.0


def _until_caught_up(app: AppPlan, barrier: Marks, io: MigrateIO) -> None:
    """Until the started shadow has restored its stores and caught up on its new topics
    (``barrier``: their ends there): it has members, it has committed past the barrier
    somewhere (it commits only once restored and reading; on topics nobody wrote since
    the barrier, lag 0 is all that shows), and its lag is at most ``--max-shadow-lag``."""
    said_at: float | None = None
    while True:
        behind = io.app_lag(app.shadow_id, tuple(barrier))
        read_on = behind == 0 or any(
            io.committed(app.shadow_id, topic).get(p, 0) > o
            for topic, ends in barrier.items()
            for p, o in ends.items()
        )
        if io.has_members(app.shadow_id) and read_on and behind <= app.max_lag_records:
            return
        if said_at is None or io.clock() - said_at >= SEEDED_SAID_S:
            io.say(
                f"shadow {app.shadow_id}: restoring the moved state, {behind} records "
                f"behind (ready at {app.max_lag_records})"
            )
            said_at = io.clock()
        io.wait(GROUP_POLL_S)


@dataclass(frozen=True)
class Hop:
    """One topic a group leaves for another: read ``old`` to ``old_ends``, then resume on
    ``new`` at ``new_offsets`` (every record before them is a copy, or a replayed result,
    of one before ``old_ends``)."""

    old: str
    old_ends: dict[int, int]
    new: str
    new_offsets: dict[int, int]


def move_groups(plan: Plan, barrier: Barrier, io: MigrateIO) -> list[str]:
    """Each plain group, one after another: it reads each old topic it reads to the
    barrier, stops, gets the new topics' barrier ends committed, and restarts there."""
    return [move_group(group, plan.group_hops(group, barrier), io) for group in plan.groups]


def move_downstream(plan: Plan, hops: list[Hop], io: MigrateIO) -> list[str]:
    """The apps' readers' part of the move
    (:attr:`~migcheck.online.sequence.Phase.MOVE_READERS`): each downstream group leaves
    the old apps' outputs it reads for the shadows', at the ends recorded at the
    barrier."""
    moved = []
    for group in dict.fromkeys(g for app in plan.apps for g in app.downstream):
        reads = tuple(h for h in hops if io.committed(group, h.old))
        if not reads:  # checked at the start; a group that lost its offsets since stops here
            raise Stopped(f"group {group} has no committed offset on any output of the app")
        moved.append(move_group(group, reads, io))
    return moved


def move_group(group: str, hops: tuple[Hop, ...], io: MigrateIO) -> str:
    """``group`` reads each old topic to its ends, stops, gets the new topics' offsets
    committed, and restarts on them.  A hop the group has already made (its offsets on
    the new topic at or past the barrier's, as a run that stopped after moving it left
    them) is not made again: setting them back would have it read records twice."""
    news = ", ".join(h.new for h in hops)
    hops = tuple(h for h in hops if not _made(group, h, io))
    if not hops:
        io.say(f"group {group}: already on {news}")
        return group
    for hop in hops:
        _read_to_barrier(group, hop, io)
    stop = f"stop every consumer of group {group} (close() them); answer y once stopped"
    if not io.ask(stop):
        raise Stopped(f"stopped before moving group {group}")
    while io.has_members(group):
        io.wait(GROUP_POLL_S)
    for hop in hops:
        state = at_barrier(group, io.committed(group, hop.old), hop.old_ends, hop.new_offsets)
        if not state.ready:  # it read past its last commit: it commits again on restart
            raise Stopped(f"group {group} stopped short of the barrier: {_behind(state)}")
    for hop in hops:
        io.set_offsets(group, hop.new, hop.new_offsets)
        io.say(f"group {group}: offsets on {hop.new} set at the barrier")
    start = (
        f"start group {group}'s consumers on {news} with "
        "isolation.level=read_committed; answer y once they run"
    )
    if not io.ask(start):
        raise Stopped(f"stopped after moving group {group}")
    return group


def _made(group: str, hop: Hop, io: MigrateIO) -> bool:
    """Whether ``group`` holds offsets on every partition of ``hop.new`` at or past the
    barrier's there: only a move puts them there."""
    return _holds(group, hop.new, hop.new_offsets, io)


def _holds(group: str, topic: str, offsets: dict[int, int], io: MigrateIO) -> bool:
    """Whether ``group`` holds offsets on every partition of ``topic`` at or past
    ``offsets``."""
    committed = io.committed(group, topic)
    return bool(committed) and all(committed.get(p, -1) >= o for p, o in offsets.items())


def _read_to_barrier(group: str, hop: Hop, io: MigrateIO) -> None:
    """Until ``group`` has committed ``hop.old``'s ends, saying what is left."""
    said = None
    while not (
        state := at_barrier(group, io.committed(group, hop.old), hop.old_ends, hop.new_offsets)
    ).ready:
        if said != (left := _behind(state)):
            io.say(f"group {group}: waiting for it to read {hop.old} to the barrier: {left}")
            said = left
        io.wait(GROUP_POLL_S)


def _behind(state: GroupAtBarrier) -> str:
    return f"{sum(state.behind.values())} records left on {len(state.behind)} partitions"


def _checked(io: MigrateIO, v: Verification) -> None:
    if not v.ok:
        raise CheckFailed(
            f"the copy's check failed: {v.missing} missing, {v.duplicated} duplicated, "
            f"{v.misplaced} misplaced of {v.records}; the producers stay on the old topic"
        )
    if v.records:
        io.say(f"checked {v.records} more copied records: none missing, duplicated or misplaced")


# --- after the switch: the rollback window, then complete or roll back ------------------


class Decision(StrEnum):
    """What the operator answers in the rollback window."""

    COMPLETE = "y"
    ROLLBACK = "rollback"


#: How often the old topic is looked at while a reader still holds it.
READERS_POLL_S = 1.0


def mirror(plan: Plan) -> Plan:
    """The rollback's plan: the same cut-over the other way.  The producers go back to the
    old topic, which the reverse copy has kept current; the old app, kept current on it as
    the reverse shadow, serves again (its state is its own: nothing is moved back); each
    group goes back."""
    back = tuple(
        replace(
            app, app_id=app.shadow_id, shadow_id=app.app_id,
            outputs=_turned(app.outputs), state=ShadowState.REBUILD, moves=(),
            reads=_turned(app.reads),
        )
        for app in plan.apps
    )  # fmt: skip
    into = dict(plan.topics)
    reads = {group: tuple(into[t] for t in topics) for group, topics in plan.reads.items()}
    return replace(plan, topics=_turned(plan.topics), apps=back, reads=reads)


def _turned(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Each pair the other way: what the rollback leaves for what."""
    return tuple((new, old) for old, new in pairs)


def reverse_may_start(
    plan: Plan, barrier: Barrier, io: MigrateIO, resuming_it: bool = False
) -> None:
    """The reverse copy writes the old topic from where the barrier left it: only once no
    reader but the old app and the groups left on it (``--leave-group``: it serves them)
    holds it (else a moved reader would read the new records twice), and no
    one wrote it after the barrier (else the copy would interleave with their records).
    ``resuming_it``: the reverse copy of a run that stopped has written there already,
    and resumes from its own checkpoint, which knows what it wrote."""
    mine = {*app_ids(plan), *plan.left}
    for topic in plan.olds:
        said = None
        while others := [g for g in io.readers(topic) if g not in mine]:
            if said != others:
                io.say(f"reverse copy: waiting for {', '.join(others)} to stop reading {topic}")
                said = others
            io.wait(READERS_POLL_S)
    for topic in plan.olds:
        ends = io.ends(topic)
        if ends != barrier.old[topic] and not resuming_it:
            written = sum(ends.values()) - sum(barrier.old[topic].values())
            raise Stopped(
                f"{written} records were written to {topic} after the barrier: a reverse "
                "copy would interleave with them, so there is no rollback; the migration "
                "stands"
            )


def rollback_window(plan: Plan, io: MigrateIO) -> Decision:
    """The operator decides, as late as they wish: complete, or roll back.  Until then the
    reverse copy keeps the old topic current (and the old app on it)."""
    serving = f" and app {listing(app_ids(plan))} current on it" if plan.apps else ""
    keeps = listing(plan.olds)
    state = f"the producers write {listing(plan.news)}; the reverse copy keeps {keeps}{serving}"
    if plan.complete_after_s is not None:
        io.say(f"{state}; it completes in {plan.complete_after_s:g} s (--complete-after)")
        with io.checking():  # the reverse copy is checked meanwhile
            io.wait(plan.complete_after_s)
        return Decision.COMPLETE
    answers = f"Answer y to complete (no rollback after), or rollback to go back to {keeps}"
    line = f"{state}. {answers}"
    with io.checking():  # the window may last days: the reverse copy is checked meanwhile
        answer = io.decide(line)
    if answer not in set(Decision):
        raise Stopped(
            f"stopped in the rollback window ({answer!r} is neither y nor rollback); the "
            f"producers write {listing(plan.news)}"
        )
    return Decision(answer)


def complete(plan: Plan, io: MigrateIO) -> None:
    """The reverse copy's last range checked and the copy stopped; the old app stopped;
    then what is left to delete, each its own confirmed step (migcheck deletes nothing)."""
    _checked(io, io.check(None, None))
    io.stop_copy()
    io.say(f"complete: the reverse copy into {listing(plan.olds)} stopped")
    for app in plan.apps:
        stop = f"stop the old app {app.app_id} (close() every instance)"
        if not _done(plan, io, stop, "answer y once stopped"):
            raise Stopped(f"stopped before the old app {app.app_id} stopped")
        while plan.complete_after_s is None and io.has_members(app.app_id):
            io.wait(GROUP_POLL_S)
    for what in _leftovers(plan):
        if not _done(plan, io, f"delete {what}", "answer y once deleted (or kept on purpose)"):
            raise Stopped(f"stopped before deleting {what}")


def _done(plan: Plan, io: MigrateIO, what: str, answer: str) -> bool:
    """Whether the operator did ``what`` (--yes never says so); under --complete-after it
    is listed as theirs to do, and the run goes on."""
    if plan.complete_after_s is not None:
        io.say(f"left to you: {what}")
        return True
    return io.decide(f"{what}; {answer}") == "y"


def _leftovers(plan: Plan) -> list[str]:
    """What the old side leaves: the old topic, and the old app's group and internal
    topics (its outputs may have other readers: not named)."""
    left = [f"topic {topic} (kafka-topics --delete --topic {topic})" for topic in plan.olds]
    for a in app_ids(plan):
        left += [
            f"the old app's internal topics (named {a}-...: kafka-topics --delete for each)",
            f"the old app's group {a} (kafka-consumer-groups --delete --group {a})",
        ]
    return left
