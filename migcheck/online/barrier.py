"""The cut-over's barrier: where the sources' records end once their producers have paused.

An offset maps exactly from the old topic to the new one only where both are complete:
the producers paused, and the copy drained to the same ends.  Each record of a new
partition comes from one of several old ones, so no per-partition translation (what
MirrorMaker 2 does, p to p) exists in between.  The barrier is taken only once the
source's ends have stayed the same for :data:`QUIET_S`: its high watermarks (an open
transaction's records count as writes) and its last stable offsets equal to them
(nothing left to commit).  A producer that was not paused moves them, and is caught
rather than assumed away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from migcheck.model.migrate import QUIET_S


@dataclass(frozen=True)
class SourceEnds:
    """Each source partition's high watermark and last stable offset, at one look."""

    high: dict[int, int]
    stable: dict[int, int]

    @property
    def settled(self) -> bool:
        """No transaction open: every record written is committed or aborted."""
        return self.high == self.stable


class BarrierWatch:
    """Looks at the sources' ends again and again (every old topic of the set at once);
    the barrier once they all stayed the same, settled, for ``quiet_s``: one producer
    still writing any of them holds the whole set's barrier back.  Pure: the caller
    brings the clock and the looks."""

    def __init__(self, quiet_s: float = QUIET_S) -> None:
        self.quiet_s = quiet_s
        self.last: Mapping[str, SourceEnds] | None = None
        self.since = 0.0

    def observe(
        self, now: float, ends: Mapping[str, SourceEnds]
    ) -> dict[str, dict[int, int]] | None:
        """The barrier (each topic's partitions' ends) once reached, else None."""
        if ends != self.last:
            self.last, self.since = dict(ends), now
        if all(e.settled for e in ends.values()) and now - self.since >= self.quiet_s:
            return {topic: dict(e.stable) for topic, e in ends.items()}
        return None


@dataclass(frozen=True)
class GroupAtBarrier:
    """A plain group's move to the new topic: the offsets it gets there, and what it has
    still to read of the old topic before it may move (nothing, once it read to the
    barrier)."""

    group: str
    offsets: dict[int, int]  # on the new topic: its ends at the barrier
    behind: dict[int, int]  # old partitions whose committed offset is short of the barrier

    @property
    def ready(self) -> bool:
        return not self.behind


def at_barrier(
    group: str,
    committed: Mapping[int, int | None],
    old_ends: dict[int, int],
    new_ends: dict[int, int],
) -> GroupAtBarrier:
    """Where ``group`` resumes on the new topic: at the new topic's ends at the barrier,
    since every record before them is a copy of one before the old topic's, which the
    group has read once its committed offsets reached them.  A partition with no
    committed offset counts as unread from 0: nothing says the group read it."""
    behind = {
        p: end - (committed.get(p) or 0)
        for p, end in sorted(old_ends.items())
        if (committed.get(p) or 0) < end
    }
    return GroupAtBarrier(group, dict(new_ends), behind)
