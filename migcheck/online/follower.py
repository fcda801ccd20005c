"""The copy's follow on a thread of its own while the phases run, and the check of each
range it copies: the two threads of ``migcheck migrate`` besides the main one.

The follow (:func:`migcheck.copy.follow.follow`) runs from the phase *copy and follow*
until the barrier stops it (:mod:`migcheck.online.sequence`), and the reverse copy's from
the rollback window on.  :class:`Follower` is what the phases see of it: how far it has
settled, its last consistent mark, its lag and its error.  :class:`Checker` checks the
copied ranges one after another, in the background too while the operator takes their
time at a prompt.  Both take the copy from the caller (the follow to run, the range
check; :mod:`migcheck.copy` sits beside this package, not below it), so they run without
a broker in the unit tests.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

from migcheck.model.copy import CopyLag, Ranges, Verification
from migcheck.online.phases import CHECK_EVERY_S


class _Round(Protocol):
    @property
    def ends(self) -> dict[int, int]: ...


class CopyState(Protocol):
    """What the phases read of a copy's checkpoint (``copy.checkpoint.Checkpoint``): each
    source partition's next offset, and the round in flight with the destination's ends
    recorded before it."""

    @property
    def next(self) -> dict[int, int]: ...

    @property
    def pending(self) -> _Round | None: ...


S = TypeVar("S", bound=CopyState)

#: Each topic's next offsets and the other's ends: a consistent mark of the copy, or the
#: starts of its ranges (the source's first, then the destination's).
Ends = dict[int, int]


class Follower:
    """The copy's follow on a thread of its own, stopped by an event.  It keeps, for the
    phases, the last settled state (how far the copy has copied), the last consistent
    mark (a round's start: the source's next offsets and the new topic's ends, with every
    copy of a record before the first below the second), the latest lag, and an error."""

    def __init__(self, state: CopyState) -> None:
        self.stop = threading.Event()
        self.changed = threading.Condition()
        self.state = state
        self.mark: tuple[Ends, Ends] | None = None
        self.lag: CopyLag | None = None
        self.error: BaseException | None = None

    def saved(self, save: Callable[[S], None]) -> Callable[[S], None]:
        """``save`` (the checkpoint's), then the state or the mark it shows kept here."""

        def recording(state: S) -> None:
            save(state)
            with self.changed:
                if state.pending is not None:
                    self.mark = (dict(state.next), dict(state.pending.ends))
                else:
                    self.state = state
                self.changed.notify_all()

        return recording

    def reported(self, lag: CopyLag) -> None:
        self.lag = lag

    def wait_copied_to(self, ends: Ends, deadline: float) -> bool:
        """Wait until the copy settles up to ``ends``; False once ``deadline`` (monotonic)
        passes first."""

        def there() -> bool:
            nexts = self.state.next
            return self.error is not None or all(nexts.get(p, 0) >= e for p, e in ends.items())

        with self.changed:
            reached = self.changed.wait_for(there, max(0.0, deadline - time.monotonic()))
        self.raise_error()
        return bool(reached)

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error


@contextlib.contextmanager
def following(
    state: CopyState, follow: Callable[[Follower], None], running: bool = True
) -> Iterator[Follower]:
    """``follow`` running on its thread while the phases run, from ``state``: it follows
    until ``Follower.stop`` is set, each checkpoint it saves through ``Follower.saved``
    and its lag to ``Follower.reported``.  Stopped and joined after, its error (if any)
    raised then.  Not ``running``: a resumed run's forward copy, stopped at the barrier
    for good."""
    follower = Follower(state)
    if not running:
        yield follower
        return

    def run() -> None:
        try:
            follow(follower)
        except BaseException as e:
            follower.error = e
        finally:
            with follower.changed:
                follower.changed.notify_all()

    thread = threading.Thread(target=run, name="migcheck-follow", daemon=True)
    thread.start()
    try:
        yield follower
    finally:
        follower.stop.set()
        thread.join()
    follower.raise_error()


#: A check's counts, summed over the ranges checked since the last report.
_COUNTS = ("records", "missing", "duplicated", "misplaced")


def summed(found: list[Verification]) -> Verification:
    """Several checks' counts as one: the ranges checked since the last report, or each
    copy's of a set."""
    return Verification(*(sum(getattr(v, f) for v in found) for f in _COUNTS))


class Checker:
    """Checks the copy range by range: from where the last check ended to the follow's
    last consistent mark, or to the barrier's ends.  While the operator takes their time
    at the pause's prompt, :meth:`checking` goes on checking in the background, so that
    a postponed cut-over's own check stays small; what it found is reported with the
    next check the phases ask for.  ``verify`` checks a pair of ranges (the source's,
    the destination's): ``copy/verify.verify_ranges`` in Spark."""

    def __init__(
        self,
        verify: Callable[[Ranges, Ranges], Verification],
        topics: tuple[str, str],
        follower: Follower,
        starts: tuple[Ends, Ends],
        every_s: float = CHECK_EVERY_S,
    ) -> None:
        self.verify, self.topics, self.follower, self.every_s = verify, topics, follower, every_s
        self.src_from, self.dst_from = dict(starts[0]), dict(starts[1])
        self.lock = threading.Lock()  # one check at a time: the ranges follow each other
        self.unreported: list[Verification] = []

    def check(self, old: Ends | None, new: Ends | None) -> Verification:
        """The ranges up to ``old`` and ``new`` (the follow's last mark when None), with
        whatever the background found since the last call."""
        with self.lock:
            found = [*self.unreported, self._check(old, new)]
            self.unreported = []
        return summed(found)

    @contextlib.contextmanager
    def checking(self) -> Iterator[None]:
        """Every ``every_s``, the copied range since the last check, on a thread of its
        own, until the block ends (a check in flight finishes first)."""
        done = threading.Event()

        def run() -> None:
            while not done.wait(self.every_s):
                with self.lock:
                    self.unreported.append(self._check(None, None))

        thread = threading.Thread(target=run, name="migcheck-check", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _check(self, old: Ends | None, new: Ends | None) -> Verification:
        self.follower.raise_error()
        if old is None or new is None:
            with self.follower.changed:
                mark = self.follower.mark
            if mark is None:
                return Verification(0, 0, 0, 0)
            old, new = mark
        if old == self.src_from or any(old[q] < self.src_from[q] for q in old):
            return Verification(0, 0, 0, 0)  # nothing new since: a mark from before the last
        source, dest = self.topics
        v = self.verify(
            [(source, q, self.src_from[q], old[q]) for q in sorted(old)],
            [(dest, q, self.dst_from[q], new[q]) for q in sorted(new)],
        )
        self.src_from, self.dst_from = dict(old), dict(new)
        return v
