"""The online migration's barrier and phases (migcheck.online), driven by a scripted world.

The source's ends, the copy and the operator are a script; each wait moves a fake clock.
The cut-over runs as ``migrate`` walks it (migcheck.online.steps): from the barrier, back
to ready after a revert, to the switch, the record written before the switch is asked.
Expected values are worked out by hand from the script.
"""

from __future__ import annotations

import contextlib
import io as io_module
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from migcheck.errors import MigcheckError
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.model.copy import CopyLag, CopyResult, Verification
from migcheck.model.migrate import MigrateResult, ShadowState
from migcheck.model.runbook import StateMove
from migcheck.online.barrier import BarrierWatch, SourceEnds, at_barrier
from migcheck.online.phases import (
    AppPlan,
    Barrier,
    CheckFailed,
    Decision,
    Hop,
    MigrateIO,
    Plan,
    Stopped,
    complete,
    mirror,
    move_downstream,
    move_groups,
    reverse_may_start,
    rollback_window,
    seed_shadow,
    settle_old_app,
    start_shadow,
    wait_until_ready,
)
from migcheck.online.record import (
    Resumed,
    record_path,
    resumable,
    same_migration,
    write_record,
)
from migcheck.online.sequence import Copy, Phase, State, Way
from migcheck.online.steps import Migration, resumed_run, walk, walk_from

OK = Verification(0, 0, 0, 0)


def _ends(*offsets: int, open_records: int = 0) -> SourceEnds:
    stable = dict(enumerate(offsets))
    return SourceEnds({p: o + (open_records if p == 0 else 0) for p, o in stable.items()}, stable)


def test_the_barrier_is_taken_once_the_ends_stayed_the_same_and_settled_for_two_seconds() -> None:
    watch = BarrierWatch(quiet_s=2.0)
    assert watch.observe(0.0, {"t": _ends(5, 7)}) is None
    assert watch.observe(1.9, {"t": _ends(5, 7)}) is None
    assert watch.observe(2.0, {"t": _ends(5, 7)}) == {"t": {0: 5, 1: 7}}
    # a write moves the ends: the quiet starts again from there
    assert watch.observe(2.5, {"t": _ends(6, 7)}) is None
    assert watch.observe(4.4, {"t": _ends(6, 7)}) is None
    assert watch.observe(4.5, {"t": _ends(6, 7)}) == {"t": {0: 6, 1: 7}}


def test_a_sets_barrier_waits_until_every_topic_of_it_stayed_quiet() -> None:
    watch = BarrierWatch(quiet_s=2.0)
    assert watch.observe(0.0, {"a": _ends(5), "b": _ends(3)}) is None
    # b's producer was not paused: it still writes at 1.5, so the quiet starts again
    assert watch.observe(1.5, {"a": _ends(5), "b": _ends(4)}) is None
    assert watch.observe(3.4, {"a": _ends(5), "b": _ends(4)}) is None
    assert watch.observe(3.5, {"a": _ends(5), "b": _ends(4)}) == {"a": {0: 5}, "b": {0: 4}}
    # an open transaction on one topic holds back the barrier of all
    held = BarrierWatch(quiet_s=2.0)
    assert held.observe(0.0, {"a": _ends(5), "b": _ends(4, open_records=1)}) is None
    assert held.observe(9.0, {"a": _ends(5), "b": _ends(4, open_records=1)}) is None


def test_an_open_transaction_keeps_the_barrier_back_however_long_it_stays() -> None:
    watch = BarrierWatch(quiet_s=2.0)
    assert watch.observe(0.0, {"t": _ends(5, 7, open_records=3)}) is None
    assert watch.observe(10.0, {"t": _ends(5, 7, open_records=3)}) is None


def test_a_group_moves_at_the_new_ends_only_once_it_read_the_old_topic_to_the_barrier() -> None:
    behind = at_barrier("g", {0: 5, 1: None}, {0: 8, 1: 4, 2: 0}, {0: 3, 1: 9})
    assert behind.behind == {0: 3, 1: 4} and not behind.ready  # no commit: unread from 0
    ready = at_barrier("g", {0: 8, 1: 4}, {0: 8, 1: 4, 2: 0}, {0: 3, 1: 9})
    assert ready.ready and ready.offsets == {0: 3, 1: 9}


def _one(marks: dict[str, dict[int, int]] | None) -> dict[int, int] | None:
    """The one topic's offsets of this world's marks (it moves one topic)."""
    return None if marks is None else next(iter(marks.values()))


def _b(old: dict[int, int], new: dict[int, int], *rest: object) -> Barrier:
    """A barrier of the one topic ``t`` and its new ``t-p3``."""
    return Barrier({"t": old}, {"t-p3": new}, *rest)  # type: ignore[arg-type]


class _World:
    """A source whose ends follow ``writes`` (time -> ends), a copy that reaches any ends
    ``copy_delay`` seconds after they are asked for, an operator answering from
    ``answers``, and one group whose committed offsets follow ``commits``."""

    def __init__(
        self,
        writes: Callable[[float], SourceEnds],
        answers: list[bool],
        copy_delay: float = 0.2,
        commits: Callable[[float], dict[int, int]] = lambda t: {},
        lags: Callable[[str, float], int] = lambda app, t: 0,
        shadows: Callable[[float], list[str]] = lambda t: [],
        readers: Callable[[float], list[str]] = lambda t: [],
        postponed: Callable[[float], bool] = lambda t: False,
    ) -> None:
        self.t, self.writes, self.answers, self.copy_delay = 0.0, writes, answers, copy_delay
        self.commits, self.lags, self.shadows, self.readers = commits, lags, shadows, readers
        self.postponed = postponed
        self.asked: list[str] = []
        self.said: list[str] = []
        self.checked: list[tuple[object, object]] = []
        self.copy_stopped_at: float | None = None
        self.offsets: dict[tuple[str, str], dict[int, int]] = {}
        # the record's writes: (questions asked before it, the barrier it holds)
        self.taken: list[tuple[int, Barrier]] = []
        self.ends_of = {
            "t-p3": {0: 40, 1: 41, 2: 42},
            "out": {0: 7, 1: 8},
            "out-p3": {0: 30, 1: 31},
        }
        self.members = 1
        self.source, self.into = "t", "t-p3"  # the copy's source: into, once reversed
        self.in_background = False
        self.asked_checking: list[bool] = []  # per question: checked in the background

    def wait(self, s: float) -> None:
        self.t = round(self.t + s, 6)

    @contextlib.contextmanager
    def checking(self) -> Iterator[None]:
        self.in_background = True
        try:
            yield
        finally:
            self.in_background = False

    def ask(self, line: str) -> bool:
        self.asked.append(line)
        self.asked_checking.append(self.in_background)
        if line.startswith("stop "):
            self.members = 0
        return self.answers.pop(0)

    def copied_to(self, ends: dict[str, dict[int, int]], deadline: float) -> bool:
        if self.t + self.copy_delay > deadline:
            self.t = deadline
            return False
        self.wait(self.copy_delay)
        return True

    def io(self) -> MigrateIO:
        return MigrateIO(
            ask=self.ask,
            choose=lambda line: "y" if self.ask(line) else "rollback",
            decide=lambda line: "y" if self.ask(line) else "rollback",
            say=self.said.append,
            lag=lambda: CopyLag(0, 0.0),
            check=lambda old, new: self.checked.append((_one(old), _one(new))) or OK,  # type: ignore[func-returns-value]
            checking=self.checking,
            source_ends=lambda: {self.source: self.writes(self.t)},
            copied_to=self.copied_to,
            stop_copy=lambda: setattr(self, "copy_stopped_at", self.t),
            ends=lambda topic: self.ends_of[topic],
            app_lag=lambda app, topic: self.lags(app, self.t),
            shadows=lambda: self.shadows(self.t),
            committed=lambda g, topic: self.commits(self.t) if topic in ("t", "out") else {},
            has_members=lambda g: self.members > 0,
            readers=lambda topic: self.readers(self.t),
            set_offsets=lambda g, topic, o: self.offsets.__setitem__((g, topic), o),
            postponed=lambda: self.postponed(self.t),
            wait=self.wait,
            clock=lambda: self.t,
        )


def _plan(automatic: bool = False, timeout: float = 5.0) -> Plan:
    return Plan((("t", "t-p3"),), ("g",), (100, 2.0), timeout, automatic)


class _Switched(Exception):
    """The walk went past the switch: where these tests leave it."""


def _cut_over(plan: Plan, world: _World, io: MigrateIO | None = None) -> Barrier:
    """The cut-over as ``migrate`` walks it, from the barrier (ready again after each
    revert) through the switch, each record written kept in ``world.taken``; the walk is
    left once the settle is about to be recorded."""
    m = Migration(plan, MigrateResult(plan.topics, {"t": "murmur2"}))

    def record(state: State, m: Migration, ended: bool) -> None:
        if state.phase is Phase.SETTLE:
            raise _Switched
        world.taken.append((len(world.asked), m.barriers[state.way]))

    def lanes(copy: Copy, running: bool) -> contextlib.AbstractContextManager[MigrateIO]:
        return contextlib.nullcontext(io or world.io())

    with pytest.raises(_Switched):
        walk_from(State(Phase.BARRIER), m, lanes, record)
    return m.barriers[Way.FORWARD]


def test_a_cut_over_takes_the_barrier_drains_checks_and_switches() -> None:
    # the producers stop writing at t = 0.5: ends (10, 20) from then on
    world = _World(lambda t: _ends(10, 20) if t >= 0.5 else _ends(int(t * 10), 20), [True, True])
    barrier = _cut_over(_plan(), world)
    assert barrier.old == {"t": {0: 10, 1: 20}} and barrier.new == {"t-p3": {0: 40, 1: 41, 2: 42}}
    assert barrier.took_s == pytest.approx(2.7)  # from the pause answered at t = 0
    # quiet from 0.5 to 2.5, then 0.2 s to drain: the copy stops at 2.7
    assert world.copy_stopped_at == pytest.approx(2.7)
    assert world.checked == [({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})]  # the tail, at the ends
    assert world.asked[0].startswith("pause every producer of t")
    assert world.asked[1].startswith("switch every producer of t to t-p3")
    # while the operator takes their time before the pause, the copy is checked meanwhile;
    # the switch is asked once the barrier's own check is done
    assert world.asked_checking == [True, False]
    # the barrier is kept after the pause's question and before the switch's
    assert world.taken == [(1, barrier)]


def test_a_producer_that_was_not_paused_reverts_the_cut_over_and_the_operator_retries() -> None:
    # still writing until t = 6 (the first attempt's deadline is t = 5), then paused
    world = _World(
        lambda t: _ends(60, 20) if t >= 6 else _ends(int(t * 10), 20), [True, True, True, True]
    )
    barrier = _cut_over(_plan(), world)
    assert "cut-over reverted: not done within 5 s" in world.said
    assert world.asked[1].startswith("resume every producer on t")
    assert world.asked[2].startswith("pause every producer of t")  # the retry
    assert barrier.old == {"t": {0: 60, 1: 20}}
    assert barrier.took_s == pytest.approx(3.2)  # the attempt that held: paused at t = 5
    assert world.taken == [(3, barrier)]  # a reverted attempt keeps nothing
    assert world.copy_stopped_at is not None and world.copy_stopped_at >= 8.0


def test_a_copy_held_behind_the_barrier_past_the_timeout_reverts() -> None:
    world = _World(lambda t: _ends(10, 20), [True, True], copy_delay=4.0)
    with pytest.raises(Stopped, match="--yes does not retry"):
        _cut_over(_plan(automatic=True), world)
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
        _cut_over(_plan(automatic=True), world, slow)
    assert world.copy_stopped_at is None


def test_a_failed_check_at_the_barrier_stops_before_the_switch() -> None:
    world = _World(lambda t: _ends(10, 20), [True])
    io = world.io()
    failing = MigrateIO(**{**io.__dict__, "check": lambda old, new: Verification(5, 1, 0, 0)})
    with pytest.raises(CheckFailed, match="1 missing"):
        _cut_over(_plan(), world, failing)
    assert len(world.asked) == 1  # never asked to switch
    assert world.taken == []  # nor kept a barrier: a new run may start over


def test_a_group_reads_to_the_barrier_stops_and_gets_the_new_ends() -> None:
    # the group commits (10, 20) at t = 1
    world = _World(
        lambda t: _ends(10, 20),
        [True, True],
        commits=lambda t: {0: 10, 1: 20} if t >= 1 else {0: 4, 1: 20},
    )
    moved = move_groups(_plan(), _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}), world.io())
    assert world.offsets == {("g", "t-p3"): {0: 40, 1: 41, 2: 42}}
    assert moved == ["g"]
    assert any("6 records left on 1 partitions" in line for line in world.said)
    assert world.asked[0].startswith("stop every consumer of group g")
    assert "isolation.level=read_committed" in world.asked[1]


#: A set of two topics: every group reads a, h reads b too.
_SET = Plan((("a", "a-p3"), ("b", "b-p3")), ("g", "h"), (100, 2.0), 5.0, False,
            reads={"g": ("a",), "h": ("a", "b")})  # fmt: skip


def _set_world() -> tuple[_World, MigrateIO, list[tuple[object, object]]]:
    """a's producers paused from the start, b's still writing until t = 1; each group
    committed every old topic's ends; the checks kept as asked (by topic)."""
    world = _World(lambda t: _ends(10, 20), [True] * 6)
    world.ends_of.update({"a-p3": {0: 40, 1: 41, 2: 42}, "b-p3": {0: 1, 1: 2, 2: 2}})
    checked: list[tuple[object, object]] = []
    io = MigrateIO(**{
        **world.io().__dict__,
        "source_ends": lambda: {"a": _ends(10, 20), "b": _ends(5 if world.t >= 1 else 4)},
        "committed": lambda g, topic: {"a": {0: 10, 1: 20}, "b": {0: 5}}.get(topic, {}),
        "check": lambda old, new: checked.append((old, new)) or OK,
    })  # fmt: skip
    return world, io, checked


def test_a_set_is_cut_over_at_one_barrier_once_every_topic_is_quiet() -> None:
    world, io, checked = _set_world()
    barrier = _cut_over(_SET, world, io)
    # b was written at t = 1: the quiet runs from there to 3, then the drain's 0.2 s
    assert barrier.old == {"a": {0: 10, 1: 20}, "b": {0: 5}}
    assert barrier.new == {"a-p3": {0: 40, 1: 41, 2: 42}, "b-p3": {0: 1, 1: 2, 2: 2}}
    assert barrier.took_s == pytest.approx(3.2)
    assert checked == [(barrier.old, barrier.new)]  # every copy's tail, at the one barrier
    assert world.asked[0].startswith("pause every producer of a and b;")
    assert world.asked[1].startswith("switch every producer of a to a-p3 and b to b-p3 and")


def test_each_group_of_a_set_moves_on_the_topics_it_reads_alone() -> None:
    world, io, _ = _set_world()
    barrier = Barrier({"a": {0: 10, 1: 20}, "b": {0: 5}},
                      {"a-p3": {0: 40, 1: 41, 2: 42}, "b-p3": {0: 1, 1: 2, 2: 2}})  # fmt: skip
    assert move_groups(_SET, barrier, io) == ["g", "h"]
    assert world.offsets == {
        ("g", "a-p3"): {0: 40, 1: 41, 2: 42},  # g reads a alone: nothing set on b-p3
        ("h", "a-p3"): {0: 40, 1: 41, 2: 42},
        ("h", "b-p3"): {0: 1, 1: 2, 2: 2},
    }
    assert world.asked[3].startswith("start group h's consumers on a-p3, b-p3 with")
    # the rollback's groups go back from the new topics they read to the old ones
    back = mirror(_SET)
    assert back.topics == (("a-p3", "a"), ("b-p3", "b"))
    assert back.reads == {"g": ("a-p3",), "h": ("a-p3", "b-p3")}


def test_a_sets_record_keeps_each_topics_ends_and_resumes_them(tmp_path: Path) -> None:
    checkpoint = str(tmp_path / "m.json")
    barrier = Barrier({"a": {0: 10}, "b": {0: 5}}, {"a-p3": {0: 4, 1: 6}, "b-p3": {0: 5}}, 2.0)
    m = Migration(_SET, MigrateResult(_SET.topics, {"a": "murmur2", "b": "murmur2"}),
                  barriers={Way.FORWARD: barrier})  # fmt: skip
    write_record(checkpoint, State(Phase.SWITCH), m)
    kept = json.loads(record_path(checkpoint).read_text(encoding="utf-8"))
    assert kept["topics"] == [["a", "a-p3"], ["b", "b-p3"]]
    assert kept["new_ends"] == {"a-p3": {"0": 4, "1": 6}, "b-p3": {"0": 5}}
    resumed = resumable(checkpoint)
    assert resumed is not None and resumed.barrier == replace(barrier, outputs={})
    same_migration(resumed, _SET)
    with pytest.raises(MigcheckError, match=r"records topics \[\['a', 'a-p3'\], \['b'"):
        same_migration(resumed, replace(_SET, topics=(("a", "a-p3"),)))


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


def test_a_copy_few_records_but_seconds_behind_is_not_ready_until_it_keeps_up() -> None:
    # 50 records behind (under 100) but 3 s behind (over 2 s) until t = 5; the history
    # not copied yet (seconds unknown) until t = 2
    world = _World(lambda t: _ends(10, 20), [])
    io = world.io()
    slow = MigrateIO(
        **{
            **io.__dict__,
            "lag": lambda: CopyLag(50, None if world.t < 2 else 3.0 if world.t < 5 else 1.0),
        }
    )
    wait_until_ready(_plan(), slow)
    assert world.t == 5.0
    assert "copy: 50 records, 3.0 s behind (ready at 100, 2 s)" in world.said


# --- a Kafka Streams app and its shadow ----------------------------------------------------

APP = AppPlan(
    "app", "app-p3", (("out", "out-p3"),), ("down",), 50, "start the shadow", KAFKA_STREAMS
)


def _app_plan(timeout: float = 5.0) -> Plan:
    return Plan((("t", "t-p3"),), (), (100, 2.0), timeout, False, (APP,))


def test_the_shadow_is_started_at_the_frameworks_line_and_a_no_stops() -> None:
    world = _World(lambda t: _ends(10, 20), [False])
    with pytest.raises(Stopped, match="before the shadow started"):
        start_shadow(_app_plan(), world.io())
    assert world.asked == ["start the shadow"]


def test_a_shadow_the_framework_names_is_the_one_app_found_reading_the_new_topic() -> None:
    unnamed = Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, False, (replace(APP, shadow_id=""),))
    # the new query shows itself at t = 3
    world = _World(lambda t: _ends(10, 20), [True], shadows=lambda t: ["q9"] if t >= 3 else [])
    found = start_shadow(unnamed, world.io())
    assert [a.shadow_id for a in found.apps] == ["q9"] and world.t == 3.0
    # two candidates (or none within a minute): it cannot tell, and stops
    world = _World(lambda t: _ends(10, 20), [True], shadows=lambda t: ["q9", "q10"])
    with pytest.raises(Stopped, match=r"2 apps read t-p3 \(q9, q10\); run again with --shadow"):
        start_shadow(unnamed, world.io())
    world = _World(lambda t: _ends(10, 20), [True])
    with pytest.raises(Stopped, match="0 apps read t-p3"):
        start_shadow(unnamed, world.io())
    assert world.t == 60.0


def test_the_cut_over_is_offered_only_once_the_shadow_too_is_close_behind() -> None:
    # the copy is ready at once; the shadow is 500 behind until t = 12, then 40 (ready: 50)
    world = _World(lambda t: _ends(10, 20), [], lags=lambda app, t: 500 if t < 12 else 40)
    wait_until_ready(_app_plan(), world.io())
    assert world.t == 12.0
    assert "shadow app-p3: 500 records behind (ready at 50)" in world.said


def test_at_the_barrier_the_shadow_reaches_lag_0_and_its_outputs_ends_are_recorded() -> None:
    # the shadow has 3 records left until t = 3.0 (quiet 2 s + drain 0.2 s, then 0.8 s more)
    world = _World(
        lambda t: _ends(10, 20), [True, True],
        lags=lambda app, t: 3 if app == "app-p3" and t < 3.0 else 0,
    )  # fmt: skip
    barrier = _cut_over(_app_plan(), world)
    assert barrier.outputs == {"out-p3": {0: 30, 1: 31}}
    assert barrier.took_s == pytest.approx(3.0)


def test_a_shadow_still_behind_at_the_deadline_reverts_the_cut_over() -> None:
    world = _World(lambda t: _ends(10, 20), [True, True], lags=lambda app, t: 1)
    automatic = Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, True, (APP,))
    with pytest.raises(Stopped, match="--yes does not retry"):
        _cut_over(automatic, world)
    assert world.copy_stopped_at is None  # the copy goes on: the revert keeps the old topic
    assert world.t == pytest.approx(5.0)


def test_after_the_switch_the_old_app_reads_to_the_barrier_then_downstream_moves() -> None:
    # the old app has 9 records left until t = 2; the downstream group commits the old
    # output's ends (7, 8) at t = 4
    world = _World(
        lambda t: _ends(10, 20), [True, True],
        commits=lambda t: {0: 7, 1: 8} if t >= 4 else {0: 7, 1: 2},
        lags=lambda app, t: 9 if app == "app" and t < 2 else 0,
    )  # fmt: skip
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}, 1.0, {"out-p3": {0: 30, 1: 31}})
    hops = settle_old_app(_app_plan(), barrier, world.io())
    assert world.t == 2.0
    assert hops == [Hop("out", {0: 7, 1: 8}, "out-p3", {0: 30, 1: 31})]
    assert move_downstream(_app_plan(), hops, world.io()) == ["down"]
    assert world.t >= 4.0
    assert world.offsets == {("down", "out-p3"): {0: 30, 1: 31}}
    assert any("waiting for it to read out to the barrier: 6 records" in x for x in world.said)


#: A second Kafka Streams app of the same topic (issue 71: --application-id repeated).
OTHER = AppPlan(
    "other", "other-p3", (("sums", "sums-p3"),), ("audit",), 50, "start the other shadow",
    KAFKA_STREAMS,
)  # fmt: skip


def _two_apps(timeout: float = 5.0) -> Plan:
    return Plan((("t", "t-p3"),), (), (100, 2.0), timeout, False, (APP, OTHER))


def test_two_apps_each_get_a_shadow_and_both_are_ready_and_at_lag_0_at_the_one_barrier() -> None:
    """Each shadow is started at its own line, the cut-over is offered only once both are
    close behind, and the one barrier waits for both at lag 0 and records both outputs."""
    world = _World(lambda t: _ends(10, 20), [True, True])
    started = start_shadow(_two_apps(), world.io())
    assert world.asked == ["start the shadow", "start the other shadow"]
    assert [a.shadow_id for a in started.apps] == ["app-p3", "other-p3"]
    # app-p3 is ready at once; other-p3 is 500 behind until t = 7
    lags = {"app-p3": lambda t: 0, "other-p3": lambda t: 500 if t < 7 else 10}
    world = _World(lambda t: _ends(10, 20), [], lags=lambda app, t: lags[app](t))
    wait_until_ready(_two_apps(), world.io())
    assert world.t == 7.0
    assert "shadow other-p3: 500 records behind (ready at 50)" in world.said
    # at the barrier other-p3 has 2 records left until t = 3
    world = _World(
        lambda t: _ends(10, 20), [True, True],
        lags=lambda app, t: 2 if app == "other-p3" and t < 3.0 else 0,
    )  # fmt: skip
    world.ends_of["sums-p3"] = {0: 5}
    barrier = _cut_over(_two_apps(), world)
    assert barrier.outputs == {"out-p3": {0: 30, 1: 31}, "sums-p3": {0: 5}}
    assert barrier.took_s == pytest.approx(3.0)


def test_two_old_apps_read_to_the_barrier_and_each_ones_downstream_group_follows_it() -> None:
    """The settle waits for each old app; each app's downstream group moves to that app's
    shadow's outputs; the rollback mirrors both; completion stops both old apps."""
    world = _World(
        lambda t: _ends(10, 20), [True] * 4, commits=lambda t: {0: 7, 1: 8},
        lags=lambda app, t: 4 if app == "other" and t < 3 else 0,
    )  # fmt: skip
    world.ends_of["sums"] = {0: 7, 1: 8}
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}, 1.0,
                      {"out-p3": {0: 30, 1: 31}, "sums-p3": {0: 5, 1: 6}})  # fmt: skip
    hops = settle_old_app(_two_apps(), barrier, world.io())
    assert world.t == 3.0
    assert hops == [
        Hop("out", {0: 7, 1: 8}, "out-p3", {0: 30, 1: 31}),
        Hop("sums", {0: 7, 1: 8}, "sums-p3", {0: 5, 1: 6}),
    ]
    assert move_downstream(_two_apps(), hops, world.io()) == ["down", "audit"]
    back = mirror(_two_apps())
    assert [(a.app_id, a.shadow_id) for a in back.apps] == [
        ("app-p3", "app"),
        ("other-p3", "other"),
    ]
    world = _World(lambda t: _ends(10, 20), [True] * 7)
    world.members = 0
    complete(_two_apps(), world.io())
    assert [q for q in world.asked if q.startswith("stop the old app")] == [
        "stop the old app app (close() every instance); answer y once stopped",
        "stop the old app other (close() every instance); answer y once stopped",
    ]


def test_a_record_of_two_apps_resumes_with_each_shadow_and_refuses_another_set(
    tmp_path: Path,
) -> None:
    checkpoint = str(tmp_path / "m.json")
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}, 2.2,
                      {"out-p3": {0: 0}, "sums-p3": {0: 0}})  # fmt: skip
    m = _migration(_two_apps(), barrier)
    write_record(checkpoint, State(Phase.SWITCH), m)
    resumed = resumable(checkpoint)
    assert resumed is not None
    assert resumed.shadow_ids == {"app": "app-p3", "other": "other-p3"}
    same_migration(resumed, _two_apps())
    with pytest.raises(MigcheckError, match="records application_ids \\['app', 'other'\\]"):
        same_migration(resumed, _app_plan())


def test_a_record_of_one_app_written_before_several_could_move_still_resumes(
    tmp_path: Path,
) -> None:
    """A record names its one app at its top level, as records did before issue 71."""
    checkpoint = str(tmp_path / "m.json")
    old = {**_OLD_RECORD, "groups": [], "downstream_groups": ["down"], "application_id": "app",
           "shadow_application_id": "app-p3", "shadow_state": "move",
           "shadow_output_ends": {"out-p3": {"0": 30, "1": 31}}}  # fmt: skip
    record_path(checkpoint).write_text(json.dumps(old), encoding="utf-8")
    resumed = resumable(checkpoint)
    assert resumed is not None
    assert resumed.shadow_ids == {"app": "app-p3"}
    assert resumed.shadow_states == {"app": ShadowState.MOVE}
    same_migration(resumed, _app_plan())


def test_the_apps_outputs_are_its_topologys_sinks_but_its_repartition_topics() -> None:
    # count-out.txt is the real app's describe(): it writes "enriched", and its
    # "out-group-repartition" sink is internal
    from migcheck.apps.online import online_outputs
    from migcheck.frameworks.topology import read_topology

    describe = Path(__file__).resolve().parents[2] / "fixtures/java/streams/describe"
    topology = read_topology(str(describe / "count-out.txt"))
    assert online_outputs("migrate's shadow", (), topology) == ["enriched"]
    assert online_outputs("migrate's shadow", ("o", "", "o"), topology) == ["o"]


# --- the rollback window ------------------------------------------------------------------


def test_the_rollback_is_the_same_cut_over_the_other_way() -> None:
    back = mirror(_app_plan())
    assert back.topics == (("t-p3", "t"),)
    (app,) = back.apps
    assert (app.app_id, app.shadow_id) == ("app-p3", "app")
    assert app.outputs == (("out-p3", "out"),) and app.downstream == ("down",)
    assert mirror(back) == _app_plan()


def test_the_reverse_copy_waits_for_the_old_topics_readers_and_refuses_if_it_was_written() -> None:
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    # a forgotten consumer holds t until t = 3; the old app itself may stay
    world = _World(
        lambda t: _ends(10, 20), [], readers=lambda t: ["app"] + (["x"] if t < 3 else [])
    )
    world.ends_of["t"] = {0: 10, 1: 20}
    reverse_may_start(_app_plan(), barrier, world.io())
    assert world.t == 3.0 and "reverse copy: waiting for x to stop reading t" in world.said
    world.ends_of["t"] = {0: 12, 1: 20}  # a producer left on t wrote 2 after the barrier
    with pytest.raises(Stopped, match="2 records were written to t after the barrier"):
        reverse_may_start(_app_plan(), barrier, world.io())


def test_the_window_completes_on_y_rolls_back_on_rollback_and_stops_on_anything_else() -> None:
    world = _World(lambda t: _ends(10, 20), [True])
    assert rollback_window(_app_plan(), world.io()) is Decision.COMPLETE
    assert "Answer y to complete (no rollback after), or rollback" in world.asked[0]
    world = _World(lambda t: _ends(10, 20), [False])
    assert rollback_window(_app_plan(), world.io()) is Decision.ROLLBACK
    io = world.io()
    other = MigrateIO(**{**io.__dict__, "decide": lambda line: "n"})
    with pytest.raises(Stopped, match="'n' is neither y nor rollback"):
        rollback_window(_app_plan(), other)


def test_complete_stops_the_reverse_copy_and_the_old_app_then_names_each_leftover() -> None:
    world = _World(lambda t: _ends(10, 20), [True, True, True, True])
    complete(_app_plan(), world.io())
    assert world.copy_stopped_at == 0.0 and len(world.checked) == 1  # its last range checked
    assert world.asked[0].startswith("stop the old app app (close() every instance)")
    assert [a.split(" (")[0] for a in world.asked[1:]] == [
        "delete topic t",
        "delete the old app's internal topics",
        "delete the old app's group app",
    ]


# --- the cut-over record -----------------------------------------------------------------


def _migration(plan: Plan, barrier: Barrier) -> Migration:
    return Migration(plan, MigrateResult(plan.topics, {"t": "murmur2"}), barriers={
        Way.FORWARD: barrier})  # fmt: skip


def test_the_record_resumes_after_its_barrier_and_refuses_once_the_migration_ended(
    tmp_path: Path,
) -> None:
    from migcheck.commands.migrate import MigrateOptions, Operator, run_migrate
    from migcheck.errors import UsageError

    checkpoint = str(tmp_path / "m.json")
    assert resumable(checkpoint) is None  # nothing recorded: a migration from the start
    barrier = _b({0: 10, 1: 20}, {0: 12, 1: 9, 2: 9}, 3.1, {"out-p3": {0: 5, 1: 6}})
    m = _migration(_app_plan(), barrier)
    write_record(checkpoint, State(Phase.SWITCH), m)
    kept = json.loads(record_path(checkpoint).read_text(encoding="utf-8"))
    assert kept["old_ends"] == {"t": {"0": 10, "1": 20}} and kept["new_ends"]["t-p3"]["2"] == 9
    assert (kept["topics"], kept["phase"]) == ([["t", "t-p3"]], "switch")
    assert (kept["way"], kept["ended"]) == ("forward", False)
    resumed = resumable(checkpoint)
    assert resumed is not None and resumed.barrier == barrier  # JSON's keys back to ints
    assert resumed.shadow_ids == {"app": "app-p3"} and resumed.state == State(Phase.SWITCH)
    same_migration(resumed, _app_plan())
    with pytest.raises(UsageError, match=r"records groups \[\], this run \['g'\]"):
        same_migration(resumed, replace(_app_plan(), groups=("g",)))

    m.barriers[Way.BACK] = Barrier({"t-p3": {0: 40}}, {"t": {0: 11, 1: 20}})
    write_record(checkpoint, State(Phase.SWITCH, Way.BACK), m)
    assert json.loads(record_path(checkpoint).read_text(encoding="utf-8"))["rollback"]
    operator = Operator(ask=lambda line: pytest.fail(line), choose=str, decide=str, say=print)
    # no broker at this address: each refusal comes before any connection
    options = MigrateOptions(("t",), 3, checkpoint)
    with pytest.raises(UsageError, match=r"stopped within its rollback's cut-over.*by hand"):
        run_migrate(options, operator)
    for state, words in (
        (State(Phase.COMPLETE), "complete"),
        (State(Phase.MOVE_READERS, Way.BACK), "rolled back"),
    ):
        write_record(checkpoint, state, m, ended=True)
        with pytest.raises(UsageError, match=f"this migration {words}: there is nothing left"):
            run_migrate(options, operator)
    record_path(checkpoint).write_text('{"stage": "switching"}', encoding="utf-8")
    with pytest.raises(UsageError, match="not a whole cut-over record"):
        resumable(checkpoint)
    # a phase the record cannot name while the migration goes on (before the switch)
    write_record(checkpoint, State(Phase.BARRIER), m)
    with pytest.raises(UsageError, match="not a whole cut-over record"):
        resumable(checkpoint)


#: A cut-over record as migcheck wrote it before the phases were recorded: a ``stage``,
#: no phase.
_OLD_RECORD = {
    "stage": "switching",
    "topic": "t",
    "into": "t-p3",
    "old_ends": {"0": 10, "1": 20},
    "new_ends": {"0": 40, "1": 41, "2": 42},
    "shadow_output_ends": {},
    "took_s": 3.1,
    "groups": ["g"],
    "downstream_groups": [],
    "application_id": None,
    "shadow_application_id": None,
}


class _Walked:
    """A walk's record and copies, as ``migrate`` gives them: each record written (to a
    real file) kept with its state, each copy's I/O opened kept with whether it runs.
    The reverse copy, once it runs, has written the old topic to ``reverse_wrote``."""

    def __init__(self, world: _World, checkpoint: str, commits: dict[str, dict[int, int]]):
        self.world, self.checkpoint, self.commits = world, checkpoint, commits
        self.written: list[tuple[State, bool]] = []
        self.opened: list[tuple[Copy, bool]] = []
        self.reverse_wrote = {0: 15, 1: 26}

    def record(self, state: State, m: Migration, ended: bool) -> None:
        self.written.append((state, ended))
        write_record(self.checkpoint, state, m, ended)

    def lanes(self, copy: Copy, running: bool) -> contextlib.AbstractContextManager[MigrateIO]:
        self.opened.append((copy, running))
        if copy is Copy.REVERSE:
            self.world.ends_of["t"] = self.reverse_wrote
            self.world.source = self.world.into  # the rollback's source: the new topic
        world, io = self.world, self.world.io()
        committed = lambda g, topic: world.offsets.get((g, topic), self.commits.get(topic, {}))  # noqa: E731
        return contextlib.nullcontext(MigrateIO(**{**io.__dict__, "committed": committed}))


_FORWARD = [State(p) for p in (Phase.SWITCH, Phase.SETTLE, Phase.MOVE_READERS, Phase.REVERSE,
                               Phase.ROLLBACK_WINDOW)]  # fmt: skip


def test_a_record_written_before_the_phases_were_recorded_resumes_at_the_switch(
    tmp_path: Path,
) -> None:
    from migcheck.errors import UsageError

    checkpoint = str(tmp_path / "m.json")
    record_path(checkpoint).write_text(json.dumps(_OLD_RECORD), encoding="utf-8")
    resumed = resumable(checkpoint)
    assert resumed is not None and resumed.state == State(Phase.SWITCH)
    assert resumed.barrier == _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}, 3.1, {})
    # it walks on from the switch: asked again, then each phase after it
    world = _World(lambda t: _ends(10, 20), [True, True, True, True, True])
    world.ends_of["t"] = {0: 10, 1: 20}  # nothing written to the old topic since
    walked = _Walked(world, checkpoint, {"t": {0: 10, 1: 20}})
    m = resumed_run(_plan(), "murmur2", resumed.state, resumed.barrier, resumed.hops(_plan()),
                    reversing=False)  # fmt: skip
    result = walk(m, walked.lanes, walked.record)
    assert world.asked[0] == (
        "switch every producer of t to t-p3 and resume them (the pause ends here); answer y "
        "once they write there"
    )
    assert not any(a.startswith("pause") for a in world.asked)  # no second barrier
    assert world.offsets == {("g", "t-p3"): {0: 40, 1: 41, 2: 42}}  # at the recorded ends
    assert walked.written == [*((s, False) for s in _FORWARD), (State(Phase.COMPLETE), False),
                              (State(Phase.COMPLETE), True)]  # fmt: skip
    # the forward copy stays stopped at the barrier; the reverse one runs
    assert walked.opened == [(Copy.FORWARD, False), (Copy.REVERSE, True)]
    assert result.completed and result.stopped is None and result.groups == ("g",)
    assert (result.old_ends, result.cutover_s) == ({"t": {0: 10, 1: 20}}, 3.1)
    with pytest.raises(UsageError, match="this migration complete: there is nothing left"):
        resumable(checkpoint)


@pytest.mark.parametrize(
    ("stage", "words"),
    [
        ("rolling back", "stopped within its rollback's cut-over"),
        ("complete", "this migration complete: there is nothing left to do"),
        ("rolled back", "this migration rolled back: there is nothing left to do"),
    ],
)
def test_the_other_stages_of_an_old_record_are_refused_as_before(
    tmp_path: Path, stage: str, words: str
) -> None:
    from migcheck.errors import UsageError

    checkpoint = str(tmp_path / "m.json")
    record = {**_OLD_RECORD, "stage": stage, "rollback": _OLD_RECORD | {"took_s": 2.0}}
    record_path(checkpoint).write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(UsageError, match=words):
        resumable(checkpoint)
    # a record of no stage at all is one that was switching
    del record["stage"]
    record_path(checkpoint).write_text(json.dumps(record), encoding="utf-8")
    resumed = resumable(checkpoint)
    assert resumed is not None and resumed.state == State(Phase.SWITCH)


def test_a_first_run_walks_every_phase_and_a_rollback_the_cut_over_the_other_way(
    tmp_path: Path,
) -> None:
    from migcheck.errors import UsageError

    app = replace(APP, downstream=())
    plan = Plan((("t", "t-p3"),), ("g",), (100, 2.0), 5.0, False, (app,))
    answers = [True] * 5 + [False] + [True] * 4  # the window answered "rollback"
    world = _World(lambda t: _ends(10, 20), answers)
    world.ends_of["t"] = {0: 10, 1: 20}
    checkpoint = str(tmp_path / "m.json")
    walked = _Walked(world, checkpoint, {"t": {0: 10, 1: 20}})
    result = walk(Migration(plan, MigrateResult((("t", "t-p3"),), {"t": "murmur2"})), walked.lanes,
                  walked.record)  # fmt: skip
    assert [a.split(" ")[0] for a in world.asked] == [
        "start", "pause", "switch", "stop", "start",  # shadow, cut-over, group g's move
        "the",  # the rollback window
        "pause", "switch", "stop", "start",  # the rollback's cut-over, g's move back
    ]  # fmt: skip
    back = [State(p, Way.BACK) for p in (Phase.SWITCH, Phase.SETTLE, Phase.MOVE_READERS)]
    assert walked.written == [*((s, False) for s in [*_FORWARD, *back]), (back[-1], True)]
    assert walked.opened == [(Copy.FORWARD, True), (Copy.REVERSE, True)]
    assert result.rolled_back is not None and result.rolled_back.groups == ("g",)
    assert result.groups == ("g",) and result.shadows == ("app-p3",) and not result.completed
    # g went to the new topic at the barrier, and back to the old one at the rollback's,
    # where the reverse copy had written up to
    assert world.offsets == {("g", "t-p3"): {0: 40, 1: 41, 2: 42}, ("g", "t"): {0: 15, 1: 26}}
    kept = json.loads(record_path(checkpoint).read_text(encoding="utf-8"))
    assert kept["old_output_ends"] == {"out": {"0": 7, "1": 8}}  # the old app settled there
    assert kept["rollback"]["new_ends"] == {"t": {"0": 15, "1": 26}}
    with pytest.raises(UsageError, match="this migration rolled back: there is nothing left"):
        resumable(checkpoint)


def test_a_run_that_stopped_moving_the_readers_resumes_there_with_the_recorded_ends(
    tmp_path: Path,
) -> None:
    # the first run settled the old app (its output "out" ended at 5, 6) and stopped at the
    # downstream group's move; the resumed run neither switches nor settles again
    checkpoint = str(tmp_path / "m.json")
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}, 2.5, {"out-p3": {0: 30, 1: 31}})
    m = _migration(_app_plan(), barrier)
    m.hops[Way.FORWARD] = [Hop("out", {0: 5, 1: 6}, "out-p3", {0: 30, 1: 31})]
    write_record(checkpoint, State(Phase.MOVE_READERS), m)
    resumed = resumable(checkpoint)
    assert resumed is not None and resumed.state == State(Phase.MOVE_READERS)
    settled: list[tuple[str, str]] = []
    world = _World(lambda t: _ends(10, 20), [True] * 7,
                   lags=lambda app, t: settled.append((app, t)) or 0)  # type: ignore[func-returns-value]  # fmt: skip
    world.ends_of["t"] = {0: 10, 1: 20}
    walked = _Walked(world, checkpoint, {"out": {0: 5, 1: 6}})
    hops = resumed.hops(_app_plan())
    assert hops == m.hops[Way.FORWARD]
    again = resumed_run(_app_plan(), "murmur2", resumed.state, resumed.barrier, hops, False)
    result = walk(again, walked.lanes, walked.record)
    assert world.asked[0].startswith("stop every consumer of group down")
    assert not any(a.startswith(("switch", "pause")) for a in world.asked)
    assert settled == []  # the old app is not asked again
    assert world.offsets == {("down", "out-p3"): {0: 30, 1: 31}}
    assert walked.written[0] == (State(Phase.MOVE_READERS), False)
    assert result.completed and result.downstream == ("down",)


def test_a_resumed_run_leaves_a_group_it_already_moved_where_it_is() -> None:
    # g committed the new topic's barrier ends (or later) before the run stopped
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    world = _World(lambda t: _ends(10, 20), [])
    io = world.io()
    moved = MigrateIO(**{**io.__dict__, "committed": lambda g, topic: {0: 40, 1: 45, 2: 42}})
    assert move_groups(_plan(), barrier, moved) == ["g"]
    assert world.asked == [] and world.offsets == {}
    assert "group g: already on t-p3" in world.said
    # one partition short of the barrier: not a move of ours, so it is moved
    world = _World(lambda t: _ends(10, 20), [True, True], commits=lambda t: {0: 10, 1: 20})
    io = world.io()
    short = {"t": {0: 10, 1: 20}, "t-p3": {0: 40, 1: 41, 2: 3}}
    partial = MigrateIO(**{**io.__dict__, "committed": lambda g, topic: short[topic]})
    assert move_groups(_plan(), barrier, partial) == ["g"]
    assert world.offsets == {("g", "t-p3"): {0: 40, 1: 41, 2: 42}}


def test_a_resumed_reverse_copy_may_find_the_old_topic_past_the_barrier() -> None:
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    world = _World(lambda t: _ends(10, 20), [])
    world.ends_of["t"] = {0: 15, 1: 26}  # what the reverse copy wrote before the stop
    reverse_may_start(_app_plan(), barrier, world.io(), resuming_it=True)
    with pytest.raises(Stopped, match="11 records were written to t after the barrier"):
        reverse_may_start(_app_plan(), barrier, world.io())


def test_yes_answers_up_to_the_switch_and_never_completes_nor_deletes() -> None:
    """--yes automates the cut-over, not the giving up of the way back (issue 72): the
    CLI's operator answers y to every step up to the switch, but the rollback window and
    completion's steps are the person's own answers, read from stdin (closed here)."""
    from migcheck.cli.migrate import operator_of

    operator = operator_of(yes=True, stdin=io_module.StringIO(""))
    assert operator.ask("pause the producers; answer y once paused") is True
    assert operator.choose("switch the producers") == "y"
    assert operator.decide("Answer y to complete (no rollback after), or rollback") == ""
    world = _World(lambda t: _ends(10, 20), [])
    io = MigrateIO(**{**world.io().__dict__, "decide": operator.decide})
    with pytest.raises(Stopped, match="stopped in the rollback window"):
        rollback_window(_app_plan(), io)
    with pytest.raises(Stopped, match="stopped before the old app app stopped"):
        complete(_app_plan(), io)
    assert world.asked == []  # nothing answered on the person's behalf


def test_complete_after_waits_out_the_window_then_leaves_the_old_side_listed() -> None:
    world = _World(lambda t: _ends(10, 20), [])
    plan = replace(_app_plan(), complete_after_s=3600.0)
    assert rollback_window(plan, world.io()) is Decision.COMPLETE
    assert world.t == 3600.0 and world.asked == []
    assert world.said[-1].endswith("; it completes in 3600 s (--complete-after)")
    complete(plan, world.io())
    assert world.asked == [] and world.members == 1  # nobody waited on the old app
    left = [s for s in world.said if s.startswith("left to you: ")]
    assert left[0] == "left to you: stop the old app app (close() every instance)"
    assert left[1].startswith("left to you: delete topic t (kafka-topics --delete --topic t)")


def test_the_reverse_copy_waits_on_moved_readers_never_on_the_ones_left_on_purpose() -> None:
    """--leave-group x: x stays on t, which the reverse copy keeps current for it (issue
    72); a reader nobody named is refused at the start, so none is waited on silently."""
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    world = _World(lambda t: _ends(10, 20), [], readers=lambda t: ["app", "x"])
    world.ends_of["t"] = {0: 10, 1: 20}
    reverse_may_start(replace(_app_plan(), left=("x",)), barrier, world.io())
    assert world.t == 0.0 and not any("waiting for" in s for s in world.said)


def test_a_postpone_flag_holds_the_cut_over_at_ready_until_it_is_gone(tmp_path: Path) -> None:
    """gh-ost's --postpone-cut-over-flag-file (issue 72): ready, the run waits while the
    file exists, the copy still checked, and goes on once it is removed."""
    from migcheck.cli.migrate import operator_of

    flag = tmp_path / "postpone"
    operator = operator_of(yes=False, stdin=io_module.StringIO(""), postpone_flag=str(flag))
    assert not operator.postponed()
    flag.touch()
    assert operator.postponed()
    world = _World(lambda t: _ends(10, 20), [], postponed=lambda t: t < 90)
    wait_until_ready(_plan(), world.io())
    assert world.t == 90.0
    held = [s for s in world.said if s.startswith("ready; the cut-over waits while")]
    assert held == [
        "ready; the cut-over waits while it is postponed (--postpone-cut-over-flag-file "
        "exists, or the control socket said postpone): remove the file, or send "
        "unpostpone, to go on"
    ]
    assert len(world.checked) >= 9  # the copy kept checked while held (every 10 s)


def test_a_failing_hook_stops_or_reverts_before_the_switch_and_is_said_after_it(
    tmp_path: Path,
) -> None:
    """--hooks-dir (issue 72): on-barrier pauses the producers; failing, the cut-over
    reverts (the producers resume on the old topic) and is offered again.  A hook failing
    before the barrier stops the run; after the switch it is said and the walk goes on."""
    app = replace(APP, downstream=())
    plan = Plan((("t", "t-p3"),), ("g",), (100, 2.0), 5.0, False, (app,))
    seen: list[State] = []

    def failing(phase: Phase, times: int = 1):
        def hooks(state: State, m: Migration, io: MigrateIO) -> str | None:
            seen.append(state)
            if state.phase is phase and seen.count(state) <= times:
                return "hook on-x failed (exit 3): no"
            return None

        return hooks

    def walked_with(hooks, name: str) -> tuple[_World, MigrateResult]:  # type: ignore[no-untyped-def]
        world = _World(lambda t: _ends(10, 20), [True] * 12)
        world.ends_of["t"] = {0: 10, 1: 20}
        walked = _Walked(world, str(tmp_path / name), {"t": {0: 10, 1: 20}})
        start = Migration(plan, MigrateResult((("t", "t-p3"),), {"t": "murmur2"}))
        return world, walk(start, walked.lanes, walked.record, hooks)

    world, result = walked_with(failing(Phase.BARRIER), "a.json")
    assert result.stopped is None and result.completed, result.stopped
    assert "cut-over reverted: hook on-x failed (exit 3): no at phase 5 (barrier)" in world.said
    assert [a.split(" ")[0] for a in world.asked][:4] == ["start", "resume", "pause", "switch"]
    assert seen[:6] == [State(p) for p in (Phase.COPY_AND_FOLLOW, Phase.SHADOW, Phase.READY,
                                           Phase.BARRIER, Phase.READY, Phase.BARRIER)]  # fmt: skip

    seen.clear()
    world, result = walked_with(failing(Phase.READY), "b.json")
    assert result.stopped is not None and result.stopped.startswith(
        "hook on-x failed (exit 3): no: stopped at phase 4 (ready), before the switch"
    )
    assert not any(a.startswith(("pause", "switch")) for a in world.asked)

    seen.clear()
    world, result = walked_with(failing(Phase.SETTLE), "c.json")
    assert result.stopped is None and result.completed
    assert "hook on-x failed (exit 3): no at phase 7 (settle); the run goes on" in world.said


def test_a_hook_is_told_the_migration_and_its_failure_is_one_line(tmp_path: Path) -> None:
    from migcheck.online.hooks import hook_env, hook_name, run_hook

    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    env = hook_env(State(Phase.MOVE_READERS, Way.BACK), _app_plan(), barrier, CopyLag(7, 0.5))
    assert env == {
        "MIGCHECK_PHASE": "move readers", "MIGCHECK_PHASE_NUMBER": "8", "MIGCHECK_WAY": "back",
        "MIGCHECK_TOPIC": "t", "MIGCHECK_NEW_TOPIC": "t-p3", "MIGCHECK_GROUPS": "",
        "MIGCHECK_APP_ID": "app", "MIGCHECK_SHADOW_ID": "app-p3",
        "MIGCHECK_DOWNSTREAM_GROUPS": "down",
        "MIGCHECK_BARRIER_OLD_ENDS": '{"0": 10, "1": 20}',
        "MIGCHECK_BARRIER_NEW_ENDS": '{"0": 40, "1": 41, "2": 42}',
        "MIGCHECK_LAG_RECORDS": "7",
    }  # fmt: skip
    assert hook_name(State(Phase.MOVE_READERS)) == "on-move-readers"
    state = State(Phase.BARRIER)
    assert run_hook(str(tmp_path), state, env) is None  # no hook there: nothing to run
    hook = tmp_path / "on-barrier"
    hook.write_text('#!/bin/sh\necho "$MIGCHECK_TOPIC $MIGCHECK_PHASE" > "$0.ran"\n')
    assert "could not run" in (run_hook(str(tmp_path), state, env) or "")  # not executable
    hook.chmod(0o755)
    assert run_hook(str(tmp_path), state, env) is None
    assert (tmp_path / "on-barrier.ran").read_text() == "t move readers\n"
    hook.write_text('#!/bin/sh\necho pausing\necho "producers did not pause" >&2\nexit 3\n')
    assert run_hook(str(tmp_path), state, env) == (
        f"hook {hook} failed (exit 3): producers did not pause"
    )


def test_the_docs_transcript_asks_what_the_code_asks() -> None:
    """docs/migrate.md's transcript is a real run's output (issue 72): the walk of the same
    migration, here without a broker, asks exactly its MANUAL lines, in its order."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "migrate.md").read_text("utf-8")
    block = doc.split("```console\n", 1)[1].split("```", 1)[0]
    manual = [ln.removeprefix("MANUAL: ") for ln in block.splitlines() if ln.startswith("MANUAL: ")]
    plan = Plan((("orders", "orders-p6"),), ("billing",), (10_000, 2.0), 5.0, False)
    world = _World(lambda t: _ends(10, 20), [True] * len(manual))
    world.source, world.into = "orders", "orders-p6"
    world.ends_of.update({"orders-p6": {0: 40, 1: 41, 2: 42}, "orders": {0: 10, 1: 20}})
    walked = _Walked(world, "/nonexistent/dir/m.json", {"orders": {0: 10, 1: 20}})
    walked.record = lambda state, m, ended: None  # type: ignore[method-assign]
    result = walk(Migration(plan, MigrateResult((("orders", "orders-p6"),), {"orders": "murmur2"})),
                  walked.lanes, walked.record)  # fmt: skip
    assert result.completed, result.stopped
    assert world.asked == manual


# --- a shadow seeded with moved state (--shadow-state move, issue 70) ---------------------

_MOVE = StateMove("counts", "app-counts-changelog", "app-p3-counts-changelog", 3)
SEEDED = replace(APP, state=ShadowState.MOVE, moves=(_MOVE,), start_line="start the seeded shadow")


class _Seeding:
    """The shadow of ``SEEDED`` in a world: not running until the operator is asked to
    start it; from then on 3 s restoring (members, but no commit past the barrier and
    900 records behind), then caught up (20 behind, committed past the barrier).  Each
    move asked is kept with its ends."""

    def __init__(self, world: _World) -> None:
        self.world, self.started_at = world, None
        self.moves: list[tuple[StateMove, dict[int, int]]] = []
        world.ends_of["app-counts-changelog"] = {0: 11, 1: 12, 2: 13}

    def io(self, base: MigrateIO) -> MigrateIO:
        world = self.world

        def ask(line: str) -> bool:
            if line == SEEDED.start_line:
                self.started_at = world.t
            return base.ask(line)

        def restored() -> bool:
            return self.started_at is not None and world.t >= self.started_at + 3

        def lag(app: str, topic: str) -> int:
            if app != "app-p3":
                return 0
            return 20 if restored() else 900  # the topic goes on: never 0 while it restores

        def committed(group: str, topic: str) -> dict[int, int]:
            if group == "app-p3" and restored():
                return {0: 45, 1: 41, 2: 42}
            return base.committed(group, topic)

        def has_members(group: str) -> bool:
            return self.started_at is not None if group == "app-p3" else base.has_members(group)

        def move(m: StateMove, ends: dict[int, int]) -> CopyResult:
            self.moves.append((m, ends))
            world.wait(2.0)  # the copy's Spark jobs
            return CopyResult(m.changelog, m.into, "murmur2", (), Verification(36, 0, 0, 0))

        return MigrateIO(**{**base.__dict__, "ask": ask, "app_lag": lag, "committed": committed,
                            "has_members": has_members, "move_state": move})  # fmt: skip


def test_a_seeded_shadow_starts_after_the_switch_from_the_barrier_with_the_moved_state(
    tmp_path: Path,
) -> None:
    plan = Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, False, (SEEDED,))
    world = _World(lambda t: _ends(10, 20), [True] * 10)
    world.ends_of["t"] = {0: 10, 1: 20}
    seeding = _Seeding(world)
    walked = _Walked(world, str(tmp_path / "m.json"), {"out": {0: 7, 1: 8}})

    def lanes(copy: Copy, running: bool) -> contextlib.AbstractContextManager[MigrateIO]:
        return contextlib.nullcontext(seeding.io(walked.lanes(copy, running).__enter__()))

    kept: list[dict[str, object]] = []

    def record(state: State, m: Migration, ended: bool) -> None:
        walked.record(state, m, ended)
        kept.append(json.loads(record_path(walked.checkpoint).read_text(encoding="utf-8")))

    result = walk(Migration(plan, MigrateResult((("t", "t-p3"),), {"t": "murmur2"})), lanes, record)
    # no shadow before the barrier, which waits for none (its lag is 900 meanwhile); the
    # operator starts it after the switch, once its state moved and its offsets are set
    assert [a.split(" ")[0] for a in world.asked[:4]] == ["pause", "switch", "start", "stop"]
    assert world.asked[2] == "start the seeded shadow"
    assert "shadow app-p3: started after the switch, seeded with the moved state" in world.said
    assert result.cutover_s == pytest.approx(2.2)  # quiet 2 s, drained in 0.2 s: no wait
    # its outputs start empty at the barrier: out-p3's ends then, where downstream moves
    assert world.offsets[("down", "out-p3")] == {0: 30, 1: 31}
    # the changelog moved up to its ends once the old app settled, the shadow's offsets
    # committed at the new topic's barrier ends
    assert seeding.moves == [(_MOVE, {0: 11, 1: 12, 2: 13})]
    assert world.offsets[("app-p3", "t-p3")] == {0: 40, 1: 41, 2: 42}
    # the changelog's ends recorded (with the mode) before the move: a resume moves the same
    settle = [r for r in kept if r["phase"] == "settle"]
    assert [r.get("changelog_ends") for r in settle] == [
        None, {"app-counts-changelog": {"0": 11, "1": 12, "2": 13}}
    ]  # fmt: skip
    assert all(a["shadow_state"] == "move" for r in kept for a in r["applications"])
    # restored 3 s after its start, then found at the next look (every 0.5 s)
    assert result.seeded is not None and result.seeded.records == 36
    assert result.seeded.restore_s == pytest.approx(3.0)
    assert result.seeded.waited_s == pytest.approx(5.0)  # the move's 2 s, then the restore
    assert any(s.startswith("shadow app-p3: restoring the moved state, 900 records behind")
               for s in world.said)  # fmt: skip
    assert result.completed and result.downstream == ("down",)


def test_a_run_resumed_in_the_settle_moves_up_to_the_recorded_ends_and_asks_the_start_again(
    tmp_path: Path,
) -> None:
    checkpoint = str(tmp_path / "m.json")
    plan = Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, False, (replace(SEEDED, downstream=()),))
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42}, 2.2, {"out-p3": {0: 0, 1: 0}})
    m = _migration(plan, barrier)
    m.changelog_ends = {"app-counts-changelog": {0: 5, 1: 6, 2: 7}}
    write_record(checkpoint, State(Phase.SETTLE), m)
    resumed = resumable(checkpoint)
    assert resumed is not None and resumed.shadow_states == {"app": ShadowState.MOVE}
    assert resumed.changelog_ends == {"app-counts-changelog": {0: 5, 1: 6, 2: 7}}
    world = _World(lambda t: _ends(10, 20), [True] * 6)
    world.ends_of["t"] = {0: 10, 1: 20}
    world.offsets[("app-p3", "t-p3")] = {0: 40, 1: 41, 2: 42}  # committed before the stop
    seeding = _Seeding(world)  # the changelog's ends today: (11, 12, 13)
    walked = _Walked(world, checkpoint, {})
    again = resumed_run(plan, "murmur2", resumed.state, resumed.barrier, None, False,
                        resumed.changelog_ends)  # fmt: skip
    result = walk(
        again,
        lambda copy, running: contextlib.nullcontext(
            seeding.io(walked.lanes(copy, running).__enter__())
        ),
        walked.record,
    )
    assert seeding.moves == [(_MOVE, {0: 5, 1: 6, 2: 7})]  # the recorded ends, not today's
    assert "group app-p3: offsets on t-p3 at the barrier already" in world.said
    assert world.asked[0] == "start the seeded shadow"  # asked again
    assert result.completed and result.seeded is not None


def test_a_seeded_shadow_that_runs_before_its_offsets_are_set_stops_the_run() -> None:
    plan = Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, False, (SEEDED,))
    world = _World(lambda t: _ends(10, 20), [])
    seeding = _Seeding(world)
    seeding.started_at = 0.0  # started by hand, early: it would read the new topic from 0
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    with pytest.raises(Stopped, match="the shadow app-p3 runs before its offsets on t-p3"):
        seed_shadow(plan, barrier, {"app-counts-changelog": {}}, seeding.io(world.io()), 0.0)
    assert world.offsets == {} and world.asked == []


def test_a_moved_state_that_does_not_check_out_stops_before_the_shadow_starts() -> None:
    plan = Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, False, (SEEDED,))
    world = _World(lambda t: _ends(10, 20), [])
    io = seeding_io = _Seeding(world).io(world.io())
    failed = CopyResult("c", "d", "murmur2", (), Verification(36, 2, 0, 0))
    io = MigrateIO(**{**seeding_io.__dict__, "move_state": lambda m, ends: failed})
    barrier = _b({0: 10, 1: 20}, {0: 40, 1: 41, 2: 42})
    with pytest.raises(Stopped, match="check failed on app-p3-counts-changelog: 2 missing"):
        seed_shadow(plan, barrier, {"app-counts-changelog": {}}, io, 0.0)
    assert world.asked == [] and world.offsets == {}


def test_the_rollback_of_a_seeded_shadow_moves_nothing_back() -> None:
    back = mirror(Plan((("t", "t-p3"),), (), (100, 2.0), 5.0, False, (SEEDED,)))
    (app,) = back.apps
    assert not app.moved and app.moves == ()
    assert (app.app_id, app.shadow_id) == ("app-p3", "app")


def test_the_shadow_state_is_moved_where_a_source_lost_records_and_every_store_can_move(
    tmp_path: Path,
) -> None:
    from streamsmodel import app_facts

    from migcheck.apps.build import from_topology
    from migcheck.apps.discovery import Discovery
    from migcheck.commands.shadow_state import choose_shadow_state
    from migcheck.errors import Refused, UsageError
    from migcheck.frameworks.registry import FRAMEWORKS
    from migcheck.frameworks.topology import parse_topology
    from migcheck.kafka.metadata import PartitionMeta, TopicMeta
    from migcheck.model.readers import Protocol, ReaderKind

    describe = Path(__file__).resolve().parents[2] / "fixtures/java/streams/describe"

    def chosen(
        name: str,
        start: int,
        asked: ShadowState,
        resumed: Resumed | None = None,
        sizes: tuple[int, int] = (90, 0),
    ) -> tuple[ShadowState, bool]:
        """The shop app of describe() ``name`` on orders, whose partition 0 starts at
        ``start``; its counts-changelog there unless logging is disabled.  ``sizes``: the
        end offsets of orders' partition 0 and of the changelog's (0: no offsets known)."""
        changelogs = {} if name == "count-nolog" else {"shop-counts-changelog": "compact"}
        kind = ReaderKind.KAFKA_STREAMS
        facts = app_facts("shop", {"orders": 3}, dict.fromkeys(changelogs, 3), Protocol.CLASSIC,
                          framework=FRAMEWORKS[kind])  # fmt: skip
        held = (PartitionMeta(0, 0, sizes[1]),) if sizes[1] else ()
        topics = {t: TopicMeta(t, policy, 3, held) for t, policy in changelogs.items()}
        topics["orders"] = TopicMeta("orders", "delete", 3, (PartitionMeta(0, start, sizes[0]),))
        topology = parse_topology((describe / f"{name}.txt").read_text(encoding="utf-8"))
        disc = Discovery(facts, None, topics)
        model = from_topology(facts, topology)
        return choose_shadow_state(asked, disc, model, topology, resumed, "shop")

    auto, move, rebuild = ShadowState.AUTO, ShadowState.MOVE, ShadowState.REBUILD
    assert chosen("count", 40, auto) == (move, True)  # trimmed, and it can move
    assert chosen("count", 0, auto) == (rebuild, True)  # the whole history: rebuilt
    # the whole history, but at least 1 M records and 3x the changelog's: moved, as cheaper
    assert chosen("count", 0, auto, sizes=(3_000_000, 1_000_000)) == (move, True)
    assert chosen("count", 0, auto, sizes=(3_000_000, 1_000_001)) == (rebuild, True)
    assert chosen("count", 0, auto, sizes=(999_999, 10)) == (rebuild, True)  # too few
    assert chosen("count", 0, move) == (move, True)  # asked by name
    assert chosen("count", 40, rebuild) == (rebuild, True)  # the refusal then names move
    assert chosen("count-nolog", 40, auto) == (rebuild, False)  # nothing to move from
    with pytest.raises(Refused, match="the store counts logs to no changelog"):
        chosen("count-nolog", 0, move)
    # a resumed run keeps the recorded one; another asked by name is refused
    path = record_path(str(tmp_path / "m.json"))
    resumed = Resumed(
        State(Phase.SETTLE), _b({}, {}), {"shop": "shop-p6"}, None, path, {}, {"shop": move}
    )
    assert chosen("count", 0, auto, resumed) == (move, True)
    with pytest.raises(UsageError, match="records --shadow-state move, this run rebuild"):
        chosen("count", 0, rebuild, resumed)
