"""``runbook --strategy move-state --into TOPIC`` (issue 70, item 1: "switch the producers
to a copy"): the state moves as in place, but the input is copied at the barrier instead of
altered, its producers switch to the copy and resume, and the new id reads on from the
copy's ends.  The input is left as it was.  The steps, the commands they run, the script's
copy barrier against canned tool output, and hostile names; every expected value written
by hand (the real app: tests/integration/test_runbook_move_state.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from runbookfacts import moved_facts
from scriptcall import call_function

from migcheck.commands.runbook import RunbookOptions, _onto_copy
from migcheck.frameworks.registry import runbook_steps
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import (
    Check,
    Manual,
    Run,
    RunbookFacts,
    ShellCheck,
    Strategy,
    Widened,
)
from migcheck.report.runbook import render_markdown, render_sh

#: The fake Kafka tool of the script's functions: ends and offsets from files, and a reset
#: that records its plan and answers as if it committed it (as test_move_state's).
_FAKE_TOOL = r"""#!/bin/bash
tool=$1; shift
printf '%s\n' "$tool $*" >> "$FAKE/calls"
case "$tool $*" in
  kafka-get-offsets*"--time -1"*) cat "$FAKE/ends" ;;
  kafka-consumer-groups*--describe*--offsets*) cat "$FAKE/offsets" 2> /dev/null || true ;;
  kafka-consumer-groups*--describe*--members*) true ;;
  kafka-consumer-groups*--reset-offsets*)
    file=$(sed 's/.*--from-file \([^ ]*\).*/\1/' <<< "$*")
    cp "$file" "$FAKE/reset-with"
    awk -F, '{ print "shop-counter-p6 " $1 " " $2 " " $3 " " $3 " 0 - - -" }' "$file" \
      > "$FAKE/offsets"
    echo "GROUP TOPIC PARTITION NEW-OFFSET" ;;
  *) exit 3 ;;
esac
"""


def _copy_facts(**changes: object) -> RunbookFacts:
    """The shop-counter app's state moved onto orders-p6 (two sources: clicks stays)."""
    return moved_facts(**{"onto_copy": True, "sources": ("orders", "clicks"), **changes})


def test_the_input_is_copied_at_the_barrier_and_the_producers_switch_once_the_state_moved() -> None:
    steps = runbook_steps(_copy_facts())
    assert [s.title for s in steps] == [
        "Pre-checks",
        "Pause the producers and let the application drain",
        "Stop the application",
        "Record the barrier",
        "Create orders-p6 and copy the history of orders into it",
        "Record the ends of orders-p6 as the barrier",
        "Move the state into shop-counter-p6's changelogs",
        "Switch the producers to orders-p6",
        "Commit shop-counter-p6's offsets at the ends of orders-p6",
        "Wipe the local state",
        "Restart the application on orders-p6",
    ]
    checks = [a.function for s in steps for a in s.actions if isinstance(a, Check)]
    assert ShellCheck.ENSURE_PARTITIONS not in checks  # nothing is altered
    barrier = checks.index(ShellCheck.RECORD_BARRIER)
    assert checks[barrier:][:6] == [
        ShellCheck.RECORD_BARRIER,
        ShellCheck.RECORD_OFFSETS,  # the changelog's ends
        ShellCheck.ENSURE_TOPIC,  # orders-p6
        ShellCheck.RECORD_COPY_BARRIER,  # after the copy, before the switch
        ShellCheck.ENSURE_TOPIC,  # the new id's changelog
        ShellCheck.COMMIT_BARRIER,
    ]
    manual = [a.text for s in steps for a in s.actions if isinstance(a, Manual)]
    assert manual[0] == (
        "Pause every producer of orders, clicks, and keep them paused until the switch to "
        "orders-p6; leave the application running."
    )
    assert (
        manual[2]
        == "Switch every producer of orders to orders-p6, and resume them and those of clicks."
    )
    assert manual[-1] == (
        "Start the application with application.id=shop-counter-p6 in place of shop-counter "
        "(the same code and configs otherwise), reading orders-p6 in place of orders."
    )
    # nothing deletes a topic, and the only wipe is the new id's state directory
    runs = [a.argv for s in steps for a in s.actions if isinstance(a, Run)]
    assert not [r for r in runs if "--delete" in r or "--alter" in r]
    assert [r for r in runs if r[0] == "rm"] == [
        ("rm", "-rf", "--", "/var/lib/kafka-streams/shop-counter-p6")
    ]


def _step(title: str, facts: RunbookFacts | None = None) -> list:
    (step,) = [s for s in runbook_steps(facts or _copy_facts()) if s.title == title]
    return list(step.actions)


def test_the_copy_is_the_new_topic_routes_and_its_ends_are_the_new_ids_barrier() -> None:
    create, copy = _step("Create orders-p6 and copy the history of orders into it")
    (ends,) = _step("Record the ends of orders-p6 as the barrier")
    assert isinstance(create, Check) and create.args == (
        "orders-p6",
        "6",
        "orders",
        "retention.ms=-1",
    )
    assert isinstance(copy, Run) and copy.argv == (
        "migcheck", "copy", "--bootstrap-server", "broker-1:9092,broker-2:9092",
        "--command-config", "/etc/kafka/client admin.properties",
        "--topic", "orders", "--into", "orders-p6", "--checkpoint", "@copy.checkpoint",
    )  # fmt: skip
    # the same copy as the new-topic route's
    new_topic = moved_facts(strategy=Strategy.NEW_TOPIC)
    assert copy in _step("Create orders-p6 and copy the history into it", new_topic)
    assert isinstance(ends, Check) and ends.args == (
        "barrier.csv", "orders", "orders-p6", "6", "copy-barrier.csv",
    )  # fmt: skip
    (commit,) = _step("Commit shop-counter-p6's offsets at the ends of orders-p6")
    assert isinstance(commit, Check) and commit.function is ShellCheck.COMMIT_BARRIER
    assert commit.args == ("shop-counter-p6", "copy-barrier.csv", "6", "orders-p6")
    assert commit.shown is not None and commit.shown.argv[-6:] == (
        "--reset-offsets", "--group", "shop-counter-p6", "--from-file",
        "@copy-barrier.csv.commit", "--execute",
    )  # fmt: skip
    restart = _step("Restart the application on orders-p6")
    assert restart[2].args == ("300", "orders-p6", "shop-counter-p6")
    assert restart[3].args[-6:-2] == ("--topic", "orders-p6", "--to", "6")


def test_a_streams_protocol_apps_new_id_keeps_the_copys_ends_as_the_barrier_in_place() -> None:
    title = "Commit shop-counter-p6's offsets at the ends of orders-p6"
    (classic,) = [s.why for s in runbook_steps(_copy_facts()) if s.title == title]
    assert classic.endswith(
        "kafka-consumer-groups --from-file, while the new group has no members."
    )
    facts = _copy_facts(protocol="streams")
    (streams,) = [s.why for s in runbook_steps(facts) if s.title == title]
    assert streams == classic + (
        " On the streams protocol (KIP-1071) too: the commit makes the new id an empty "
        "classic group, and its first streams member's join converts that group into a "
        "streams group, keeping its offsets; kafka-consumer-groups also reads them back, "
        "which kafka-streams-groups cannot while the group is classic."
    )


def test_the_copy_step_says_why_the_input_is_left_as_it_was() -> None:
    facts = _copy_facts()
    md = render_markdown(facts, runbook_steps(facts), "0", "now")
    assert (
        "orders is not altered: it is copied into orders-p6 at 6 partitions, where its "
        "producers switch and the app reads on, and stays as it was for its other readers, "
        "or as the way back."
    ) in md
    assert "> Widen orders (3 -&gt; 6 partitions) under the Kafka Streams application " in md
    assert "it ends up reading orders-p6 (6 partitions)." in md


def test_a_faust_app_restarts_reading_the_copy() -> None:
    facts = _copy_facts(
        kind=ReaderKind.FAUST, expected_internal={"shop-counter-p6-counts-changelog": 6}
    )
    (start,) = [
        m for m in _step("Restart the application on orders-p6", facts) if isinstance(m, Manual)
    ]
    assert start.text.startswith(
        "Start every worker with the app id 'shop-counter-p6' in place of 'shop-counter' (the "
        "same code and settings otherwise), reading orders-p6 in place of orders, with "
        "topic_partitions=6"
    )


def test_only_move_state_asked_with_into_given_moves_onto_a_copy() -> None:
    asked = RunbookOptions(
        "shop", "orders", 6, new_topic="orders-wide", strategy=Strategy.MOVE_STATE
    )
    assert _onto_copy(asked)
    # without --into: in place, as before
    assert not _onto_copy(RunbookOptions("shop", "orders", 6, strategy=Strategy.MOVE_STATE))
    # auto's move keeps to its route; --into names the copy only where it copies
    auto = RunbookOptions("shop", "orders", 6, new_topic="orders-wide")
    assert not _onto_copy(auto)


# --- the script's copy barrier, against canned tool output ----------------------------


def _call(tmp_path: Path, *call: str, facts: RunbookFacts | None = None, **canned: str):
    fake, work = tmp_path / "fake", tmp_path / "work"
    fake.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    for name, text in canned.items():
        (fake / name).write_text(text)
    tool = tmp_path / "kafka-tool"
    tool.write_text(_FAKE_TOOL)
    tool.chmod(0o755)
    facts = facts or _copy_facts(command_config=None)
    script = tmp_path / "runbook.sh"
    script.write_text(render_sh(facts, runbook_steps(facts), "0", "now"), encoding="utf-8")
    return call_function(script, tool, fake, work, *call)


_ENDS = "".join(f"orders-p6:{p}:{end}\n" for p, end in enumerate((7, 0, 12, 3, 0, 9)))


def test_the_copys_ends_replace_the_inputs_barrier_and_are_committed_as_they_are(
    tmp_path: Path,
) -> None:
    barrier = "orders,0,40\norders,1,0\norders,2,9\nclicks,0,5\n"
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text(barrier)
    recorded = _call(
        tmp_path, "record_copy_barrier", "barrier.csv", "orders", "orders-p6", "6",
        "copy-barrier.csv", ends=_ENDS,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    copy_barrier = (
        "clicks,0,5\norders-p6,0,7\norders-p6,1,0\norders-p6,2,12\norders-p6,3,3\n"
        "orders-p6,4,0\norders-p6,5,9\n"
    )
    assert (tmp_path / "work" / "copy-barrier.csv").read_text() == copy_barrier
    assert (tmp_path / "work" / "barrier.csv").read_text() == barrier  # kept as it was
    assert recorded.stdout.endswith(
        "  the copy orders-p6 ends where the barrier of orders is: recorded in "
        f"{tmp_path / 'work'}/copy-barrier.csv\n"
    )
    committed = _call(
        tmp_path, "commit_barrier", "shop-counter-p6", "copy-barrier.csv", "6", "orders-p6"
    )
    assert committed.returncode == 0, committed.stderr
    # every partition at the copy's end, none added at 0
    assert (tmp_path / "fake" / "reset-with").read_text() == copy_barrier
    assert committed.stdout.endswith("  shop-counter-p6 holds the barrier on every partition\n")


def test_a_sets_copies_each_replace_their_topics_barrier_and_are_committed_together(
    tmp_path: Path,
) -> None:
    """Issue 71: --into for each topic of a set: the steps copy every topic and record
    each copy's ends in turn (the first from the app's barrier, the next from the record
    so far), then commit every copy's ends at once; run, the record holds the other
    source's barrier and both copies' ends."""
    customers = Widened("customers", 3, "customers-wide", {"cleanup.policy": "compact"})
    facts = _copy_facts(new_topic="orders-wide", also=(customers,), sources=("orders",
                        "customers", "clicks"))  # fmt: skip
    steps = runbook_steps(facts)
    (copied,) = [s for s in steps if s.title.startswith("Create")]
    assert copied.title == "Create orders-wide and customers-wide, and copy each topic's " \
        "history into its copy"  # fmt: skip
    (ends,) = [s for s in steps if s.title.startswith("Record the ends")]
    assert ends.title == "Record the ends of orders-wide and customers-wide as the barrier"
    records = [a.args for a in ends.actions if isinstance(a, Check) and
               a.function == "record_copy_barrier"]  # fmt: skip
    assert records == [
        ("barrier.csv", "orders", "orders-wide", "6", "copy-barrier.csv"),
        ("copy-barrier.csv", "customers", "customers-wide", "6", "copy-barrier.csv"),
    ]
    (commit,) = [a for s in steps for a in s.actions if isinstance(a, Check) and
                 a.function == "commit_barrier"]  # fmt: skip
    assert commit.args == ("shop-counter-p6", "copy-barrier.csv", "6", "orders-wide",
                           "customers-wide")  # fmt: skip
    assert "Switch the producers to orders-wide and customers-wide" in [s.title for s in steps]

    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text(
        "orders,0,40\norders,1,0\norders,2,9\ncustomers,0,3\ncustomers,1,3\ncustomers,2,3\n"
        "clicks,0,5\n"
    )
    ends = "".join(f"{t}:{p}:{p + 1}\n" for t in ("orders-wide", "customers-wide")
                   for p in range(6))  # fmt: skip
    for record in records:
        done = _call(tmp_path, "record_copy_barrier", *record, facts=facts, ends=ends)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "work" / "copy-barrier.csv").read_text() == "clicks,0,5\n" + "".join(
        f"{t},{p},{p + 1}\n" for t in ("orders-wide", "customers-wide") for p in range(6)
    )


def test_a_copy_without_its_new_count_is_no_barrier(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text("orders,0,40\n")
    p = _call(
        tmp_path, "record_copy_barrier", "barrier.csv", "orders", "orders-p6", "6",
        "copy-barrier.csv", ends="orders-p6:0:7\norders-p6:1:0\norders-p6:2:12\n",
    )  # fmt: skip
    assert p.returncode == 1
    assert p.stderr == (
        "  FAILED: read the end offsets of 3 partitions of orders-p6, not 6: check the cluster\n"
    )
    assert not (tmp_path / "work" / "copy-barrier.csv").exists()
    nothing = _call(
        tmp_path, "record_copy_barrier", "none.csv", "orders", "orders-p6", "6", "c.csv"
    )
    assert (nothing.returncode, nothing.stderr) == (
        1,
        f"  FAILED: no barrier recorded in {tmp_path / 'work'}/none.csv\n",
    )


# --- hostile names -------------------------------------------------------------------

_APP = "shop$(touch pwned)`id`"
_INTO = "orders-p6'$(touch pwned)`id`"


def test_a_hostile_copy_and_app_id_reach_the_script_and_the_ticket_only_escaped(
    tmp_path: Path,
) -> None:
    facts = _copy_facts(
        app_id=_APP, moved_app_id=f"{_APP}-p6", new_topic=_INTO, command_config=None
    )
    steps = runbook_steps(facts)
    sh = render_sh(facts, steps, "0", "now")
    lines = [line.strip() for line in sh.splitlines() if "pwned" in line]
    assert (
        "check record_copy_barrier barrier.csv orders $'orders-p6\\'$(touch pwned)`id`' 6 "
        "copy-barrier.csv"
    ) in lines
    assert (
        "check commit_barrier $'shop$(touch pwned)`id`-p6' copy-barrier.csv 6 "
        "$'orders-p6\\'$(touch pwned)`id`'"
    ) in lines
    assert (
        "manual $'Switch every producer of orders to orders-p6\\'$(touch pwned)`id`, and "
        "resume them and those of clicks.'"
    ) in lines
    # every other line naming the copy is a comment, or holds it only in such a $'...' word
    assert all(line.startswith("#") or _INTO not in line for line in lines)
    md = render_markdown(facts, steps, "0", "now")
    assert (
        "## 5. Create orders-p6'$(touch pwned)\\`id\\` and copy the history of orders into it"
    ) in md.splitlines()
    # outside the sh fences (whose words are the script's), every backtick is escaped
    text = md.split("```")[::2]
    assert all("`" not in part.replace("\\`", "") for part in text)
    # run for real (dry run and executed against a tool that fails): nothing is injected
    tool = tmp_path / "kafka-tool"
    tool.write_text("#!/bin/bash\nexit 3\n")
    tool.chmod(0o755)
    script = tmp_path / "runbook.sh"
    script.write_text(sh, encoding="utf-8")
    for args in ([], ["--execute", "--yes"]):
        subprocess.run(
            ["bash", str(script), *args], cwd=tmp_path, capture_output=True, timeout=60,
            env={"PATH": "/usr/bin:/bin", "MIGCHECK_KAFKA_TOOL": str(tool),
                 "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")},
        )  # fmt: skip
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "barrier.csv").write_text("orders,0,4\n")
    ends = "".join(f"{_INTO}:{p}:1\n" for p in range(6))
    recorded = _call(
        tmp_path, "record_copy_barrier", "barrier.csv", "orders", _INTO, "6", "copy-barrier.csv",
        facts=facts, ends=ends,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert (tmp_path / "work" / "copy-barrier.csv").read_text() == ends.replace(":", ",")
    assert not (tmp_path / "pwned").exists()
