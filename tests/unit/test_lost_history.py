"""A reprocess of sources that lost records is refused (issue 68): the refusal's line, the
script's check before the change and again right before the reprocess, its dry run, and
the way out (--accept-lost-history), with hostile names only through the escaping.

The canned tool output is what Kafka 4.3's ``kafka-get-offsets --time -2`` prints, one
``topic:partition:offset`` line per partition (checked against the real tool in
tests/integration/test_runbook_lost_history.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from runbookfacts import shop_facts

from migcheck.frameworks.registry import runbook_steps
from migcheck.model.history import (
    Trimmed,
    lost_history_refusal,
    remedy_loses_history,
    trimmed_sources,
)
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import Check, RunbookFacts, ShellCheck, StepRole, Strategy
from migcheck.report.runbook import render_markdown, render_sh

INTACT = "orders:0:0\norders:1:0\norders:2:0\nclicks:0:0\n"
TRIMMED = "orders:0:0\norders:1:120\norders:2:0\nclicks:0:5\n"


def _facts(**changes: object) -> RunbookFacts:
    """The shop app: a Kafka Streams app that reads two sources, orders and clicks."""
    base = {"app_id": "shop", "bootstrap": "b:9092", "command_config": None, "state_dir": None,
            "sources": ("orders", "clicks"), "internal": ("shop-counts-changelog",),
            "expected_internal": {"shop-counts-changelog": 6}}  # fmt: skip
    return shop_facts(**{**base, **changes})


def test_only_the_partitions_that_start_above_zero_are_named() -> None:
    found = trimmed_sources({"orders": {0: 0, 2: 7, 1: 120}, "clicks": {0: 0}})
    assert found == (Trimmed("orders", ((1, 120), (2, 7))),)
    assert found[0].below == 127


def test_the_refusal_names_each_partition_what_is_lost_and_the_way_out() -> None:
    line = lost_history_refusal(
        "shop",
        (Trimmed("orders", ((1, 120), (2, 7))), Trimmed("clicks", ((0, 5),))),
        "--strategy new-topic",
    )
    assert line == (
        "refused: --strategy new-topic would rebuild the state of shop by reprocessing sources "
        "that no longer hold their whole history (orders partition 1 from offset 120, 2 from "
        "offset 7; clicks partition 0 from offset 5): up to 132 records deleted below those "
        "offsets would be missing from every count, aggregate, table and join it rebuilds; keep "
        "the whole history, or pass --accept-lost-history to reprocess without them"
    )
    assert "\n" not in line


def test_app_and_the_gate_say_what_every_remedy_would_lose() -> None:
    assert remedy_loses_history((Trimmed("orders", ((0, 40),)),)) == (
        "every remedy (migcheck runbook, migrate) rebuilds the app's state by reprocessing "
        "sources that no longer hold their whole history (orders partition 0 from offset 40): "
        "up to 40 records deleted below those offsets would be missing from every count, "
        "aggregate, table and join it rebuilds: each is refused unless --accept-lost-history"
    )


def _history_checks(steps: list) -> list[tuple[str, int]]:
    return [
        (s.title, i)
        for s in steps
        for i, a in enumerate(s.actions)
        if isinstance(a, Check) and a.function is ShellCheck.HISTORY_INTACT
    ]


@pytest.mark.parametrize(
    ("kind", "strategy", "split", "again"),
    [
        (ReaderKind.KAFKA_STREAMS, Strategy.NEW_TOPIC, None, "Reset the application"),
        (ReaderKind.KAFKA_STREAMS, Strategy.IN_PLACE, None, "Reset the application"),
        (ReaderKind.KAFKA_STREAMS, Strategy.ONLINE, None, "Migrate online"),
        (ReaderKind.QUIX_STREAMS, Strategy.NEW_TOPIC, None, "Wipe the local state"),
        (ReaderKind.QUIX_STREAMS, Strategy.IN_PLACE, 12, "Wipe the local state"),
        (ReaderKind.FAUST, Strategy.NEW_TOPIC, None, "Wipe the local state"),
        (ReaderKind.KSQLDB, Strategy.NEW_TOPIC, None, "Create the query again"),
        (ReaderKind.KSQLDB, Strategy.ONLINE, None, "Migrate online"),
    ],
)
def test_a_reprocess_reads_the_history_first_and_again_right_before_it(
    kind: ReaderKind, strategy: Strategy, split: int | None, again: str
) -> None:
    app = "_confluent-ksql-default_query_CTAS_C_1" if kind is ReaderKind.KSQLDB else "shop"
    steps = runbook_steps(_facts(kind=kind, strategy=strategy, split_keys=split, app_id=app))
    assert _history_checks(steps) == [("Pre-checks", 0), (again, 0)]
    (pre,) = [s for s in steps if s.role is StepRole.PRECHECKS]
    check = pre.actions[0]
    assert isinstance(check, Check) and check.args == ("required", "orders", "clicks")
    assert check.dry_run


@pytest.mark.parametrize("kind", [ReaderKind.QUIX_STREAMS, ReaderKind.FAUST])
def test_an_alter_that_rebuilds_no_state_reads_no_history(kind: ReaderKind) -> None:
    """In place with no table fed directly: Quix and Faust keep their state and only commit
    the new partitions' start, so a trimmed source loses nothing there."""
    steps = runbook_steps(_facts(kind=kind, strategy=Strategy.IN_PLACE))
    assert _history_checks(steps) == []


def _tool(tmp_path: Path, out: str) -> Path:
    """Kafka's kafka-get-offsets as the script calls it, printing ``out``; any other tool
    fails, as an unreachable cluster would."""
    tool = tmp_path / "kafka-tool"
    tool.write_text(
        '#!/bin/bash\n[ "$1" = kafka-get-offsets ] || exit 3\n'
        'printf "%s\\n" "$*" >> "$CALLS"\nprintf "%s" "$FAKE_OUT"\n'
    )
    tool.chmod(0o755)
    return tool


def _run(tmp_path: Path, facts: RunbookFacts, out: str, *args: str):
    script = tmp_path / "runbook.sh"
    script.write_text(render_sh(facts, runbook_steps(facts), "0", "now"), encoding="utf-8")
    return subprocess.run(
        ["bash", str(script), *args],
        capture_output=True,
        text=True,
        input="",
        env={
            "PATH": "/usr/bin:/bin",
            "FAKE_OUT": out,
            "CALLS": str(tmp_path / "calls"),
            "MIGCHECK_KAFKA_TOOL": str(_tool(tmp_path, out)),
            "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work"),
        },
        timeout=60,
    )


def test_an_executed_script_stops_before_any_change_when_a_source_was_trimmed(
    tmp_path: Path,
) -> None:
    p = _run(tmp_path, _facts(), TRIMMED, "--execute")
    assert p.returncode == 1
    assert p.stderr == (
        "  FAILED: the sources no longer hold their whole history: orders partition 1 from "
        "offset 120; clicks partition 0 from offset 5: a reprocess would rebuild the state "
        "without those records; keep the whole history, or write the runbook again with "
        "--accept-lost-history\n"
    )
    assert "== Step 2" not in p.stdout  # nothing was stopped, copied or reset
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [
        "kafka-get-offsets --bootstrap-server b:9092 --topic-partitions orders,clicks --time -2"
    ]


def test_the_dry_run_reads_the_history_and_says_what_it_would_stop_on(tmp_path: Path) -> None:
    p = _run(tmp_path, _facts(), TRIMMED)
    assert p.returncode == 0, p.stderr
    stops = [line for line in p.stdout.splitlines() if "WOULD STOP" in line]
    assert len(stops) == 2  # the pre-checks, and right before the reset
    assert stops[0].startswith(
        "  WOULD STOP (with --execute): the sources no longer hold their whole history: "
        "orders partition 1 from offset 120; clicks partition 0 from offset 5"
    )
    assert p.stdout.splitlines()[-1].startswith("DRY RUN: nothing was changed")


def test_a_whole_history_passes_and_the_script_goes_on(tmp_path: Path) -> None:
    p = _run(tmp_path, _facts(), INTACT)
    assert p.returncode == 0, p.stderr
    assert "  every source holds its whole history (log start offset 0): orders clicks" in (
        p.stdout.splitlines()
    )
    assert "WOULD STOP" not in p.stdout


def test_offsets_it_cannot_read_stop_it_too(tmp_path: Path) -> None:
    p = _run(tmp_path, _facts(), "orders:0:0\n", "--execute")  # clicks: not in the answer
    assert p.returncode == 1
    assert p.stderr.startswith("  FAILED: cannot read the log start offsets of clicks (")
    assert p.stderr.count("\n") == 1


def test_an_accepted_loss_is_said_on_its_own_line_and_the_script_goes_on(
    tmp_path: Path,
) -> None:
    lost = (Trimmed("orders", ((1, 120),)),)
    facts = _facts(accept_lost_history=True, history_lost=lost)
    (work := tmp_path / "work").mkdir()
    p = _run(tmp_path, facts, TRIMMED, "--execute")
    # it goes past the check and stops only at the next manual step (no answer on stdin)
    assert "== Step 2: Stop the application" in p.stdout
    accepted = [line for line in p.stdout.splitlines() if line.startswith("  ACCEPTED")]
    assert accepted == [
        "  ACCEPTED (--accept-lost-history): the reprocess goes on without the records "
        "retention deleted: orders partition 1 from offset 120; clicks partition 0 from offset 5"
    ]
    assert (work / "step-1.done").exists()
    header = render_markdown(facts, runbook_steps(facts), "0", "now").splitlines()[2]
    assert header.startswith("> Accepted (--accept-lost-history): the reprocess rebuilds")


def test_a_hostile_topic_name_reaches_the_script_and_the_ticket_only_escaped(
    tmp_path: Path,
) -> None:
    hostile = "orders$(touch pwned)\n`id`"
    lost = (Trimmed(hostile, ((0, 9),)),)
    facts = _facts(sources=(hostile,), accept_lost_history=True, history_lost=lost)
    sh = render_sh(facts, runbook_steps(facts), "0", "now")
    assert "\n`id`" not in sh
    for line in (line for line in sh.splitlines() if "pwned" in line):
        word = "probe history_intact accepted $'orders$(touch pwned)\\n`id`'"
        assert line.startswith("# Accepted") or line == f"  {word}", line
    md = render_markdown(facts, runbook_steps(facts), "0", "now")
    assert "\n`id`" not in md
    assert "deleted: orders$(touch pwned)\\\\n\\`id\\` partition 0 from offset 9." in md
    _run(tmp_path, facts, "", "--execute")
    assert not (tmp_path / "pwned").exists()
