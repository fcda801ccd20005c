"""The online migration's barrier and phases (migcheck.online), driven by a scripted world.

The source's ends, the copy and the operator are a script; each wait moves a fake clock.
Expected values are worked out by hand from the script.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from migcheck.model.copy import CopyLag, Verification
from migcheck.online.barrier import BarrierWatch, SourceEnds, at_barrier
from migcheck.online.phases import (
    CheckFailed,
    MigrateIO,
    Plan,
    Stopped,
    cut_over,
    move_groups,
    wait_until_ready,
)

OK = Verification(0, 0, 0, 0)


def _ends(*offsets: int, open_records: int = 0) -> SourceEnds:
    stable = dict(enumerate(offsets))
    return SourceEnds({p: o + (open_records if p == 0 else 0) for p, o in stable.items()}, stable)


def test_the_barrier_is_taken_once_the_ends_stayed_the_same_and_settled_for_two_seconds() -> None:
    watch = BarrierWatch(quiet_s=2.0)
    assert watch.observe(0.0, _ends(5, 7)) is None
    assert watch.observe(1.9, _ends(5, 7)) is None
    assert watch.observe(2.0, _ends(5, 7)) == {0: 5, 1: 7}
    # a write moves the ends: the quiet starts again from there
    assert watch.observe(2.5, _ends(6, 7)) is None
    assert watch.observe(4.4, _ends(6, 7)) is None
    assert watch.observe(4.5, _ends(6, 7)) == {0: 6, 1: 7}


def test_an_open_transaction_keeps_the_barrier_back_however_long_it_stays() -> None:
    watch = BarrierWatch(quiet_s=2.0)
    assert watch.observe(0.0, _ends(5, 7, open_records=3)) is None
    assert watch.observe(10.0, _ends(5, 7, open_records=3)) is None


def test_a_group_moves_at_the_new_ends_only_once_it_read_the_old_topic_to_the_barrier() -> None:
    behind = at_barrier("g", {0: 5, 1: None}, {0: 8, 1: 4, 2: 0}, {0: 3, 1: 9})
    assert behind.behind == {0: 3, 1: 4} and not behind.ready  # no commit: unread from 0
    ready = at_barrier("g", {0: 8, 1: 4}, {0: 8, 1: 4, 2: 0}, {0: 3, 1: 9})
    assert ready.ready and ready.offsets == {0: 3, 1: 9}


class _World:
    """A source whose ends follow ``writes`` (time -> ends), a copy that reaches any ends
    ``copy_delay`` seconds after they are asked for, an operator answering from
    ``answers``, and one group whose committed offsets follow ``commits``."""

    def __init__(
        self,
        writes: Callable[[float], SourceEnds],
        answers: list[bool],
        copy_delay: float = 0.2,
        commits: Callable[[float], dict[int, int | None]] = lambda t: {},
    ) -> None:
        self.t, self.writes, self.answers, self.copy_delay = 0.0, writes, answers, copy_delay
        self.commits = commits
        self.asked: list[str] = []
        self.said: list[str] = []
        self.checked: list[tuple[object, object]] = []
        self.copy_stopped_at: float | None = None
        self.offsets: dict[str, dict[int, int]] = {}
        self.members = 1

    def wait(self, s: float) -> None:
        self.t = round(self.t + s, 6)

    def ask(self, line: str) -> bool:
        self.asked.append(line)
        if line.startswith("stop every consumer"):
            self.members = 0
        return self.answers.pop(0)

    def copied_to(self, ends: dict[int, int], deadline: float) -> bool:
        if self.t + self.copy_delay > deadline:
            self.t = deadline
            return False
        self.wait(self.copy_delay)
        return True

    def io(self) -> MigrateIO:
        return MigrateIO(
            ask=self.ask,
            say=self.said.append,
            lag=lambda: CopyLag(0, 0.0),
            check=lambda old, new: self.checked.append((old, new)) or OK,  # type: ignore[func-returns-value]
            source_ends=lambda: self.writes(self.t),
            copied_to=self.copied_to,
            stop_copy=lambda: setattr(self, "copy_stopped_at", self.t),
            new_ends=lambda: {0: 40, 1: 41, 2: 42},
            committed=lambda g: self.commits(self.t),
            has_members=lambda g: self.members > 0,
            set_offsets=lambda g, o: self.offsets.__setitem__(g, o),
            wait=self.wait,
            clock=lambda: self.t,
        )


def _plan(automatic: bool = False, timeout: float = 5.0) -> Plan:
    return Plan("t", "t-p3", ("g",), 100, timeout, automatic)


def test_a_cut_over_takes_the_barrier_drains_checks_and_switches() -> None:
    # the producers stop writing at t = 0.5: ends (10, 20) from then on
    world = _World(lambda t: _ends(10, 20) if t >= 0.5 else _ends(int(t * 10), 20), [True, True])
    barrier = cut_over(_plan(), world.io())
    assert barrier.old == {0: 10, 1: 20} and barrier.new == {0: 40, 1: 41, 2: 42}
    assert barrier.took_s == pytest.approx(2.7)  # from the pause answered at t = 0
    # quiet from 0.5 to 2.5, then 0.2 s to drain: the copy stops at 2.7
    assert world.copy_stopped_at == pytest.approx(2.7)
    assert world.checked == [({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})]  # the tail, at the ends
    assert world.asked[0].startswith("pause every producer of t")
    assert world.asked[1].startswith("switch every producer of t to t-p3")


def test_a_producer_that_was_not_paused_reverts_the_cut_over_and_the_operator_retries() -> None:
    # still writing until t = 6 (the first attempt's deadline is t = 5), then paused
    world = _World(
        lambda t: _ends(60, 20) if t >= 6 else _ends(int(t * 10), 20), [True, True, True, True]
    )
    barrier = cut_over(_plan(), world.io())
    assert "cut-over reverted: not done within 5 s" in world.said
    assert world.asked[1].startswith("resume every producer on t")
    assert world.asked[2].startswith("pause every producer of t")  # the retry
    assert barrier.old == {0: 60, 1: 20}
    assert barrier.took_s == pytest.approx(3.2)  # the attempt that held: paused at t = 5
    assert world.copy_stopped_at is not None and world.copy_stopped_at >= 8.0


def test_a_copy_held_behind_the_barrier_past_the_timeout_reverts() -> None:
    world = _World(lambda t: _ends(10, 20), [True, True], copy_delay=4.0)
    with pytest.raises(Stopped, match="--yes does not retry"):
        cut_over(_plan(automatic=True), world.io())
    assert world.copy_stopped_at is None  # the copy goes on after a revert
    assert world.checked == []
    assert world.t == pytest.approx(5.0)  # reverted at the deadline, not later


def test_a_check_that_ends_past_the_deadline_reverts_too() -> None:
    world = _World(lambda t: _ends(10, 20), [True, True])
    io = world.io()

    def slow_check(old: object, new: object) -> Verification:
        world.wait(3.5)  # quiet 2 s + drain 0.2 s + this: past the 5 s
        return OK

    slow = MigrateIO(**{**io.__dict__, "check": slow_check})
    with pytest.raises(Stopped, match="--yes does not retry"):
        cut_over(_plan(automatic=True), slow)
    assert world.copy_stopped_at is None


def test_a_failed_check_at_the_barrier_stops_before_the_switch() -> None:
    world = _World(lambda t: _ends(10, 20), [True])
    io = world.io()
    failing = MigrateIO(**{**io.__dict__, "check": lambda old, new: Verification(5, 1, 0, 0)})
    with pytest.raises(CheckFailed, match="1 missing"):
        cut_over(_plan(), failing)
    assert len(world.asked) == 1  # never asked to switch


def test_a_group_reads_to_the_barrier_stops_and_gets_the_new_ends() -> None:
    from migcheck.online.phases import Barrier

    # the group commits (10, 20) at t = 1
    world = _World(
        lambda t: _ends(10, 20),
        [True, True],
        commits=lambda t: {0: 10, 1: 20} if t >= 1 else {0: 4, 1: 20},
    )
    moved = move_groups(_plan(), Barrier({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}), world.io())
    assert world.offsets == {"g": {0: 40, 1: 41, 2: 42}}
    assert [m.group for m in moved] == ["g"]
    assert any("6 records left on 1 partitions" in line for line in world.said)
    assert world.asked[0].startswith("stop every consumer of group g")
    assert "isolation.level=read_committed" in world.asked[1]


def test_while_the_copy_catches_up_its_ranges_are_checked_every_ten_seconds_not_each() -> None:
    # 2,000 records behind until t = 25, then 50 (ready: at most 100)
    world = _World(lambda t: _ends(10, 20), [])
    io = world.io()
    lagging = MigrateIO(
        **{**io.__dict__, "lag": lambda: CopyLag(2000 if world.t < 25 else 50, 1.0)}
    )
    wait_until_ready(_plan(), lagging)
    assert world.t == 25.0
    assert len(world.checked) == 4  # at t = 0, 10 and 20, and once ready at t = 25
