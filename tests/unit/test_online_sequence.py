"""The online migration's table of phases (migcheck.online.sequence), and the docs held to
it: docs/runbooks.md numbers the phases as the table orders them.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from migcheck.online.sequence import ENDINGS, RESUMABLE, TABLE, Copy, Phase, State, Way, allowed

RUNBOOKS = Path(__file__).resolve().parents[2] / "docs" / "runbooks.md"

F, B = Way.FORWARD, Way.BACK


def test_the_phases_are_gh_osts_and_vitess_in_the_order_a_completed_migration_runs_them() -> None:
    assert [str(p) for p in Phase] == [
        "start", "copy and follow", "shadow", "ready", "barrier", "switch", "settle",
        "move readers", "reverse", "rollback window", "complete",
    ]  # fmt: skip
    assert Phase.START.number == 1 and Phase.SWITCH.number == 6 and Phase.COMPLETE.number == 11


def test_a_completed_migration_is_the_line_of_the_phases_and_each_move_is_listed() -> None:
    line = [State(p) for p in Phase]
    for state, following in itertools.pairwise(line):
        assert allowed(state, following), (state, following)
    assert allowed(State(Phase.COMPLETE), None)  # it ends there
    assert not allowed(State(Phase.SWITCH), State(Phase.BARRIER))  # no second barrier
    assert not allowed(State(Phase.READY), State(Phase.SWITCH))  # never without a barrier
    for row in TABLE.values():
        assert all(s in TABLE for s in row.then)


def test_a_timed_out_barrier_reverts_to_ready_and_a_rollback_runs_ready_to_move_readers_back() -> (
    None
):
    assert allowed(State(Phase.BARRIER), State(Phase.READY))
    assert allowed(State(Phase.BARRIER, B), State(Phase.READY, B))
    assert TABLE[State(Phase.ROLLBACK_WINDOW)].then == (
        State(Phase.COMPLETE),
        State(Phase.READY, B),
    )
    rollback = [State(Phase.READY, B), State(Phase.BARRIER, B), State(Phase.SWITCH, B),
                State(Phase.SETTLE, B), State(Phase.MOVE_READERS, B)]  # fmt: skip
    for state, following in itertools.pairwise(rollback):
        assert allowed(state, following)
    assert allowed(rollback[-1], None)  # rolled back: the end
    assert {s for s in TABLE if s.way is B} == set(rollback)
    # the migration ends only where it completed or rolled back
    assert {s for s, row in TABLE.items() if not row.then} == set(ENDINGS)
    assert dict(ENDINGS) == {State(Phase.COMPLETE): "complete", rollback[-1]: "rolled back"}


def test_a_resume_starts_at_a_recorded_state_from_the_switch_on_never_within_the_rollback() -> None:
    assert [str(s.phase) for s in RESUMABLE if s.way is F] == [
        "switch", "settle", "move readers", "reverse", "rollback window", "complete"
    ]  # fmt: skip
    assert all(s.way is F for s in RESUMABLE)
    recorded = {s for s, row in TABLE.items() if row.recorded}
    assert set(RESUMABLE) <= recorded
    # the rollback's states from its switch on are recorded (a resume refuses them); a
    # stop before that switch leaves the record at the window, which offers it again
    assert recorded - set(RESUMABLE) == {
        State(Phase.SWITCH, B), State(Phase.SETTLE, B), State(Phase.MOVE_READERS, B)
    }  # fmt: skip
    # a new run starts; a resumed one goes straight to its recorded state
    assert TABLE[State(Phase.START)].then == (State(Phase.COPY_AND_FOLLOW), *RESUMABLE)
    assert not any(TABLE[s].recorded for s in TABLE if s.phase.number < Phase.SWITCH.number)


def test_the_forward_copy_serves_the_phases_to_the_reverse_and_the_reverse_copy_after() -> None:
    assert TABLE[State(Phase.START)].copy is None
    for state, row in TABLE.items():
        if state.phase is Phase.START:
            continue
        before_window = state.way is F and state.phase.number < Phase.ROLLBACK_WINDOW.number
        assert row.copy is (Copy.FORWARD if before_window else Copy.REVERSE), state


def _numbered_phases(text: str) -> list[tuple[int, str]]:
    """The online section's numbered list: each item's number and its bold title."""
    section = text.split("## Online: `migcheck migrate`", 1)[1].split("\n## ", 1)[0]
    return [(int(n), t) for n, t in re.findall(r"^(\d+)\. \*\*([^*]+?)\.\*\*", section, re.M)]


def test_the_runbooks_doc_numbers_the_phases_as_the_table_does() -> None:
    phases = _numbered_phases(RUNBOOKS.read_text(encoding="utf-8"))
    assert phases == [(p.number, str(p).capitalize()) for p in Phase]


def test_the_docs_check_reads_the_numbered_titles_and_would_see_a_drift() -> None:
    doc = (
        "## Online: `migcheck migrate`\n\n1. **Start.** it\n   more\n2. **Copy and follow.** x\n"
        "4. **Ready.** y\n\n## Next\n1. **Other.**\n"
    )
    assert _numbered_phases(doc) == [(1, "Start"), (2, "Copy and follow"), (4, "Ready")]
