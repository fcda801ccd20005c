"""The plain consumer groups' runbook without a cluster: its steps, both renderings, the
script's checks against canned tool output, and which groups it serves.

tests/integration/test_runbook_groups.py runs it for real under load; here the script
prints (no ``--execute``) or its check functions run against a fake Kafka tool that prints
what kafka-consumer-groups prints (its format as Kafka 4.3 writes it).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from oracles import run_cli
from scriptcall import call_function

from migcheck.commands.groups_runbook import GroupsRunbookOptions
from migcheck.errors import UsageError
from migcheck.model.migrate import MigrateTuning
from migcheck.model.runbook import (
    Check,
    GroupLag,
    GroupsFacts,
    Manual,
    Run,
    ShellCheck,
    ShellHelper,
    Strategy,
)
from migcheck.report.runbook import render_markdown, render_sh
from migcheck.runbook.groups import steps

SHELLCHECK = Path(sys.executable).parent / "shellcheck"
CONFIG = "/etc/kafka/client admin.properties"  # a space: quoted everywhere


def _facts(**changes: object) -> GroupsFacts:
    base: dict[str, object] = {
        "bootstrap": "broker-1:9092,broker-2:9092",
        "command_config": CONFIG,
        "topic": "orders",
        "partitions": 3,
        "to": 6,
        "groups": (GroupLag("billing", 2, 0), GroupLag("audit log", 0, 17)),
    }
    return GroupsFacts(**{**base, **changes})  # type: ignore[arg-type]


def _script(tmp_path: Path, facts: GroupsFacts) -> Path:
    path = tmp_path / "runbook.sh"
    path.write_text(render_sh(facts, steps(facts), "0.1.0", "2026-11-23T00:00:00Z"))
    return path


# --- the steps ---------------------------------------------------------------------


def test_the_steps_pause_drain_alter_wait_for_the_assignment_and_offsets_then_resume() -> None:
    titles = [s.title for s in steps(_facts())]
    assert titles == [
        "Pre-checks",
        "Pause every producer of orders",
        "Wait until every group has read all of orders",
        "Alter orders to 6 partitions",
        "Wait until every group reads the 6 partitions",
        "Make every group hold an offset on partitions 3-5 of orders",
        "Resume the producers of orders",
    ]
    kinds = [[type(a).__name__ for a in s.actions] for s in steps(_facts())]
    assert kinds == [
        ["Check", "Check", "Check"],
        ["Manual"],
        ["Check"],
        ["Check"],
        ["Check", "Check"],
        ["Check", "Check"],  # a check per group
        ["Manual"],
    ]
    functions = [a.function for s in steps(_facts()) for a in s.actions if isinstance(a, Check)]
    assert functions == [
        ShellCheck.TOPIC_PARTITIONS,
        ShellCheck.GROUPS_LAG,
        ShellCheck.RECORD_OFFSETS,
        ShellCheck.WAIT_LAG_ZERO,
        ShellCheck.ENSURE_PARTITIONS,
        ShellCheck.TOPIC_PARTITIONS,
        ShellCheck.WAIT_ASSIGNED,
        ShellCheck.ENSURE_OFFSETS,
        ShellCheck.ENSURE_OFFSETS,
    ]
    assert not any(s.destructive for s in steps(_facts()))


def test_each_check_names_every_group_and_its_timeout() -> None:
    facts = _facts(lag_timeout=42, assign_timeout=99)
    checks = {a.function: a for s in steps(facts) for a in s.actions if isinstance(a, Check)}
    assert checks[ShellCheck.WAIT_LAG_ZERO].args == ("42", "orders", "billing", "audit log")
    assert checks[ShellCheck.WAIT_ASSIGNED].args == ("99", "orders", "6", "billing", "audit log")
    assert checks[ShellCheck.GROUPS_LAG].args == ("orders", "groups.before", "billing", "audit log")
    assert checks[ShellCheck.ENSURE_PARTITIONS].args == ("orders", "6")
    offsets = [a.args for a in steps(facts)[5].actions if isinstance(a, Check)]
    assert offsets == [
        ("60", "orders", "3", "6", "required", "billing"),
        ("60", "orders", "3", "6", "required", "audit log"),
    ]
    pre = steps(facts)[0].actions[0]
    assert isinstance(pre, Check) and pre.args == ("orders", "3")


def test_the_why_texts_say_why() -> None:
    s = steps(_facts())
    assert "read before the key's old records still waiting in the old partition" in s[1].why
    assert "no members never drains: start its consumers" in s[2].why
    assert "metadata.max.age.ms, 5 minutes by default" in s[4].why
    assert "auto.offset.reset=latest starts after it and never reads it" in s[4].why
    manual = [a.text for x in s for a in x.actions if isinstance(a, Manual)]
    assert manual == [
        "Pause every producer of orders, and keep it paused until the last step.",
        "Resume every producer of orders.",
    ]


def test_markdown_names_the_groups_their_lag_and_the_config_path_only() -> None:
    md = render_markdown(_facts(), steps(_facts()), "0.1.0", "today")
    assert md.startswith("# Runbook: orders to 6 partitions, in order for its consumer groups\n")
    assert "> billing: 2 members, lag 0 on orders.\n" in md
    assert "> audit log: 0 members, lag 17 on orders. WARNING: it has no members" in md
    assert "named by --group" in md
    shown = "kafka-consumer-groups --bootstrap-server broker-1:9092,broker-2:9092 "
    shown += f"--command-config '{CONFIG}' --describe --group billing --group 'audit log'"
    assert shown in md
    assert "kafka-topics --bootstrap-server broker-1:9092,broker-2:9092 " in md
    assert "--alter --topic orders --partitions 6" in md
    found = _facts(discovered=True, groups=(GroupLag("billing", 1, None),))
    md = render_markdown(found, steps(found), "0.1.0", "today")
    assert "found by their committed offsets on it" in md
    assert "> billing: 1 member, no committed offsets on orders.\n" in md


def test_online_is_one_migrate_step_after_the_prechecks() -> None:
    online = steps(_facts(strategy=Strategy.ONLINE))
    assert [s.title for s in online] == ["Pre-checks", "Migrate online"]
    (run,) = online[1].actions
    assert isinstance(run, Run) and run.via is ShellHelper.ANSWERING
    assert run.argv == (
        "migcheck", "migrate", "--bootstrap-server", "broker-1:9092,broker-2:9092",
        "--command-config", CONFIG, "--topic", "orders", "--to", "6",
        "--group", "billing", "--group", "audit log", "--partitioner", "auto",
        "--cutover-timeout", "5", "--checkpoint", "@orders-p6.migrate.json",
    )  # fmt: skip


def test_the_online_step_carries_the_partitioner_and_the_cutover_timeout() -> None:
    tuned = _facts(strategy=Strategy.ONLINE, tuning=MigrateTuning("murmur2", 10.0))
    (run,) = steps(tuned)[1].actions
    assert isinstance(run, Run)
    assert run.argv[-6:-2] == ("--partitioner", "murmur2", "--cutover-timeout", "10")


def test_the_migrate_steps_options_are_refused_without_the_online_route() -> None:
    # refused before any broker is asked (none is named): the options name no step of the
    # alter, and the CLI's one table (cli/runbook.py, TAKES) says so
    p = run_cli("runbook", "--topic", "orders", "--to", "6", "--cutover-timeout", "9")
    assert p.returncode == 2
    assert p.stderr == (
        "migcheck: error: --cutover-timeout goes with --strategy online (migrate's step)\n"
    )


def test_the_online_script_passes_its_yes_on_to_migrate(tmp_path: Path) -> None:
    facts = _facts(strategy=Strategy.ONLINE)
    text = _script(tmp_path, facts).read_text()
    assert (
        "run answering migcheck migrate --bootstrap-server broker-1:9092,broker-2:9092 "
        "--command-config '/etc/kafka/client admin.properties' --topic orders --to 6 "
        "--group billing "
        "--group 'audit log' --partitioner auto --cutover-timeout 5 --checkpoint "
        '"$WORKDIR"/orders-p6.migrate.json'
    ) in text
    assert "RUNBOOK_ID='groups orders 3->6 billing,audit log online'" in text
    function = text[text.index("answering() {") : text.index("}", text.index("answering() {")) + 1]
    for yes, said in (("1", "a b --yes"), ("0", "a b")):
        p = subprocess.run(["bash", "-c", f"{function}\nYES={yes}; answering echo a b"],
                           capture_output=True, text=True)  # fmt: skip
        assert p.stdout.strip() == said


# --- the script --------------------------------------------------------------------


def test_the_script_is_shellcheck_clean(tmp_path: Path) -> None:
    for facts in (
        _facts(),
        _facts(command_config=None, groups=(GroupLag("g", 1, 3),)),
        _facts(strategy=Strategy.ONLINE),
    ):
        p = subprocess.run([str(SHELLCHECK), str(_script(tmp_path, facts))], capture_output=True)
        assert p.returncode == 0, p.stdout.decode()


def test_the_script_prints_every_step_and_acts_only_with_execute(tmp_path: Path) -> None:
    script = _script(tmp_path, _facts())
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert [ln for ln in p.stdout.splitlines() if ln.startswith("== Step")] == [
        f"== Step {n}: {s.title}" for n, s in enumerate(steps(_facts()), start=1)
    ]
    assert not (tmp_path / "work").exists()
    assert "  CHECK: wait_lag_zero 300 orders billing audit log" in p.stdout
    assert "  MANUAL: Pause every producer of orders" in p.stdout
    lines = p.stdout.splitlines()
    assert lines[0].startswith("DRY RUN: nothing was changed") and lines[-1] == lines[0]
    assert "Runbook complete" not in p.stdout
    text = script.read_text()
    assert "PROTOCOL=consumer\n" in text
    assert 'WORKDIR="${MIGCHECK_RUNBOOK_DIR:-migcheck-runbook-orders-p6}"' in text
    assert "RUNBOOK_ID='groups orders 3->6 billing,audit log'" in text
    assert "check groups_lag orders groups.before billing 'audit log'" in text


def test_a_rerun_resumes_and_another_change_is_refused(tmp_path: Path) -> None:
    script = _script(tmp_path, _facts())
    work = tmp_path / "work"
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(work)}
    work.mkdir()
    (work / "runbook.id").write_text("groups orders 3->6 billing,audit log\n")
    for n in range(1, 8):
        (work / f"step-{n}.done").touch()
    p = subprocess.run(["bash", str(script), "--execute"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("done before: skipped") == 7
    assert p.stdout.rstrip().endswith("Runbook complete.") and "DRY RUN" not in p.stdout
    (work / "runbook.id").write_text("groups orders 3->12 billing,audit log\n")
    p = subprocess.run(["bash", str(script), "--execute"], capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "holds the progress of another change" in p.stderr


#: kafka-consumer-groups --describe (its offsets view) and --members, as Kafka 4.3 prints
#: them; a row per partition, CONSUMER-ID "-" for a partition no member owns.
OFFSETS_HEADER = (
    "\nGROUP   TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID"
)
NO_MEMBERS = "\nConsumer group '{group}' has no active members.\n"


def _offsets(group: str, rows: list[tuple[int, str, str, str, str]]) -> str:
    lines = [OFFSETS_HEADER]
    for partition, current, end, lag_, owner in rows:
        host = "-" if owner == "-" else "/127.0.0.1"
        lines.append(f"{group} orders {partition} {current} {end} {lag_} {owner} {host} {owner}")
    return "\n".join(lines) + "\n"


def _members(group: str, count: int) -> str:
    if not count:
        return NO_MEMBERS.format(group=group)
    rows = [f"{group} consumer-{n} /127.0.0.1 client-{n} 1" for n in range(count)]
    return "\nGROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS\n" + "\n".join(rows) + "\n"


_FAKE_TOOL = """#!/bin/bash
# A fake Kafka tool: prints $FAKE/<group>.members or $FAKE/<group>.offsets.  A reset
# (--reset-offsets) is logged to $FAKE/reset.log, one argument a line, and, when the group
# has no members, makes $FAKE/<group>.after its offsets view; else it is refused as Kafka
# refuses it.
tool=$1; shift
all=("$@")
group="" members=0 reset=0
while (($#)); do
  case "$1" in --group) group=$2; shift ;; --members) members=1 ;; --reset-offsets) reset=1 ;; esac
  shift
done
[ "$tool" = kafka-consumer-groups ] || exit 3
if [ "$reset" = 1 ]; then
  printf '%s\n' "${all[@]}" >> "$FAKE/reset.log"
  if grep -q CONSUMER-ID "$FAKE/$group.members"; then
    echo "Error: Assignments can only be reset if the group '$group' is inactive, but the" \
      "current state is Stable." >&2
    exit 1
  fi
  [ ! -f "$FAKE/$group.after" ] || cp "$FAKE/$group.after" "$FAKE/$group.offsets"
  printf '\nGROUP TOPIC PARTITION NEW-OFFSET\n%s orders 3 0\n' "$group"
elif [ "$members" = 1 ]; then cat "$FAKE/$group.members"; else cat "$FAKE/$group.offsets"; fi
"""


def _call(
    tmp_path: Path,
    groups: dict[str, tuple[int, str]],
    *call: str,
    after: dict[str, str] | None = None,
):
    """Runs one of the script's functions, sourced from the generated script, against the
    fake tool; ``groups`` maps a group to its member count and its offsets view, ``after``
    a group to its offsets view once the script's reset has run."""
    fake = tmp_path / "fake"
    fake.mkdir(exist_ok=True)
    for group, (members, offsets) in groups.items():
        (fake / f"{group}.members").write_text(_members(group, members))
        (fake / f"{group}.offsets").write_text(offsets)
    for group, offsets in (after or {}).items():
        (fake / f"{group}.after").write_text(offsets)
    tool = tmp_path / "kafka-tool"
    tool.write_text(_FAKE_TOOL)
    tool.chmod(0o755)
    script = _script(tmp_path, _facts())
    return call_function(script, tool, fake, tmp_path / "work", *call)


def _rows(owner: str, lags: list[int]) -> list[tuple[int, str, str, str, str]]:
    return [(p, "10", str(10 + n), str(n), owner) for p, n in enumerate(lags)]


def test_lag_zero_passes_and_a_group_without_members_is_named_with_the_fix(
    tmp_path: Path,
) -> None:
    drained = _offsets("billing", _rows("consumer-1", [0, 0, 0]))
    idle = _offsets("audit", _rows("-", [0, 5, 2]))
    groups = {"billing": (2, drained), "audit": (0, idle)}
    p = _call(tmp_path, groups, "wait_lag_zero", "0", "orders", "billing", "audit")
    assert p.returncode == 1
    assert "  lag of billing on orders: 0" in p.stdout
    assert "audit has lag 7 on orders and no members: it drains only once started" in p.stdout
    failed = [ln for ln in p.stderr.splitlines() if "FAILED" in ln]
    assert failed == [
        "  FAILED: audit has lag 7 on orders and no members after 0 s (--lag-timeout): "
        "start its consumers; a group with no members never drains"
    ]
    running = {"audit": (1, _offsets("audit", _rows("consumer-1", [0, 5, 2])))}
    p = _call(tmp_path, running, "wait_lag_zero", "0", "orders", "audit")
    assert p.returncode == 1
    assert "FAILED: the lag of audit on orders is still 7 after 0 s" in p.stderr


def test_a_partition_without_a_committed_offset_is_not_lag_zero(tmp_path: Path) -> None:
    offsets = _offsets("billing", [(0, "10", "10", "0", "c"), (1, "-", "4", "-", "c")])
    p = _call(tmp_path, {"billing": (1, offsets)}, "group_lag", "orders", "billing")
    assert p.stdout == "1\n"


def test_the_assignment_wait_counts_owned_partitions_and_passes_over_idle_groups(
    tmp_path: Path,
) -> None:
    # partitions 3..5 are new: assigned, no committed offset yet ("-"), as the tool lists them
    owned = _rows("consumer-1", [0, 0, 0]) + [(p, "-", "0", "-", "consumer-1") for p in (3, 4, 5)]
    partly = [*_rows("consumer-1", [0, 0, 0]), (3, "-", "0", "-", "consumer-1")]
    groups = {
        "billing": (1, _offsets("billing", owned)),
        "audit": (0, _offsets("audit", _rows("-", [0, 0, 0]))),
    }
    p = _call(tmp_path, groups, "wait_assigned", "0", "orders", "6", "billing", "audit")
    assert p.returncode == 0, p.stderr
    assert "  billing owns all 6 partitions of orders" in p.stdout
    assert "audit has no members: the next step commits its offsets on the new" in p.stdout
    p = _call(
        tmp_path,
        {"billing": (1, _offsets("billing", partly))},
        "wait_assigned",
        "0",
        "orders",
        "6",
        "billing",
    )
    assert p.returncode == 1
    assert "FAILED: billing owns 4 of the 6 partitions of orders after 0 s" in p.stderr


#: The new partitions 3..5 as kafka-consumer-groups lists them for a group whose member
#: owns them: without a committed offset ("-"), then with one.
_OWNED_NO_OFFSET = [(p, "-", "0", "-", "consumer-1") for p in (3, 4, 5)]
_OWNED_COMMITTED = [(p, "0", "0", "0", "consumer-1") for p in (3, 4, 5)]


def test_the_offsets_check_passes_a_group_that_holds_an_offset_on_each_new_partition(
    tmp_path: Path,
) -> None:
    held = _offsets("billing", _rows("consumer-1", [0, 0, 0]) + _OWNED_COMMITTED)
    p = _call(tmp_path, {"billing": (1, held)}, "ensure_offsets", "0", "orders", "3", "6",
              "required", "billing")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout == "  billing holds an offset on every new partition of orders\n"
    assert not (tmp_path / "fake" / "reset.log").exists()
    p = _call(tmp_path, {"billing": (1, held)}, "missing_offsets", "billing", "orders", "3", "6")
    assert p.stdout == "\n"


def test_the_offsets_check_commits_the_start_for_a_group_without_members(
    tmp_path: Path,
) -> None:
    # an empty group lists only its committed partitions: 3..5 are missing altogether
    before = _offsets("audit log", _rows("-", [0, 0, 0]))
    after = _offsets(
        "audit log", _rows("-", [0, 0, 0]) + [(p, "0", "0", "0", "-") for p in (3, 4, 5)]
    )
    p = _call(tmp_path, {"audit log": (0, before)}, "missing_offsets", "audit log", "orders",
              "3", "6")  # fmt: skip
    assert p.stdout == "3,4,5\n"
    p = _call(tmp_path, {"audit log": (0, before)}, "ensure_offsets", "0", "orders", "3", "6",
              "required", "audit log", after={"audit log": after})  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "  audit log has no members and no offset on partitions 3,4,5 of orders" in p.stdout
    assert "  audit log holds an offset on every new partition of orders (committed)" in p.stdout
    reset = (tmp_path / "fake" / "reset.log").read_text().splitlines()
    assert reset == [
        "--bootstrap-server", "broker-1:9092,broker-2:9092", "--command-config", CONFIG,
        "--reset-offsets", "--group", "audit log", "--topic", "orders:3,4,5", "--to-earliest",
        "--execute",
    ]  # fmt: skip
    # only the partitions still without an offset are reset
    partly = _offsets("audit log", _rows("-", [0, 0, 0, 0]))
    p = _call(tmp_path, {"audit log": (0, partly)}, "ensure_offsets", "0", "orders", "3", "6",
              "required", "audit log", after={"audit log": after})  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "--topic\norders:4,5\n" in (tmp_path / "fake" / "reset.log").read_text()


def test_the_offsets_check_fails_when_an_empty_group_still_lacks_an_offset(
    tmp_path: Path,
) -> None:
    before = _offsets("audit", _rows("-", [0, 0, 0]))
    p = _call(tmp_path, {"audit": (0, before)}, "ensure_offsets", "0", "orders", "3", "6",
              "required", "audit")  # fmt: skip
    assert p.returncode == 1
    failed = [ln for ln in p.stderr.splitlines() if "FAILED" in ln]
    assert failed == [
        "  FAILED: could not commit audit's offsets on partitions 3,4,5 of orders: "
        "partitions 3,4,5 still have no offset after the reset"
    ]


def test_the_offsets_check_stops_for_members_that_commit_none_unless_accepted(
    tmp_path: Path,
) -> None:
    silent = _offsets("billing", _rows("consumer-1", [0, 0, 0]) + _OWNED_NO_OFFSET)
    groups = {"billing": (1, silent)}
    p = _call(tmp_path, groups, "ensure_offsets", "0", "orders", "3", "6", "required", "billing")
    assert p.returncode == 1
    assert "billing has members and no offset yet on partitions 3,4,5 of orders" in p.stdout
    failed = [ln for ln in p.stderr.splitlines() if "FAILED" in ln]
    assert failed == [
        "  FAILED: billing has members but no offset on partitions 3,4,5 of orders after 0 s "
        "(--commit-timeout): with auto.offset.reset=latest they would skip the records "
        "written there first; stop its consumers and run the runbook again (it then commits "
        "the offsets itself), or accept the risk (--accept-loss-risk billing)"
    ]
    assert not (tmp_path / "fake" / "reset.log").exists()  # never reset a group with members
    p = _call(tmp_path, groups, "ensure_offsets", "0", "orders", "3", "6", "accepted", "billing")
    assert p.returncode == 0, p.stderr
    assert (
        "  billing: no offset on partitions 3,4,5 of orders after 0 s; its risk is accepted "
        "(--accept-loss-risk): it reads them as its auto.offset.reset says"
    ) in p.stdout


def test_the_offsets_step_names_each_group_its_reset_and_what_was_accepted() -> None:
    facts = _facts(commit_timeout=7, accept_loss_risk=("audit log",))
    step = steps(facts)[5]
    assert "auto.offset.reset says, latest by default" in step.why
    assert "Accepted (--accept-loss-risk) for audit log" in step.why
    checks = [a for a in step.actions if isinstance(a, Check)]
    assert [c.args[4:] for c in checks] == [("required", "billing"), ("accepted", "audit log")]
    assert all(c.args[0] == "7" for c in checks)
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    assert "## 6. Make every group hold an offset on partitions 3-5 of orders\n" in md
    assert "--reset-offsets --group 'audit log' --topic orders:3,4,5 --to-earliest --execute" in md
    assert "> audit log: 0 members, lag 17 on orders." in md
    assert "Its loss risk is accepted (--accept-loss-risk)" in md
    assert md.count("Its loss risk is accepted") == 1  # billing's was not
    sh = render_sh(facts, steps(facts), "0.1.0", "today")
    assert "  check ensure_offsets 7 orders 3 6 required billing\n" in sh
    assert "  check ensure_offsets 7 orders 3 6 accepted 'audit log'\n" in sh
    one = _facts(to=4)
    assert steps(one)[5].title == "Make every group hold an offset on partition 3 of orders"


def test_accepting_the_risk_of_a_group_not_in_the_runbook_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError) as refused:
        steps(_facts(accept_loss_risk=("billing", "payments")))
    assert str(refused.value) == (
        "--accept-loss-risk 'payments' names no group of this runbook; its groups: "
        "'billing', 'audit log'"
    )


def test_the_pre_check_prints_and_records_each_group(tmp_path: Path) -> None:
    offsets = _offsets("billing", _rows("consumer-1", [1, 2, 3]))
    (tmp_path / "work").mkdir()
    p = _call(
        tmp_path, {"billing": (2, offsets)}, "groups_lag", "orders", "groups.before", "billing"
    )
    assert p.returncode == 0, p.stderr
    assert "  billing: members 2, lag 6 on orders" in p.stdout
    assert (tmp_path / "work" / "groups.before").read_text() == offsets


# --- the command line ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--new-topic", "x"],
            "--new-topic is for a stateful app's runbook: give --application-id",
        ),
        (["--group", "g", "--state-dir", "/x"], "--state-dir is for a stateful app's runbook"),
        (["--group", "g", "--output-topic", "o"], "--output-topic is for a stateful app's runbook"),
        (
            ["--group", "g", "--partitioner", "murmur2"],
            "--partitioner goes with --strategy online (migrate's step)",
        ),
        (
            ["--application-id", "a", "--cutover-timeout", "9"],
            "--cutover-timeout goes with an app's --strategy online, where one barrier moves it",
        ),
        (
            ["--application-id", "a", "--downstream-group", "d", "--strategy", "new-topic"],
            "--downstream-group goes with an app's --strategy online",
        ),
        (["--application-id", "a", "--accept-loss-risk", "g"], "--accept-loss-risk is for plain"),
    ],
)
def test_options_of_the_other_runbook_are_refused_in_one_line(args: list[str], line: str) -> None:
    p = run_cli("runbook", "--topic", "orders", "--to", "6", *args)
    assert p.returncode == 2
    assert p.stderr.startswith(f"migcheck: error: {line}") and p.stderr.count("\n") == 1, p.stderr
    assert re.search("Traceback", p.stderr) is None


def test_which_runbook_takes_which_option_is_declared_once_for_every_option() -> None:
    """The one table (cli/runbook.py's TAKES) names, by hand, each option that not every
    runbook takes; every other option of the command goes to both runbooks' dataclasses."""
    from migcheck.cli.runbook import TAKES, Mode, runbook_cmd
    from migcheck.commands.runbook import RunbookOptions

    app, groups = frozenset({Mode.APP}), frozenset({Mode.GROUPS})
    assert {n for n, t in TAKES.items() if t.modes == app and not t.online_in} == {
        "topology_files", "new_topic", "group_timeout", "accept_split_history",
        "accept_lost_history", "state_dir", "fixed_repartition", "framework", "master", "conf",
        "remote", "remote_config", "left",
    }  # fmt: skip
    assert {n for n, t in TAKES.items() if t.modes == groups} == {
        "accept_loss_risk",
    }  # fmt: skip
    assert {n for n, t in TAKES.items() if t.online_in} == {
        "output_topics", "downstream_groups", "partitioner", "cutover_timeout",
    }  # fmt: skip
    common = {p.name for p in runbook_cmd.params} - set(TAKES)
    assert common == {"bootstrap", "command_config", "app_ids", "topics", "to", "strategy",
                      "lag_timeout", "assign_timeout", "commit_timeout", "fmt",
                      "output"}  # fmt: skip
    both = {f.name for f in dataclasses.fields(RunbookOptions)} & {
        f.name for f in dataclasses.fields(GroupsRunbookOptions)
    }
    assert {"topic", "to", "strategy", "lag_timeout", "groups"} <= both
