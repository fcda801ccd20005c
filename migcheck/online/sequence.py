"""The online migration's phases and the moves between them: the one home of its order.

In gh-ost's and Vitess Reshard's terms: **start** (the new topic made, Vitess's
``create``), **copy and follow** (the history copied and the tail followed, gh-ost's row
copy with its binlog applier, Vitess's ``copying`` then ``running``), **shadow** (a
stateful app's shadow started on the new topic), **ready** (the copy and the shadow close
behind and checked: gh-ost's postponed cut-over, the moment the operator's), **barrier**
(the producers paused, the source's ends quiet, the copy drained and checked; gh-ost's
cut-over lock, with its timeout: a barrier not taken in time reverts to *ready*),
**switch** (the producers write the new topic: Vitess's ``SwitchTraffic``), **settle**
(the old app reads to the barrier and commits), **move readers** (each group and
downstream group to its new topic at the barrier's ends), **reverse** (the old topic
left to the reverse copy: Vitess's reverse workflow), **rollback window** (the operator
completes or rolls back, as late as they wish) and **complete** (Vitess's ``Complete``).

The migration is not a line but states and the moves between them (:data:`TABLE`).  A
barrier that times out goes back to *ready*; a rollback runs *ready* to *move readers*
again the other way (:attr:`Way.BACK`: Vitess's ``ReverseTraffic``), on the mirrored
plan, and ends there.  The walk (:func:`migcheck.online.steps.walk`) runs each state's
step and refuses a move the table does not list.

From the switch on, a producer may write the new topic, so a run that stops must not
start over: each state from there is written to the record (:mod:`migcheck.online.record`)
before it runs, and a later run resumes at the recorded state (:data:`RESUMABLE`).
Before the barrier nothing is recorded: a new run starts again, and the copy's own
checkpoint resumes the copy.  A run that stopped within the rollback's own cut-over is
refused (its moves back are finished by hand, docs/runbooks.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum


class Phase(StrEnum):
    """The phases, in the order a migration that completes runs them (the docs number
    them so: :attr:`number`)."""

    START = "start"
    COPY_AND_FOLLOW = "copy and follow"
    SHADOW = "shadow"
    READY = "ready"
    BARRIER = "barrier"
    SWITCH = "switch"
    SETTLE = "settle"
    MOVE_READERS = "move readers"
    REVERSE = "reverse"
    ROLLBACK_WINDOW = "rollback window"
    COMPLETE = "complete"

    @property
    def number(self) -> int:
        """Its place in the order, from 1: the number docs/runbooks.md gives it."""
        return list(Phase).index(self) + 1


class Way(StrEnum):
    """Which way a phase runs: forward, or back in a rollback (the topics, the app and its
    shadow swapped: :func:`migcheck.online.phases.mirror`)."""

    FORWARD = "forward"
    BACK = "back"


class Copy(Enum):
    """Whose I/O a state runs with.  The forward copy (old topic into new) follows from
    *copy and follow* until the barrier stops it, in a run that entered *copy and
    follow*; a resumed run's forward copy stopped at the recorded barrier for good.  The
    reverse copy (new into old, from the barrier's ends) follows from the rollback
    window on."""

    FORWARD = "forward"
    REVERSE = "reverse"


@dataclass(frozen=True)
class State:
    """A phase, run one way."""

    phase: Phase
    way: Way = Way.FORWARD

    def __str__(self) -> str:
        said = f"phase {self.phase.number} ({self.phase})"
        return said if self.way is Way.FORWARD else f"the rollback's {said}"


@dataclass(frozen=True)
class Row:
    """A state of :data:`TABLE`: the states it may lead to (none: the migration ended),
    whose I/O it runs with (None: it runs before any), and whether the record names it
    before it runs."""

    then: tuple[State, ...]
    copy: Copy | None
    recorded: bool


P, BACK = Phase, Way.BACK

#: Where a resumed run starts: each state from the switch on, recorded before it runs.
RESUMABLE = tuple(
    State(p) for p in (P.SWITCH, P.SETTLE, P.MOVE_READERS, P.REVERSE, P.ROLLBACK_WINDOW, P.COMPLETE)
)

_FORWARD, _REVERSE = Copy.FORWARD, Copy.REVERSE

#: Every state and the moves it allows.  *start* is each run's: a new run goes on to
#: *copy and follow*, a resumed one to its recorded state.
TABLE: Mapping[State, Row] = {
    State(P.START): Row((State(P.COPY_AND_FOLLOW), *RESUMABLE), None, False),
    State(P.COPY_AND_FOLLOW): Row((State(P.SHADOW),), _FORWARD, False),
    State(P.SHADOW): Row((State(P.READY),), _FORWARD, False),
    State(P.READY): Row((State(P.BARRIER),), _FORWARD, False),
    State(P.BARRIER): Row((State(P.SWITCH), State(P.READY)), _FORWARD, False),  # or reverts
    State(P.SWITCH): Row((State(P.SETTLE),), _FORWARD, True),
    State(P.SETTLE): Row((State(P.MOVE_READERS),), _FORWARD, True),
    State(P.MOVE_READERS): Row((State(P.REVERSE),), _FORWARD, True),
    State(P.REVERSE): Row((State(P.ROLLBACK_WINDOW),), _FORWARD, True),
    State(P.ROLLBACK_WINDOW): Row((State(P.COMPLETE), State(P.READY, BACK)), _REVERSE, True),
    State(P.COMPLETE): Row((), _REVERSE, True),
    # the rollback: the same cut-over the other way; a stop before its switch leaves the
    # record at the window, which offers the rollback again
    State(P.READY, BACK): Row((State(P.BARRIER, BACK),), _REVERSE, False),
    State(P.BARRIER, BACK): Row((State(P.SWITCH, BACK), State(P.READY, BACK)), _REVERSE, False),
    State(P.SWITCH, BACK): Row((State(P.SETTLE, BACK),), _REVERSE, True),
    State(P.SETTLE, BACK): Row((State(P.MOVE_READERS, BACK),), _REVERSE, True),
    State(P.MOVE_READERS, BACK): Row((), _REVERSE, True),
}

#: How a migration that ended in each final state ended, in the record's and the
#: refusal's words.
ENDINGS: Mapping[State, str] = {
    State(P.COMPLETE): "complete",
    State(P.MOVE_READERS, BACK): "rolled back",
}


def allowed(state: State, following: State | None) -> bool:
    """Whether the table lets ``state`` lead to ``following`` (None: the migration ends
    there)."""
    then = TABLE[state].then
    return not then if following is None else following in then
