"""``copy --follow``'s loop (migcheck.copy.follow), driven by a scripted source and clock.

The source's stable ends are a script of snapshots; each round takes one second on the
fake clock, each idle wait its own length.  Expected values are worked out by hand from
the script.
"""

from __future__ import annotations

import pytest

from migcheck.copy.checkpoint import Checkpoint, Chunk, Round
from migcheck.copy.errors import CountChangedError
from migcheck.copy.follow import (
    DRIVER_ROUND_OFFSETS,
    FollowIO,
    follow,
    in_driver,
    records_behind,
    seconds_behind,
)
from migcheck.copy.rounds import ChunkResult, RoundIO
from migcheck.model.copy import CopyLag


class _Source:
    """Stable ends that follow a script (the last snapshot stays), a clock, rounds that
    copy every chunk in one second, and a stop after ``stop_after_waits`` idle waits or
    before round ``stop_before_round``."""

    def __init__(self, script: list[dict[int, int]], stop_after_waits: int = 99) -> None:
        self.script, self.asked, self.t = script, 0, 0.0
        self.waits, self.stop_after_waits = 0, stop_after_waits
        self.stop_before_round: int | None = None
        self.stop = False
        self.rounds: list[dict[int, Chunk]] = []
        self.saved: list[Checkpoint] = []
        self.lags: list[tuple[float, CopyLag]] = []

    def ends(self) -> dict[int, int]:
        snapshot = self.script[min(self.asked, len(self.script) - 1)]
        self.asked += 1
        return dict(snapshot)

    def launch(self, state: Checkpoint, resumed: bool) -> list[ChunkResult]:
        assert state.pending is not None and self.saved[-1] == state
        self.rounds.append(dict(state.pending.chunks))
        self.t += 1.0
        if len(self.rounds) == self.stop_before_round:
            self.stop = True  # a signal during this round: it still commits
        return [
            ChunkResult(p, c.end - c.start, 0, p, False) for p, c in state.pending.chunks.items()
        ]

    def wait(self, seconds: float) -> bool:
        self.t += seconds
        self.waits += 1
        self.stop = self.stop or self.waits >= self.stop_after_waits
        return self.stop

    def io(self, check: object = None) -> tuple[RoundIO, FollowIO]:
        rounds = RoundIO(ends=lambda: {0: 0, 1: 0}, launch=self.launch, save=self.saved.append)
        follow_io = FollowIO(
            ends=self.ends,
            check=check or (lambda: None),  # type: ignore[arg-type]
            wait=self.wait,
            stopped=lambda: self.stop,
            report=lambda lag: self.lags.append((self.t, lag)),
            clock=lambda: self.t,
        )
        return rounds, follow_io


def test_the_lag_is_the_offsets_not_yet_copied_and_the_time_since_all_were() -> None:
    assert records_behind({0: 5, 1: 9}, {0: 8, 1: 9, 2: 4}) == 3 + 0 + 4
    assert records_behind({0: 9}, {0: 8}) == 0  # never negative
    assert seconds_behind(None, 10.0, 7) is None  # the history is not copied yet
    assert seconds_behind(4.0, 10.0, 7) == 6.0
    assert seconds_behind(None, 10.0, 0) == 0.0  # nothing behind: no lag, whatever the past


def test_a_follow_copies_the_history_then_each_new_commit_up_to_the_stable_ends() -> None:
    source = _Source([{0: 250, 1: 40}, {0: 250, 1: 40}, {0: 260, 1: 45}], stop_after_waits=3)
    start = Checkpoint({0: 0, 1: 0}, "murmur2", 4)
    final, copied = follow(start, *source.io(), interval_s=60, size=100)
    assert source.rounds == [
        {0: Chunk(0, 100), 1: Chunk(0, 40)},  # the history, chunk by chunk
        {0: Chunk(100, 200)},
        {0: Chunk(200, 250)},
        {0: Chunk(250, 260), 1: Chunk(40, 45)},  # the tail: what producers committed since
    ]
    assert final.next == {0: 260, 1: 45} and final.pending is None
    assert source.saved[-1] == final
    assert copied == {0: (260, 0, 0), 1: (45, 0, 0)}


def test_a_stop_during_a_round_ends_the_follow_once_that_round_has_committed() -> None:
    source = _Source([{0: 500}])
    source.stop_before_round = 2
    final, copied = follow(Checkpoint({0: 0}, "murmur2", 4), *source.io(), 60, size=100)
    assert source.rounds == [{0: Chunk(0, 100)}, {0: Chunk(100, 200)}]  # no third round
    assert final.next == {0: 200} and final.pending is None  # nothing left to settle
    assert copied == {0: (200, 0, 0)}


def test_the_lag_is_reported_at_each_interval_with_the_seconds_unknown_until_caught_up() -> None:
    # the history: 3 rounds (t = 1, 2, 3); idle reads at t = 3.1 and 3.2 find nothing new;
    # the read at t = 3.3 finds 300 more, copied in 3 rounds (t = 4.3, 5.3, 6.3)
    source = _Source([{0: 300}] * 4 + [{0: 600}], stop_after_waits=12)
    follow(Checkpoint({0: 0}, "murmur2", 4), *source.io(), interval_s=1.5, size=100)
    assert [t for t, _ in source.lags] == pytest.approx([2.0, 4.3, 6.3])
    lags = [lag for _, lag in source.lags]
    assert lags[0] == CopyLag(100, None)  # a round of history left: no moment fully copied
    # 200 behind; everything read at t = 3.2 (the last read that was reached) is copied
    assert lags[1].records == 200 and lags[1].seconds == pytest.approx(4.3 - 3.2)
    assert lags[2] == CopyLag(0, 0.0)


def test_a_follow_stops_in_one_line_when_a_topic_changes_its_partition_count() -> None:
    def changed() -> None:
        raise CountChangedError("t went from 4 to 6 partitions during the follow: ...")

    source = _Source([{0: 10}])
    with pytest.raises(CountChangedError, match="from 4 to 6"):
        follow(Checkpoint({0: 0}, "murmur2", 4), *source.io(changed), interval_s=0.5)
    assert source.rounds == [{0: Chunk(0, 10)}]  # checked at the first report, after a round


def test_a_small_round_runs_in_the_driver_and_a_large_one_in_spark() -> None:
    def state(*sizes: int) -> Checkpoint:
        chunks = {p: Chunk(1000, 1000 + n) for p, n in enumerate(sizes)}
        return Checkpoint({}, "murmur2", 4, {}, Round(chunks, {}))

    assert in_driver(state(DRIVER_ROUND_OFFSETS // 2, DRIVER_ROUND_OFFSETS // 2))
    assert not in_driver(state(DRIVER_ROUND_OFFSETS // 2, DRIVER_ROUND_OFFSETS // 2 + 1))
    assert not in_driver(Checkpoint({}, "murmur2", 4))  # no round recorded
