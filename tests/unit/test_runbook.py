"""The runbook's steps and both renderings, without a cluster: order, quoting, shellcheck.

tests/integration/test_runbook_streams.py runs the script for real; here the script only
prints (no `--execute`), which must need no Kafka tool and touch nothing.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from runbookfacts import moved_facts, shop_facts

from migcheck.errors import UsageError
from migcheck.frameworks.registry import runbook_steps as steps
from migcheck.model.app import AppLevel, AppReason, AppReport, MoveTogether
from migcheck.model.history import Trimmed
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import (
    Check,
    GroupLag,
    GroupsFacts,
    Manual,
    PeerApp,
    Run,
    Runbook,
    RunbookFacts,
    ShellCheck,
    ShellHelper,
    SplitRefusal,
    Step,
    Strategy,
    Widened,
)
from migcheck.report import runbook
from migcheck.report.runbook import (
    render_markdown,
    render_runbook_markdown,
    render_runbook_sh,
    render_sh,
)
from migcheck.report.why import runbook_lines
from migcheck.runbook import groups as groups_steps

SHELLCHECK = Path(sys.executable).parent / "shellcheck"
PRELUDE = Path(runbook.__file__).with_name(runbook.PRELUDE_FILE)


_facts = shop_facts


def _script(tmp_path: Path, facts: RunbookFacts) -> Path:
    path = tmp_path / "runbook.sh"
    path.write_text(render_sh(facts, steps(facts), "0.1.0", "2026-11-23T00:00:00+00:00"))
    return path


def test_new_topic_steps_come_in_the_safe_order() -> None:
    titles = [s.title for s in steps(_facts())]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Create orders-p6 and copy the history into it",
        "Reset the application",
        "Wipe the local state",
        "Restart the application on orders-p6",
    ]
    destructive = [s.title for s in steps(_facts()) if s.destructive]
    assert destructive == ["Reset the application", "Wipe the local state"]


def test_both_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    for facts in (
        _facts(),
        _facts(strategy=Strategy.IN_PLACE, split_keys=205),
        _facts(command_config=None),
        moved_facts(),
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
    assert not (tmp_path / "work").exists()  # nothing written, nothing run
    lines = p.stdout.splitlines()
    assert lines[0].startswith("DRY RUN: nothing was changed"), lines[0]
    assert lines[-1].startswith("DRY RUN: nothing was changed"), lines[-1]
    assert "--execute" in lines[-1]  # and how to make it
    assert "Runbook complete" not in p.stdout
    reset = next(ln for ln in p.stdout.splitlines() if "--dry-run" in ln)
    assert "kafka-streams-application-reset" in reset
    assert "--internal-topics shop-counter-counts-changelog" in reset
    assert "--input-topics orders,orders-p6" in reset
    assert "--config-file '/etc/kafka/client admin.properties'" in reset
    bad = subprocess.run(["bash", str(script), "--now"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_a_rerun_resumes_after_the_steps_that_succeeded(tmp_path: Path) -> None:
    script = _script(tmp_path, _facts())
    work = tmp_path / "work"
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(work)}
    work.mkdir()
    (work / "runbook.id").write_text("shop-counter orders 3->6 new-topic orders-p6\n")
    for n in range(1, 7):  # as a run that failed nowhere would have left them
        (work / f"step-{n}.done").touch()
    # --execute, and no Kafka tool on PATH: only skipping every step can succeed
    p = subprocess.run(["bash", str(script), "--execute"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("done before: skipped") == 6
    assert p.stdout.rstrip().endswith("Runbook complete.")
    assert "DRY RUN" not in p.stdout


def test_a_work_directory_of_another_change_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "runbook.id").write_text("shop-counter orders 3->12 new-topic orders-p12\n")
    (work / "step-4.done").touch()
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(work)}
    script = _script(tmp_path, _facts())
    p = subprocess.run(["bash", str(script), "--execute"], capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert "holds the progress of another change (shop-counter orders 3->12" in p.stderr
    assert "== Step" not in p.stdout


def test_markdown_names_the_real_topics_and_says_the_lost_history_was_accepted() -> None:
    facts = _facts(history_lost=(Trimmed("orders", ((0, 120), (2, 7))),), accept_lost_history=True)
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    first = md.splitlines()[2]
    assert first == (
        "> Accepted (--accept-lost-history): the reprocess rebuilds the state without "
        "the records retention deleted: orders partition 0 from offset 120, 2 from offset 7."
    )
    assert "--internal-topics shop-counter-counts-changelog" in md
    assert "migcheck copy --bootstrap-server broker-1:9092,broker-2:9092" in md
    assert "rm -rf -- /var/lib/kafka-streams/shop-counter" in md


def test_in_place_alters_the_topic_and_says_what_splits() -> None:
    facts = _facts(strategy=Strategy.IN_PLACE, split_keys=205)
    titles = [s.title for s in steps(facts)]
    assert titles[2] == "Alter orders to 6 partitions in place"
    assert "splits the history of 205 keys" in steps(facts)[2].why
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    assert "--input-topics orders " in md and "orders-p6" not in md


def _joined(**changes: object) -> RunbookFacts:
    """The shop-counter app joining orders with customers: both widened in one change."""
    together = MoveTogether(topics=["customers", "orders"], why="joined in sub-topology 0")
    customers = Widened("customers", 3, "customers-p6", {"cleanup.policy": "compact"})
    return _facts(**{"also": (customers,), "together": (together,), **changes})


def test_a_set_is_widened_at_one_stop_one_reset_and_one_restart(tmp_path: Path) -> None:
    """Issue 71: every topic of a join copied (each with its own checkpoint, its producers
    switched with the other's), reset together, the app restarted once on both copies."""
    facts = _joined()
    titles = [s.title for s in steps(facts)]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Create orders-p6 and customers-p6, and copy each topic's history into its copy",
        "Reset the application",
        "Wipe the local state",
        "Restart the application on orders-p6 and customers-p6",
    ]
    script = _script(tmp_path, facts)
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    copies = [ln for ln in p.stdout.splitlines() if "migcheck copy" in ln]
    assert len(copies) == 4  # each topic before the switch and after it
    assert sum("--topic orders --into orders-p6" in c for c in copies) == 2
    assert sum("--topic customers --into customers-p6" in c for c in copies) == 2
    assert len({c.split("--checkpoint")[1] for c in copies}) == 2  # one checkpoint a topic
    assert "Switch every producer of orders to orders-p6 and customers to customers-p6" in (
        p.stdout
    )
    reset = next(ln for ln in p.stdout.splitlines() if "--dry-run" in ln)
    assert "--input-topics orders,customers,orders-p6,customers-p6" in reset
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    assert md.splitlines()[2] == (
        "> Widen orders (3 -&gt; 6 partitions) and customers (3 -&gt; 6 partitions) under the "
        "Kafka Streams application shop-counter, strategy new-topic: it ends up reading "
        "orders-p6 and customers-p6 (6 partitions)."
    )
    assert "> Move together: customers, orders (joined in sub-topology 0)." in md
    assert "--topic orders-p6 --topic customers-p6 --to 6" in md  # the health check
    assert md.count("the group's lag on") == 2
    assert "--config cleanup.policy=compact" in md  # customers-p6 gets customers' configs


def test_a_set_altered_in_place_alters_every_topic() -> None:
    facts = _joined(strategy=Strategy.IN_PLACE)
    alter = steps(facts)[2]
    assert alter.title == "Alter orders and customers to 6 partitions in place"
    assert [a.args for a in alter.actions if isinstance(a, Check)] == [
        ("orders", "6"),
        ("customers", "6"),
    ]


# --- the prelude file and the functions the steps name --------------------------------


def _every_strategy() -> list[RunbookFacts]:
    return [
        _facts(),
        _facts(strategy=Strategy.IN_PLACE, split_keys=205),
        _facts(command_config=None, protocol="streams", state_dir=None, internal=()),
        _facts(history_lost=(Trimmed("orders", ((1, 5),)),), members=2, configs={}),
        moved_facts(),
        moved_facts(onto_copy=True),
        _joined(),
        _facts(groups=("billing",), group_reads=(("billing", "orders"),)),
        _facts(strategy=Strategy.IN_PLACE, groups=("g",), group_reads=(("g", "orders"),)),
    ]


def _prelude_functions() -> set[str]:
    text = PRELUDE.read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\(\) \{", text, flags=re.MULTILINE))


def test_every_shell_function_member_is_defined_in_the_prelude_file() -> None:
    defined = _prelude_functions()
    assert {"check", "run", "fail", "app_is_healthy"} <= defined  # the parse finds them
    assert {*ShellCheck, *ShellHelper} <= defined, {*ShellCheck, *ShellHelper} - defined


def _every_runbook() -> list[list[Step]]:
    """The steps of every Streams strategy and of the plain consumer groups' runbook."""
    groups = GroupsFacts("b:9092", None, "orders", 3, 6, (GroupLag("billing", 2, 0),))
    return [*(steps(facts) for facts in _every_strategy()), groups_steps.steps(groups)]


def test_every_function_a_step_names_is_an_enum_member() -> None:
    checks: set[object] = set()
    helpers: set[object] = set()
    for runbook_steps in _every_runbook():
        for step in runbook_steps:
            checks |= {a.function for a in step.actions if isinstance(a, Check)}
            helpers |= {a.via for a in step.actions if isinstance(a, Run) and a.via}
    assert checks and helpers
    assert all(type(name) is ShellCheck for name in checks), checks  # not a plain string
    assert all(type(name) is ShellHelper for name in helpers), helpers
    assert checks == set(ShellCheck)  # and no member is left that no step uses


def test_the_prelude_file_is_shellcheck_clean_and_embedded_without_its_header(
    tmp_path: Path,
) -> None:
    p = subprocess.run([str(SHELLCHECK), str(PRELUDE)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout
    text = PRELUDE.read_text(encoding="utf-8")
    assert text.startswith("# shellcheck shell=bash\n")
    script = _script(tmp_path, _facts()).read_text()
    assert "shellcheck" not in script
    body = text[text.index("\n\n") + 1 :].rstrip("\n")  # from the empty line on
    assert f"\nRUNBOOK_ID='shop-counter orders 3->6 new-topic orders-p6'\n{body}\n" in script


# --- the restarted app's health, from migcheck app's JSON ----------------------------

#: migcheck app's JSON report as a healthy app gives it, trimmed to a few fields.
HEALTHY = {
    "application_id": "shop-counter",
    "protocol": "classic",
    "health": [],
    "changes": ["orders-p6"],
    "verdict": "SAFE",
}
#: The same app with a changelog left at the old count.
BROKEN = {
    **HEALTHY,
    "health": [
        {
            "level": "CRASH",
            "subtopology": None,
            "text": "Existing internal topic shop-counter-counts-changelog has invalid "
            "partitions: expected: 6; actual: 3.",
            "topics": ["shop-counter-counts-changelog"],
            "stores": [],
        }
    ],
}


def test_the_hand_written_reports_have_the_fields_of_the_real_one() -> None:
    assert set(HEALTHY) <= AppReport.__required_keys__
    assert set(BROKEN["health"][0]) == AppReason.__required_keys__  # type: ignore[index]


def _health_check(
    tmp_path: Path, report: str, code: int = 0, python3: str = "beside migcheck"
) -> subprocess.CompletedProcess[str]:
    """The generated script's app_is_healthy, with the step's own arguments, against a fake
    migcheck that prints ``report`` and exits ``code``; python3 only where ``python3`` says.

    Beside migcheck is as pipx installs it: PATH has a link to migcheck in an environment
    whose python3 is not on PATH."""
    tools, venv, on_path, other = (tmp_path / d for d in ("tools", "venv", "bin", "other"))
    for d in (tools, venv, on_path, other):
        d.mkdir(parents=True)
    for tool in ("dirname", "readlink"):  # what the function needs besides bash and python3
        (tools / tool).symlink_to(shutil.which(tool) or tool)
    where = {"beside migcheck": venv, "on PATH": other}.get(python3)
    if where is not None:
        (where / "python3").symlink_to(sys.executable)
    migcheck = venv / "migcheck"
    (on_path / "migcheck").symlink_to(migcheck)
    migcheck.write_text(
        "#!/bin/bash\n"
        f"printf '%s\\n' \"$@\" > {shlex.quote(str(tmp_path / 'args'))}\n"
        f"printf '%s' {shlex.quote(report)}\n"
        f"exit {code}\n"
    )
    migcheck.chmod(0o755)
    check = steps(_facts())[-1].actions[-1]
    assert isinstance(check, Check) and check.function == ShellCheck.APP_IS_HEALTHY
    sourced = 'args=("$@"); set --; source "$RUNBOOK" > /dev/null; app_is_healthy "${args[@]}"'
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", "-c", sourced, "bash", *check.args],
        capture_output=True,
        text=True,
        env={"PATH": f"{on_path}:{other}:{tools}", "RUNBOOK": str(_script(tmp_path, _facts()))},
    )


def test_the_health_check_accepts_a_healthy_json_report(tmp_path: Path) -> None:
    p = _health_check(tmp_path, json.dumps(HEALTHY, indent=2))
    assert p.returncode == 0, p.stderr
    assert p.stdout == "  migcheck app: healthy\n"
    args = (tmp_path / "args").read_text().split("\n")
    assert args[:1] == ["app"] and args[-3:] == ["--format", "json", ""]
    assert "--topic\norders-p6\n--to\n6\n" in "\n".join(args)


@pytest.mark.parametrize(
    ("report", "code", "error"),
    [
        (json.dumps(BROKEN), 0, "has invalid partitions: expected: 6; actual: 3."),
        (json.dumps(HEALTHY), 1, "migcheck app exits 1: its verdict is not SAFE"),
        ("", 2, "migcheck app failed (exit 2)"),
        # the text report, even its healthy sentence, is no JSON report
        ("Health today: every internal topic matches its sources.\n", 0, "not a migcheck app"),
        (json.dumps({**HEALTHY, "health": None}), 0, "not a migcheck app JSON report"),
        (json.dumps({"verdict": "SAFE"}), 0, "not a migcheck app JSON report (KeyError"),
    ],
    ids=["broken", "not-safe", "error", "text", "health-null", "no-health"],
)
def test_the_health_check_rejects_anything_but_a_healthy_report(
    tmp_path: Path, report: str, code: int, error: str
) -> None:
    p = _health_check(tmp_path, report, code)
    assert p.returncode == 1, p.stdout
    assert "migcheck app: healthy" not in p.stdout
    assert "FAILED: " in p.stderr and error in p.stderr, p.stderr


@pytest.mark.parametrize("python3", ["beside migcheck", "on PATH"])
def test_the_health_check_finds_python3_beside_migcheck_or_on_path(
    tmp_path: Path, python3: str
) -> None:
    healthy = _health_check(tmp_path / "healthy", json.dumps(HEALTHY), python3=python3)
    assert healthy.returncode == 0, healthy.stderr
    broken = _health_check(tmp_path / "broken", json.dumps(BROKEN), python3=python3)
    assert broken.returncode == 1 and "expected: 6; actual: 3" in broken.stderr


def test_the_health_check_fails_without_any_python3(tmp_path: Path) -> None:
    p = _health_check(tmp_path, json.dumps(HEALTHY), python3="nowhere")
    assert p.returncode == 1
    assert "no python3 beside migcheck or on PATH" in p.stderr, p.stderr
    assert not (tmp_path / "args").exists()  # it says so before asking migcheck


def test_markdown_shows_the_text_report_while_the_script_reads_json(tmp_path: Path) -> None:
    facts = _facts()
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    shown = next(ln for ln in md.splitlines() if ln.startswith("migcheck app "))
    assert shown.endswith("--topic orders-p6 --to 6")  # a person reads the text report
    sh = _script(tmp_path, facts).read_text()
    run = next(ln for ln in sh.splitlines() if ln.startswith("  check app_is_healthy "))
    assert run.endswith("--topic orders-p6 --to 6 --format json")
    assert "Health today" not in sh  # nothing depends on the text report's wording


# --- the command's result: data, which the CLI alone writes out -----------------------


def test_a_runbook_is_written_with_the_header_it_was_made_with() -> None:
    facts = _facts()
    header = {"migcheck_version": "9.9.9", "generated_at": "2026-01-02T03:04:05Z"}
    made = Runbook(facts, tuple(steps(facts)), header)  # type: ignore[arg-type]
    written = "Written by migcheck 9.9.9 on 2026-01-02T03:04:05Z from the cluster at "
    assert f"> {written}broker-1:9092,broker-2:9092.\n" in render_runbook_markdown(made)
    assert f"\n# {written}broker-1:9092,broker-2:9092.\n" in render_runbook_sh(made)
    assert runbook_lines(made) == []  # nothing to say on stderr: exit 0


def test_a_refused_in_place_change_says_why_in_each_format_and_on_stderr() -> None:
    refused = SplitRefusal("shop", "orders", 6, "CRASH", ("counts",), ("k1", "a*b"))
    assert render_runbook_markdown(refused).splitlines() == [
        "Refused: --strategy in-place for orders -&gt; 6 partitions under shop.",
        "migcheck app says CRASH. The store counts reads orders directly: after an in-place "
        "alter and a reset, each moved key's old records stay in its old partition while its "
        "new records go to the new one, so the reprocess splits its history over two tasks.",
        "2 keys of orders would split (below). Use --strategy new-topic (or auto), or pass "
        "--accept-split-history to write the in-place runbook anyway.",
        "",
        "k1",
        "a\\*b",
    ]
    script = render_runbook_sh(refused).splitlines()
    assert script[0] == "#!/usr/bin/env bash"
    assert script[1] == "# Refused: --strategy in-place for orders -> 6 partitions under shop."
    assert script[-4:] == ["# k1", "# a*b", "echo 'refused: see the comments' >&2", "exit 1"]
    assert runbook_lines(refused) == [
        "refused --strategy in-place: 2 keys of orders would split their history in counts "
        "(listed in the output); use --strategy new-topic or --accept-split-history"
    ]


def test_the_facts_hold_enums_and_refuse_a_word_that_is_none_of_them() -> None:
    facts = _facts(strategy="in-place", protocol="streams")  # a saved report's words
    assert facts.strategy is Strategy.IN_PLACE and facts.target == "orders"
    assert facts.protocol is Protocol.STREAMS and facts.verdict is AppLevel.CRASH
    empty = ShellCheck.GROUP_IS_EMPTY
    tools = {a.shown.argv[0] for s in steps(facts) for a in s.actions
             if isinstance(a, Check) and a.shown and a.function is empty}  # fmt: skip
    assert tools == {"kafka-streams-groups"}  # Kafka's tool for a streams group
    for bad in ({"strategy": "auto"}, {"strategy": "in place"}, {"protocol": "consumer"},
                {"verdict": "FINE"}):  # fmt: skip
        with pytest.raises(ValueError):
            _facts(**bad)


def test_online_checks_the_history_then_migrate_runs_the_shadow_and_moves_every_reader(
    tmp_path: Path,
) -> None:
    facts = _facts(strategy=Strategy.ONLINE, outputs=(), downstream=(), groups=())
    assert [s.title for s in steps(facts)] == ["Pre-checks", "Migrate online"]
    (check, _) = steps(facts)[0].actions
    assert isinstance(check, Check) and check.function is ShellCheck.HISTORY_INTACT
    (again, run) = steps(facts)[1].actions  # read again right before the shadow reprocesses
    assert again == check
    assert isinstance(run, Run) and run.via is ShellHelper.ANSWERING
    assert run.argv[:2] == ("migcheck", "migrate")
    # an app that writes nothing says so: migrate asks for its outputs otherwise
    assert (
        "--application-id shop-counter --output-topic  --partitioner auto --cutover-timeout 5 "
        "--checkpoint" in " ".join(run.argv)
    )
    assert "application.id=shop-counter-p6" in steps(facts)[1].why
    script = _script(tmp_path, facts)
    p = subprocess.run([str(SHELLCHECK), str(script)], capture_output=True)
    assert p.returncode == 0, p.stdout.decode()
    # the script passes that empty value on as a word of its own (dropped, --output-topic
    # took the next option as its value and migrate refused the rest)
    assert "--output-topic '' --partitioner auto" in script.read_text(encoding="utf-8")


def test_a_sets_online_step_migrates_every_topic_of_it_at_one_barrier() -> None:
    """Issue 71: an online runbook of a joined app's set is one migrate of both topics,
    each into its own TOPIC-pN (no --into), one shadow reading both."""
    facts = _joined(strategy=Strategy.ONLINE, outputs=(), downstream=(), groups=())
    (_, run) = steps(facts)[1].actions
    assert isinstance(run, Run)
    argv = " ".join(run.argv)
    assert "admin.properties --topic orders --topic customers --to 6 --application-id " \
        "shop-counter" in argv  # fmt: skip
    assert "--into" not in argv
    assert "copies orders and customers and follows it" in steps(facts)[1].why


def test_several_apps_move_at_one_migrate_each_by_its_topology(tmp_path: Path) -> None:
    """Issue 71: an online runbook of two apps of the topic is one migrate naming both,
    each with --topology ID=FILE (migrate takes no --output-topic with several), the
    header and title naming both; the script stays shellcheck clean."""
    facts = _facts(
        strategy=Strategy.ONLINE, outputs=("totals",), downstream=(), groups=("billing",),
        topology_file="/t/shop.txt", peers=(PeerApp("fraud", "/t/fraud.txt", ("alerts",)),),
    )  # fmt: skip
    titles = [s.title for s in steps(facts)]
    assert titles == ["Pre-checks", "Migrate online"]
    (_, run) = steps(facts)[1].actions
    assert isinstance(run, Run)
    argv = " ".join(run.argv)
    assert (
        "--to 6 --application-id shop-counter --topology shop-counter=/t/shop.txt "
        "--application-id fraud --topology fraud=/t/fraud.txt --group billing" in argv
    )
    assert "--output-topic" not in argv
    assert "for totals, alerts" in steps(facts)[1].why
    assert "a shadow of each other app (fraud)" in steps(facts)[1].why
    script = _script(tmp_path, facts)
    text = script.read_text(encoding="utf-8")
    assert "shop-counter and the apps fraud (one barrier moves them all)" in text
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    assert "orders to 6 partitions under shop-counter and fraud" in md.splitlines()[0]
    p = subprocess.run([str(SHELLCHECK), str(script)], capture_output=True)
    assert p.returncode == 0, p.stdout.decode()


def test_several_apps_offline_stop_each_change_the_topics_once_and_restart_each(
    tmp_path: Path,
) -> None:
    """Issue 71: two apps of the same topics offline, one procedure: each stops, the topic
    is copied and its producers switched once, each app is reset, wiped and restarted on
    the copy, in the order the apps were given; the pre-checks they share are written
    once, and the header names both apps with each one's verdict."""
    from migcheck.runbook.together import side_by_side

    shop, fraud = _facts(), _facts(app_id="fraud", verdict=AppLevel.SAFE)
    change = steps(shop)[2]
    composed = side_by_side([("shop-counter", steps(shop)), ("fraud", steps(fraud))], [change])
    assert [s.title for s in composed] == [
        "Pre-checks",
        "Stop the application (shop-counter)",
        "Stop the application (fraud)",
        "Create orders-p6 and copy the history into it",
        "Reset the application (shop-counter)",
        "Reset the application (fraud)",
        "Wipe the local state (shop-counter)",
        "Wipe the local state (fraud)",
        "Restart the application on orders-p6 (shop-counter)",
        "Restart the application on orders-p6 (fraud)",
    ]
    facts = replace(shop, peers=(PeerApp("fraud", verdict=AppLevel.SAFE),))
    script = tmp_path / "runbook.sh"
    script.write_text(render_sh(facts, composed, "0.1.0", "2026-12-07T00:00:00+00:00"))
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert sum("migcheck copy" in ln for ln in lines) == 2  # before the switch and after
    resets = [ln for ln in lines if "--dry-run" in ln]
    assert [r.split("--application-id ")[1].split()[0] for r in resets] == ["shop-counter", "fraud"]
    assert "Stop every instance of the application fraud." in p.stdout
    md = render_markdown(facts, composed, "0.1.0", "today")
    assert "orders to 6 partitions under shop-counter and fraud" in md.splitlines()[0]
    assert "shop-counter and the apps fraud (each stops, the topics change once, each " \
        "restarts)" in md  # fmt: skip
    assert f"verdicts for the in-place change: shop-counter: {shop.verdict}, fraud: SAFE." in md
    assert subprocess.run([str(SHELLCHECK), str(script)], capture_output=True).returncode == 0


def test_several_apps_change_every_topic_once_though_each_reads_a_part() -> None:
    """The join app reads orders and customers, fraud reads orders alone: fraud's own
    steps name only orders, and the change, written for the whole set, alters both once.
    Procedures of unlike shapes (a moved state beside a reprocess) are not laid together:
    the command refuses them before."""
    from migcheck.runbook.together import side_by_side

    shop = _joined(strategy=Strategy.IN_PLACE)
    fraud = _facts(app_id="fraud", strategy=Strategy.IN_PLACE)
    change = steps(shop)[2]
    composed = side_by_side([("shop-counter", steps(shop)), ("fraud", steps(fraud))], [change])
    alters = [s for s in composed if s.title.startswith("Alter")]
    assert [s.title for s in alters] == ["Alter orders and customers to 6 partitions in place"]
    assert len(alters[0].actions) == 2
    assert [s.title for s in composed if s.title.startswith("Restart")] == [
        "Restart the application on orders and customers (shop-counter)",
        "Restart the application on orders (fraud)",
    ]
    with pytest.raises(ValueError, match="alike"):
        side_by_side([("shop-counter", steps(shop)), ("fraud", steps(moved_facts()))], [change])


@pytest.mark.parametrize(
    ("fraud", "topics", "line"),
    [
        (_facts(app_id="fraud", strategy=Strategy.IN_PLACE), ("orders",),
         "refused: the apps take different routes (shop-counter: new-topic, fraud: "
         "in-place), and their topics change once for all of them: pass one --strategy for "
         "every app (new-topic copies for each)"),
        (_facts(app_id="fraud", kind=ReaderKind.QUIX_STREAMS), ("orders",),
         "runbook: several apps move together offline when they are all Kafka Streams apps "
         "(shop-counter: a Kafka Streams application, fraud: a Quix Streams application): "
         "pass --strategy online, or write one app's runbook with --leave-group for the "
         "others"),
        (_facts(app_id="fraud", protocol="streams"), ("orders",),
         "runbook: several apps move together offline on one group protocol (shop-counter: "
         "classic, fraud: streams): pass --strategy online"),
        (_facts(app_id="fraud"), ("orders", "customers"),
         "runbook: none of the apps shop-counter and fraud reads customers: drop its "
         "--topic, or name the app that reads it"),
    ],
)  # fmt: skip
def test_several_apps_that_cannot_share_one_offline_procedure_are_refused_in_one_line(
    fraud: RunbookFacts, topics: tuple[str, ...], line: str
) -> None:
    """Issue 71: apps laid side by side must share a framework that writes a set's
    runbook, a group protocol (the script's group tool) and a route; every topic of the
    change must be some app's.  Each refusal says what to do instead."""
    from migcheck.commands.runbook import RunbookOptions, _offline_apps
    from migcheck.errors import Refused, UsageError

    shop = _facts()
    options = RunbookOptions(app_id="shop-counter", topic=topics[0], also=topics[1:], to=6)
    with pytest.raises((Refused, UsageError)) as e:
        _offline_apps(options, [(shop, tuple(steps(shop))), (fraud, tuple(steps(fraud)))])
    assert str(e.value) == line


def test_several_apps_state_moves_in_one_offline_runbook_each_at_its_own_barrier() -> None:
    """Issue 71: two apps' state moved in place in one procedure: each drains, stops and
    records its barrier in its own file, each one's changelogs move, the topic is altered
    once and its producers resume, then each app's new id is committed at its own barrier
    and restarts.  Onto a copy (--into), the copy and the switch are written once, each
    app's barrier and copy's ends in files of its own."""
    from migcheck.commands.runbook import RunbookOptions, _offline_apps

    shop = moved_facts(barrier_file="barrier-shop-counter.csv")
    fraud = moved_facts(app_id="fraud", moved_app_id="fraud-p6", barrier_file="barrier-fraud.csv")
    options = RunbookOptions(app_id="shop-counter", topic="orders", to=6)
    book = _offline_apps(options, [(shop, tuple(steps(shop))), (fraud, tuple(steps(fraud)))])
    titles = [s.title for s in book.steps]
    assert [t for t in titles if t.startswith("Alter")] == ["Alter orders to 6 partitions in place"]
    assert titles.index("Alter orders to 6 partitions in place") > titles.index(
        "Move the state into fraud-p6's changelogs (fraud)"
    )
    checks = [a for s in book.steps for a in s.actions if isinstance(a, Check)]
    recorded = [c.args[:2] for c in checks if c.function == "record_barrier"]
    assert recorded == [
        ("shop-counter", "barrier-shop-counter.csv"),
        ("fraud", "barrier-fraud.csv"),
    ]
    committed = [c.args[:2] for c in checks if c.function == "commit_barrier"]
    assert committed == [
        ("shop-counter-p6", "barrier-shop-counter.csv"), ("fraud-p6", "barrier-fraud.csv")
    ]  # fmt: skip
    # onto a copy: the topic copied and its producers switched once, each app's barrier
    # and the copy's ends recorded in files of its own
    copied = [
        replace(f, onto_copy=True, copy_barrier_file=f"copy-{f.barrier_file}")
        for f in (shop, fraud)
    ]
    book = _offline_apps(options, [(f, tuple(steps(f))) for f in copied])
    titles = [s.title for s in book.steps]
    assert titles.count("Create orders-p6 and copy the history of orders into it") == 1
    assert titles.count("Switch the producers to orders-p6") == 1
    checks = [a for s in book.steps for a in s.actions if isinstance(a, Check)]
    assert [c.args[0] for c in checks if c.function == "record_copy_barrier"] == [
        "barrier-shop-counter.csv", "barrier-fraud.csv"
    ]  # fmt: skip
    assert [c.args[:2] for c in checks if c.function == "commit_barrier"] == [
        ("shop-counter-p6", "copy-barrier-shop-counter.csv"), ("fraud-p6", "copy-barrier-fraud.csv")
    ]  # fmt: skip


def test_plain_groups_move_to_the_copies_at_a_quiet_point_offline(tmp_path: Path) -> None:
    """Issue 71: a new-topic runbook with --group: the producers pause, each group drains
    on the topics it reads, the catch-up copy then holds every record, each group is
    stopped and committed at its copy's end, and only then do the producers switch; each
    group starts on its copies after that.  The script is shellcheck clean."""
    facts = _joined(
        groups=("billing", "audit"),
        group_reads=(("billing", "orders"), ("audit", "orders"), ("audit", "customers")),
    )
    change = steps(facts)[2]
    said = [a.text if isinstance(a, Manual) else getattr(a, "function", "copy") for a in
            change.actions]  # fmt: skip
    assert said == [
        "ensure_topic", "ensure_topic", "copy", "copy",
        "Pause every producer of orders and customers, and keep them paused until they switch.",
        "copy", "copy", "wait_lag_zero", "wait_lag_zero",
        "Stop every consumer of group billing and group audit.",
        "group_is_empty", "group_is_empty", "commit_at_end", "commit_at_end", "commit_at_end",
        "Switch every producer of orders to orders-p6 and customers to customers-p6, and "
        "resume them.",
        "Start the consumers of group billing on orders-p6 (instead of orders): they read on "
        "from where they stopped.",
        "Start the consumers of group audit on orders-p6 (instead of orders) and customers-p6 "
        "(instead of customers): they read on from where they stopped.",
    ]  # fmt: skip
    drains = [a for a in change.actions if isinstance(a, Check) and a.function == "wait_lag_zero"]
    assert [d.args[1:] for d in drains] == [("orders", "billing", "audit"), ("customers", "audit")]
    ends = [
        a.args for a in change.actions if isinstance(a, Check) and a.function == "commit_at_end"
    ]
    assert ends == [("billing", "orders-p6", "6"), ("audit", "orders-p6", "6"),
                    ("audit", "customers-p6", "6")]  # fmt: skip
    script = _script(tmp_path, facts)
    assert "The plain groups billing and audit move to orders-p6 and customers-p6" in (
        script.read_text(encoding="utf-8")
    )
    assert subprocess.run([str(SHELLCHECK), str(script)], capture_output=True).returncode == 0


@pytest.mark.parametrize(
    ("protocol", "reads", "line"),
    [
        (Protocol.STREAMS, (("billing", "orders"),),
         "--group moves offline with an app of the classic protocol: pass --strategy online "
         "for a streams-protocol app"),
        (Protocol.CLASSIC, (), "--group billing reads none of orders"),
    ],
)  # fmt: skip
def test_plain_groups_offline_are_refused_where_they_cannot_move_in_one_line(
    protocol: Protocol, reads: tuple[tuple[str, str], ...], line: str
) -> None:
    from migcheck.commands.runbook import RunbookOptions, _check_groups
    from migcheck.errors import UsageError

    options = RunbookOptions(app_id="shop", topic="orders", to=6, groups=("billing",))
    with pytest.raises(UsageError) as e:
        _check_groups(options, protocol, reads)
    assert str(e.value) == line
    _check_groups(options, Protocol.CLASSIC, (("billing", "orders"),))  # every route takes it


def test_plain_groups_keep_each_key_in_order_through_a_moved_states_alter() -> None:
    """A moved state's alter (the producers paused since the app drained) keeps each
    plain group in order as an alter in place does, and ends with the resume of every
    source's producers."""
    facts = moved_facts(groups=("billing",), group_reads=(("billing", "orders"),))
    (change,) = [s for s in steps(facts) if s.title.startswith("Alter")]
    said = [a.text[:26] if isinstance(a, Manual) else a.function for a in change.actions]
    assert said == [
        "Pause every producer of or", "wait_lag_zero", "ensure_partitions",
        "topic_partitions", "wait_assigned", "ensure_offsets", "Resume the producers of or",
    ]  # fmt: skip


def test_plain_groups_keep_each_key_in_order_through_an_alter_in_place(tmp_path: Path) -> None:
    """Issue 71: an in-place runbook with --group alters as the groups' own runbook does:
    the producers pause, each group drains on the topics it reads, the topics are altered,
    each group with members owns the new partitions and every group holds an offset on
    each, and only then do the producers resume; the script is shellcheck clean."""
    facts = _joined(
        strategy=Strategy.IN_PLACE,
        groups=("billing",),
        group_reads=(("billing", "orders"), ("billing", "customers")),
        assign_timeout=99,
    )
    change = steps(facts)[2]
    said = [a.text[:20] if isinstance(a, Manual) else a.function for a in change.actions]
    assert said == [
        "Pause every producer", "wait_lag_zero", "wait_lag_zero", "ensure_partitions",
        "ensure_partitions", "topic_partitions", "wait_assigned", "topic_partitions",
        "wait_assigned", "ensure_offsets", "ensure_offsets", "Resume every produce",
    ]  # fmt: skip
    held = [a.args for a in change.actions if isinstance(a, Check) and a.function ==
            "ensure_offsets"]  # fmt: skip
    assert held == [("60", "orders", "3", "6", "required", "billing"),
                    ("60", "customers", "3", "6", "required", "billing")]  # fmt: skip
    assigned = [a.args for a in change.actions if isinstance(a, Check) and a.function ==
                "wait_assigned"]  # fmt: skip
    assert assigned[0] == ("99", "orders", "6", "billing")
    script = _script(tmp_path, facts)
    assert "The plain groups billing keep each key in order through the alter." in (
        script.read_text(encoding="utf-8")
    )
    assert subprocess.run([str(SHELLCHECK), str(script)], capture_output=True).returncode == 0


def test_a_topic_several_apps_read_is_scanned_for_its_partitioner_once() -> None:
    """Several apps' runbooks share the partitioners detected so far: a topic found
    before is not scanned again (no Spark, no cluster here), and sides placed apart are
    still refused."""
    from migcheck.commands.runbook import RunbookOptions, _refuse_apart
    from migcheck.errors import Refused

    options = RunbookOptions(app_id="shop", topic="orders", to=6, also=("customers",))
    alike = replace(options, detected={"orders": "murmur2", "customers": "murmur2"})
    _refuse_apart(alike, None, None, ["orders", "customers"])  # type: ignore[arg-type]
    apart = replace(options, detected={"orders": "murmur2", "customers": "consistent_random"})
    with pytest.raises(Refused, match="place keys by different partitioners"):
        _refuse_apart(apart, None, None, ["orders", "customers"])  # type: ignore[arg-type]


def test_plain_groups_move_onto_a_moved_states_copies_at_its_barrier() -> None:
    """Onto copies (--into), the producers are paused since the app drained: once the
    copies are whole, each plain group drains, stops and is committed at its copy's end;
    it starts there after the switch."""
    facts = moved_facts(onto_copy=True, groups=("billing",), group_reads=(("billing",
                        "orders"),))  # fmt: skip
    titles = [s.title for s in steps(facts)]
    copied = steps(facts)[titles.index("Create orders-p6 and copy the history of orders into it")]
    said = [a.text[:24] if isinstance(a, Manual) else getattr(a, "function", "copy")
            for a in copied.actions]  # fmt: skip
    assert said == ["ensure_topic", "copy", "wait_lag_zero", "Stop every consumer of g",
                    "group_is_empty", "commit_at_end"]  # fmt: skip
    switched = steps(facts)[titles.index("Switch the producers to orders-p6")]
    assert [a.text[:28] for a in switched.actions if isinstance(a, Manual)] == [
        "Switch every producer of ord", "Start the consumers of group"
    ]  # fmt: skip


def test_an_unnamed_tables_changelog_takes_the_copys_name_on_a_new_topic() -> None:
    """``builder.table(customers)`` names its store ``customers-STATE-STORE-0000000000``:
    restarted on customers-p6, the app's changelog is named after the copy (the name the
    real join-rekey app created, tests/integration/test_app_joins.py)."""
    from migcheck.frameworks.kafka_streams import streams_renamed

    renames = {"orders": "orders-p6", "customers": "customers-p6"}
    old = "shop-customers-STATE-STORE-0000000000-changelog"
    assert streams_renamed("shop", old, renames) == (
        "shop-customers-p6-STATE-STORE-0000000000-changelog"
    )
    for kept in ("shop-counts-changelog", "shop-rekey-group-repartition"):
        assert streams_renamed("shop", kept, renames) == kept


def test_a_moved_unnamed_tables_state_goes_where_the_app_restarted_on_a_copy_restores() -> None:
    """``move-state --into`` and ``migrate``'s moved shadow restart the app under a new id on
    a copy: an unnamed table's store takes the copy's name there, so its moved changelog
    must too, or the app would restore nothing (the names the real join-rekey app created,
    tests/integration/test_app_joins.py); a named store's changelog keeps its name, and a
    framework that names nothing after a topic renames nothing."""
    from migcheck.commands.runbook import restarted_name
    from migcheck.frameworks.faust import FAUST
    from migcheck.frameworks.kafka_streams import KAFKA_STREAMS

    reads = {"customers": "customers-p6"}
    table = "shop-p6-customers-STATE-STORE-0000000000-changelog"
    assert restarted_name(KAFKA_STREAMS, "shop-p6", table, reads) == (
        "shop-p6-customers-p6-STATE-STORE-0000000000-changelog"
    )
    assert restarted_name(KAFKA_STREAMS, "shop-p6", table, {}) == table
    named = "shop-p6-counts-changelog"
    assert restarted_name(KAFKA_STREAMS, "shop-p6", named, reads) == named
    faust_table = "shop-customers-changelog"
    assert restarted_name(FAUST, "shop", faust_table, reads) == faust_table


#: A topic name that breaks out of a single-quoted word and runs commands, if unescaped.
_HOSTILE = "cust'$(touch pwned)`id`;touch pwned2"


def _runs_nothing_of_it(tmp_path: Path, sh: str) -> None:
    """The script ``sh``, dry run and executed against a Kafka tool that fails, runs
    nothing of a hostile name: no ``pwned`` file appears."""
    tool = tmp_path / "kafka-tool"
    tool.write_text("#!/bin/bash\nexit 3\n")
    tool.chmod(0o755)
    script = tmp_path / "runbook.sh"
    script.write_text(sh, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_KAFKA_TOOL": str(tool),
           "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}  # fmt: skip
    for args in ([], ["--execute", "--yes"]):
        subprocess.run(["bash", str(script), *args], cwd=tmp_path, capture_output=True,
                       timeout=60, env=env, check=False)  # fmt: skip
    assert not list(tmp_path.glob("pwned*"))


@pytest.mark.parametrize("route", [Strategy.NEW_TOPIC, Strategy.MOVE_STATE])
def test_a_hostile_topic_of_a_set_is_data_in_the_script_and_the_ticket(
    tmp_path: Path, route: Strategy
) -> None:
    """Issue 71: the set's other topic (and its copy, named after it) comes from the
    cluster: each sh line holds it only escaped, or in a comment; the Markdown escapes its
    backticks outside the sh fences; and the script, dry run and executed against a tool
    that fails, runs nothing of it."""
    side = Widened(_HOSTILE, 3, f"{_HOSTILE}-p6")
    base = moved_facts(sources=("orders", _HOSTILE)) if route is Strategy.MOVE_STATE else _facts()
    facts = replace(base, also=(side,), command_config=None)
    sh = render_sh(facts, steps(facts), "0", "now")
    named = [line.strip() for line in sh.splitlines() if "pwned" in line]
    assert named  # the name reaches the script
    assert all(line.startswith("#") or _HOSTILE not in line for line in named)
    md = render_markdown(facts, steps(facts), "0", "now")
    assert all("`" not in part.replace("\\`", "") for part in md.split("```")[::2])
    _runs_nothing_of_it(tmp_path, sh)


def test_a_hostile_plain_group_is_data_in_the_script_and_one_read_as_an_option_is_refused(
    tmp_path: Path,
) -> None:
    """A --group id reaches the script only escaped (each route's steps name it), and the
    script, dry run and executed against a tool that fails, runs nothing of it; an id
    with a hidden character, which Kafka's tools would print raw in the tables the checks
    read, is refused in one line, as the groups' own runbook refuses it."""
    for facts in (
        _facts(group_reads=((_HOSTILE, "orders"),), command_config=None),
        _facts(strategy=Strategy.IN_PLACE, group_reads=((_HOSTILE, "orders"),)),
    ):
        sh = render_sh(facts, steps(facts), "0", "now")
        named = [line.strip() for line in sh.splitlines() if "pwned" in line]
        assert named  # the name reaches the script
        assert all(line.startswith("#") or _HOSTILE not in line for line in named)
        _runs_nothing_of_it(tmp_path, sh)
    with pytest.raises(UsageError, match=r"refused: the group id .* it holds control"):
        steps(_facts(group_reads=(("audit\x1b[2J", "orders"),)))


def test_every_other_reader_of_the_topic_is_named_with_what_the_runbook_would_do_to_it() -> None:
    """Issue 71: an app's offline runbook moves that app alone; each other reader of the
    topic is refused in one line naming it and its kind: stranded on a topic whose
    producers switch to a copy, or unprepared for an alter in place."""
    from migcheck.commands.runbook import others_refusal
    from migcheck.kafka.groups import GroupInfo
    from migcheck.model.readers import Evidence, ReaderKind
    from migcheck.readers.discovery import Found

    billing = Found(GroupInfo("billing", "classic", "Stable"),
                    Evidence(ReaderKind.CONSUMER_GROUP, ()))  # fmt: skip
    audit = Found(GroupInfo("audit", "streams", "Empty"), Evidence(ReaderKind.KAFKA_STREAMS, ()))
    copied = others_refusal("shop", "orders", [billing, audit], "orders-p6")
    assert copied == (
        "refused: orders is also read by billing (a plain consumer group) and audit (a Kafka "
        "Streams "
        "application): this runbook moves shop alone, and once its producers switch to "
        "orders-p6 they read no new record; pass --group for each plain group (it moves "
        "with the app), --application-id for each app of the topic, or --leave-group for "
        "each reader left as it is on purpose"
    )
    altered = others_refusal("shop", "orders", [billing], None)
    assert altered.startswith(
        "refused: orders is also read by billing (a plain consumer group): this runbook moves shop "
        "alone, and the alter reaches them unprepared (a moved key's records on two "
        "partitions, a new partition read from latest missing its first records); pass "
        "--group for each plain group (it moves with the app), --application-id"
    )
