"""The online migration's phases after the copy has started: wait, cut over (or revert),
and each plain group's move.  Pure decisions and order; the I/O comes from the caller
(:class:`MigrateIO`), so the phases are tested without a broker, a clock or an operator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from migcheck.model.copy import CopyLag, Verification
from migcheck.online.barrier import BarrierWatch, GroupAtBarrier, SourceEnds, at_barrier

#: How often the source's ends are looked at while the barrier is awaited.
POLL_S = 0.1

#: How often a group is looked at while it reads up to the barrier or stops: after the
#: pause, so no hurry; a consumer commits every 5 s by default.
GROUP_POLL_S = 0.5


@dataclass(frozen=True)
class MigrateIO:
    """What the phases do to the world.

    ``ask`` prints one ``MANUAL:`` line and says whether the operator answered ``y``;
    ``say`` prints a line of progress.  ``lag`` is the copy's latest, and ``check`` checks
    what it copied and nobody has checked yet (up to the barrier, when one is given).
    ``copied_to`` waits, until a deadline on ``clock``, for the copy to settle up to the
    given ends; ``stop_copy`` ends it.  ``new_ends`` are the new topic's ends, settled.
    The group calls read a group's committed offsets on the old topic, tell whether it
    has members, and commit its offsets on the new topic.
    """

    ask: Callable[[str], bool]
    say: Callable[[str], None]
    lag: Callable[[], CopyLag | None]
    check: Callable[[dict[int, int] | None, dict[int, int] | None], Verification]
    source_ends: Callable[[], SourceEnds]
    copied_to: Callable[[dict[int, int], float], bool]
    stop_copy: Callable[[], None]
    new_ends: Callable[[], dict[int, int]]
    committed: Callable[[str], dict[int, int | None]]
    has_members: Callable[[str], bool]
    set_offsets: Callable[[str, dict[int, int]], None]
    wait: Callable[[float], None]
    clock: Callable[[], float]


@dataclass(frozen=True)
class Plan:
    """The operator's settings of one migration."""

    topic: str
    into: str
    groups: tuple[str, ...]
    max_lag_records: int
    cutover_timeout_s: float
    automatic: bool  # --yes: manual steps are answered y, a revert ends the run


@dataclass(frozen=True)
class Barrier:
    """Where both topics ended at the cut-over: the old topic's ends and the new one's,
    and how long the attempt that took it lasted (the pause, but for the switch itself)."""

    old: dict[int, int]
    new: dict[int, int]
    took_s: float = 0.0


class Stopped(Exception):
    """The operator answered no at a manual step, or a reverted cut-over under --yes: the
    run ends (exit 1); the copy's checkpoint lets the next run go on."""


class CheckFailed(Exception):
    """A copied range did not check out: the migration stops before the switch."""


#: How often, at most, the copied ranges are checked while the copy catches up: each check
#: is a Spark job, and the copy's rounds share the cores with it.
CHECK_EVERY_S = 10.0


def wait_until_ready(plan: Plan, io: MigrateIO) -> None:
    """Until the copy is at most ``max_lag_records`` behind, everything it copied so far
    checked (so that the barrier's own check is small): a check every
    :data:`CHECK_EVERY_S` meanwhile, and one as it becomes ready."""
    checked_at: float | None = None
    while True:
        lag = io.lag()
        ready = lag is not None and lag.seconds is not None and lag.records <= plan.max_lag_records
        if ready or checked_at is None or io.clock() - checked_at >= CHECK_EVERY_S:
            _checked(io, io.check(None, None))
            checked_at = io.clock()
        if ready:
            return
        if lag is not None:
            io.say(f"copy: {lag.records} records behind (ready at {plan.max_lag_records})")
        io.wait(1.0)


def cut_over(plan: Plan, io: MigrateIO) -> Barrier:
    """Pause, barrier, drain, check, switch: again after each revert, until it holds (the
    operator is asked before each attempt; under --yes a revert ends the run)."""
    while True:
        pause = f"pause every producer of {plan.topic}; answer y once they are paused"
        if not io.ask(pause):
            raise Stopped("stopped before the cut-over; the copy's checkpoint resumes it")
        started = io.clock()
        barrier = attempt(plan, io, started)
        if barrier is not None:
            io.stop_copy()
            io.say(f"cut-over: barrier taken, copy drained and checked in {barrier.took_s:.1f} s")
            switch = (
                f"switch every producer of {plan.topic} to {plan.into} and resume them "
                "(the pause ends here); answer y once they write there"
            )
            if not io.ask(switch):
                raise Stopped("stopped after the barrier: producers still paused")
            return barrier
        io.say(f"cut-over reverted: not done within {plan.cutover_timeout_s:g} s")
        if not io.ask(f"resume every producer on {plan.topic}; answer y once they write"):
            raise Stopped("stopped after a reverted cut-over")
        if plan.automatic:
            raise Stopped("cut-over reverted (--yes does not retry it): run again to retry")
        wait_until_ready(plan, io)


def attempt(plan: Plan, io: MigrateIO, started: float) -> Barrier | None:
    """One cut-over, steps 1 to 3: the barrier once the source's ends stay quiet, the copy
    drained to it, the tail checked; None when the deadline passes first (revert)."""
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
    new = io.new_ends()
    _checked(io, io.check(ends, new))
    if io.clock() > deadline:  # the pause is bounded, the check included
        return None
    return Barrier(ends, new, io.clock() - started)


def move_groups(plan: Plan, barrier: Barrier, io: MigrateIO) -> list[GroupAtBarrier]:
    """Each plain group, one after another: it reads the old topic to the barrier, stops,
    gets the new topic's barrier ends committed, and restarts there."""
    moved = []
    for group in plan.groups:
        state = _read_to_barrier(group, barrier, io)
        stop = f"stop every consumer of group {group} (close() them); answer y once stopped"
        if not io.ask(stop):
            raise Stopped(f"stopped before moving group {group}")
        while io.has_members(group):
            io.wait(GROUP_POLL_S)
        state = at_barrier(group, io.committed(group), barrier.old, barrier.new)
        if not state.ready:  # it read past its last commit: it commits again on restart
            raise Stopped(f"group {group} stopped short of the barrier: {_behind(state)}")
        io.set_offsets(group, state.offsets)
        io.say(f"group {group}: offsets on {plan.into} set at the barrier")
        start = (
            f"start group {group}'s consumers on {plan.into} with "
            "isolation.level=read_committed; answer y once they run"
        )
        if not io.ask(start):
            raise Stopped(f"stopped after moving group {group}")
        moved.append(state)
    return moved


def _read_to_barrier(group: str, barrier: Barrier, io: MigrateIO) -> GroupAtBarrier:
    """Until ``group`` has committed the old topic's barrier ends, saying what is left."""
    said = None
    while not (state := at_barrier(group, io.committed(group), barrier.old, barrier.new)).ready:
        if said != (left := _behind(state)):
            io.say(f"group {group}: waiting for it to read the old topic to the barrier: {left}")
            said = left
        io.wait(GROUP_POLL_S)
    return state


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
