"""The walk through :data:`~migcheck.online.sequence.TABLE`: each state's step (the
phases of :mod:`migcheck.online.phases`, one way or the other), what the migration
learns on the way (the barriers, the old outputs' ends), and the moves it makes.

The walk is pure like the phases: the caller brings each copy's I/O (``lanes``) and
the record's writer, so the order itself is tested without a broker.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

from migcheck.model.migrate import MigrateResult, RolledBack
from migcheck.online import phases
from migcheck.online.phases import Barrier, CheckFailed, Decision, Hop, MigrateIO, Plan, Stopped
from migcheck.online.sequence import RESUMABLE, TABLE, Copy, Phase, State, Way, allowed


@dataclass
class Migration:
    """One migration as it walks: its plan, where a resumed run starts, what it has
    learned (each way's barrier, its hops once the old app settled, and the changelogs'
    ends a seeded shadow's state is moved up to), and its result so far.  ``reversing``:
    the reverse copy had started (its checkpoint exists).  ``save`` writes the record
    again at the state running, with what it learned since it was entered."""

    plan: Plan
    result: MigrateResult
    resume_at: State | None = None
    reversing: bool = False
    barriers: dict[Way, Barrier] = field(default_factory=dict)
    hops: dict[Way, list[Hop]] = field(default_factory=dict)
    changelog_ends: dict[str, dict[int, int]] | None = None
    save: Callable[[], None] = field(default=lambda: None, repr=False)  # set by the walk

    def on(self, way: Way) -> Plan:
        """The plan as ``way`` runs it: the rollback's is mirrored."""
        return self.plan if way is Way.FORWARD else phases.mirror(self.plan)


def first_run(plan: Plan, partitioners: dict[str, str]) -> Migration:
    """A migration from the start (each copy resumes from its own checkpoint), each old
    topic copied with its own ``partitioners``."""
    shadows = tuple(a.shadow_id for a in plan.apps)
    return Migration(plan, MigrateResult(plan.topics, partitioners, shadows=shadows))


def resumed_run(
    plan: Plan,
    partitioners: dict[str, str],
    at: State,
    barrier: Barrier,
    hops: list[Hop] | None,
    reversing: bool,
    changelog_ends: dict[str, dict[int, int]] | None = None,
) -> Migration:
    """A migration resumed at its recorded state ``at`` (one of
    :data:`~migcheck.online.sequence.RESUMABLE`), after ``barrier``; ``hops`` once the
    old app had settled; ``changelog_ends`` once a seeded shadow's move had begun.  Past
    the readers' move, its groups count as moved."""
    assert at in RESUMABLE
    result = MigrateResult(
        plan.topics, partitioners,
        old_ends=barrier.old, new_ends=barrier.new, cutover_s=barrier.took_s,
        shadows=tuple(a.shadow_id for a in plan.apps),
    )  # fmt: skip
    if at.phase.number > Phase.MOVE_READERS.number:
        downstream = tuple(dict.fromkeys(g for a in plan.apps for g in a.downstream))
        result = replace(result, groups=plan.groups, downstream=downstream)
    m = Migration(plan, result, at, reversing, {Way.FORWARD: barrier})
    m.changelog_ends = changelog_ends
    if hops is not None:
        m.hops[Way.FORWARD] = hops
    return m


#: Opens a copy's I/O, the copy following on its thread (True) or stopped at its barrier
#: (False); closed when the walk leaves that copy's states.
Lanes = Callable[[Copy, bool], AbstractContextManager[MigrateIO]]

#: Writes the record: the state about to run (or the last one, ``ended``) and what the
#: migration has learned (:func:`migcheck.online.record.write_record`).
Record = Callable[[State, Migration, bool], None]

#: Runs the hook of the state about to run (:mod:`migcheck.online.hooks`): None, or one
#: line saying how it failed.
Hooks = Callable[[State, Migration, MigrateIO], str | None]


def no_hooks(state: State, m: Migration, io: MigrateIO) -> str | None:
    return None


def walk(m: Migration, lanes: Lanes, record: Record, hooks: Hooks = no_hooks) -> MigrateResult:
    """From *start* to an end of the table, or to a stop (the result then says why); the
    final state recorded as ended."""
    state = m.resume_at or State(Phase.COPY_AND_FOLLOW)
    _move(State(Phase.START), state)
    try:
        last = walk_from(state, m, lanes, record, hooks)
    except (Stopped, CheckFailed) as e:
        return replace(m.result, stopped=str(e))
    record(last, m, True)
    return m.result


def walk_from(
    state: State, m: Migration, lanes: Lanes, record: Record, hooks: Hooks = no_hooks
) -> State:
    """Each state from ``state`` on, recorded first if the table says so, its hook run,
    then the state run with its copy's I/O, until the migration ends: its final state.
    A stop raises."""
    with contextlib.ExitStack() as lane:
        copy: Copy | None = None
        io: MigrateIO | None = None
        while True:
            row = TABLE[state]
            if row.recorded:
                record(state, m, False)
            m.save = functools.partial(record, state, m, False) if row.recorded else _unsaved
            if row.copy is not copy:
                lane.close()  # the two copies never run together
                copy = row.copy
                io = lane.enter_context(_lane(lanes, state))
            assert io is not None  # every state walked runs with a copy's I/O
            failed = hooks(state, m, io)
            if failed is not None and state.phase is Phase.BARRIER:
                phases.revert(m.on(state.way), io, f"{failed} at {state}")
                following: State | None = State(Phase.READY, state.way)
            else:
                _hooked(state, failed, io)
                following = _STEPS[state.phase](m, io, state.way)
            _move(state, following)
            if following is None:
                return state
            state = following


def _unsaved() -> None:
    """A state before the switch keeps no record: a new run starts over."""


def _hooked(state: State, failed: str | None, io: MigrateIO) -> None:
    """A hook that failed before the barrier stops the run: nothing was cut over (the
    producers still write the old topic); the barrier's own reverts the cut-over instead
    (the walk's).  From the switch on, the way back is the rollback's: the failure is
    said, and the run goes on."""
    if failed is None:
        return
    if state.phase.number < Phase.SWITCH.number:
        raise Stopped(
            f"{failed}: stopped at {state}, before the switch: the producers write the old "
            "topic (resume them if the hook had paused them); run again to retry"
        )
    io.say(f"{failed} at {state}; the run goes on")


def _lane(lanes: Lanes, state: State) -> AbstractContextManager[MigrateIO]:
    """The I/O of ``state``'s copy, opened as the walk enters its states: the reverse copy
    follows then; the forward one only in a run that enters *copy and follow* (a resumed
    run's stopped at the recorded barrier for good)."""
    copy = TABLE[state].copy
    assert copy is not None  # only start runs before a copy, and it is the command's
    return lanes(copy, copy is Copy.REVERSE or state.phase is Phase.COPY_AND_FOLLOW)


def _move(state: State, following: State | None) -> None:
    if not allowed(state, following):  # a step's bug, never the operator's input
        raise AssertionError(f"the phases' table has no move from {state} to {following}")


def _copy_and_follow(m: Migration, io: MigrateIO, way: Way) -> State:
    """The forward copy follows on its own thread from here (its lane runs it)."""
    return State(Phase.SHADOW)


def _shadow(m: Migration, io: MigrateIO, way: Way) -> State:
    m.plan = phases.start_shadow(m.plan, io)
    m.result = replace(m.result, shadows=tuple(a.shadow_id for a in m.plan.apps))
    return State(Phase.READY)


def _ready(m: Migration, io: MigrateIO, way: Way) -> State:
    phases.wait_until_ready(m.on(way), io)
    return State(Phase.BARRIER, way)


def _barrier(m: Migration, io: MigrateIO, way: Way) -> State:
    barrier = phases.take_barrier(m.on(way), io)
    if barrier is None:
        return State(Phase.READY, way)  # reverted: the producers write the old topic
    m.barriers[way] = barrier
    if way is Way.FORWARD:
        m.result = replace(
            m.result, old_ends=barrier.old, new_ends=barrier.new, cutover_s=barrier.took_s
        )
    return State(Phase.SWITCH, way)


def _switch(m: Migration, io: MigrateIO, way: Way) -> State:
    phases.switch(m.on(way), io)
    return State(Phase.SETTLE, way)


def _settle(m: Migration, io: MigrateIO, way: Way) -> State:
    """The old app settles; a shadow seeded with moved state then gets it, the
    changelogs' ends recorded first (a resumed run moves up to the same ones)."""
    plan, settled_at = m.on(way), io.clock()
    m.hops[way] = phases.settle_old_app(plan, m.barriers[way], io)
    if not any(a.moved for a in plan.apps):
        return State(Phase.MOVE_READERS, way)
    if m.changelog_ends is None:
        m.changelog_ends = phases.changelog_ends(plan, io)
        m.save()
    seeded = phases.seed_shadow(plan, m.barriers[way], m.changelog_ends, io, settled_at)
    m.result = replace(m.result, seeded=seeded)
    return State(Phase.MOVE_READERS, way)


def _move_readers(m: Migration, io: MigrateIO, way: Way) -> State | None:
    plan = m.on(way)
    groups = tuple(phases.move_groups(plan, m.barriers[way], io))
    downstream = tuple(phases.move_downstream(plan, m.hops[way], io))
    if way is Way.BACK:
        m.result = replace(
            m.result, rolled_back=RolledBack(m.barriers[way].took_s, groups, downstream)
        )
        return None
    m.result = replace(m.result, groups=groups, downstream=downstream)
    return State(Phase.REVERSE)


def _reverse(m: Migration, io: MigrateIO, way: Way) -> State:
    phases.reverse_may_start(m.plan, m.barriers[Way.FORWARD], io, m.reversing)
    return State(Phase.ROLLBACK_WINDOW)


def _rollback_window(m: Migration, io: MigrateIO, way: Way) -> State:
    if phases.rollback_window(m.plan, io) is Decision.COMPLETE:
        return State(Phase.COMPLETE)
    return State(Phase.READY, Way.BACK)


def _complete(m: Migration, io: MigrateIO, way: Way) -> None:
    phases.complete(m.plan, io)
    m.result = replace(m.result, completed=True)


#: Each phase's step: it runs the phase ``way`` and names the state that follows (None:
#: the migration ended).  *start* is the command's own (the topics made, the copy ready).
_STEPS: dict[Phase, Callable[[Migration, MigrateIO, Way], State | None]] = {
    Phase.COPY_AND_FOLLOW: _copy_and_follow,
    Phase.SHADOW: _shadow,
    Phase.READY: _ready,
    Phase.BARRIER: _barrier,
    Phase.SWITCH: _switch,
    Phase.SETTLE: _settle,
    Phase.MOVE_READERS: _move_readers,
    Phase.REVERSE: _reverse,
    Phase.ROLLBACK_WINDOW: _rollback_window,
    Phase.COMPLETE: _complete,
}
