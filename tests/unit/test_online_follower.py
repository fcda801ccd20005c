"""``migrate``'s threads (migcheck.online.follower) and the adapter's arithmetic
(migcheck.online.world), with no broker: the follow runs on its real thread over a
scripted source and rounds, and the range check is a recording stand-in for Spark's.
Expected values are worked out by hand from the scripts.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from migcheck.copy.checkpoint import Checkpoint, Chunk, Round
from migcheck.copy.follow import FollowIO, follow
from migcheck.copy.rounds import ChunkResult, RoundIO
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.model.copy import Ranges, Verification
from migcheck.online.follower import Checker, Follower, following
from migcheck.online.world import records_left

#: Long enough for a loaded machine's thread to get there; a test passes long before.
PATIENCE_S = 60.0


class _Copy:
    """A copy of a source whose stable ends are ``ends``: each round copies its chunks
    whole (or raises ``fails``), every save kept."""

    def __init__(self, ends: dict[int, int], fails: BaseException | None = None) -> None:
        self.ends, self.fails = ends, fails
        self.saved: list[Checkpoint] = []
        self.opened = 0

    def launch(self, state: Checkpoint, resumed: bool) -> list[ChunkResult]:
        if self.fails is not None:
            raise self.fails
        assert state.pending is not None
        return [
            ChunkResult(p, c.end - c.start, 0, 0, False) for p, c in state.pending.chunks.items()
        ]

    def follow(self, follower: Follower) -> None:
        """The real follow loop over this script, as ``migrate`` runs it on the thread:
        each checkpoint saved through the follower, its lag reported to it."""
        self.opened += 1
        rounds = RoundIO(
            ends=lambda: {0: 7, 1: 9, 2: 0}, launch=self.launch, save=self.saved.append
        )
        rounds = replace(rounds, save=follower.saved(rounds.save))
        stop = follower.stop
        io = FollowIO(
            lambda: dict(self.ends), lambda: None, stop.wait, stop.is_set, follower.reported
        )
        follow(START, rounds, io, interval_s=1.0)


START = Checkpoint({0: 0, 1: 0}, "murmur2", 3)


def test_the_follow_runs_on_its_thread_and_shows_the_phases_its_state_and_its_last_mark() -> None:
    copy = _Copy({0: 250, 1: 40})
    with following(START, copy.follow) as follower:
        assert follower.wait_copied_to({0: 250, 1: 40}, time.monotonic() + PATIENCE_S)
        assert follower.state.next == {0: 250, 1: 40} and follower.state.pending is None
        # the round's start: the source's next offsets then, and the new topic's ends
        assert follower.mark == ({0: 0, 1: 0}, {0: 7, 1: 9, 2: 0})
    assert follower.stop.is_set()  # stopped and joined when the block ended
    # the checkpoint saw the round before it ran, and the state it settled in last
    rounds = [saved.pending for saved in copy.saved if saved.pending is not None]
    assert rounds == [Round({0: Chunk(0, 250), 1: Chunk(0, 40)}, {0: 7, 1: 9, 2: 0})]
    assert copy.saved[-1].next == {0: 250, 1: 40} and copy.opened == 1


def test_the_follows_error_reaches_the_phases_and_the_end_of_the_block() -> None:
    copy = _Copy({0: 5}, fails=RuntimeError("the broker went away"))
    with (
        pytest.raises(RuntimeError, match="the broker went away"),
        following(START, copy.follow) as follower,
        pytest.raises(RuntimeError, match="the broker went away"),
    ):
        follower.wait_copied_to({0: 5}, time.monotonic() + PATIENCE_S)


def test_a_resumed_runs_forward_copy_does_not_run_and_its_waits_end_at_the_deadline() -> None:
    copy = _Copy({0: 250})
    with following(START, copy.follow, running=False) as follower:
        assert copy.opened == 0 and follower.state.next == {0: 0, 1: 0}
        assert follower.wait_copied_to({0: 0}, time.monotonic())  # there already
        assert not follower.wait_copied_to({0: 1}, time.monotonic())  # the deadline passed


class _Verify:
    """Spark's range check, recorded: each call's ranges, each answered with their
    offsets as records; ``called`` is set at each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[Ranges, Ranges]] = []
        self.called = threading.Event()

    def __call__(self, src: Ranges, dst: Ranges) -> Verification:
        self.calls.append((src, dst))
        self.called.set()
        return Verification(sum(end - start for _, _, start, end in src), 0, 0, 0)


def _checker(verify: Any, follower: Follower, every_s: float = 10.0) -> Checker:
    starts = ({0: 0, 1: 0}, {0: 0, 1: 0, 2: 0})
    return Checker(verify, ("t", "t-p3"), follower, starts, every_s)


def test_each_range_is_checked_once_from_where_the_last_check_ended() -> None:
    verify, follower = _Verify(), Follower(Checkpoint({0: 0, 1: 0}, "murmur2", 3))
    checker = _checker(verify, follower)
    assert checker.check(None, None) == Verification(0, 0, 0, 0)  # no mark yet: nothing
    follower.mark = ({0: 10, 1: 5}, {0: 8, 1: 7, 2: 0})
    assert checker.check(None, None).records == 15
    assert verify.calls == [
        (
            [("t", 0, 0, 10), ("t", 1, 0, 5)],
            [("t-p3", 0, 0, 8), ("t-p3", 1, 0, 7), ("t-p3", 2, 0, 0)],
        )
    ]
    assert checker.check(None, None).records == 0 and len(verify.calls) == 1  # nothing new
    # the barrier's own check: from the last mark to the barrier's ends
    assert checker.check({0: 12, 1: 5}, {0: 9, 1: 8, 2: 1}).records == 2
    assert verify.calls[-1] == (
        [("t", 0, 10, 12), ("t", 1, 5, 5)],
        [("t-p3", 0, 8, 9), ("t-p3", 1, 7, 8), ("t-p3", 2, 0, 1)],
    )
    follower.mark = ({0: 11, 1: 5}, {0: 9, 1: 8, 2: 0})  # a mark from before the last check
    assert checker.check(None, None).records == 0 and len(verify.calls) == 2


def test_while_the_operator_waits_the_background_checks_and_its_finding_is_reported_next() -> None:
    verify, follower = _Verify(), Follower(Checkpoint({0: 0, 1: 0}, "murmur2", 3))
    checker = _checker(verify, follower, every_s=0.01)
    follower.mark = ({0: 4, 1: 3}, {0: 2, 1: 2, 2: 3})
    with checker.checking():
        assert verify.called.wait(PATIENCE_S)
    assert len(verify.calls) == 1  # the mark's range, once
    # reported with the next check the phases ask for, which finds nothing more
    assert checker.check(None, None) == Verification(7, 0, 0, 0)
    assert checker.check(None, None) == Verification(0, 0, 0, 0)


def test_a_check_raises_the_follows_error_rather_than_check_a_broken_copy() -> None:
    follower = Follower(Checkpoint({0: 0}, "murmur2", 3))
    follower.error = RuntimeError("fenced")
    with pytest.raises(RuntimeError, match="fenced"):
        _checker(_Verify(), follower).check(None, None)


def test_an_apps_lag_counts_its_topic_and_own_repartition_topics_by_its_commits() -> None:
    highs = {
        "t": {0: 10, 1: 3},
        "app-KSTREAM-AGGREGATE-0000000003-repartition": {0: 4, 1: 6},
        "app-p6-KSTREAM-AGGREGATE-0000000003-repartition": {0: 100},  # the shadow's own
    }
    committed = {("t", 0): 5, ("app-KSTREAM-AGGREGATE-0000000003-repartition", 1): 6}
    named = [*list(highs)[1:], "app-counts-changelog"]
    # t: 5 + 3 unread; the repartition topic: 4 + 0; the shadow's and the changelog not
    repartition = KAFKA_STREAMS.is_repartition
    lag = records_left(
        "app", "t", committed, named, highs.__getitem__, ("app", "app-p6"), repartition
    )
    assert lag == 12
    # a commit past the high watermark (a race between the two looks) counts 0, not less
    offsets = {("t", 0): 11, ("t", 1): 3}
    assert records_left("app", "t", offsets, [], highs.__getitem__, (), repartition) == 0
