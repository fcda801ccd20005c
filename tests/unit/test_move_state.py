"""``runbook --strategy move-state`` (issue 70's first slice): the state moved, not
rebuilt.  The procedure's steps and their order, the commands they run, the script's
barrier (its offsets file, read back after the commit), each refusal's line, and what
``--strategy auto`` picks; every expected value written by hand.

The canned tool output is what Kafka 4.3's tools print: ``kafka-get-offsets`` one
``topic:partition:offset`` line per partition, ``kafka-consumer-groups --describe
--offsets`` a table whose rows start with the group id (checked against the real tools in
tests/integration/test_runbook_move_state.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from runbookfacts import moved_facts
from scriptcall import call_function
from streamsmodel import app_facts

from migcheck.apps.build import from_topology, inferred
from migcheck.apps.discovery import Discovery
from migcheck.apps.movable import MIGRATE_MOVE, PlacedElsewhere, placed_elsewhere, unmovable
from migcheck.apps.strategy import Sizes, choose
from migcheck.commands.groups_runbook import GroupsRunbookOptions, run_groups_runbook
from migcheck.errors import Refused, UsageError
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.registry import FRAMEWORKS, runbook_steps
from migcheck.frameworks.topology import parse_topology
from migcheck.kafka.metadata import PartitionMeta, TopicMeta
from migcheck.model.history import Trimmed, lost_history_refusal
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import (
    Check,
    Manual,
    Run,
    RunbookFacts,
    ShellCheck,
    ShellHelper,
    StateMove,
    Step,
    StepRole,
    Strategy,
    Widened,
)
from migcheck.report.runbook import render_markdown, render_sh

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"
TRIMMED = (Trimmed("orders", ((0, 40), (2, 7))),)


def test_the_state_is_moved_before_the_alter_and_the_app_restarts_under_the_new_id() -> None:
    steps = runbook_steps(moved_facts())
    assert [s.title for s in steps] == [
        "Pre-checks",
        "Pause the producers and let the application drain",
        "Stop the application",
        "Record the barrier",
        "Move the state into shop-counter-p6's changelogs",
        "Alter orders to 6 partitions in place",
        "Commit shop-counter-p6's offsets at the barrier",
        "Wipe the local state",
        "Restart the application on orders",
    ]
    # nothing is reprocessed: no step rebuilds the state, so no history check
    assert all(s.role is not StepRole.REPROCESS for s in steps)
    checks = [a.function for s in steps for a in s.actions if isinstance(a, Check)]
    assert ShellCheck.HISTORY_INTACT not in checks
    assert checks == [
        ShellCheck.RECORD_OFFSETS,  # the pre-checks: orders' ends
        ShellCheck.WAIT_LAG_ZERO,  # the drain
        ShellCheck.GROUP_IS_EMPTY,
        ShellCheck.RECORD_BARRIER,
        ShellCheck.RECORD_OFFSETS,  # the changelog's ends
        ShellCheck.ENSURE_TOPIC,
        ShellCheck.ENSURE_PARTITIONS,  # the alter
        ShellCheck.COMMIT_BARRIER,
        ShellCheck.WAIT_INTERNAL_TOPICS,
        ShellCheck.WAIT_LAG_ZERO,
        ShellCheck.APP_IS_HEALTHY,
    ]
    manual = [a.text for s in steps for a in s.actions if isinstance(a, Manual)]
    assert manual[0].startswith("Pause every producer of orders, and keep them paused until")
    assert manual[2].startswith("Resume the producers of orders: restart them")
    assert manual[-1] == (
        "Start the application with application.id=shop-counter-p6 in place of shop-counter "
        "(the same code and configs otherwise), reading orders."
    )
    # the old app's state directory is kept: only the new id's is emptied
    wipes = [a.argv for s in steps for a in s.actions if isinstance(a, Run) and a.argv[0] == "rm"]
    assert wipes == [("rm", "-rf", "--", "/var/lib/kafka-streams/shop-counter-p6")]


def test_a_sets_state_moves_at_one_stop_and_every_side_is_altered_and_committed() -> None:
    """Issue 71: both sides of a join (orders, and customers of 2 partitions) in one move:
    one drain of every source, one stop, one barrier of both, each store's changelog moved,
    both altered, the new id committed at the barrier with each side's new partitions from
    0, and one restart reading both."""
    table = StateMove(
        "customers-STATE-STORE-0000000000",
        "shop-counter-customers-STATE-STORE-0000000000-changelog",
        "shop-counter-p6-customers-STATE-STORE-0000000000-changelog",
        6,
        {"cleanup.policy": "compact"},
        300,
    )
    facts = moved_facts(
        sources=("orders", "customers"), also=(Widened("customers", 2, "customers-p6"),)
    )
    facts = replace(facts, moves=(*facts.moves, table))
    steps = runbook_steps(facts)
    titles = [s.title for s in steps]
    assert titles.count("Stop the application") == 1
    assert "Alter orders and customers to 6 partitions in place" in titles
    assert titles[-1] == "Restart the application on orders and customers"
    checks = [a for s in steps for a in s.actions if isinstance(a, Check)]
    (barrier,) = [c for c in checks if c.function is ShellCheck.RECORD_BARRIER]
    assert barrier.args == ("shop-counter", "barrier.csv", "orders", "customers")
    drained = [c.args[1] for c in checks if c.function is ShellCheck.WAIT_LAG_ZERO][:2]
    assert drained == ["orders", "customers"]
    altered = [c.args for c in checks if c.function is ShellCheck.ENSURE_PARTITIONS]
    assert [a[-2:] for a in altered] == [("orders", "6"), ("customers", "6")]
    (commit,) = [c for c in checks if c.function is ShellCheck.COMMIT_BARRIER]
    assert commit.args == ("shop-counter-p6", "barrier.csv", "6", "orders", "customers")
    assert commit.text.endswith("0 on partitions 3-5 of orders and partitions 2-5 of customers")
    copies = [a.argv for s in steps for a in s.actions if isinstance(a, Run) and "copy" in a.argv]
    assert [c[c.index("--topic") + 1] for c in copies] == [
        "shop-counter-counts-changelog",
        "shop-counter-customers-STATE-STORE-0000000000-changelog",
    ]
    manual = [a.text for s in steps for a in s.actions if isinstance(a, Manual)]
    assert manual[0].startswith("Pause every producer of orders, customers, and keep them")
    assert manual[-1].endswith(
        "(the same code and configs otherwise), reading orders and customers."
    )
    assert all(s.role is not StepRole.REPROCESS for s in steps)


def _actions(step_title: str) -> list:
    (step,) = [s for s in runbook_steps(moved_facts()) if s.title == step_title]
    return list(step.actions)


def test_the_move_creates_the_changelog_like_the_old_one_and_copies_it_with_a_checkpoint() -> None:
    create, copy = _actions("Move the state into shop-counter-p6's changelogs")
    assert isinstance(create, Check) and create.args == (
        "shop-counter-p6-counts-changelog", "6", "shop-counter-counts-changelog",
        "cleanup.policy=compact",
    )  # fmt: skip
    assert isinstance(copy, Run) and copy.argv == (
        "migcheck", "copy", "--bootstrap-server", "broker-1:9092,broker-2:9092",
        "--command-config", "/etc/kafka/client admin.properties",
        "--topic", "shop-counter-counts-changelog", "--into", "shop-counter-p6-counts-changelog",
        "--latest-per-key", "--checkpoint", "@shop-counter-p6-counts-changelog.checkpoint",
    )  # fmt: skip
    assert copy.via is ShellHelper.MOVING  # a refusal stops the script in one FAILED line


def test_the_barrier_is_recorded_and_committed_for_the_new_id_with_kafkas_offsets_tool() -> None:
    barrier, changelog_ends = _actions("Record the barrier")
    assert isinstance(barrier, Check)
    assert barrier.args == ("shop-counter", "barrier.csv", "orders")
    assert isinstance(changelog_ends, Check) and changelog_ends.args == (
        "shop-counter-counts-changelog",
        "shop-counter-counts-changelog.end-offsets",
    )
    (commit,) = _actions("Commit shop-counter-p6's offsets at the barrier")
    assert isinstance(commit, Check)
    assert commit.args == ("shop-counter-p6", "barrier.csv", "6", "orders")
    assert commit.shown is not None and commit.shown.argv[0] == "kafka-consumer-groups"
    assert commit.shown.argv[-6:] == (
        "--reset-offsets", "--group", "shop-counter-p6", "--from-file", "@barrier.csv.commit",
        "--execute",
    )  # fmt: skip
    restart = _actions("Restart the application on orders")
    assert restart[2].args == ("300", "orders", "shop-counter-p6")  # the new group's lag


def test_the_header_says_the_state_moves_with_both_sizes_and_the_way_back() -> None:
    facts = moved_facts()
    header = render_markdown(facts, runbook_steps(facts), "0", "now").splitlines()[4]
    assert header == (
        "> The state is moved, not rebuilt: each store's changelog (stores: counts; at most "
        "1200 records) is copied into shop-counter-p6's at the new count, where a reprocess "
        "would read the sources' whole history again (5000 records, of which retention "
        "deleted up to 4000); nothing is reprocessed. The app restarts as "
        "application.id=shop-counter-p6. Nothing of shop-counter is deleted: its changelogs, "
        "its group and its offsets stay as the way back."
    )


# --- the script's barrier, against canned tool output -------------------------------

_FAKE_TOOL = r"""#!/bin/bash
tool=$1; shift
printf '%s\n' "$tool $*" >> "$FAKE/calls"
group=$(sed -n 's/.*--group \([^ ]*\).*/\1/p' <<< "$*")
case "$tool $*" in
  kafka-get-offsets*"--time -1"*) cat "$FAKE/ends" ;;
  kafka-get-offsets*"--time -2"*) cat "$FAKE/starts" ;;
  kafka-consumer-groups*--describe*--offsets*) cat "$FAKE/offsets-$group" 2> /dev/null || true ;;
  kafka-consumer-groups*--describe*--members*) cat "$FAKE/members" 2> /dev/null || true ;;
  kafka-streams-groups*--describe*--offsets*) cat "$FAKE/streams-$group" 2> /dev/null || true ;;
  kafka-streams-groups*--reset-offsets*--dry-run*)
    cat "$FAKE/current-$group" 2> /dev/null || exit 1 ;;
  kafka-streams-groups*--describe*--members*) cat "$FAKE/members" 2> /dev/null || true ;;
  kafka-consumer-groups*--reset-offsets*)
    file=$(sed 's/.*--from-file \([^ ]*\).*/\1/' <<< "$*")
    cp "$file" "$FAKE/reset-with"
    [ ! -f "$FAKE/reset-wrong" ] || file=$FAKE/reset-wrong
    awk -F, '{ print "shop-counter-p6 " $1 " " $2 " " $3 " " $3 " 0 - - -" }' "$file" \
      > "$FAKE/offsets-shop-counter-p6"
    echo "GROUP TOPIC PARTITION NEW-OFFSET" ;;
  *) exit 3 ;;
esac
"""

OFFSETS_HEADER = (
    "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG"
    "             CONSUMER-ID     HOST            CLIENT-ID\n"
)


def _barrier(
    tmp_path: Path, function: str, *args: str, protocol: Protocol = Protocol.CLASSIC, **canned: str
):
    """Runs one of the script's functions (``record_barrier``, ``commit_barrier``) of an
    app on ``protocol`` with Kafka's tools answering ``canned`` (file name to output)."""
    fake = tmp_path / "fake"
    fake.mkdir(exist_ok=True)
    for name, text in canned.items():
        (fake / name.replace("_", "-")).write_text(text)
    tool = tmp_path / "kafka-tool"
    tool.write_text(_FAKE_TOOL)
    tool.chmod(0o755)
    script = tmp_path / "runbook.sh"
    facts = moved_facts(command_config=None, protocol=protocol)
    script.write_text(render_sh(facts, runbook_steps(facts), "0", "now"), encoding="utf-8")
    (tmp_path / "work").mkdir(exist_ok=True)
    return call_function(script, tool, fake, tmp_path / "work", function, *args)


def _record_barrier(tmp_path: Path, *rows: tuple[int, int, int]):
    """record_barrier on orders (ends 40, 0, 9; log starts 40, 0, 7), the stopped app's
    committed offsets listed as (partition, committed, end) rows."""
    offsets = OFFSETS_HEADER + "".join(
        f"shop-counter    orders          {p}          {at}              {end}              "
        f"{end - at}    - - -\n"
        for p, at, end in rows
    )
    return _barrier(
        tmp_path, "record_barrier", "shop-counter", "barrier.csv", "orders",
        ends="orders:0:40\norders:1:0\norders:2:9\n",
        starts="orders:0:40\norders:1:0\norders:2:7\n",
        offsets_shop_counter=offsets,
    )  # fmt: skip


def test_the_barrier_is_every_partitions_end_where_the_stopped_app_committed_it(
    tmp_path: Path,
) -> None:
    """Partition 1 holds no record and has no committed offset: its barrier is its end."""
    p = _record_barrier(tmp_path, (0, 40, 40), (2, 9, 9))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "work" / "barrier.csv").read_text() == (
        "orders,0,40\norders,1,0\norders,2,9\n"
    )
    assert p.stdout.endswith(
        "  shop-counter stopped at the end of every partition of orders: recorded in "
        f"{tmp_path / 'work'}/barrier.csv\n"
    )


def test_an_app_that_stopped_before_its_end_is_no_barrier(tmp_path: Path) -> None:
    p = _record_barrier(tmp_path, (0, 40, 40), (2, 8, 9))
    assert p.returncode == 1
    assert p.stderr == (
        "  FAILED: shop-counter committed offset 8 on orders partition 2, not its end 9: the "
        "app stopped before it processed every record; start it, let it drain to lag 0, stop "
        "it\n"
    )
    assert not (tmp_path / "work" / "barrier.csv").exists()


def test_a_partition_with_records_and_no_committed_offset_is_no_barrier(tmp_path: Path) -> None:
    p = _record_barrier(tmp_path, (0, 40, 40))
    assert p.returncode == 1
    assert p.stderr == (
        "  FAILED: shop-counter has no committed offset on orders partition 2, which holds "
        "records up to offset 9: let the app drain to lag 0\n"
    )


def test_the_new_id_gets_the_barrier_and_zero_on_the_new_partitions(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text("orders,0,40\norders,1,0\norders,2,9\n")
    p = _barrier(tmp_path, "commit_barrier", "shop-counter-p6", "barrier.csv", "6", "orders")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "fake" / "reset-with").read_text() == (
        "orders,0,40\norders,1,0\norders,2,9\norders,3,0\norders,4,0\norders,5,0\n"
    )
    calls = (tmp_path / "fake" / "calls").read_text().splitlines()
    assert (
        "kafka-consumer-groups --bootstrap-server broker-1:9092,broker-2:9092 --reset-offsets "
        f"--group shop-counter-p6 --from-file {tmp_path / 'work'}/barrier.csv.commit --execute"
    ) in calls
    assert not [c for c in calls if "streams-application-reset" in c]
    assert p.stdout.endswith(
        "  shop-counter-p6 holds the barrier on every partition, and offset 0 on partitions "
        "3-5 of orders\n"
    )


def test_a_sets_new_id_gets_each_topics_barrier_and_zero_on_each_ones_new_partitions(
    tmp_path: Path,
) -> None:
    """Issue 71: both sides of a join altered in place at one barrier; each side's new
    partitions start at 0, and the recorded ones keep the barrier."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text(
        "orders,0,40\norders,1,0\norders,2,9\ncustomers,0,7\ncustomers,1,3\n"
    )
    p = _barrier(
        tmp_path, "commit_barrier", "shop-counter-p6", "barrier.csv", "4", "orders", "customers"
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "fake" / "reset-with").read_text() == (
        "orders,0,40\norders,1,0\norders,2,9\ncustomers,0,7\ncustomers,1,3\norders,3,0\n"
        "customers,2,0\ncustomers,3,0\n"
    )
    assert p.stdout.endswith(
        "  shop-counter-p6 holds the barrier on every partition, and offset 0 on partitions "
        "3-3 of orders, partitions 2-3 of customers\n"
    )


#: What kafka-streams-groups 4.3.1 printed for a stopped streams app's group (Empty):
#: ``--describe --offsets --verbose`` nothing at all (it lists the partitions of members'
#: tasks); ``--reset-offsets --input-topic orders --to-current --dry-run`` its committed
#: offsets (the rows of tests/integration/test_runbook_move_state.py's app, renamed).
STREAMS_CURRENT = (
    "GROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
    "shop-counter                   orders                         2          9              \n"
    "shop-counter                   orders                         0          40             \n"
)
#: ``--describe --offsets --verbose`` while the app runs (StreamsGroupCommand's columns).
STREAMS_RUNNING = (
    "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LEADER-EPOCH    "
    "LOG-END-OFFSET  OFFSET-LAG     \n"
    "shop-counter    orders          0          38              -               40     "
    "         2              \n"
    "shop-counter    orders          2          -               -               9      "
    "         2              \n"
)
_ORDERS = {"ends": "orders:0:40\norders:1:0\norders:2:9\n",
           "starts": "orders:0:40\norders:1:0\norders:2:7\n"}  # fmt: skip


def test_a_stopped_streams_groups_barrier_is_read_from_its_committed_offsets(
    tmp_path: Path,
) -> None:
    """kafka-streams-groups lists no offsets of a stopped group: the barrier is read with
    --to-current --dry-run, which commits nothing."""
    p = _barrier(
        tmp_path, "record_barrier", "shop-counter", "barrier.csv", "orders",
        protocol=Protocol.STREAMS, current_shop_counter=STREAMS_CURRENT, **_ORDERS,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "work" / "barrier.csv").read_text() == (
        "orders,0,40\norders,1,0\norders,2,9\n"
    )
    calls = (tmp_path / "fake" / "calls").read_text()
    assert (
        "kafka-streams-groups --bootstrap-server broker-1:9092,broker-2:9092 --reset-offsets "
        "--group shop-counter --input-topic orders --to-current --dry-run\n"
    ) in calls
    assert "--execute" not in calls


def test_a_streams_groups_lag_counts_the_records_after_its_committed_offsets(
    tmp_path: Path,
) -> None:
    """Running: --verbose's CURRENT-OFFSET (partition 2 has none: its records after the log
    start count, 9 - 7); stopped: the dry run's offsets; neither: unknown."""
    running = _barrier(
        tmp_path, "group_lag", "orders", "shop-counter", protocol=Protocol.STREAMS,
        streams_shop_counter=STREAMS_RUNNING, **_ORDERS,
    )  # fmt: skip
    assert (running.returncode, running.stdout, running.stderr) == (0, "4\n", "")
    (tmp_path / "fake" / "streams-shop-counter").unlink()
    stopped = _barrier(
        tmp_path, "group_lag", "orders", "shop-counter", protocol=Protocol.STREAMS,
        current_shop_counter=STREAMS_CURRENT.replace(" 9 ", " 8 "), **_ORDERS,
    )  # fmt: skip
    assert (stopped.returncode, stopped.stdout) == (0, "1\n"), stopped.stderr
    (tmp_path / "fake" / "current-shop-counter").unlink()
    never = _barrier(tmp_path, "group_lag", "orders", "shop-counter", protocol=Protocol.STREAMS)
    assert (never.returncode, never.stdout) == (0, "unknown\n"), never.stderr


def test_a_streams_apps_new_id_gets_its_offsets_from_kafka_consumer_groups(
    tmp_path: Path,
) -> None:
    """Before its first member joins, the new id is a classic group that the commit made:
    kafka-streams-groups cannot read it (\"is not a streams group\"); kafka-consumer-groups
    commits and reads back, and the first streams member's join keeps the offsets."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text("orders,0,40\norders,1,0\norders,2,9\n")
    p = _barrier(
        tmp_path, "commit_barrier", "shop-counter-p6", "barrier.csv", "6", "orders",
        protocol=Protocol.STREAMS,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    calls = (tmp_path / "fake" / "calls").read_text().splitlines()
    resets = [c for c in calls if "--reset-offsets" in c]
    assert resets == [
        "kafka-consumer-groups --bootstrap-server broker-1:9092,broker-2:9092 --reset-offsets "
        f"--group shop-counter-p6 --from-file {tmp_path / 'work'}/barrier.csv.commit --execute"
    ]
    assert (
        "kafka-consumer-groups --bootstrap-server broker-1:9092,broker-2:9092 --describe "
        "--group shop-counter-p6 --offsets"
    ) in calls
    assert p.stdout.endswith(
        "  shop-counter-p6 holds the barrier on every partition, and offset 0 on partitions "
        "3-5 of orders\n"
    )


def test_a_streams_apps_commit_step_says_how_its_new_group_keeps_the_offsets() -> None:
    said = "its first streams member's join converts that group into a streams group"
    streams = _commit_step(moved_facts(protocol=Protocol.STREAMS))
    classic = _commit_step(moved_facts())
    assert said in streams.why and said not in classic.why
    assert streams.why.startswith(classic.why)  # the classic app's words unchanged


def _commit_step(facts: RunbookFacts) -> Step:
    (step,) = [s for s in runbook_steps(facts) if s.title.startswith("Commit ")]
    return step


#: What migcheck copy says when no partitioner placed every record of a changelog (a custom
#: StreamPartitioner's), as migcheck/copy/placement.py words it (exit 3: cannot predict).
_NO_PARTITIONER = (
    "migcheck: error: no known partitioner placed every key of shop-counter-counts-changelog "
    "(best: murmur2, 52.0% of keys); a custom partitioner or explicit partitions? Force one "
    "with --partitioner"
)


def test_a_refused_move_stops_the_script_in_one_failed_line_with_nothing_altered(
    tmp_path: Path,
) -> None:
    """The copy's refusal comes before the alter: the script adds one FAILED line to the
    copy's own, saying that nothing was altered and the two ways on; no Kafka tool runs."""
    copy = f"echo '{_NO_PARTITIONER}' >&2; exit 3"
    p = _barrier(tmp_path, "moving", "bash", "-c", copy)
    assert p.returncode == 1
    assert p.stderr == (
        f"{_NO_PARTITIONER}\n"
        "  FAILED: the state was not moved (migcheck copy ended with code 3, saying why "
        "above); nothing was altered: run the script again to resume the move, or restart "
        "the app as it was (its application.id and offsets) and resume the producers\n"
    )
    assert not (tmp_path / "fake" / "calls").exists()
    ok = _barrier(tmp_path, "moving", "bash", "-c", "echo copied")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "copied\n", "")


def test_offsets_read_back_otherwise_stop_the_script(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "barrier.csv").write_text("orders,0,40\norders,1,0\norders,2,9\n")
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "reset-wrong").write_text("orders,0,40\norders,1,0\norders,2,0\n")
    p = _barrier(tmp_path, "commit_barrier", "shop-counter-p6", "barrier.csv", "6", "orders")
    assert p.returncode == 1
    assert p.stderr == (
        "  FAILED: shop-counter-p6 does not hold these offsets (topic,partition,offset): "
        "orders,2,9 orders,3,0 orders,4,0 orders,5,0 \n"
    )


# --- what can move, and what auto picks ---------------------------------------------


def _disc(
    name: str,
    changelogs: dict[str, str],
    kind: ReaderKind = ReaderKind.KAFKA_STREAMS,
    protocol: Protocol = Protocol.CLASSIC,
):
    """The shop app of the fixture's describe() ``name``, its changelogs (name to
    cleanup.policy) on the cluster; its model from --topology."""
    internal = dict.fromkeys(changelogs, 3)
    facts = app_facts("shop", {"orders": 3}, internal, protocol, framework=FRAMEWORKS[kind])
    topics = {t: TopicMeta(t, policy, 3) for t, policy in changelogs.items()}
    topics["orders"] = TopicMeta("orders", "delete", 3, (PartitionMeta(0, 40, 90),))
    topology = parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))
    return Discovery(facts, None, topics), from_topology(facts, topology), topology


def _refusal(name: str, changelogs: dict[str, str], **kw: object) -> Exception | None:
    disc, model, topology = _disc(name, changelogs, **kw)  # type: ignore[arg-type]
    return unmovable(disc, model, topology)


def test_key_value_stores_with_changelogs_of_their_own_can_move() -> None:
    assert _refusal("count", {"shop-counts-changelog": "compact"}) is None
    # a store behind a repartition topic too: its changelog is placed by the store key
    assert _refusal("rekey-count", {"shop-counts-changelog": "compact"}) is None


def test_a_store_without_a_changelog_is_refused_in_one_line() -> None:
    refused = _refusal("count-nolog", {})
    assert isinstance(refused, Refused)
    assert str(refused) == (
        "refused: --strategy move-state for shop: the store counts logs to no changelog "
        "(logging disabled: there is no shop-counts-changelog), so its state is nowhere to "
        "move from: only key-value stores that log to a changelog of their own can be moved "
        "so far; keep the whole history and use another --strategy"
    )


def test_migrate_is_refused_in_its_own_options_words() -> None:
    """The same decision for migrate's seeded shadow: its refusal names --shadow-state
    move, and the way out --shadow-state rebuild, not the runbook's strategies."""
    disc, model, topology = _disc("count-nolog", {})
    refused = unmovable(disc, model, topology, MIGRATE_MOVE)
    assert isinstance(refused, Refused)
    assert str(refused) == (
        "refused: --shadow-state move for shop: the store counts logs to no changelog "
        "(logging disabled: there is no shop-counts-changelog), so its state is nowhere to "
        "move from: only key-value stores that log to a changelog of their own can be moved "
        "so far; keep the whole history and use --shadow-state rebuild"
    )
    disc, model, topology = _disc("count", {}, kind=ReaderKind.QUIX_STREAMS)
    whole = unmovable(disc, model, topology, MIGRATE_MOVE)
    assert isinstance(whole, UsageError)
    assert str(whole).startswith("--shadow-state move: shop is ")
    assert str(whole).endswith("; keep the whole history and use --shadow-state rebuild")


def test_a_joined_table_on_its_source_topic_is_said_once_as_such() -> None:
    """With topology.optimization a stream-table join's processor lists the table's store
    too: the store is still the table's, read from its source topic, and said once."""
    refused = _refusal("join-nochangelog", {})
    assert isinstance(refused, Refused)
    assert str(refused) == (
        "refused: --strategy move-state for shop: the table table-store reads its source "
        "topic as its changelog (topology.optimization: there is no "
        "shop-table-store-changelog): only key-value stores that log to a changelog of their "
        "own can be moved so far; keep the whole history and use another --strategy"
    )


def test_a_table_that_reads_its_source_topic_as_its_changelog_is_refused() -> None:
    refused = _refusal("source-changelog", {})
    assert isinstance(refused, Refused)
    assert str(refused).startswith(
        "refused: --strategy move-state for shop: the table source-table reads its source "
        "topic as its changelog (topology.optimization: there is no "
        "shop-source-table-changelog): only key-value stores"
    )


@pytest.mark.parametrize(
    ("name", "changelogs", "said"),
    [
        ("windowed", {"shop-wcounts-changelog": "compact,delete"},
         "shop-wcounts-changelog is a window or session store's changelog (cleanup.policy "
         "compact,delete): their results follow stream time"),
        ("session", {"shop-scounts-changelog": "compact,delete"},
         "shop-scounts-changelog is a window or session store's changelog"),
        ("windowed-suppress",
         {"shop-wcounts-changelog": "compact,delete",
          "shop-KTABLE-SUPPRESS-STATE-STORE-0000000003-changelog": "compact"},
         "KTABLE-SUPPRESS-0000000002 suppresses by stream time: their results follow stream "
         "time, which a merged task does not share with its old tasks"),
    ],
)  # fmt: skip
def test_window_and_session_stores_and_suppress_are_refused_for_now(
    name: str, changelogs: dict[str, str], said: str
) -> None:
    refused = _refusal(name, changelogs)
    assert isinstance(refused, Refused) and "\n" not in str(refused)
    assert str(refused).startswith("refused: --strategy move-state for shop: ")
    assert said in str(refused)


# The describe() texts of a foreign-key join and of an outer stream-stream join are the
# fixture's own (fixtures/java/streams: fk-join, outer-join), printed by Kafka Streams 4.3.1.
# The stores' names and keys are Kafka's: KTableImpl's FK_JOIN_STATE_STORE_NAME and
# CombinedKeySchema (the foreign key, then the table's key); OuterStreamJoinStoreFactory's
# KSTREAM-OUTERSHARED-<n>-store and TimestampedKeyAndJoinSideSerializer (a timestamp, a
# side, then the join key).  The other stores' changelogs are there, with the policies
# Kafka Streams gives them (window stores compact,delete): only the named store is refused.

FK_CHANGELOGS = {
    "shop-table-store-changelog": "compact",
    "shop-orders-table-changelog": "compact",
    "shop-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008-changelog": "compact",
}
OUTER_CHANGELOGS = {
    "shop-KSTREAM-OUTERTHIS-0000000004-store-changelog": "compact,delete",
    "shop-KSTREAM-OUTEROTHER-0000000005-store-changelog": "compact,delete",
    "shop-KSTREAM-OUTERSHARED-0000000004-store-changelog": "compact",
}


@pytest.mark.parametrize(
    ("name", "changelogs", "said"),
    [
        ("fk-join", FK_CHANGELOGS,
         "the store KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008 is a foreign-key "
         "join's subscription store, keyed by the foreign key and then the table's key, so its "
         "changelog records sit where the foreign key alone is placed"),
        ("outer-join", OUTER_CHANGELOGS,
         "the store KSTREAM-OUTERSHARED-0000000004-store is a left or outer stream-stream "
         "join's shared store, keyed by a timestamp and then the join key, so its changelog "
         "records sit where the join key alone is placed"),
    ],
)  # fmt: skip
def test_a_store_placed_by_another_key_is_refused_from_the_topology(
    name: str, changelogs: dict[str, str], said: str
) -> None:
    refused = _refusal(name, changelogs)
    assert isinstance(refused, Refused)
    assert str(refused) == (
        f"refused: --strategy move-state for shop: {said}: only a changelog whose records sit "
        "where their own keys are placed can be moved; keep the whole history and use another "
        "--strategy"
    )


def test_a_subscription_store_with_logging_disabled_is_said_to_have_no_changelog() -> None:
    unlogged = dict(FK_CHANGELOGS)
    del unlogged["shop-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008-changelog"]
    refused = _refusal("fk-join", unlogged)
    assert isinstance(refused, Refused)
    assert str(refused) == (
        "refused: --strategy move-state for shop: the store "
        "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008 logs to no changelog (logging "
        "disabled: there is no shop-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008-"
        "changelog), so its state is nowhere to move from: only key-value stores that log to "
        "a changelog of their own can be moved so far; keep the whole history and use another "
        "--strategy"
    )


@pytest.mark.parametrize(
    ("store", "kind"),
    [
        ("KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000008", PlacedElsewhere.FK_SUBSCRIPTION),
        ("orders-by-customer-subscription-store", PlacedElsewhere.FK_SUBSCRIPTION),  # named
        ("KSTREAM-OUTERSHARED-0000000004-store", PlacedElsewhere.JOIN_SHARED),
        ("pairs-outer-shared-join-store", PlacedElsewhere.JOIN_SHARED),  # StreamJoined.as
        ("pairs-left-shared-join-store", PlacedElsewhere.JOIN_SHARED),
        ("counts", None),
        ("KSTREAM-OUTERTHIS-0000000004-store", None),  # a window store: stream time's rule
        ("table-store", None),
    ],
)
def test_stores_placed_by_another_key_are_known_by_kafka_streams_names(
    store: str, kind: PlacedElsewhere | None
) -> None:
    assert PlacedElsewhere.of(store) is kind
    said = placed_elsewhere(store)
    assert (said is None) is (kind is None)
    if said is not None:
        assert said.startswith(f"the store {store} is a ")


def test_a_streams_protocol_group_can_move_too() -> None:
    """KIP-1071: its new id's offsets are committed as a classic app's are (FINDINGS.md)."""
    assert (
        _refusal("count", {"shop-counts-changelog": "compact"}, protocol=Protocol.STREAMS) is None
    )


def test_without_the_topology_an_unlogged_store_could_hide_so_it_asks_for_it() -> None:
    disc, _, _ = _disc("count", {"shop-counts-changelog": "compact"})
    refused = unmovable(disc, inferred(disc.facts), None)
    assert isinstance(refused, UsageError)
    assert str(refused) == (
        "--strategy move-state: shop: without --topology a store with logging disabled, or a "
        "source topic used as a changelog, cannot be ruled out (pass the app's "
        "Topology#describe() with --topology to decide)"
    )


def test_auto_moves_the_state_only_where_history_was_lost_and_every_store_can_move() -> None:
    _, model, _ = _disc("count", {"shop-counts-changelog": "compact"})
    moved = choose(Strategy.AUTO, model, "orders", KAFKA_STREAMS, TRIMMED, movable=True)
    assert moved.strategy is Strategy.MOVE_STATE
    assert moved.reason == (
        "--strategy auto chose move-state: the sources no longer hold their whole history "
        "(orders partition 0 from offset 40, 2 from offset 7), so a reprocess would miss what "
        "retention deleted; every store logs to a key-value changelog of its own, so its "
        "state is moved to the new count instead of rebuilt."
    )
    # a whole history, or a store that cannot move: auto as before (count: new-topic)
    for lost, movable in (((), True), (TRIMMED, False)):
        kept = choose(Strategy.AUTO, model, "orders", KAFKA_STREAMS, lost, movable)
        assert kept.strategy is Strategy.NEW_TOPIC
    named = choose(Strategy.MOVE_STATE, model, "orders", KAFKA_STREAMS)
    assert named.strategy is Strategy.MOVE_STATE and named.reason == ""


def test_auto_moves_a_whole_historys_state_where_the_move_is_much_cheaper() -> None:
    """At least 1 M source records and 3x the changelogs': the sizes are said, both."""
    _, model, _ = _disc("count", {"shop-counts-changelog": "compact"})
    cheap = Sizes(state=400_000, history=1_200_000)
    moved = choose(Strategy.AUTO, model, "orders", KAFKA_STREAMS, (), True, cheap)
    assert moved.strategy is Strategy.MOVE_STATE
    assert moved.reason == (
        "--strategy auto chose move-state: the changelogs hold at most 400000 records where "
        "a reprocess would read the sources' 1200000 again (3.0x as many; auto moves the "
        "state where the sources hold at least 3x the changelogs' records and at least "
        "1000000); every store logs to a key-value changelog of its own, so its state is "
        "moved to the new count instead of rebuilt, and the app restarts under a new "
        "application.id (pass --strategy new-topic or in-place to keep its id)."
    )
    for sizes, movable in (
        (Sizes(400_001, 1_200_000), True),  # under 3x
        (Sizes(10, 999_999), True),  # too few records to pay the move's fixed costs back
        (cheap, False),  # a store that cannot move
    ):
        kept = choose(Strategy.AUTO, model, "orders", KAFKA_STREAMS, (), movable, sizes)
        assert kept.strategy is Strategy.NEW_TOPIC


def test_the_lost_history_refusal_names_the_move_where_the_state_can_move() -> None:
    line = lost_history_refusal("shop", TRIMMED, "--strategy in-place", "--strategy move-state")
    assert line.endswith(
        "; keep the whole history, move the state instead (--strategy move-state), or pass "
        "--accept-lost-history to reprocess without them"
    )
    assert "move-state" not in lost_history_refusal("shop", TRIMMED, "--strategy in-place")


def test_plain_groups_have_no_state_to_move() -> None:
    with pytest.raises(UsageError) as refused:
        run_groups_runbook(GroupsRunbookOptions("orders", 6, strategy=Strategy.MOVE_STATE))
    assert str(refused.value) == (
        "--strategy move-state is for a stateful app (--application-id); plain groups take "
        "in-place (the default) or online"
    )


@pytest.mark.parametrize(
    ("strategy", "into", "line"),
    [
        (Strategy.MOVE_STATE, None, None),  # in place: written
        (Strategy.MOVE_STATE, "orders-wide", None),  # onto copies, each named: written
        (Strategy.ONLINE, None, None),  # migrate takes the set: written
        (
            Strategy.ONLINE,
            "orders-wide",
            "--into names one topic's copy for migrate: a set's copies online are each "
            "<topic>-p<N>; drop --into",
        ),
    ],
)
def test_a_sets_move_is_written_in_place_onto_copies_or_online(
    strategy: Strategy, into: str | None, line: str | None
) -> None:
    from migcheck.apps.strategy import Choice
    from migcheck.commands.runbook import RunbookOptions, _refuse_set

    facts = app_facts("shop", {"orders": 3, "customers": 3}, {"shop-counts-changelog": 3})
    also_into = ("customers-wide",) if into else ()
    options = RunbookOptions(
        "shop", "orders", 6, also=("customers",), new_topic=into, also_into=also_into,
        strategy=strategy,
    )  # fmt: skip
    disc = Discovery(facts, None, {})
    if line is None:
        _refuse_set(options, disc, Choice(strategy, ""))
        return
    with pytest.raises(UsageError) as refused:
        _refuse_set(options, disc, Choice(strategy, ""))
    assert str(refused.value) == line
