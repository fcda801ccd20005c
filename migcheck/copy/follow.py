"""``copy --follow``: the history, then the tail, until the operator stops it.

The tail is copied by the very rounds that copy the history
(:func:`~migcheck.copy.rounds.run_rounds`): each pass reads where the source's committed
records end (its last stable offsets, so an open transaction is copied once it commits,
whole) and copies every partition up to there, round by round, each round recorded in the
checkpoint before it runs.  So each newly committed record is copied exactly once, in per
key order, placed as the checkpoint pins, and a stopped follow resumes from the checkpoint
like any copy.  A stop (SIGTERM, SIGINT) is honoured between rounds: the round in flight
commits first, so nothing is left for a resumed run to settle.

The lag is measured on the copy's own clock, never from the records' timestamps:
producers set those, and a history carries old ones.  Records behind are the offsets
between each partition's next offset and its stable end (a transaction's marker counts
as one).  Seconds behind are the time since the latest moment whose committed records are
all copied: when the ends of the last pass that reached them were read.  That bounds the
age of the oldest record not yet copied from above, and is unknown until the first pass
(the history) has reached its ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from migcheck.copy.checkpoint import Checkpoint
from migcheck.copy.rounds import CHUNK, Copied, RoundIO, add_copied, run_rounds
from migcheck.model.copy import CopyLag

#: A round of at most this many offsets, a follow's usual tail, runs in the driver with its
#: producers kept open (:func:`~migcheck.copy.task.launch_in_driver`); a larger one, the
#: history or a backlog, is a Spark job.  At this size the driver settles a round in about
#: half a second; a Spark job of a task per partition costs seconds however small the
#: round (docs/benchmarks.md, "The follow").
DRIVER_ROUND_OFFSETS = CHUNK // 2

#: How often, at most, a follow asks whether either topic's partition count changed: a
#: describe of both topics costs more than a look at the ends, and a count changes rarely.
COUNT_CHECK_S = 10.0

#: How long a follow that has copied everything waits for new records before it asks the
#: source's ends again: a tenth of the lag it promises (under 1 s), for one ListOffsets
#: request per wait.  A stop ends the wait at once.
IDLE_WAIT_S = 0.1


@dataclass(frozen=True)
class FollowIO:
    """The follow's I/O besides the rounds': the source's stable ends now, a check that
    neither topic's partition count changed (it raises), a wait that a stop ends (True
    once stopped), the lag's reader, and a monotonic clock."""

    ends: Callable[[], dict[int, int]]
    check: Callable[[], None]
    wait: Callable[[float], bool]
    stopped: Callable[[], bool]
    report: Callable[[CopyLag], None]
    clock: Callable[[], float] = time.monotonic


def in_driver(state: Checkpoint) -> bool:
    """Whether the round ``state`` records is small enough for the driver to settle."""
    r = state.pending
    return r is not None and sum(c.end - c.start for c in r.chunks.values()) <= DRIVER_ROUND_OFFSETS


def records_behind(nexts: dict[int, int], ends: dict[int, int]) -> int:
    """The offsets between each partition's next offset to copy and its stable end."""
    return sum(max(0, end - nexts.get(p, 0)) for p, end in ends.items())


def seconds_behind(frontier: float | None, now: float, behind: int) -> float | None:
    """Time since ``frontier`` (when the ends of the last pass that reached them were
    read), 0 with nothing behind, unknown before the first pass reached its ends."""
    if behind == 0:
        return 0.0
    return None if frontier is None else max(0.0, now - frontier)


@dataclass
class _Follow:
    """What the loop keeps between passes: the state, the records copied this run, the
    frontier, and when the lag was last reported."""

    state: Checkpoint
    copied: Copied
    frontier: float | None
    reported: float
    counted: float  # when the partition counts were last checked


def follow(
    state: Checkpoint, rounds: RoundIO, io: FollowIO, interval_s: float, size: int = CHUNK
) -> tuple[Checkpoint, Copied]:
    """Copy up to the source's stable ends, again and again, until stopped; the lag is
    reported every ``interval_s``, between rounds.  Returns the state and what was copied."""
    f = _Follow(state, {}, None, io.clock(), io.clock() - COUNT_CHECK_S)

    def between_rounds(current: Checkpoint) -> bool:
        _report_when_due(f, current, io, interval_s)
        return not io.stopped()

    while not io.stopped():
        read_at = io.clock()
        ends = io.ends()
        if records_behind(f.state.next, ends):
            f.state, copied = run_rounds(f.state, ends, rounds, size, between_rounds)
            _add(f.copied, copied)
        if not records_behind(f.state.next, ends):
            f.frontier = read_at
            _report_when_due(f, f.state, io, interval_s)
            io.wait(IDLE_WAIT_S)
    return f.state, f.copied


def _report_when_due(f: _Follow, state: Checkpoint, io: FollowIO, interval_s: float) -> None:
    now = io.clock()
    if now - f.reported < interval_s:
        return
    if now - f.counted >= COUNT_CHECK_S:
        io.check()
        f.counted = now
    behind = records_behind(state.next, io.ends())
    io.report(CopyLag(behind, seconds_behind(f.frontier, io.clock(), behind)))
    f.reported = now


def _add(total: Copied, more: Copied) -> None:
    for p, counts in more.items():
        add_copied(total, p, counts)
