"""Issue 70, item 3: a move's changelogs proven from their records when the runbook is
written, never assumed; and the online runbook of a trimmed app whose stores can move,
which names migrate's ``--shadow-state move``.  The detection is the copy's
(:func:`~migcheck.copy.placement.detect_partitioner`), given canned scores here as Spark's
read would give them; every expected line is written out by hand.  The real app (a Faust
table keyed by JSON-serialized keys) is tests/integration/test_faust.py's."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from runbookfacts import moved_facts, shop_facts

from migcheck.analysis.aggregate import KeyStats
from migcheck.analysis.verdicts import PartitionerScore
from migcheck.apps.movable import unproven_refusal, unproven_why
from migcheck.copy.errors import PlacementError
from migcheck.copy.placement import detect_partitioner
from migcheck.frameworks.registry import runbook_steps
from migcheck.kafka.fetch import WorkUnit
from migcheck.kafka.metadata import PartitionMeta, TopicMeta
from migcheck.model.analyze import KeyLayout
from migcheck.model.history import Trimmed, lost_history_refusal
from migcheck.model.migrate import ShadowState
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.runbook import Run, StateMove, StepRole, Strategy
from migcheck.report.runbook import render_markdown

CHANGELOG = TopicMeta(
    "counter-counts-changelog",
    "compact",
    2,
    (PartitionMeta(0, 5, 40), PartitionMeta(1, 0, 25)),
)


def _scores(murmur2: tuple[int, int], others: tuple[int, int] = (40, 3)) -> KeyStats:
    """Keys scored as the read scores them: (hashed, conforming) for murmur2, and the same
    for every other candidate."""
    scores = {
        "murmur2": PartitionerScore(*murmur2, 0),
        "consistent_random": PartitionerScore(*others, 0),
        "fnv1a": PartitionerScore(*others, 0),
    }
    return KeyStats(40, {KeyLayout.PLAIN: scores})


def test_the_changelog_is_read_whole_and_its_partitioner_detected() -> None:
    asked: list[tuple[list[WorkUnit], list[str]]] = []

    def read(units: list[WorkUnit], names: list[str]) -> KeyStats:
        asked.append((units, names))
        return _scores((40, 40))

    assert detect_partitioner(CHANGELOG, read) == "murmur2"
    ((units, names),) = asked
    # every record from each partition's log start to its end: never a sample
    assert [(u.partition, u.start, u.end) for u in units] == [(0, 5, 40), (1, 0, 25)]
    assert names[0] == "murmur2" and "fnv1a" in names


def test_a_forced_partitioner_placing_every_record_needs_no_scoring() -> None:
    """``--check-placement``: a record at a time first; the scoring only says how far a
    partitioner that misplaced a record is off."""
    scored: list[list[str]] = []

    def read(units: list[WorkUnit], names: list[str]) -> KeyStats:
        scored.append(names)
        return _scores((40, 31))

    checked: list[tuple[int, int, int]] = []

    def placed_by(ok: bool) -> Callable[[list[WorkUnit], str], bool]:
        def check(units: list[WorkUnit], name: str) -> bool:
            assert name == "murmur2"
            checked.extend((u.partition, u.start, u.end) for u in units)
            return ok

        return check

    assert detect_partitioner(CHANGELOG, read, {0: 10}, "murmur2", placed_by(True)) == "murmur2"
    assert checked == [(0, 10, 40), (1, 0, 25)] and scored == []
    with pytest.raises(PlacementError, match=r"not all placed by murmur2 \(77\.5% of keys"):
        detect_partitioner(CHANGELOG, read, {}, "murmur2", placed_by(False))
    assert scored == [["murmur2"]]


def test_a_changelog_without_a_keyed_record_proves_no_partitioner() -> None:
    assert detect_partitioner(CHANGELOG, lambda units, names: None) is None


def test_a_changelog_no_partitioner_placed_says_why_without_the_copys_way_out() -> None:
    with pytest.raises(PlacementError) as e:
        detect_partitioner(CHANGELOG, lambda units, names: _scores((40, 11), (40, 9)))
    assert e.value.why == (
        "no known partitioner placed every key of counter-counts-changelog (best: murmur2, "
        "27.5% of keys)"
    )
    # migcheck copy's own line is unchanged
    assert str(e.value) == (
        "no known partitioner placed every key of counter-counts-changelog (best: murmur2, "
        "27.5% of keys); a custom partitioner or explicit partitions? Force one with "
        "--partitioner"
    )


#: What the detection says of that changelog (its PlacementError's ``why``).
WHY = (
    "no known partitioner placed every key of counter-counts-changelog (best: murmur2, "
    "27.5% of keys)"
)


def test_move_state_asked_is_refused_in_one_line_naming_the_changelog_and_its_best() -> None:
    assert str(unproven_refusal("counter", WHY)) == (
        "refused: --strategy move-state for counter: no known partitioner placed every key "
        "of counter-counts-changelog (best: murmur2, 27.5% of keys): only a changelog whose "
        "records sit where their own keys are placed can be moved; keep the whole history "
        "and use another --strategy"
    )


def test_auto_falls_to_the_lost_history_refusal_which_says_why_the_state_cannot_move() -> None:
    line = lost_history_refusal(
        "counter", (Trimmed("words", ((0, 12),)),), "--strategy new-topic", "", unproven_why(WHY)
    )
    assert line == (
        "refused: --strategy new-topic would rebuild the state of counter by reprocessing "
        "sources that no longer hold their whole history (words partition 0 from offset 12): "
        "up to 12 records deleted below those offsets would be missing from every count, "
        "aggregate, table and join it rebuilds; its state cannot move instead: no known "
        "partitioner placed every key of counter-counts-changelog (best: murmur2, 27.5% of "
        "keys): only a changelog whose records sit where their own keys are placed can be "
        "moved; keep the whole history, or pass --accept-lost-history to reprocess without "
        "them"
    )
    assert "\n" not in line


def _copy_argv(move: StateMove) -> tuple[str, ...]:
    steps = runbook_steps(moved_facts(moves=(move,)))
    (step,) = [s for s in steps if s.title == "Move the state into shop-counter-p6's changelogs"]
    (copy,) = [a for a in step.actions if isinstance(a, Run)]
    return copy.argv


def test_the_scripts_copy_places_by_the_partitioner_proven_at_generation() -> None:
    move = StateMove(
        "counts", "shop-counter-counts-changelog", "shop-counter-p6-counts-changelog", 6,
        {"cleanup.policy": "compact"}, 1200, PartitionerChoice.MURMUR2,
    )  # fmt: skip
    # checked again against every record when the script runs: one written since that
    # it did not place refuses the copy
    assert _copy_argv(move)[-8:] == (
        "--into", "shop-counter-p6-counts-changelog", "--partitioner", "murmur2",
        "--check-placement", "--latest-per-key",
        "--checkpoint", "@shop-counter-p6-counts-changelog.checkpoint",
    )  # fmt: skip
    # nothing keyed to prove it by then: the copy detects it from the records itself
    unknown = StateMove(
        "counts", "shop-counter-counts-changelog", "shop-counter-p6-counts-changelog", 6
    )
    assert "--partitioner" not in _copy_argv(unknown)


def test_a_changelog_that_may_be_a_versioned_stores_moves_every_record() -> None:
    # Kafka Streams gives a versioned store's changelog min.compaction.lag.ms (its history
    # retention and a day): every version is moved, whatever its value
    for lag in ("86400000", "0"):
        versioned = StateMove(
            "prices", "shop-counter-prices-changelog", "shop-counter-p6-prices-changelog", 6,
            {"cleanup.policy": "compact", "min.compaction.lag.ms": lag}, 1200,
            PartitionerChoice.MURMUR2,
        )  # fmt: skip
        assert "--latest-per-key" not in _copy_argv(versioned)
    # a key-value store's changelog (no such config) moves each key's latest record only
    plain = StateMove(
        "counts", "shop-counter-counts-changelog", "shop-counter-p6-counts-changelog", 6,
        {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1"},
    )  # fmt: skip
    assert _copy_argv(plain).count("--latest-per-key") == 1


def _online(**changes: object):  # type: ignore[no-untyped-def]
    facts = shop_facts(strategy=Strategy.ONLINE, sources=("orders",), **changes)
    return facts, runbook_steps(facts)


def test_a_trimmed_apps_online_runbook_runs_migrate_with_its_state_moved() -> None:
    facts, steps = _online(shadow_state=ShadowState.MOVE)
    assert [s.title for s in steps] == ["Pre-checks", "Migrate online"]
    (run,) = steps[1].actions  # no history check: nothing is rebuilt from the sources
    assert isinstance(run, Run)
    assert run.argv[run.argv.index("--application-id") :][:6] == (
        "--application-id", "shop-counter", "--output-topic", "", "--shadow-state", "move",
    )  # fmt: skip
    assert all(s.role is not StepRole.REPROCESS for s in steps)
    assert "starts only after the switch" in steps[1].why
    assert "reads orders-p6 from the start" not in steps[1].why
    header = render_markdown(facts, steps, "0.1.0", "2026-12-06T00:00:00+00:00")
    assert (
        "shop-counter's sources no longer hold their whole history and every store can move, "
        "so migcheck migrate runs with --shadow-state move" in header
    )


def test_an_online_runbook_that_rebuilds_names_no_shadow_state() -> None:
    facts, steps = _online()
    run = steps[1].actions[-1]
    assert isinstance(run, Run) and "--shadow-state" not in run.argv
    assert steps[1].role is StepRole.REPROCESS
    header = render_markdown(facts, steps, "0.1.0", "2026-12-06T00:00:00+00:00")
    assert "--shadow-state" not in header
